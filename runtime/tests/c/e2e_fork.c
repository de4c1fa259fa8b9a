/* Forks inside an open slice after three complete ones, 5 ms after entering
 * it. The child makes ten calls of its own, leaves the slice it inherited
 * and exits; the parent waits, makes one more call and leaves its slice. */
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

#include "common.h"

SITE(before_site, PERFFLOW_POINTCUT_AROUND, "before_fork", "e2e_fork.c", NULL);
SITE(around_site, PERFFLOW_POINTCUT_AROUND, "around_fork", "e2e_fork.c", NULL);
SITE(child_site, PERFFLOW_POINTCUT_AROUND, "child_work", "e2e_fork.c", NULL);
SITE(after_site, PERFFLOW_POINTCUT_AROUND, "after_fork", "e2e_fork.c", NULL);

int main(void) {
    print_identity();
    for (int i = 0; i < 3; i++) {
        perfflow_site_enter(&before_site);
        perfflow_site_exit(&before_site);
    }
    perfflow_site_enter(&around_site);
    struct timespec pause_5ms = {0, 5 * 1000 * 1000};
    nanosleep(&pause_5ms, NULL);
    pid_t child = fork();
    if (child < 0)
        return 2;
    if (child == 0) {
        for (int i = 0; i < 10; i++) {
            perfflow_site_enter(&child_site);
            perfflow_site_exit(&child_site);
        }
        perfflow_site_exit(&around_site);
        exit(0);
    }
    int status = -1;
    waitpid(child, &status, 0);
    perfflow_site_enter(&after_site);
    perfflow_site_exit(&after_site);
    perfflow_site_exit(&around_site);
    printf("child=%d child_status=%d\n", (int)child, status);
    return 0;
}
