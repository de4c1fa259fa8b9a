/* A daemon-style traced program: after recording events it closes every
 * descriptor from 3 up (argv[1]: "loop", a close() per number up to the
 * limit, or "closefrom"), opens files of its own, which take the lowest
 * numbers, writes known data into them and puts each file's offset back
 * at 0, waits, records more events, and checks that nothing read from or
 * wrote into its files, nor closed them. Each file comes with a pipe
 * holding a line of its own, which must still be there, whole, at the
 * end (a read of the file by number would take bytes; a close would make
 * the pipe unreadable). argv[3] "chdir" first moves into a new directory
 * "sub", where the files then are. argv[2]: "exit" returns from main, "sigterm"
 * sends itself SIGTERM (the runtime's watcher must still complete the
 * trace), "close-only" opens no files but checks the watcher.
 *
 * Prints "watcher_slept=1" when the runtime's signal watcher thread slept
 * (a voluntary context switch: it blocks in poll) over 600 ms after the
 * close, "files_intact=1" when each file still reads, from its offset,
 * exactly what was written. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "common.h"

SITE(before_site, PERFFLOW_POINTCUT_AROUND, "before", "closes_every_descriptor.c", NULL);
SITE(after_site, PERFFLOW_POINTCUT_AROUND, "after", "closes_every_descriptor.c", NULL);

#define EVENTS 30000
#define FILES 12

static void record(const struct perfflow_site *site) {
    for (int i = 0; i < EVENTS; i++) {
        perfflow_site_enter(site);
        perfflow_site_exit(site);
    }
}

static void close_all(const char *how) {
    if (strcmp(how, "closefrom") == 0) {
        closefrom(3);
        return;
    }
    struct rlimit lim;
    long max = getrlimit(RLIMIT_NOFILE, &lim) == 0 ? (long)lim.rlim_cur : 1024;
    if (max > 1 << 20)
        max = 1 << 20;
    for (long fd = 3; fd < max; fd++)
        close((int)fd);
}

static void content(int i, char *buf, size_t size) {
    snprintf(buf, size, "own file %d: data of the program only\n", i);
}

/* Voluntary context switches of the thread named perfflow-signal, -1 if
 * there is none. */
static long watcher_switches(void) {
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks)
        return -1;
    long found = -1;
    struct dirent *d;
    while ((d = readdir(tasks)) != NULL && found < 0) {
        if (d->d_name[0] == '.')
            continue;
        char path[300], line[256];
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", d->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        int is_watcher = fgets(line, sizeof line, f) && strcmp(line, "perfflow-signal\n") == 0;
        fclose(f);
        if (!is_watcher)
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/status", d->d_name);
        f = fopen(path, "r");
        if (!f)
            continue;
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0)
                found = atol(line + 24);
        fclose(f);
    }
    closedir(tasks);
    return found;
}

int main(int argc, char **argv) {
    const char *how = argc > 1 ? argv[1] : "loop";
    const char *end = argc > 2 ? argv[2] : "exit";
    print_identity();
    record(&before_site);
    /* Let the runtime's threads open what they keep open (the metric
     * sampler samples every 50 ms in its test). */
    usleep(300 * 1000);

    /* A daemon also leaves the directory it started in: the trace was
     * created there by a relative name. */
    if (argc > 3 && strcmp(argv[3], "chdir") == 0 && (mkdir("sub", 0755) != 0 || chdir("sub") != 0))
        return 3;
    close_all(how);
    int fds[FILES], pipes[FILES][2];
    int nfiles = strcmp(end, "close-only") == 0 ? 0 : FILES;
    for (int i = 0; i < nfiles; i++) {
        char name[32], text[128];
        snprintf(name, sizeof name, "own%d.dat", i);
        content(i, text, sizeof text);
        fds[i] = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (fds[i] < 0 || write(fds[i], text, strlen(text)) != (ssize_t)strlen(text) ||
            lseek(fds[i], 0, SEEK_SET) != 0)
            return 3;
        if (pipe2(pipes[i], O_NONBLOCK) != 0 || write(pipes[i][1], text, strlen(text)) != (ssize_t)strlen(text))
            return 3;
    }

    /* The watcher wakes every 200 ms: give it time to find what changed. */
    usleep(700 * 1000);
    long first = watcher_switches();
    usleep(600 * 1000);
    long second = watcher_switches();
    printf("watcher_slept=%d\n", first >= 0 && second > first ? 1 : 0);

    record(&after_site);

    int intact = 1;
    for (int i = 0; i < nfiles; i++) {
        char want[128], got[256];
        content(i, want, sizeof want);
        ssize_t n = read(fds[i], got, sizeof got);
        if (n != (ssize_t)strlen(want) || memcmp(got, want, (size_t)n) != 0)
            intact = 0;
        n = read(pipes[i][0], got, sizeof got);
        if (n != (ssize_t)strlen(want) || memcmp(got, want, (size_t)n) != 0)
            intact = 0;
    }
    printf("files_intact=%d\n", intact);
    fflush(stdout);

    if (strcmp(end, "sigterm") == 0) {
        kill(getpid(), SIGTERM);
        for (;;)
            pause();
    }
    return 0;
}
