/* Opens and closes NAMES manual regions (default 100050), each under a name
 * built at run time in one reused buffer ("request-<n>"; all "request-0"
 * when DISTINCT is 0), then one region under a name used before; prints
 * what the runtime dropped and the peak resident set size.
 * Usage: region_names_built_at_run_time [NAMES [DISTINCT]] */
#include <stdlib.h>

#include "common.h"

int main(int argc, char **argv) {
    long names = argc > 1 ? atol(argv[1]) : 100050;
    int distinct = argc > 2 ? atoi(argv[2]) : 1;
    print_identity();
    char name[64];
    for (long i = 0; i < names; i++) {
        snprintf(name, sizeof name, "request-%ld", distinct ? i : 0L);
        perfflow_region_begin(name);
        perfflow_region_end(name);
    }
    snprintf(name, sizeof name, "request-%d", 0);
    perfflow_region_begin(name);
    perfflow_region_end(name);
    printf("dropped=%llu maxrss_kib=%ld\n", (unsigned long long)perfflow_dropped_events(),
           vm_hwm_kib());
    return 0;
}
