/* Forks right after its first event, and so does each child, eight levels
 * deep: every fork comes while the runtime's own threads of that process
 * (started by its first event) may still be starting. Built with a
 * sanitizer, every process must exit, the last with 7, which each parent
 * passes on, and each leaves a trace. Under AddressSanitizer before LLVM
 * 17, a child forked while one of those threads was inside the allocator
 * hung at its exit. */
#include <sys/wait.h>
#include <unistd.h>

#define TRACED __attribute__((annotate("@critical_path(pointcut='around')")))
#define DEPTH 8

TRACED __attribute__((noinline)) int step(int x) { return x * 3 + 1; }

int main(void) {
    for (int level = 0; level < DEPTH; level++) {
        if (step(level) <= 0)
            return 2;
        pid_t child = fork();
        if (child < 0)
            return 1;
        if (child > 0) {
            int status = 0;
            if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
                return 1;
            return WEXITSTATUS(status);
        }
    }
    return step(DEPTH) > 0 ? 7 : 2;
}
