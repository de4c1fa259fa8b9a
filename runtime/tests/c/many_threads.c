/* THREADS threads, each recording EVENTS events as nested pairs; prints the
 * peak resident set size so the test can check that memory stays flat.
 * VmHWM is used rather than getrusage: ru_maxrss carries over the parent's
 * peak across fork and exec. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

SITE(outer_site, PERFFLOW_POINTCUT_AROUND, "outer", "many_threads.c", NULL);
SITE(inner_site, PERFFLOW_POINTCUT_AROUND, "inner", "many_threads.c", NULL);

static long events_per_thread;

static void *worker(void *arg) {
    (void)arg;
    for (long i = 0; i < events_per_thread / 4; i++) {
        perfflow_site_enter(&outer_site);
        perfflow_site_enter(&inner_site);
        perfflow_site_exit(&inner_site);
        perfflow_site_exit(&outer_site);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 8;
    events_per_thread = argc > 2 ? atol(argv[2]) : 200000;
    print_identity();
    pthread_t t[64];
    if (threads > 64)
        threads = 64;
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    long hwm_kib = vm_hwm_kib();
    printf("maxrss_kib=%ld\n", hwm_kib);
    return 0;
}
