/* The manual async API across threads: one thread begins four operations,
 * another thread ends them, in reverse order. */
#define _GNU_SOURCE
#include <pthread.h>
#include <inttypes.h>
#include <string.h>

#include "common.h"

static uint64_t ids[4];

static void *begin_all(void *arg) {
    (void)arg;
    char name[32];
    for (int i = 0; i < 3; i++) {
        /* A name built in a reused buffer. */
        strcpy(name, "transfer");
        ids[i] = perfflow_async_begin(name, "io");
    }
    ids[3] = perfflow_async_begin("plain", NULL);
    printf("begin_tid=%ld\n", (long)gettid());
    return NULL;
}

static void *end_all(void *arg) {
    (void)arg;
    perfflow_async_end("plain", NULL, ids[3]);
    for (int i = 2; i >= 0; i--)
        perfflow_async_end("transfer", "io", ids[i]);
    printf("end_tid=%ld\n", (long)gettid());
    return NULL;
}

int main(void) {
    print_identity();
    pthread_t a, b;
    pthread_create(&a, NULL, begin_all, NULL);
    pthread_join(a, NULL);
    pthread_create(&b, NULL, end_all, NULL);
    pthread_join(b, NULL);
    printf("ids=%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", ids[0], ids[1], ids[2],
           ids[3]);
    return 0;
}
