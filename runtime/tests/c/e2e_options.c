/* A small traced program for the PERFFLOW_OPTIONS tests: one outer slice
 * around 100 steps. Without arguments it prints its identity, the instance
 * path it sees after its first event and the one a child shell inherits;
 * with "quiet" it prints only its result, so outputs can be compared. */
#include <stdlib.h>
#include <string.h>

#include "common.h"

SITE(main_site, PERFFLOW_POINTCUT_AROUND, "main_work", "e2e_options.c", NULL);
SITE(step_site, PERFFLOW_POINTCUT_AROUND, "step", "e2e_options.c", NULL);

int main(int argc, char **argv) {
    int quiet = argc > 1 && strcmp(argv[1], "quiet") == 0;
    if (!quiet)
        print_identity();
    perfflow_site_enter(&main_site);
    if (!quiet) {
        const char *path = getenv("PERFFLOW_INSTANCE_PATH");
        printf("instance_path=%s\n", path ? path : "(unset)");
        fflush(stdout);
        if (system("echo child_instance_path=${PERFFLOW_INSTANCE_PATH:-(unset)}") != 0)
            return 2;
    }
    long sum = 0;
    for (long i = 0; i < 100; i++) {
        perfflow_site_enter(&step_site);
        sum += i;
        perfflow_site_exit(&step_site);
    }
    perfflow_site_exit(&main_site);
    printf("sum=%ld\n", sum);
    return 0;
}
