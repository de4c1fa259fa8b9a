/* bench/many_sites.c - calls SITES distinct woven sites in turn, as a
 * program with many hot functions does (-finstrument-functions reaches
 * thousands).
 *
 * Usage: many_sites SITES CALLS
 *   Makes SITES sites (names f0, f1, ...) and makes CALLS enter/exit pairs,
 *   call i on site i % SITES, on one thread (the runtime's options come
 *   from PERFFLOW_OPTIONS).
 */
#include <stdio.h>
#include <stdlib.h>

#include "perfflow.h"

int main(int argc, char **argv) {
    if (argc != 3 || atol(argv[1]) <= 0 || atol(argv[2]) < 0) {
        fprintf(stderr, "usage: many_sites SITES CALLS\n");
        return 2;
    }
    long sites = atol(argv[1]), calls = atol(argv[2]);
    struct perfflow_site *site = calloc((size_t)sites, sizeof *site);
    char(*names)[24] = calloc((size_t)sites, sizeof *names);
    if (!site || !names) {
        fprintf(stderr, "many_sites: out of memory\n");
        return 1;
    }
    for (long i = 0; i < sites; i++) {
        snprintf(names[i], sizeof names[i], "f%ld", i);
        /* Sites stay valid until the process exits: no copy word. */
        site[i] = (struct perfflow_site){PERFFLOW_SITE_ABI_VERSION, PERFFLOW_POINTCUT_AROUND,
                                         PERFFLOW_FLOW_NONE, 1, names[i], "many_sites.c", NULL,
                                         names[i], NULL};
    }
    for (long c = 0; c < calls; c++) {
        struct perfflow_site *s = &site[c % sites];
        perfflow_site_enter(s);
        perfflow_site_exit(s);
    }
    return 0;
}
