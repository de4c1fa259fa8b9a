/* A thread records 1000 events after exit() has completed the trace: an
 * exit handler registered before the first event runs after the runtime's,
 * lets the thread go, waits until it has recorded them (the thread stays
 * alive: the process ends around it) and prints perfflow_dropped_events(). */
#include <pthread.h>
#include <stdlib.h>

#include "common.h"

SITE(early_site, PERFFLOW_POINTCUT_AROUND, "early", "records_after_exit_completed_the_trace.c", NULL);
SITE(late_site, PERFFLOW_POINTCUT_AROUND, "late", "records_after_exit_completed_the_trace.c", NULL);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER;
static int started;
static int released;
static int recorded;
static pthread_t late_thread;

static void *late_worker(void *arg) {
    (void)arg;
    perfflow_site_enter(&early_site);
    perfflow_site_exit(&early_site);
    pthread_mutex_lock(&lock);
    started = 1;
    pthread_cond_broadcast(&go);
    while (!released)
        pthread_cond_wait(&go, &lock);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < 500; i++) {
        perfflow_site_enter(&late_site);
        perfflow_site_exit(&late_site);
    }
    pthread_mutex_lock(&lock);
    recorded = 1;
    pthread_cond_broadcast(&go);
    for (;;)
        pthread_cond_wait(&go, &lock);
    return NULL;
}

static void after_the_trace(void) {
    pthread_mutex_lock(&lock);
    released = 1;
    pthread_cond_broadcast(&go);
    while (!recorded)
        pthread_cond_wait(&go, &lock);
    pthread_mutex_unlock(&lock);
    printf("dropped=%llu\n", (unsigned long long)perfflow_dropped_events());
    fflush(stdout);
}

int main(void) {
    atexit(after_the_trace);
    print_identity();
    pthread_create(&late_thread, NULL, late_worker, NULL);
    perfflow_site_enter(&early_site);
    perfflow_site_exit(&early_site);
    /* The thread's first call belongs to the trace. */
    pthread_mutex_lock(&lock);
    while (!started)
        pthread_cond_wait(&go, &lock);
    pthread_mutex_unlock(&lock);
    exit(0);
}
