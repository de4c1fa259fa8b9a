/* A thread records the process's first event, which starts the runtime,
 * while the main thread forks. The runtime reads the host name while it
 * starts; this program's gethostname (which the runtime's call binds to)
 * lets the main thread fork at that very moment. The child records an event
 * and exits; the program prints "child=ok" if it did within 20 s, else kills
 * it and prints "child=hung". */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "common.h"

SITE(first_site, PERFFLOW_POINTCUT_AROUND, "first", "fork_while_the_runtime_starts.c", NULL);
SITE(child_site, PERFFLOW_POINTCUT_AROUND, "in_child", "fork_while_the_runtime_starts.c", NULL);

static pthread_t main_thread;
static atomic_int forking;

static void pause_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

int gethostname(char *name, size_t len) {
    struct utsname u;
    if (uname(&u) != 0)
        return -1;
    snprintf(name, len, "%s", u.nodename);
    if (!pthread_equal(pthread_self(), main_thread)) {
        /* The runtime is starting on the recording thread: hold it there
         * until the main thread is about to fork, and a little longer. */
        for (int i = 0; i < 2000 && !atomic_load(&forking); i++)
            pause_ms(1);
        pause_ms(200);
    }
    return 0;
}

static void *record_first(void *arg) {
    (void)arg;
    perfflow_site_enter(&first_site);
    perfflow_site_exit(&first_site);
    return NULL;
}

int main(void) {
    main_thread = pthread_self();
    print_identity();
    pthread_t t;
    if (pthread_create(&t, NULL, record_first, NULL) != 0)
        return 2;
    /* Give the thread time to reach the runtime's start. */
    pause_ms(50);
    atomic_store(&forking, 1);
    pid_t pid = fork();
    if (pid == 0) {
        perfflow_site_enter(&child_site);
        perfflow_site_exit(&child_site);
        exit(0);
    }
    int status = 0;
    int done = 0;
    for (int i = 0; i < 2000 && !done; i++) {
        done = waitpid(pid, &status, WNOHANG) == pid;
        if (!done)
            pause_ms(10);
    }
    if (!done) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    pthread_join(t, NULL);
    printf("child_pid=%d child=%s\n", (int)pid,
           !done ? "hung" : (WIFEXITED(status) && WEXITSTATUS(status) == 0) ? "ok" : "failed");
    return 0;
}
