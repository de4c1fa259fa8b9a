/* Shared helpers for the runtime's C test programs. */
#ifndef PERFFLOW_TEST_COMMON_H
#define PERFFLOW_TEST_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfflow.h"

/* A site as the weaver emits it: constant, with a writable copy word. */
#define SITE(var, pc, fn, src, sc)                                              \
    static void *var##_copy;                                                    \
    static const struct perfflow_site var = {PERFFLOW_SITE_ABI_VERSION, (pc),  \
                                             PERFFLOW_FLOW_NONE, __LINE__,     \
                                             (fn), (src), (sc), (fn),          \
                                             &var##_copy}

/* Tells the test which trace file to expect. */
static inline void print_identity(void) {
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    printf("pid=%d host=%s\n", (int)getpid(), host);
    fflush(stdout);
}

/* Peak resident set size in KiB (VmHWM), -1 when unknown. VmHWM rather
 * than getrusage: ru_maxrss carries over the parent's peak across fork and
 * exec. */
static inline long vm_hwm_kib(void) {
    long hwm_kib = -1;
    char line[256];
    FILE *status = fopen("/proc/self/status", "r");
    while (status && fgets(line, sizeof line, status))
        if (strncmp(line, "VmHWM:", 6) == 0)
            hwm_kib = atol(line + 6);
    if (status)
        fclose(status);
    return hwm_kib;
}

#endif
