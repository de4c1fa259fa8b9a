/* bench/writer_cost.c - what recording and writing one event costs, all
 * threads included, against the floor of two clock reads and two stores.
 *
 * Usage: writer_cost MODE THREADS PAIRS
 *   MODE floor: each call reads CLOCK_MONOTONIC twice and stores two
 *               16-byte records in a thread-local ring (what any tracer
 *               must do at least);
 *   MODE trace: each call is perfflow_site_enter + perfflow_site_exit of
 *               one static site (the runtime's options come from
 *               PERFFLOW_OPTIONS).
 * Prints, once the process's trace is complete (an exit handler that runs
 * after the runtime's):
 *   ns_per_call=  each thread's loop time over its calls, averaged
 *   cpu_ns_per_call=  the process's user+system CPU from before the
 *                 threads start to the end of the final flush, over all
 *                 calls (the writer thread's formatting included)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "perfflow.h"

static void *site_copy;
static const struct perfflow_site site = {PERFFLOW_SITE_ABI_VERSION, PERFFLOW_POINTCUT_AROUND,
                                          PERFFLOW_FLOW_NONE, 1, "work", "writer_cost.c", NULL,
                                          "work", &site_copy};

struct record {
    uint64_t ts;
    uint64_t tag;
};
#define RING 65536
static __thread struct record ring[RING];
static __thread unsigned ring_len;

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static __attribute__((noinline)) void floor_store(uint64_t tag) {
    uint64_t t = mono_ns();
    if (ring_len == RING)
        ring_len = 0;
    ring[ring_len].ts = t;
    ring[ring_len].tag = tag;
    ring_len++;
}

static int trace_mode;
static long pairs;
static double loop_ns[64];
static double cpu_start;
static long threads;

static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void *worker(void *arg) {
    long id = (long)arg;
    uint64_t t0 = mono_ns();
    if (trace_mode) {
        for (long i = 0; i < pairs; i++) {
            perfflow_site_enter(&site);
            perfflow_site_exit(&site);
        }
    } else {
        for (long i = 0; i < pairs; i++) {
            floor_store((uintptr_t)&site | 1);
            floor_store((uintptr_t)&site | 2);
        }
    }
    loop_ns[id] = (double)(mono_ns() - t0) / (double)pairs;
    return NULL;
}

static void report(void) {
    double ns = 0;
    for (long t = 0; t < threads; t++)
        ns += loop_ns[t] / (double)threads;
    double cpu = (cpu_s() - cpu_start) * 1e9 / ((double)pairs * (double)threads);
    printf("ns_per_call=%.1f cpu_ns_per_call=%.1f\n", ns, cpu);
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[1], "floor") && strcmp(argv[1], "trace"))) {
        fprintf(stderr, "usage: writer_cost floor|trace THREADS PAIRS\n");
        return 2;
    }
    trace_mode = strcmp(argv[1], "trace") == 0;
    threads = atol(argv[2]);
    pairs = atol(argv[3]);
    if (threads < 1 || threads > 64 || pairs < 1) {
        fprintf(stderr, "writer_cost: THREADS from 1 to 64, PAIRS at least 1\n");
        return 2;
    }
    /* Registered before the first event, so it runs after the runtime's
     * own exit handler has completed the trace. */
    atexit(report);
    cpu_start = cpu_s();
    pthread_t tid[64];
    for (long t = 0; t < threads; t++)
        pthread_create(&tid[t], NULL, worker, (void *)t);
    for (long t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    return 0;
}
