/* main ends with pthread_exit while three workers keep running; the last
 * thread to finish makes the process exit. */
#include <pthread.h>
#include <time.h>

#include "common.h"

SITE(main_site, PERFFLOW_POINTCUT_AROUND, "main_work", "pthread_exit_main.c", NULL);
SITE(work_site, PERFFLOW_POINTCUT_AROUND, "worker", "pthread_exit_main.c", NULL);
SITE(step_site, PERFFLOW_POINTCUT_AROUND, "step", "pthread_exit_main.c", NULL);

static void *worker(void *arg) {
    long n = (long)arg;
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL); /* outlive main */
    perfflow_site_enter(&work_site);
    for (long i = 0; i < 100 * (n + 1); i++) {
        perfflow_site_enter(&step_site);
        perfflow_site_exit(&step_site);
    }
    perfflow_site_exit(&work_site);
    return NULL;
}

int main(void) {
    print_identity();
    pthread_t t[3];
    perfflow_site_enter(&main_site);
    for (long i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    perfflow_site_exit(&main_site);
    pthread_exit(NULL);
}
