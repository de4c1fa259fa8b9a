/* abort() inside two open slices. No core file is written. */
#include <stdlib.h>
#include <sys/resource.h>

#include "common.h"

SITE(outer_site, PERFFLOW_POINTCUT_AROUND, "outer", "e2e_abort.c", NULL);
SITE(step_site, PERFFLOW_POINTCUT_AROUND, "step", "e2e_abort.c", NULL);
SITE(fail_site, PERFFLOW_POINTCUT_AROUND, "fail", "e2e_abort.c", NULL);

int main(void) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    print_identity();
    perfflow_site_enter(&outer_site);
    for (int i = 0; i < 10; i++) {
        perfflow_site_enter(&step_site);
        perfflow_site_exit(&step_site);
    }
    perfflow_site_enter(&fail_site);
    abort();
}
