/* One-sided and async pointcuts, plus misuse that must be reported once. */
#include "common.h"

SITE(before_site, PERFFLOW_POINTCUT_BEFORE, "before_only", "pointcuts.c", NULL);
SITE(after_site, PERFFLOW_POINTCUT_AFTER, "after_only", "pointcuts.c", NULL);
SITE(async_site, PERFFLOW_POINTCUT_AROUND_ASYNC, "async_work", "pointcuts.c", "io");
SITE(async_noscope_site, PERFFLOW_POINTCUT_AROUND_ASYNC, "async_plain", "pointcuts.c", NULL);
SITE(before_async_site, PERFFLOW_POINTCUT_BEFORE_ASYNC, "async_mark", "pointcuts.c", "io");
SITE(lonely_site, PERFFLOW_POINTCUT_AROUND, "lonely", "pointcuts.c", NULL);

int main(void) {
    print_identity();
    /* before: instant at enter; the stray exit is ignored */
    perfflow_site_enter(&before_site);
    perfflow_site_exit(&before_site);
    /* after: instant at exit; the stray enter is ignored */
    perfflow_site_enter(&after_site);
    perfflow_site_exit(&after_site);
    /* async: nested begin/end pairs */
    perfflow_site_enter(&async_site);
    perfflow_site_enter(&async_noscope_site);
    perfflow_site_exit(&async_noscope_site);
    perfflow_site_exit(&async_site);
    perfflow_site_enter(&before_async_site);
    perfflow_site_exit(&before_async_site);
    /* misuse: exits without enters, reported once */
    perfflow_site_exit(&lonely_site);
    perfflow_site_exit(&lonely_site);
    /* null sites are ignored */
    perfflow_site_enter(NULL);
    perfflow_site_exit(NULL);
    return 0;
}
