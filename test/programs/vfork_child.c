/* A woven function vforks; the child runs another woven function, whose
 * exec fails and which leaves through _exit (the weaver puts its exit advice
 * before the call). The parent's trace holds the parent's events only. */
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) static void
child_side(void) {
    execl("/nonexistent/perfflow/program", "program", (char *)0);
    _exit(127);
}

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) static pid_t
spawn(void) {
    pid_t pid = vfork();
    if (pid == 0)
        child_side();
    return pid;
}

int main(void) {
    for (int i = 0; i < 3; i++) {
        int status = 0;
        pid_t pid = spawn();
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 127)
            return 1;
    }
    return 0;
}
