/* CPython embedded in a traced program, started after the first traced
 * call: Ctrl-C (here SIGINT sent to the process) must raise
 * KeyboardInterrupt in the Python code, as it does without perfflow.
 * CPython installs its SIGINT handler only where the action is still the
 * default. Built by its test with `python3-config --embed`. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <signal.h>

#include "common.h"

SITE(main_site, PERFFLOW_POINTCUT_AROUND, "main_work", "embedded_python.c", NULL);

static const char *script =
    "import os, signal, time\n"
    "try:\n"
    "    os.kill(os.getpid(), signal.SIGINT)\n"
    "    time.sleep(10)\n"
    "    print('no interrupt', flush=True)\n"
    "except KeyboardInterrupt:\n"
    "    print('KeyboardInterrupt', flush=True)\n";

int main(void) {
    signal(SIGINT, SIG_DFL);
    perfflow_site_enter(&main_site);
    Py_Initialize();
    int failed = PyRun_SimpleString(script);
    if (Py_FinalizeEx() < 0)
        failed = 1;
    perfflow_site_exit(&main_site);
    return failed ? 1 : 0;
}
