/* Loads a woven shared library, calls its woven function, unloads it
 * (checking in /proc/self/maps that it is really unmapped), then does the
 * same with a second library, and exits normally: the trace is completed
 * after both libraries are gone.
 * Usage: dlclose_before_exit LIB_A LIB_B */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

SITE(main_site, PERFFLOW_POINTCUT_AROUND, "host_main", "dlclose_before_exit.c", NULL);

static int mapped(const char *path) {
    char line[4096];
    int found = 0;
    FILE *maps = fopen("/proc/self/maps", "r");
    while (maps && fgets(line, sizeof line, maps))
        if (strstr(line, path))
            found = 1;
    if (maps)
        fclose(maps);
    return found;
}

/* Loads `path`, calls lib_work(calls), unloads it; returns the address of
 * its woven site, or NULL on failure. */
static const void *use_library(const char *path, int calls) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        return NULL;
    }
    void (*work)(int) = (void (*)(int))dlsym(lib, "lib_work");
    const void *(*site)(void) = (const void *(*)(void))dlsym(lib, "lib_site");
    if (!work || !site) {
        fprintf(stderr, "dlsym: %s\n", dlerror());
        return NULL;
    }
    work(calls);
    const void *at = site();
    if (dlclose(lib) != 0) {
        fprintf(stderr, "dlclose %s: %s\n", path, dlerror());
        return NULL;
    }
    printf("%s_unmapped=%d\n", strstr(path, "_b.so") ? "b" : "a", !mapped(path));
    return at;
}

int main(int argc, char **argv) {
    if (argc < 3)
        return 2;
    print_identity();
    perfflow_site_enter(&main_site);
    const void *a = use_library(argv[1], 3);
    const void *b = use_library(argv[2], 5);
    perfflow_site_exit(&main_site);
    if (!a || !b)
        return 1;
    printf("same_address=%d\n", a == b);
    fflush(stdout);
    return 0;
}
