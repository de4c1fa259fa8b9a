/* The program that wrote nest.json beside it: regions nested three deep
 * (main > outer > inner, two outer calls of three inner each) and an
 * asynchronous span "transfer" begun on the main thread and ended on a
 * worker thread. Rebuild the trace with
 *   cc -I runtime/include nest.c target/debug/libperfflow_runtime.a -lpthread -ldl -lm -o nest
 *   ./nest   # then rename perfflow.array.*.pfw to nest.json
 */
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "perfflow.h"

static uint64_t transfer;

static void inner(void) {
    perfflow_region_begin("inner");
    usleep(100);
    perfflow_region_end("inner");
}

static void outer(void) {
    perfflow_region_begin("outer");
    for (int k = 0; k < 3; k++)
        inner();
    perfflow_region_end("outer");
}

static void *worker(void *unused) {
    (void)unused;
    perfflow_region_begin("worker");
    usleep(500);
    perfflow_async_end("transfer", "io", transfer);
    perfflow_region_end("worker");
    return NULL;
}

int main(void) {
    perfflow_region_begin("main");
    outer();
    outer();
    transfer = perfflow_async_begin("transfer", "io");
    pthread_t thread;
    pthread_create(&thread, NULL, worker, NULL);
    pthread_join(thread, NULL);
    perfflow_region_end("main");
    return 0;
}
