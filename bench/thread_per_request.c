/* bench/thread_per_request.c - a thread-per-request server: starts RATE
 * short detached threads per second for SECONDS seconds (fewer when thread
 * creation cannot keep up), each one woven call around a little work.
 *
 * Usage: thread_per_request RATE SECONDS
 * Prints: requests= (threads started), failed= (pthread_create errors),
 * peak_threads= (the most threads of the process seen at once, sampled
 * every 10 ms). Untraced, a request thread ends long before the next
 * starts; a runtime that holds ending threads back shows here as a pile-up.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "perfflow.h"

static void *site_copy;
static const struct perfflow_site site = {PERFFLOW_SITE_ABI_VERSION, PERFFLOW_POINTCUT_AROUND,
                                          PERFFLOW_FLOW_NONE, 1, "handle_request",
                                          "thread_per_request.c", NULL, "handle_request",
                                          &site_copy};

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int threads_now(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

static void *request(void *arg) {
    perfflow_site_enter(&site);
    for (volatile int i = 0; i < 20000; i++)
        ;
    perfflow_site_exit(&site);
    return arg;
}

int main(int argc, char **argv) {
    if (argc != 3 || atof(argv[1]) <= 0 || atof(argv[2]) <= 0) {
        fprintf(stderr, "usage: thread_per_request RATE SECONDS\n");
        return 2;
    }
    double rate = atof(argv[1]), seconds = atof(argv[2]), start = now(), sampled = 0;
    long requests = 0, failed = 0;
    int peak = 0;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (double t = now() - start; t < seconds; t = now() - start) {
        while (requests < t * rate && now() - start < seconds) {
            pthread_t thread;
            if (pthread_create(&thread, &attr, request, NULL) != 0)
                failed++;
            requests++;
        }
        if (now() - sampled > 0.01) {
            sampled = now();
            int n = threads_now();
            peak = n > peak ? n : peak;
        }
        usleep(200);
    }
    printf("requests=%ld failed=%ld peak_threads=%d\n", requests, failed, peak);
    return 0;
}
