/* Many around slices in cpu-mem-usage mode, with an instant inside each.
 * Per iteration the buffer receives 5 records: the enter of "step" and its
 * payload, the instant "tick", the exit of "step" and its payload. After
 * 13107 iterations the chunk of 65536 records holds 65535, so the next
 * enter and its payload do not fit together and go to the next chunk. */
#include <stdlib.h>

#include "common.h"

SITE(step_site, PERFFLOW_POINTCUT_AROUND, "step", "usage_many.c", NULL);
SITE(tick_site, PERFFLOW_POINTCUT_BEFORE, "tick", "usage_many.c", NULL);

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 30000;
    print_identity();
    for (long i = 0; i < n; i++) {
        perfflow_site_enter(&step_site);
        perfflow_site_enter(&tick_site);
        perfflow_site_exit(&step_site);
    }
    printf("steps=%ld\n", n);
    return 0;
}
