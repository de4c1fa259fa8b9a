/* Exit handlers the program registers after its first event run before the
 * runtime's final flush (exit handlers run in reverse order): what they
 * record is in the trace, although glibc ends the main thread's
 * thread-locals (the runtime's included) before it runs them. MODE
 * "return" returns from main, "exit" calls exit(0). */
#include <stdlib.h>

#include "common.h"

SITE(main_site, PERFFLOW_POINTCUT_AROUND, "main", "exit_handlers_after_the_first_event.c", NULL);
SITE(finalize_site, PERFFLOW_POINTCUT_AROUND, "finalize", "exit_handlers_after_the_first_event.c",
     NULL);

static void finalize(void) {
    for (int i = 0; i < 3; i++) {
        perfflow_site_enter(&finalize_site);
        perfflow_site_exit(&finalize_site);
    }
}

int main(int argc, char **argv) {
    print_identity();
    perfflow_site_enter(&main_site);
    atexit(finalize);
    perfflow_site_exit(&main_site);
    if (argc > 1 && strcmp(argv[1], "exit") == 0)
        exit(0);
    return 0;
}
