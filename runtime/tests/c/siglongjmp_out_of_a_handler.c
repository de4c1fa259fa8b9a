/* A SIGALRM handler that leaves by siglongjmp, never returning to the
 * code it interrupted: the interval timer fires every 200 us while the
 * main loop records back to back, so most jumps leave a store of the
 * runtime unfinished. After ROUNDS such jumps the program records
 * AFTER pairs of another site and prints how many rounds it ran; the
 * trace must hold those pairs. */
#include <setjmp.h>
#include <signal.h>
#include <sys/time.h>

#include "common.h"

SITE(step_site, PERFFLOW_POINTCUT_AROUND, "step", "siglongjmp_out_of_a_handler.c", NULL);
SITE(after_site, PERFFLOW_POINTCUT_AROUND, "after", "siglongjmp_out_of_a_handler.c", NULL);

static sigjmp_buf env;

static void on_alarm(int sig) {
    (void)sig;
    siglongjmp(env, 1);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    int after = argc > 2 ? atoi(argv[2]) : 1000;
    print_identity();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    volatile int done = 0;
    sigsetjmp(env, 1);
    if (done < rounds) {
        done++;
        struct itimerval once = {{0, 0}, {0, 200}};
        setitimer(ITIMER_REAL, &once, NULL);
        for (;;) {
            perfflow_site_enter(&step_site);
            perfflow_site_exit(&step_site);
        }
    }
    for (int i = 0; i < after; i++) {
        perfflow_site_enter(&after_site);
        perfflow_site_exit(&after_site);
    }
    printf("rounds=%d after=%d\n", done, after);
    return 0;
}
