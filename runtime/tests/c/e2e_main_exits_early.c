/* main calls pthread_exit inside an open slice while two workers keep
 * recording; the last worker to finish ends the process. */
#include <pthread.h>
#include <time.h>

#include "common.h"

SITE(main_site, PERFFLOW_POINTCUT_AROUND, "main_open", "e2e_main_exits_early.c", NULL);
SITE(work_site, PERFFLOW_POINTCUT_AROUND, "worker", "e2e_main_exits_early.c", NULL);
SITE(step_site, PERFFLOW_POINTCUT_AROUND, "step", "e2e_main_exits_early.c", NULL);

static void *worker(void *arg) {
    (void)arg;
    struct timespec pause_30ms = {0, 30 * 1000 * 1000};
    nanosleep(&pause_30ms, NULL); /* outlive main */
    perfflow_site_enter(&work_site);
    for (int i = 0; i < 500; i++) {
        perfflow_site_enter(&step_site);
        perfflow_site_exit(&step_site);
    }
    perfflow_site_exit(&work_site);
    return NULL;
}

int main(void) {
    print_identity();
    perfflow_site_enter(&main_site);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0)
            return 2;
    pthread_exit(NULL);
}
