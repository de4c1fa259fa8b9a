/* Events after the final flush: an exit handler registered before the first
 * event runs after the runtime's own, and a thread keeps recording while the
 * process exits (through the final flush, until the late handler stops it
 * to count its own two events alone). Neither may crash or corrupt the
 * file. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "common.h"

SITE(late_site, PERFFLOW_POINTCUT_AROUND, "late", "late_events.c", NULL);
SITE(spin_site, PERFFLOW_POINTCUT_AROUND, "spin", "late_events.c", NULL);
SITE(main_site, PERFFLOW_POINTCUT_AROUND, "main", "late_events.c", NULL);

static atomic_int stop_spinning, spinner_stopped;

static void late_handler(void) {
    atomic_store(&stop_spinning, 1);
    while (!atomic_load(&spinner_stopped))
        sched_yield();
    unsigned long long before = perfflow_dropped_events();
    perfflow_site_enter(&late_site);
    perfflow_site_exit(&late_site);
    printf("late_dropped=%llu\n", perfflow_dropped_events() - before);
    fflush(stdout);
}

static void *spinner(void *arg) {
    (void)arg;
    while (!atomic_load(&stop_spinning)) {
        perfflow_site_enter(&spin_site);
        perfflow_site_exit(&spin_site);
    }
    atomic_store(&spinner_stopped, 1);
    for (;;)
        pause();
    return NULL;
}

int main(void) {
    atexit(late_handler);
    print_identity();
    perfflow_site_enter(&main_site);
    pthread_t t;
    pthread_create(&t, NULL, spinner, NULL);
    struct timespec pause = {0, 30 * 1000 * 1000};
    nanosleep(&pause, NULL);
    perfflow_site_exit(&main_site);
    return 0;
}
