/* What the trace file's free-space check costs: the runtime calls
 * fstatvfs on the trace's descriptor once before each block it writes
 * (about 1 MiB). Prints the time per call over ROUNDS rounds of N calls on
 * a descriptor of DIR (default: the current directory).
 *
 *   cc -O2 bench/statvfs_cost.c -o statvfs_cost && ./statvfs_cost [DIR]
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/statvfs.h>
#include <time.h>

enum { N = 200000, ROUNDS = 5 };

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
        perror(dir);
        return 1;
    }
    struct statvfs fs;
    for (int r = 0; r < ROUNDS; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int i = 0; i < N; i++)
            if (fstatvfs(fd, &fs) != 0) {
                perror("fstatvfs");
                return 1;
            }
        clock_gettime(CLOCK_MONOTONIC, &b);
        double ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
        printf("round %d: %.0f ns per fstatvfs\n", r + 1, ns / N);
    }
    return 0;
}
