/* Records 1000 short slices, then waits to be killed inside open slices: the
 * main thread inside "serve" > "wait", a worker inside "worker_loop" ticking
 * every millisecond. Prints "ready" once both are in place.
 *
 * The dispositions of SIGINT and SIGTERM are reset to the default first, so
 * the test does not depend on what the process that started it ignores (a
 * shell's background jobs ignore SIGINT). No core file is written. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <time.h>

#include "common.h"

SITE(step_site, PERFFLOW_POINTCUT_AROUND, "step", "e2e_wait_for_signal.c", NULL);
SITE(serve_site, PERFFLOW_POINTCUT_AROUND, "serve", "e2e_wait_for_signal.c", NULL);
SITE(wait_site, PERFFLOW_POINTCUT_AROUND, "wait", "e2e_wait_for_signal.c", NULL);
SITE(loop_site, PERFFLOW_POINTCUT_AROUND, "worker_loop", "e2e_wait_for_signal.c", NULL);
SITE(tick_site, PERFFLOW_POINTCUT_AROUND, "tick", "e2e_wait_for_signal.c", NULL);

static atomic_int worker_running;

static void *worker(void *arg) {
    (void)arg;
    struct timespec pause_1ms = {0, 1000 * 1000};
    perfflow_site_enter(&loop_site);
    atomic_store(&worker_running, 1);
    for (;;) {
        perfflow_site_enter(&tick_site);
        nanosleep(&pause_1ms, NULL);
        perfflow_site_exit(&tick_site);
    }
    return NULL;
}

int main(void) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    print_identity();
    for (int i = 0; i < 1000; i++) {
        perfflow_site_enter(&step_site);
        perfflow_site_exit(&step_site);
    }
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 2;
    struct timespec pause_1ms = {0, 1000 * 1000};
    while (!atomic_load(&worker_running))
        nanosleep(&pause_1ms, NULL);
    perfflow_site_enter(&serve_site);
    perfflow_site_enter(&wait_site);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        nanosleep(&pause_1ms, NULL);
}
