/* A threaded program that forks: built with a sanitizer, it must exit with
 * its own status (7), with no report about perfflow's runtime. Three
 * threads record and are still alive, holding their record buffers, when
 * the main thread forks twice; each child records too, then exits with 7,
 * which the parent passes on. The threads are all started before the first
 * fork: a fork while a thread is starting leaves that thread's start-up
 * allocations to no thread of the child, with or without perfflow. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define TRACED __attribute__((annotate("@critical_path(pointcut='around')")))
#define THREADS 3

static pthread_barrier_t recorded, forked;

TRACED __attribute__((noinline)) int step(int x) { return x * 3 + 1; }

static void *worker(void *arg) {
    int total = 0;
    for (int i = 0; i < 1000; i++)
        total += step(i);
    *(int *)arg = total;
    pthread_barrier_wait(&recorded);
    pthread_barrier_wait(&forked);
    return NULL;
}

TRACED __attribute__((noinline)) int run_children(void) {
    for (int c = 0; c < 2; c++) {
        pid_t child = fork();
        if (child < 0)
            return 1;
        if (child == 0) {
            int total = 0;
            for (int i = 0; i < 100; i++)
                total += step(i);
            exit(total > 0 ? 7 : 2);
        }
        int status = 0;
        if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 7) {
            fprintf(stderr, "child %d: status %d\n", c, status);
            return 1;
        }
    }
    return 7;
}

int main(void) {
    pthread_t threads[THREADS];
    int totals[THREADS];
    pthread_barrier_init(&recorded, NULL, THREADS + 1);
    pthread_barrier_init(&forked, NULL, THREADS + 1);
    for (int t = 0; t < THREADS; t++)
        pthread_create(&threads[t], NULL, worker, &totals[t]);
    pthread_barrier_wait(&recorded);
    int status = run_children();
    pthread_barrier_wait(&forked);
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    printf("status %d\n", status);
    return status;
}
