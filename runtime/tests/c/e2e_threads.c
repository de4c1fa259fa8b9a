/* THREADS threads each make CALLS traced calls: CALLS / 2 "outer" calls,
 * each around one "inner" call. */
#include <pthread.h>
#include <stdlib.h>

#include "common.h"

SITE(outer_site, PERFFLOW_POINTCUT_AROUND, "outer", "e2e_threads.c", NULL);
SITE(inner_site, PERFFLOW_POINTCUT_AROUND, "inner", "e2e_threads.c", NULL);

static long calls_per_thread;

static void *worker(void *arg) {
    (void)arg;
    for (long i = 0; i < calls_per_thread / 2; i++) {
        perfflow_site_enter(&outer_site);
        perfflow_site_enter(&inner_site);
        perfflow_site_exit(&inner_site);
        perfflow_site_exit(&outer_site);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 8;
    calls_per_thread = argc > 2 ? atol(argv[2]) : 50000;
    if (threads < 1 || threads > 64)
        return 2;
    print_identity();
    pthread_t t[64];
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0)
            return 2;
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    return 0;
}
