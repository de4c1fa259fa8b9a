/* Opens and closes NAMES manual regions (default 100050), each under a name
 * built at run time in one reused buffer ("request-<n>"), then one region
 * under a name used before; prints what the runtime dropped. */
#include <stdlib.h>

#include "common.h"

int main(int argc, char **argv) {
    long names = argc > 1 ? atol(argv[1]) : 100050;
    print_identity();
    char name[64];
    for (long i = 0; i < names; i++) {
        snprintf(name, sizeof name, "request-%ld", i);
        perfflow_region_begin(name);
        perfflow_region_end(name);
    }
    snprintf(name, sizeof name, "request-%d", 0);
    perfflow_region_begin(name);
    perfflow_region_end(name);
    printf("dropped=%llu\n", (unsigned long long)perfflow_dropped_events());
    return 0;
}
