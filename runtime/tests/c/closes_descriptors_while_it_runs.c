/* Closes its standard output and puts it back (close, open, dup2), over
 * and over for SECONDS seconds while it records, then prints "loop
 * finished". The runtime's signal watcher lists /proc/self/task meanwhile
 * to see whether the program has threads left; the listing's descriptor
 * then often gets number 1, which the program takes back under it. A
 * listing cut short must never read as "no thread left", which ends the
 * process. */
#include <fcntl.h>
#include <time.h>

#include "common.h"

SITE(work_site, PERFFLOW_POINTCUT_AROUND, "work", "closes_descriptors_while_it_runs.c", NULL);

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 3.0;
    print_identity();
    int keep = dup(1);
    double end = now() + seconds;
    while (now() < end) {
        perfflow_site_enter(&work_site);
        close(1);
        int fd = open("/dev/null", O_WRONLY);
        if (fd != 1 && fd >= 0)
            close(fd);
        dup2(keep, 1);
        perfflow_site_exit(&work_site);
    }
    const char done[] = "loop finished\n";
    if (write(keep, done, sizeof done - 1) < 0)
        return 1;
    return 0;
}
