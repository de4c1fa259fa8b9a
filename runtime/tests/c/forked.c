/* A child forked after tracing started records and exits through exit();
 * the parent's trace must stay intact. */
#include <stdlib.h>
#include <sys/wait.h>

#include "common.h"

SITE(parent_site, PERFFLOW_POINTCUT_AROUND, "parent_work", "forked.c", NULL);
SITE(child_site, PERFFLOW_POINTCUT_AROUND, "child_work", "forked.c", NULL);

int main(void) {
    print_identity();
    perfflow_site_enter(&parent_site);
    perfflow_site_exit(&parent_site);
    perfflow_site_enter(&parent_site);
    pid_t child = fork();
    if (child == 0) {
        for (int i = 0; i < 100000; i++) { /* fills a chunk: exercises hand-off */
            perfflow_site_enter(&child_site);
            perfflow_site_exit(&child_site);
        }
        exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    perfflow_site_exit(&parent_site);
    printf("child=%d child_status=%d\n", (int)child, status);
    return 0;
}
