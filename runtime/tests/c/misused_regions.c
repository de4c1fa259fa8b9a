/* One exit without an enter, then an exit that closes a slice with an
 * inner one still open, then one complete call. Prints the events dropped
 * as seen after the trace is complete. */
#include <stdlib.h>

#include "common.h"

SITE(stray_site, PERFFLOW_POINTCUT_AROUND, "stray", "misused_regions.c", NULL);
SITE(outer_site, PERFFLOW_POINTCUT_AROUND, "outer", "misused_regions.c", NULL);
SITE(inner_site, PERFFLOW_POINTCUT_AROUND, "inner", "misused_regions.c", NULL);
SITE(fine_site, PERFFLOW_POINTCUT_AROUND, "fine", "misused_regions.c", NULL);

static void after_the_trace(void) {
    printf("dropped=%llu\n", (unsigned long long)perfflow_dropped_events());
    fflush(stdout);
}

int main(void) {
    atexit(after_the_trace);
    print_identity();
    perfflow_site_exit(&stray_site);
    perfflow_site_enter(&outer_site);
    perfflow_site_enter(&inner_site);
    perfflow_site_exit(&outer_site);
    perfflow_site_enter(&fine_site);
    perfflow_site_exit(&fine_site);
    return 0;
}
