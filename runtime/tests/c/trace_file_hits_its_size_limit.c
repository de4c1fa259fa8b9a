/* The trace file may not grow beyond LIMIT bytes (RLIMIT_FSIZE, as a full
 * disk would stop it). With SIGXFSZ as the third argument the signal keeps
 * its default action (a write past the limit raises it, and it ends the
 * process: `ulimit -f` in a job script); otherwise it is ignored and
 * writes fail with EFBIG. Records PAIRS enter/exit pairs; after the
 * runtime's exit handler, prints what it recorded and
 * perfflow_dropped_events(). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "common.h"

SITE(work_site, PERFFLOW_POINTCUT_AROUND, "work", "trace_file_hits_its_size_limit.c", NULL);

static long pairs;

static void after_the_trace(void) {
    printf("recorded=%ld dropped=%llu\n", 2 * pairs,
           (unsigned long long)perfflow_dropped_events());
    fflush(stdout);
}

int main(int argc, char **argv) {
    long limit = argc > 1 ? atol(argv[1]) : 3000000;
    pairs = argc > 2 ? atol(argv[2]) : 200000;
    if (argc <= 3 || strcmp(argv[3], "SIGXFSZ") != 0)
        signal(SIGXFSZ, SIG_IGN);
    struct rlimit size = {(rlim_t)limit, (rlim_t)limit};
    setrlimit(RLIMIT_FSIZE, &size);
    atexit(after_the_trace);
    print_identity();
    for (long i = 0; i < pairs; i++) {
        perfflow_site_enter(&work_site);
        perfflow_site_exit(&work_site);
    }
    return 0;
}
