/* PerfFlowAspect's ABI with async=1: one thread calls perfflow_weave_before
 * three times for "fetch" and twice for "store", another thread calls the
 * matching perfflow_weave_after, interleaved. */
#define _GNU_SOURCE
#include <pthread.h>

#include "common.h"

static void before(const char *fn) {
    perfflow_weave_before(1, "fifo.cpp", fn, "net", "NA", "around");
}

static void after(const char *fn) {
    perfflow_weave_after(1, "fifo.cpp", fn, "net", "NA", "around");
}

static void *begin_all(void *arg) {
    (void)arg;
    before("_Z5fetchv");
    before("_Z5storev");
    before("_Z5fetchv");
    before("_Z5storev");
    before("_Z5fetchv");
    printf("begin_tid=%ld\n", (long)gettid());
    return NULL;
}

static void *end_all(void *arg) {
    (void)arg;
    after("_Z5fetchv");
    after("_Z5fetchv");
    after("_Z5storev");
    after("_Z5fetchv");
    after("_Z5storev");
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
    return 0;
}
