/* A workflow of four processes linked by flows whose critical path is known
 * by construction, whatever the machine's load. The driver launches two
 * short workers and a long one (fork and exec of this program), each
 * launch a flow departure the worker's task arrives from. The long worker
 * blocks on a pipe. The driver collects the short workers' results (a flow
 * back from each), only then writes to the pipe, and collects the long
 * worker's result last. So the last flow back leaves the long worker after
 * everything the driver did before collecting it, and the critical path
 * runs through the long worker's task, never through a short one's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WOVEN(scope, flow) \
    __attribute__((annotate("@critical_path(scope='" scope "', flow='" flow "')"))) \
    __attribute__((noinline))

WOVEN("go_a", "out") static void launch_a(void) {}
WOVEN("go_b", "out") static void launch_b(void) {}
WOVEN("go_long", "out") static void launch_long(void) {}
WOVEN("back_a", "in") static void collect_a(void) {}
WOVEN("back_b", "in") static void collect_b(void) {}
WOVEN("back_long", "in") static void collect_long(void) {}

WOVEN("back_a", "out") static void reply_a(void) {}
WOVEN("back_b", "out") static void reply_b(void) {}
WOVEN("back_long", "out") static void reply_long(void) {}
WOVEN("go_a", "in") static void task_a(void) { reply_a(); }
WOVEN("go_b", "in") static void task_b(void) { reply_b(); }
WOVEN("go_long", "in") static void task_long(int release) {
    char byte;
    if (read(release, &byte, 1) != 1)
        exit(3);
    reply_long();
}

static pid_t start(const char *self, const char *role, int release) {
    char fd[16];
    snprintf(fd, sizeof fd, "%d", release);
    pid_t pid = fork();
    if (pid == 0) {
        execl(self, self, role, fd, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static int finished(pid_t pid) {
    int status;
    return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv) {
    if (argc == 3) {
        if (strcmp(argv[1], "a") == 0)
            task_a();
        else if (strcmp(argv[1], "b") == 0)
            task_b();
        else
            task_long(atoi(argv[2]));
        return 0;
    }
    int release[2];
    if (pipe(release) != 0)
        return 1;
    launch_a();
    pid_t a = start(argv[0], "a", release[0]);
    launch_b();
    pid_t b = start(argv[0], "b", release[0]);
    launch_long();
    pid_t slow = start(argv[0], "long", release[0]);
    if (!finished(a) || !finished(b))
        return 1;
    collect_a();
    collect_b();
    if (write(release[1], "x", 1) != 1)
        return 1;
    if (!finished(slow))
        return 1;
    collect_long();
    return 0;
}
