/* The thread-pool pattern: the main thread begins each async operation
 * (perfflow_async_begin) and a worker thread ends it (perfflow_async_end)
 * inside a woven function. The worker exits first, so its events, every
 * "e", are in the file before the main thread's "b"s. */
#include <pthread.h>
#include <stdint.h>

#include <perfflow.h>

#define TASKS 1000

static uint64_t ids[TASKS];

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) static void
finish_all(void) {
    for (int i = 0; i < TASKS; i++)
        perfflow_async_end("task", "pool", ids[i]);
}

static void *worker(void *arg) {
    (void)arg;
    finish_all();
    return NULL;
}

int main(void) {
    for (int i = 0; i < TASKS; i++)
        ids[i] = perfflow_async_begin("task", "pool");
    pthread_t thread;
    if (pthread_create(&thread, NULL, worker, NULL) != 0)
        return 1;
    pthread_join(thread, NULL);
    return 0;
}
