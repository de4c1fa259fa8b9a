/* Rough cost of recording: perfflow_site_enter/exit pairs against a baseline
 * that reads the monotonic clock twice and stores two 16-byte records in a
 * thread-local buffer. Prints ns per enter/exit pair; never fails. */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "common.h"

SITE(bench_site, PERFFLOW_POINTCUT_AROUND, "bench", "bench_hot_path.c", NULL);

struct record {
    uint64_t ts;
    uint64_t tag;
};

#define BASE_CAP 65536
static __thread struct record base_buf[BASE_CAP];
static __thread unsigned base_len;

static inline uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static __attribute__((noinline)) void base_store(uint64_t tag) {
    uint64_t t = mono_ns();
    if (base_len == BASE_CAP)
        base_len = 0;
    base_buf[base_len].ts = t;
    base_buf[base_len].tag = tag;
    base_len++;
}

static double now_s(void) { return (double)mono_ns() / 1e9; }

static void run_baseline(long pairs) {
    for (long i = 0; i < pairs; i++) {
        base_store((uintptr_t)&bench_site | 1);
        base_store((uintptr_t)&bench_site | 2);
    }
}

static void run_perfflow(long pairs) {
    for (long i = 0; i < pairs; i++) {
        perfflow_site_enter(&bench_site);
        perfflow_site_exit(&bench_site);
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ns per pair over short rounds: minimum and median. Rounds that contain a
 * chunk hand-off (one in 65536 records), or run while the writer thread
 * formats the chunk handed off (a few milliseconds, on the other CPU),
 * end up in the tail; a 1 ms pause between rounds keeps those few. */
#define ROUNDS 301
#define ROUND_PAIRS 500
static void rounds(void (*run)(long), double *min, double *median) {
    double t[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_s();
        run(ROUND_PAIRS);
        t[r] = (now_s() - t0) * 1e9 / ROUND_PAIRS;
        struct timespec pause = {0, 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    qsort(t, ROUNDS, sizeof t[0], cmp_double);
    *min = t[0];
    *median = t[ROUNDS / 2];
}

static double average(void (*run)(long), long pairs) {
    double t0 = now_s();
    run(pairs);
    return (now_s() - t0) * 1e9 / (double)pairs;
}

int main(int argc, char **argv) {
    long long_pairs = argc > 1 ? atol(argv[1]) : 2000000;
    print_identity();
    /* warm up: starts the runtime, this thread's buffer and the baseline's */
    run_perfflow(1);
    run_baseline(BASE_CAP);
    double bmin, bmed, pmin, pmed;
    rounds(run_baseline, &bmin, &bmed);
    rounds(run_perfflow, &pmin, &pmed);
    printf("short rounds, ns per enter/exit pair: baseline min %.1f median %.1f; "
           "perfflow min %.1f median %.1f (median ratio %.2fx)\n",
           bmin, bmed, pmin, pmed, pmed / bmed);
    double blong = average(run_baseline, long_pairs);
    double plong = average(run_perfflow, long_pairs);
    printf("%ld pairs incl. formatting and writing: baseline %.1f, perfflow %.1f ns/pair (%.2fx)\n",
           long_pairs, blong, plong, plong / blong);
    return 0;
}
