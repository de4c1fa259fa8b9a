/* Forks five times while two threads record events as fast as they can, so
 * the writer thread always has chunks queued. Each child exits at once.
 * fork() must not wait for the recording to stop (the threads only stop
 * after the forks): a fork that waited for the writer's queue to empty
 * would hang here. Prints "forks=5" and the events each thread recorded. */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>

#include "common.h"

SITE(busy_site, PERFFLOW_POINTCUT_AROUND, "busy", "e2e_fork_busy.c", NULL);

static atomic_int stop;
static long counts[2];

static void *worker(void *arg) {
    long *count = arg;
    while (!atomic_load(&stop)) {
        perfflow_site_enter(&busy_site);
        perfflow_site_exit(&busy_site);
        ++*count;
    }
    return NULL;
}

int main(void) {
    print_identity();
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, worker, &counts[i]) != 0)
            return 2;
    struct timespec pause_20ms = {0, 20 * 1000 * 1000};
    int forks = 0;
    for (int i = 0; i < 5; i++) {
        nanosleep(&pause_20ms, NULL);
        pid_t child = fork();
        if (child < 0)
            return 3;
        if (child == 0)
            _exit(0);
        int status = 0;
        if (waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0)
            forks++;
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("forks=%d\ncalls=%ld\n", forks, counts[0] + counts[1]);
    return 0;
}
