/* A traced program whose handling of signals must be the same with and
 * without perfflow. Every mode records an event first (tracing starts
 * there), then does what argv[1] names and prints what it sees:
 *
 *   dispositions  the action of SIGINT, SIGHUP, SIGQUIT, SIGTERM, SIGABRT;
 *   default-only  CPython's rule: a SIGINT handler installed only if the
 *                 action is still the default, then SIGINT raised; prints
 *                 "interrupted" if the handler ran;
 *   late-handler  a SIGTERM handler installed after the first event, then
 *                 SIGTERM sent to the process;
 *   signalfd      SIGHUP, SIGTERM and SIGINT blocked in main and read from
 *                 a signalfd, while a helper thread has SIGINT unblocked:
 *                 SIGHUP and SIGTERM are read, SIGINT ends the process.
 *
 * These signals are set to their default action first: a test run in
 * the background may inherit SIGINT ignored. Output is flushed line by line
 * so a death by signal keeps it. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>

#include "common.h"

SITE(main_site, PERFFLOW_POINTCUT_AROUND, "main_work", "signal_dispositions.c", NULL);

static volatile sig_atomic_t caught;

static void on_signal(int sig) { caught = sig; }

static const char *action_of(int sig) {
    struct sigaction old;
    if (sigaction(sig, NULL, &old) != 0)
        return "error";
    if (old.sa_handler == SIG_DFL)
        return "default";
    if (old.sa_handler == SIG_IGN)
        return "ignore";
    return "handler";
}

static void say(const char *line) {
    printf("%s\n", line);
    fflush(stdout);
}

static int dispositions(void) {
    const int sigs[] = {SIGINT, SIGHUP, SIGQUIT, SIGTERM, SIGABRT};
    const char *names[] = {"INT", "HUP", "QUIT", "TERM", "ABRT"};
    for (int i = 0; i < 5; i++)
        printf("%s=%s\n", names[i], action_of(sigs[i]));
    return 0;
}

static int default_only(void) {
    struct sigaction old;
    sigaction(SIGINT, NULL, &old);
    if (old.sa_handler == SIG_DFL) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigaction(SIGINT, &sa, NULL);
        say("installed");
    }
    raise(SIGINT);
    if (caught == SIGINT)
        say("interrupted");
    return 0;
}

static int late_handler(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    kill(getpid(), SIGTERM);
    while (caught != SIGTERM)
        usleep(1000);
    say("handled TERM");
    return 0;
}

static int helper_ready[2];

static void *helper(void *arg) {
    (void)arg;
    sigset_t intr;
    sigemptyset(&intr);
    sigaddset(&intr, SIGINT);
    pthread_sigmask(SIG_UNBLOCK, &intr, NULL);
    char byte = 1;
    if (write(helper_ready[1], &byte, 1) != 1)
        abort();
    for (;;)
        pause();
    return NULL;
}

static int read_signal(int fd) {
    struct signalfd_siginfo info;
    if (read(fd, &info, sizeof info) != (ssize_t)sizeof info)
        return -1;
    return (int)info.ssi_signo;
}

static int via_signalfd(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    int fd = signalfd(-1, &set, SFD_CLOEXEC);
    if (fd < 0 || pipe(helper_ready) != 0)
        return 3;
    pthread_t t;
    if (pthread_create(&t, NULL, helper, NULL) != 0)
        return 3;
    char byte;
    if (read(helper_ready[0], &byte, 1) != 1)
        return 3;
    kill(getpid(), SIGHUP);
    printf("read %d\n", read_signal(fd) == SIGHUP ? 1 : 0);
    kill(getpid(), SIGTERM);
    printf("read %d\n", read_signal(fd) == SIGTERM ? 1 : 0);
    fflush(stdout);
    /* Only the helper leaves SIGINT unblocked: the kernel delivers it there
     * and its default action ends the process. */
    kill(getpid(), SIGINT);
    for (;;)
        pause();
}

int main(int argc, char **argv) {
    signal(SIGINT, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGABRT, SIG_DFL);
    perfflow_site_enter(&main_site);
    perfflow_site_exit(&main_site);
    const char *mode = argc > 1 ? argv[1] : "";
    int status = 2;
    if (strcmp(mode, "dispositions") == 0)
        status = dispositions();
    else if (strcmp(mode, "default-only") == 0)
        status = default_only();
    else if (strcmp(mode, "late-handler") == 0)
        status = late_handler();
    else if (strcmp(mode, "signalfd") == 0)
        status = via_signalfd();
    perfflow_site_enter(&main_site);
    perfflow_site_exit(&main_site);
    return status;
}
