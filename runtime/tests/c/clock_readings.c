/* Reads CLOCK_MONOTONIC around each enter and exit of one site and prints
 * the readings, "a b c" per call (enter between a and b, exit between b
 * and c), PAIRS times, pausing 2 ms every 100 calls so that the calls span
 * many of the runtime's clock calibrations. */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "common.h"

SITE(tick_site, PERFFLOW_POINTCUT_AROUND, "tick", "clock_readings.c", NULL);

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv) {
    long pairs = argc > 1 ? atol(argv[1]) : 1000;
    print_identity();
    struct timespec pause_2ms = {0, 2 * 1000 * 1000};
    for (long i = 0; i < pairs; i++) {
        uint64_t a = mono_ns();
        perfflow_site_enter(&tick_site);
        uint64_t b = mono_ns();
        perfflow_site_exit(&tick_site);
        uint64_t c = mono_ns();
        printf("reading %llu %llu %llu\n", (unsigned long long)a, (unsigned long long)b,
               (unsigned long long)c);
        if (i % 100 == 99)
            nanosleep(&pause_2ms, NULL);
    }
    return 0;
}
