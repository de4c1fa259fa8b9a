/* perfflow.h - C interface of the perfflow runtime (libperfflow_runtime).
 *
 * Two ABIs live here:
 *   - the site ABI that the WeavePass plugin calls: one constant descriptor per
 *     woven function, passed by address on every enter and exit;
 *   - PerfFlowAspect's string ABI (perfflow_weave_before/after), so programs
 *     woven by the upstream plugin run unchanged on this runtime.
 * A small manual API (perfflow_region_begin/end) marks regions in code that
 * is not woven.
 *
 * Output: the first event of the process creates
 * perfflow.array.<hostname>.<pid>.pfw in the current working directory, a
 * Chrome Trace Format JSON array with one event per line (Perfetto opens it).
 * The file is completed when the process ends through return from main,
 * exit(), or the last thread exiting after main called pthread_exit. Events
 * recorded after that point (later exit handlers, threads still running
 * during exit) are dropped and counted, see perfflow_dropped_events.
 *
 * Events per pointcut: around -> "B" at enter, "E" at exit; before -> "i" at
 * enter; after -> "i" at exit; around_async -> "b"/"e" paired by id on the
 * recording thread; before_async/after_async -> "n". Enter/exit calls that a
 * pointcut does not use are ignored; an exit without an enter is reported
 * once on stderr and dropped. Slices still open when their thread ends, or
 * when the trace is completed (exit() called deep inside woven code), are
 * ended at that moment.
 *
 * Linking: libperfflow_runtime.a needs -lpthread -ldl -lm;
 * libperfflow_runtime.so needs nothing extra.
 */
#ifndef PERFFLOW_H
#define PERFFLOW_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever the layout of struct perfflow_site changes. */
#define PERFFLOW_SITE_ABI_VERSION 1u

enum perfflow_pointcut {
    PERFFLOW_POINTCUT_AROUND = 0,
    PERFFLOW_POINTCUT_BEFORE = 1,
    PERFFLOW_POINTCUT_AFTER = 2,
    PERFFLOW_POINTCUT_AROUND_ASYNC = 3,
    PERFFLOW_POINTCUT_BEFORE_ASYNC = 4,
    PERFFLOW_POINTCUT_AFTER_ASYNC = 5
};

enum perfflow_flow {
    PERFFLOW_FLOW_NONE = 0,
    PERFFLOW_FLOW_IN = 1,
    PERFFLOW_FLOW_OUT = 2,
    PERFFLOW_FLOW_INOUT = 3,
    PERFFLOW_FLOW_OUTIN = 4
};

/* One per woven function, emitted by the weaver as a constant. Everything the
 * trace needs about the function is computed at compile time; the runtime
 * stores only the address of this record per event. Strings are NUL-terminated
 * and live as long as the program image. */
struct perfflow_site {
    uint32_t abi_version; /* PERFFLOW_SITE_ABI_VERSION */
    uint32_t pointcut;    /* enum perfflow_pointcut */
    uint32_t flow;        /* enum perfflow_flow */
    uint32_t line;        /* 0 when unknown */
    const char *name;     /* demangled name, without parameters */
    const char *file;     /* source file as the compiler saw it */
    const char *scope;    /* NULL when the annotation gave none */
    const char *symbol;   /* linkage (mangled) name */
};

/* Called by woven code at function entry (around, before and _async forms). */
void perfflow_site_enter(const struct perfflow_site *site);
/* Called by woven code on every way out: return, noreturn call, unwinding. */
void perfflow_site_exit(const struct perfflow_site *site);

/* PerfFlowAspect ABI. async: 0 or 1; module: source file; function: the
 * function's (possibly mangled) name; scope, flow: as in the annotation or
 * "NA"; pcut: "around", "before", "after" (with _async for async ones). */
void perfflow_weave_before(int async, const char *module, const char *function,
                           const char *scope, const char *flow, const char *pcut);
void perfflow_weave_after(int async, const char *module, const char *function,
                          const char *scope, const char *flow, const char *pcut);
/* The string arguments must stay valid until the process exits (the weaver
 * passes string constants): repeated calls are recognised by the addresses of
 * the strings, and C++ linkage names are shown demangled. */

/* Manual regions for code that is not woven. Shown like an around pointcut
 * named `name`, with category "region". Regions must nest on each thread.
 * `name` is compared by content, so it may live in a reused buffer; it is
 * copied on first use. */
void perfflow_region_begin(const char *name);
void perfflow_region_end(const char *name);

/* Number of events dropped so far (recorded after the trace was completed,
 * during thread teardown, or when the trace file could not be written). */
uint64_t perfflow_dropped_events(void);

#ifdef __cplusplus
}
#endif

#endif /* PERFFLOW_H */
