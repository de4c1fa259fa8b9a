/* A woven function vforks; the child enters another woven function, fails
 * to exec, and leaves both through _exit (the weaver puts exit advice
 * before a process-ending call). The child shares the parent's memory until
 * it ends: nothing it records may land in the parent's buffers.
 * Usage: vfork_failed_exec [SPAWNS] */
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

SITE(main_site, PERFFLOW_POINTCUT_AROUND, "main", "vfork_failed_exec.c", NULL);
SITE(spawn_site, PERFFLOW_POINTCUT_AROUND, "spawn", "vfork_failed_exec.c", NULL);
SITE(child_site, PERFFLOW_POINTCUT_AROUND, "in_child", "vfork_failed_exec.c", NULL);
SITE(after_site, PERFFLOW_POINTCUT_AROUND, "after", "vfork_failed_exec.c", NULL);

static pid_t spawn(void) {
    perfflow_site_enter(&spawn_site);
    pid_t pid = vfork();
    if (pid == 0) {
        perfflow_site_enter(&child_site);
        execl("/nonexistent/perfflow/program", "program", (char *)NULL);
        /* exec failed: what the weaver emits before _exit. */
        perfflow_site_exit(&child_site);
        perfflow_site_exit(&spawn_site);
        _exit(127);
    }
    perfflow_site_exit(&spawn_site);
    return pid;
}

int main(int argc, char **argv) {
    int spawns = argc > 1 ? atoi(argv[1]) : 3;
    print_identity();
    perfflow_site_enter(&main_site);
    int failed = 0;
    for (int i = 0; i < spawns; i++) {
        pid_t pid = spawn();
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 127)
            failed++;
        perfflow_site_enter(&after_site);
        perfflow_site_exit(&after_site);
    }
    perfflow_site_exit(&main_site);
    printf("failed=%d dropped=%llu\n", failed,
           (unsigned long long)perfflow_dropped_events());
    return 0;
}
