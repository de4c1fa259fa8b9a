/* The working directory disappears before the first event, so the trace file
 * cannot be created: tracing must switch itself off, not break the program. */
#include <sys/stat.h>

#include "common.h"

SITE(work_site, PERFFLOW_POINTCUT_AROUND, "work", "no_trace_dir.c", NULL);

int main(void) {
    if (mkdir("gone", 0700) != 0 || chdir("gone") != 0 || rmdir("../gone") != 0)
        return 2;
    for (int i = 0; i < 1000; i++) {
        perfflow_site_enter(&work_site);
        perfflow_site_exit(&work_site);
    }
    puts("done");
    return 0;
}
