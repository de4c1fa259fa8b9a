/* exit(7) while the main thread is inside two slices and a worker thread is
 * blocked inside one. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

SITE(outer_site, PERFFLOW_POINTCUT_AROUND, "outer", "e2e_exit_open.c", NULL);
SITE(inner_site, PERFFLOW_POINTCUT_AROUND, "inner", "e2e_exit_open.c", NULL);
SITE(blocked_site, PERFFLOW_POINTCUT_AROUND, "blocked", "e2e_exit_open.c", NULL);

static int ready_pipe[2];
static int never_pipe[2];

static void *worker(void *arg) {
    (void)arg;
    char byte = 1;
    perfflow_site_enter(&blocked_site);
    if (write(ready_pipe[1], &byte, 1) != 1)
        return NULL;
    ssize_t n = read(never_pipe[0], &byte, 1); /* nothing is ever written */
    (void)n;
    perfflow_site_exit(&blocked_site);
    return NULL;
}

int main(void) {
    print_identity();
    if (pipe(ready_pipe) != 0 || pipe(never_pipe) != 0)
        return 2;
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 2;
    char byte;
    if (read(ready_pipe[0], &byte, 1) != 1)
        return 2;
    perfflow_site_enter(&outer_site);
    perfflow_site_enter(&inner_site);
    exit(7);
}
