/* THREADS threads (at most 64) record enter/exit pairs without pause until
 * the process is killed; "ready" is printed once every thread has recorded
 * its first pair. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "common.h"

SITE(busy_site, PERFFLOW_POINTCUT_AROUND, "busy", "busy_threads_until_killed.c", NULL);

static atomic_int started;

static void *worker(void *arg) {
    (void)arg;
    perfflow_site_enter(&busy_site);
    perfflow_site_exit(&busy_site);
    atomic_fetch_add(&started, 1);
    for (;;) {
        perfflow_site_enter(&busy_site);
        perfflow_site_exit(&busy_site);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 64;
    if (threads > 64)
        threads = 64;
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    print_identity();
    pthread_t t[64];
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    struct timespec pause_1ms = {0, 1000 * 1000};
    while (atomic_load(&started) < threads)
        nanosleep(&pause_1ms, NULL);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        nanosleep(&pause_1ms, NULL);
}
