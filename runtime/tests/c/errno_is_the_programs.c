/* Every call into the runtime leaves errno as the program set it: the
 * first event (which starts the runtime and creates the log directory,
 * an existing one: EEXIST), events that hand a full chunk over, regions
 * and async operations, cpu-mem-usage reads. Prints "errno kept" or the
 * first call that changed it. */
#include <errno.h>

#include "common.h"

SITE(work_site, PERFFLOW_POINTCUT_AROUND, "work", "errno_is_the_programs.c", NULL);

static int failed;

static void expect(const char *what, long i) {
    if (errno != ENOENT && !failed) {
        printf("errno %d after %s (call %ld)\n", errno, what, i);
        failed = 1;
    }
    errno = ENOENT;
}

int main(int argc, char **argv) {
    long pairs = argc > 1 ? atol(argv[1]) : 200000;
    print_identity();
    errno = ENOENT;
    for (long i = 0; i < pairs; i++) {
        perfflow_site_enter(&work_site);
        expect("perfflow_site_enter", i);
        perfflow_site_exit(&work_site);
        expect("perfflow_site_exit", i);
        if (i % 1000 == 0) {
            perfflow_region_begin("region");
            expect("perfflow_region_begin", i);
            perfflow_region_end("region");
            expect("perfflow_region_end", i);
            uint64_t id = perfflow_async_begin("op", "errno");
            expect("perfflow_async_begin", i);
            perfflow_async_end("op", "errno", id);
            expect("perfflow_async_end", i);
        }
    }
    if (!failed)
        printf("errno kept\n");
    return 0;
}
