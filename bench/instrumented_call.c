/* bench/instrumented_call.c - what the runtime's -finstrument-functions
 * hooks cost per call. Built with -finstrument-functions (and once without,
 * as the reference), it times N calls of an empty noinline function, which
 * the filter file either selects (traced) or not (filtered out), and prints
 * "<ns per call>" for the chosen function. main and the timing are not
 * instrumented.
 *   instrumented_call traced|skipped N */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINSTR __attribute__((no_instrument_function))

__attribute__((noinline)) void traced_fn(void) { __asm__ volatile(""); }
__attribute__((noinline)) void skipped_fn(void) { __asm__ volatile(""); }

static NOINSTR double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

NOINSTR int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s traced|skipped N\n", argv[0]);
        return 2;
    }
    void (*fn)(void) = strcmp(argv[1], "traced") == 0 ? traced_fn : skipped_fn;
    long n = atol(argv[2]);
    fn(); /* the first call of each function takes the hooks' cold path */
    double start = now_ns();
    for (long i = 0; i < n; i++)
        fn();
    double elapsed = now_ns() - start;
    printf("%.2f\n", elapsed / (double)n);
    return 0;
}
