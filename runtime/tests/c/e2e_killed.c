/* Records PAIRS enter/exit pairs (default 150000: 300000 events, several
 * full chunks), enters a slice, prints "ready" and waits to be killed. */
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "common.h"

SITE(work_site, PERFFLOW_POINTCUT_AROUND, "work", "e2e_killed.c", NULL);
SITE(wait_site, PERFFLOW_POINTCUT_AROUND, "wait", "e2e_killed.c", NULL);

int main(int argc, char **argv) {
    long pairs = argc > 1 ? atol(argv[1]) : 150000;
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    print_identity();
    for (long i = 0; i < pairs; i++) {
        perfflow_site_enter(&work_site);
        perfflow_site_exit(&work_site);
    }
    perfflow_site_enter(&wait_site);
    printf("ready\n");
    fflush(stdout);
    struct timespec pause_1ms = {0, 1000 * 1000};
    for (;;)
        nanosleep(&pause_1ms, NULL);
}
