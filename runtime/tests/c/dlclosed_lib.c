/* A woven shared library, built twice by the test under two names: LIB_FN
 * names its woven function (same length in both builds, so both builds lay
 * their sites out alike and a second one loaded where the first was has its
 * site at the same address). */
#include "common.h"

SITE(work_site, PERFFLOW_POINTCUT_AROUND, LIB_FN, "dlclosed_lib.c", NULL);
SITE(left_open_site, PERFFLOW_POINTCUT_AROUND, LIB_FN "_open", "dlclosed_lib.c", NULL);

/* Records `calls` complete slices of LIB_FN, then enters LIB_FN_open and
 * never leaves it: the slice stays open until the trace is completed. */
void lib_work(int calls) {
    for (int i = 0; i < calls; i++) {
        perfflow_site_enter(&work_site);
        perfflow_site_exit(&work_site);
    }
    perfflow_site_enter(&left_open_site);
}

const void *lib_site(void) { return &work_site; }
