/* THREADS threads (at least 2, at most 64) each record PAIRS enter/exit
 * pairs, then the first two call exit() at the same moment while the
 * others wait; run with a long flush-interval, so the final flush has every
 * record to format. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "common.h"

SITE(exit_site, PERFFLOW_POINTCUT_AROUND, "before_exit", "two_threads_call_exit.c", NULL);

static pthread_barrier_t recorded;
static long pairs;

static void *worker(void *arg) {
    long exits = (long)arg;
    for (long i = 0; i < pairs; i++) {
        perfflow_site_enter(&exit_site);
        perfflow_site_exit(&exit_site);
    }
    pthread_barrier_wait(&recorded);
    if (exits)
        exit(0);
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 8;
    pairs = argc > 2 ? atol(argv[2]) : 100000;
    if (threads < 2)
        threads = 2;
    if (threads > 64)
        threads = 64;
    print_identity();
    pthread_barrier_init(&recorded, NULL, (unsigned)threads);
    pthread_t t[64];
    for (long i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)(i < 2));
    for (;;)
        pause();
}
