/* A program that closes its stderr and opens a results file, which takes
 * descriptor 2 (argv[1]: "reopen" opens it by path, "dup2" puts a pipe
 * there instead), then records its first event: with a log-dir that
 * cannot be made (PERFFLOW_OPTIONS), the runtime has a warning to give.
 * Prints "results=" and what the results file holds at the end (it wrote
 * 16 bytes), and "pipe=" with how many bytes the pipe received. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

SITE(work_site, PERFFLOW_POINTCUT_AROUND, "work", "results_file_on_descriptor_2.c", NULL);

int main(int argc, char **argv) {
    if (argc < 3) {
        return 2;
    }
    print_identity();
    const char *how = argv[1], *path = argv[2];
    int pipe_fds[2] = {-1, -1};
    if (strcmp(how, "dup2") == 0) {
        if (pipe(pipe_fds) != 0 || dup2(pipe_fds[1], 2) != 2) {
            return 3;
        }
    } else if (close(2) != 0 || open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644) != 2) {
        return 3;
    }
    if (strcmp(how, "dup2") != 0 && write(2, "results:12345678", 16) != 16) {
        return 4;
    }
    perfflow_site_enter(&work_site);
    perfflow_site_exit(&work_site);
    if (strcmp(how, "dup2") == 0) {
        close(2);
        close(pipe_fds[1]);
        char buf[4096];
        ssize_t n, total = 0;
        while ((n = read(pipe_fds[0], buf, sizeof buf)) > 0) {
            total += n;
        }
        printf("pipe=%zd\n", total);
    } else {
        char buf[4096] = {0};
        int fd = open(path, O_RDONLY);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        printf("results=%s bytes=%zd\n", buf, n);
    }
    fflush(stdout);
    return 0;
}
