/* Loads two woven shared libraries in turn (LIB_A, LIB_B), calls their woven
 * function, and unloads each before the next; the trace is completed at
 * exit, after both are unmapped. */
#include <dlfcn.h>
#include <stdio.h>

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) static int
use_library(const char *path, int calls) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return -1;
    }
    int (*work)(int) = (int (*)(int))dlsym(lib, "lib_work");
    int sum = work ? work(calls) : -1;
    dlclose(lib);
    return sum;
}

int main(void) {
    if (use_library(LIB_A, 3) < 0 || use_library(LIB_B, 5) < 0)
        return 1;
    return 0;
}
