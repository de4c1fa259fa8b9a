/* The parent records one call and forks. The child records three calls,
 * enters a slice, prints its pid and "ready", and waits to be killed; the
 * parent waits for it and prints how it ended. */
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

#include "common.h"

SITE(parent_site, PERFFLOW_POINTCUT_AROUND, "parent_work", "fork_child_waits_for_a_signal.c", NULL);
SITE(child_site, PERFFLOW_POINTCUT_AROUND, "child_work", "fork_child_waits_for_a_signal.c", NULL);
SITE(wait_site, PERFFLOW_POINTCUT_AROUND, "child_wait", "fork_child_waits_for_a_signal.c", NULL);

int main(void) {
    print_identity();
    perfflow_site_enter(&parent_site);
    perfflow_site_exit(&parent_site);
    pid_t child = fork();
    if (child < 0)
        return 2;
    if (child == 0) {
        for (int i = 0; i < 3; i++) {
            perfflow_site_enter(&child_site);
            perfflow_site_exit(&child_site);
        }
        perfflow_site_enter(&wait_site);
        printf("child=%d\nready\n", (int)getpid());
        fflush(stdout);
        struct timespec pause_1ms = {0, 1000 * 1000};
        for (;;)
            nanosleep(&pause_1ms, NULL);
    }
    int status = -1;
    waitpid(child, &status, 0);
    printf("child_signal=%d\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return 0;
}
