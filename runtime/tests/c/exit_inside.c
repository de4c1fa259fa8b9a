/* exit() from inside a woven function: the weaver emits the exit event right
 * before the call, as done here by hand. */
#include <stdlib.h>

#include "common.h"

SITE(outer_site, PERFFLOW_POINTCUT_AROUND, "outer", "exit_inside.c", NULL);
SITE(quit_site, PERFFLOW_POINTCUT_AROUND, "quit", "exit_inside.c", NULL);

static void quit(void) {
    perfflow_site_enter(&quit_site);
    perfflow_site_exit(&quit_site);
    exit(3);
}

int main(void) {
    print_identity();
    perfflow_site_enter(&outer_site);
    for (int i = 0; i < 10; i++) {
        perfflow_site_enter(&quit_site);
        perfflow_site_exit(&quit_site);
    }
    perfflow_site_exit(&outer_site);
    perfflow_site_enter(&outer_site);
    quit();
    return 0;
}
