/* Three around sites for cpu-mem-usage: "spin" keeps the CPU busy for
 * 60 ms (and prints the CPU share it measured itself), "nap" sleeps for 60 ms, "touch" writes to every page of a 64 MiB
 * block it frees only after the region has ended. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"

SITE(spin_site, PERFFLOW_POINTCUT_AROUND, "spin", "usage_regions.c", NULL);
SITE(nap_site, PERFFLOW_POINTCUT_AROUND, "nap", "usage_regions.c", NULL);
SITE(touch_site, PERFFLOW_POINTCUT_AROUND, "touch", "usage_regions.c", NULL);

#define MIB (1024u * 1024u)

static double mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double thread_cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static volatile unsigned long sink;

/* Also prints the share of the CPU the thread itself saw while spinning,
 * which is below 100 % when other processes compete for the CPU. */
static void spin(void) {
    perfflow_site_enter(&spin_site);
    double wall0 = mono_ms(), cpu0 = thread_cpu_ms();
    double end = wall0 + 60.0;
    while (mono_ms() < end)
        for (int i = 0; i < 1000; i++)
            sink += (unsigned long)i;
    double share = (thread_cpu_ms() - cpu0) / (mono_ms() - wall0) * 100.0;
    perfflow_site_exit(&spin_site);
    printf("spin_share=%.1f\n", share);
}

static void nap(void) {
    perfflow_site_enter(&nap_site);
    struct timespec ts = {0, 60 * 1000 * 1000};
    nanosleep(&ts, NULL);
    perfflow_site_exit(&nap_site);
}

static char *touch(void) {
    perfflow_site_enter(&touch_site);
    char *block = malloc(64 * MIB);
    if (block)
        memset(block, 1, 64 * MIB);
    perfflow_site_exit(&touch_site);
    return block;
}

int main(void) {
    print_identity();
    spin();
    nap();
    char *block = touch();
    printf("touched=%d\n", block != NULL && block[64 * MIB - 1] == 1);
    free(block);
    return 0;
}
