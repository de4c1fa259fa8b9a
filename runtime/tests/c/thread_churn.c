/* Thread churn: TOTAL short threads (default 800), at most ALIVE (default 8)
 * alive at a time, each recording EVENTS events (default 60000, most of a
 * chunk) as nested pairs and ending before its chunk fills. Prints the peak resident set size (VmHWM) so a benchmark can show
 * that memory follows the threads alive, not the threads ever created. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

SITE(outer_site, PERFFLOW_POINTCUT_AROUND, "outer", "thread_churn.c", NULL);
SITE(inner_site, PERFFLOW_POINTCUT_AROUND, "inner", "thread_churn.c", NULL);

static long events_per_thread;

static void record(long events) {
    for (long i = 0; i < events / 4; i++) {
        perfflow_site_enter(&outer_site);
        perfflow_site_enter(&inner_site);
        perfflow_site_exit(&inner_site);
        perfflow_site_exit(&outer_site);
    }
}

static void *worker(void *arg) {
    (void)arg;
    record(events_per_thread);
    return NULL;
}

int main(int argc, char **argv) {
    int total = argc > 1 ? atoi(argv[1]) : 800;
    int alive = argc > 2 ? atoi(argv[2]) : 8;
    events_per_thread = argc > 3 ? atol(argv[3]) : 60000;
    if (alive < 1 || alive > 64)
        alive = 8;
    print_identity();
    /* The main thread fills a chunk first, so the writer thread runs while
     * the others come and go. */
    record(70000);
    pthread_t t[64];
    int started = 0;
    while (started < total) {
        int batch = 0;
        for (; batch < alive && started < total; batch++, started++)
            pthread_create(&t[batch], NULL, worker, NULL);
        for (int i = 0; i < batch; i++)
            pthread_join(t[i], NULL);
    }
    printf("threads=%d maxrss_kib=%ld\n", total, vm_hwm_kib());
    return 0;
}
