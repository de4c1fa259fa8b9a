// A C++ exception thrown inside two open slices and never caught:
// std::terminate ends the process with abort(). No core file is written.
#include <stdexcept>

#include <sys/resource.h>

#include "common.h"

SITE(main_site, PERFFLOW_POINTCUT_AROUND, "main_work", "e2e_uncaught.cpp", NULL);
SITE(step_site, PERFFLOW_POINTCUT_AROUND, "step", "e2e_uncaught.cpp", NULL);
SITE(throw_site, PERFFLOW_POINTCUT_AROUND, "thrower", "e2e_uncaught.cpp", NULL);

static int step(int i) {
    perfflow_site_enter(&step_site);
    int r = i * 2;
    perfflow_site_exit(&step_site);
    return r;
}

static void thrower(int total) {
    perfflow_site_enter(&throw_site);
    throw std::runtime_error("uncaught on purpose, total " + std::to_string(total));
}

int main() {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    print_identity();
    perfflow_site_enter(&main_site);
    int total = 0;
    for (int i = 0; i < 10; i++)
        total += step(i);
    thrower(total);
    perfflow_site_exit(&main_site);
    return 0;
}
