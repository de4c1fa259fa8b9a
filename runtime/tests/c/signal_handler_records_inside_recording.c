/* Records PAIRS enter/exit pairs while a 20 us interval timer interrupts
 * the thread; its handler records a pair of its own each time. Prints how
 * many pairs the handler recorded. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "common.h"

SITE(work_site, PERFFLOW_POINTCUT_AROUND, "work", "signal_handler_records_inside_recording.c", NULL);
SITE(handler_site, PERFFLOW_POINTCUT_AROUND, "in_handler", "signal_handler_records_inside_recording.c", NULL);

static volatile sig_atomic_t handled;

static void on_alarm(int sig) {
    (void)sig;
    perfflow_site_enter(&handler_site);
    perfflow_site_exit(&handler_site);
    handled++;
}

int main(int argc, char **argv) {
    long pairs = argc > 1 ? atol(argv[1]) : 3000000;
    print_identity();
    /* The runtime starts on the first event, before any signal arrives. */
    perfflow_site_enter(&work_site);
    perfflow_site_exit(&work_site);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_alarm;
    action.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &action, NULL);
    struct itimerval every = {{0, 20}, {0, 20}};
    setitimer(ITIMER_REAL, &every, NULL);
    for (long i = 1; i < pairs; i++) {
        perfflow_site_enter(&work_site);
        perfflow_site_exit(&work_site);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("pairs=%ld handled=%d\n", pairs, (int)handled);
    return 0;
}
