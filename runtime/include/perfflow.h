/* perfflow.h - C interface of the perfflow runtime (libperfflow_runtime).
 *
 * Two ABIs live here:
 *   - the site ABI that the WeavePass plugin calls: one constant descriptor per
 *     woven function, passed by address on every enter and exit;
 *   - PerfFlowAspect's string ABI (perfflow_weave_before/after), so programs
 *     woven by the upstream plugin run unchanged on this runtime.
 * A small manual API marks code that is not woven: regions on one thread
 * (perfflow_region_begin/end) and async operations that may end on another
 * thread (perfflow_async_begin/end). PERFFLOW_CRITICAL_PATH annotates a
 * function for the weaver.
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
 * enter; after -> "i" at exit; around_async -> "b"/"e" with one id (woven
 * sites pair on the recording thread; see below for the upstream ABI and the
 * async API); before_async/after_async -> "n". Enter/exit calls that a
 * pointcut does not use are ignored; an exit without an enter is reported
 * once on stderr, dropped and counted. Slices still open when their thread ends, or
 * when the trace is completed (exit() called deep inside woven code), are
 * ended at that moment.
 *
 * PERFFLOW_OPTIONS=cpu-mem-usage=True: every around slice (woven functions,
 * upstream "around" calls, regions) also gets two counter ("C") events named
 * after the function, written when the slice ends, PerfFlowAspect's shape:
 *   at its begin: {"cpu_usage": <percent>, "memory_usage": <KiB>}
 *   at its end:   {"cpu_usage": 0, "memory_usage": 0}
 * cpu_usage is the CPU time of the calling thread inside the slice over its
 * wall time, x 100 (CLOCK_THREAD_CPUTIME_ID read at enter and exit);
 * memory_usage is the process's current resident set size at the exit
 * (/proc/self/statm), not the peak. Recursive and nested calls each get
 * their own pair; log-event=Compact writes the pair before each "X" event.
 * Slices ended by the runtime (thread or process ending inside them) get no
 * pair. Cost: one clock_gettime system call per enter, and one plus a
 * pread of /proc/self/statm per exit; without the option, nothing.
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
#define PERFFLOW_SITE_ABI_VERSION 2u

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
 * trace needs about the function is computed at compile time. Strings are
 * NUL-terminated and live as long as the image that holds the site.
 *
 * `copy` points to a writable word, zero at load, of the same image (the
 * weaver emits one per site). On the first event of the site the runtime
 * copies the site and its strings into memory it owns, keeps the copy's
 * address in that word, and from then on records the copy's address (cost:
 * three loads per event). So a shared library may be dlclose'd while its
 * events wait to be written, and another library loaded at the same address
 * gets its own copies. A site with a NULL `copy` (or a version 1 site, which
 * ends before it) is recorded by address and must stay mapped until the
 * trace is complete. */
struct perfflow_site {
    uint32_t abi_version; /* PERFFLOW_SITE_ABI_VERSION */
    uint32_t pointcut;    /* enum perfflow_pointcut */
    uint32_t flow;        /* enum perfflow_flow */
    uint32_t line;        /* 0 when unknown */
    const char *name;     /* demangled name, without parameters */
    const char *file;     /* source file as the compiler saw it */
    const char *scope;    /* NULL when the annotation gave none */
    const char *symbol;   /* linkage (mangled) name */
    void **copy;          /* owned by the runtime; NULL for none (version 2) */
};

/* Called by woven code at function entry (around, before and _async forms). */
void perfflow_site_enter(const struct perfflow_site *site);
/* Called by woven code on every way out but unwinding: return, noreturn call. */
void perfflow_site_exit(const struct perfflow_site *site);
/* Called by woven code on the way out by unwinding (an exception, a forced
 * unwind), from its cleanup landing pad: records the exit as
 * perfflow_site_exit does, marked so that the slice it ends says
 * "outcome":"raised" in the trace. */
void perfflow_site_exit_unwind(const struct perfflow_site *site);
/* Non-zero while events are recorded. Woven code reads it (a relaxed atomic
 * byte load) before each enter and exit on the normal paths and skips the
 * call when it is zero; the runtime clears it when tracing is off
 * (log-enable=False, or no trace file could be created). */
extern volatile unsigned char perfflow_enabled;

/* PerfFlowAspect ABI. async: 0 or 1; module: source file; function: the
 * function's (possibly mangled) name; scope, flow: as in the annotation or
 * "NA"; pcut: "around", "before", "after" (with _async for async ones). */
void perfflow_weave_before(int async, const char *module, const char *function,
                           const char *scope, const char *flow, const char *pcut);
void perfflow_weave_after(int async, const char *module, const char *function,
                          const char *scope, const char *flow, const char *pcut);
/* The string arguments must stay valid until the process exits (the weaver
 * passes string constants): repeated calls are recognised by the addresses of
 * the strings, and C++ linkage names are shown demangled.
 * An async around call ("around_async", or async=1 with "around") may begin
 * and end on different threads: the k-th perfflow_weave_after of a function
 * ends its k-th perfflow_weave_before (first in, first out), whatever the
 * threads, and both get the same id. */

/* Manual regions for code that is not woven, on the calling thread.
 * perfflow_region_begin opens a region named `name`; perfflow_region_end
 * closes the innermost open region of that name on the same thread (and any
 * region opened inside it and left open). Shown like an around pointcut:
 * "B"/"E" (or "X" with log-event=Compact) with category "region", and the
 * counters of cpu-mem-usage. Regions must nest on each thread; an end
 * without a begin is reported once on stderr and dropped. `name` is compared
 * by content, so it may live in a reused buffer; it is copied on first use,
 * and each distinct name costs about 480 bytes until the process ends. At
 * most 100,000 distinct run-time names (regions, async operations and
 * upstream-ABI functions together, about 48 MB) are kept: past that, one
 * line on stderr says so, and events under names not seen before are
 * dropped and counted. A NULL name is ignored. */
void perfflow_region_begin(const char *name);
void perfflow_region_end(const char *name);
/* perfflow_region_end for a region left by an exception (a language binding
 * whose block raised): its end says "outcome":"raised". */
void perfflow_region_end_unwind(const char *name);

/* Manual async operations, which may end on another thread than the one that
 * began them. perfflow_async_begin writes a "b" event named `name` with
 * category `scope` ("default" when NULL or empty) and returns its id, unique
 * in the process (never 0; 0 when `name` is NULL). perfflow_async_end writes
 * the matching "e" event with that id; pass the same name and scope. Both
 * strings are compared by content and may live in reused buffers (see the
 * limit on distinct names above; past it, a new name's begin returns 0). An
 * operation never ended stays open in the trace. Safe to call from any
 * thread; the cost is that of a region plus one atomic increment. */
uint64_t perfflow_async_begin(const char *name, const char *scope);
void perfflow_async_end(const char *name, const char *scope, uint64_t id);
/* perfflow_async_end for an operation left by an exception (a Python
 * coroutine that raised): its "e" says "outcome":"raised". */
void perfflow_async_end_unwind(const char *name, const char *scope, uint64_t id);

/* Like perfflow_site_enter/exit, with an async id the caller chose instead
 * of one the runtime picks: entry into an around_async site writes "b", exit
 * "e", entry into a before_async site "n", each with `id` (0 is ignored). For
 * bindings that number their own operations, as PerfFlowAspect's
 * async_event(..., id=...) does. */
void perfflow_site_enter_id(const struct perfflow_site *site, uint64_t id);
void perfflow_site_exit_id(const struct perfflow_site *site, uint64_t id);

/* Annotates a function for the WeavePass plugin, as PerfFlowAspect's
 * annotation does, e.g.
 *     PERFFLOW_CRITICAL_PATH(pointcut='around', scope='io')
 *     int read_block(int fd);
 * The arguments are turned into the annotation string as written:
 * "@critical_path(pointcut='around', scope='io')". Commas between arguments
 * are kept (the macro is variadic), single quotes are kept, and each run of
 * whitespace between tokens becomes one space. Quote values with single
 * quotes, as the annotation grammar does (a double-quoted value would reach
 * the annotation as written and be rejected by the parser). With no arguments,
 * PERFFLOW_CRITICAL_PATH() gives "@critical_path()". Compilers without the
 * annotate attribute (GCC) ignore it with a warning. */
#define PERFFLOW_CRITICAL_PATH(...) \
    __attribute__((annotate("@critical_path(" #__VA_ARGS__ ")")))

/* Completes the trace now, as exit() would, for a process that will end
 * without running exit handlers (_exit, as Python's multiprocessing workers
 * do). Events recorded afterwards are dropped and counted; later calls, and
 * the exit handler, do nothing. */
void perfflow_finish(void);

/* Number of events not in the trace so far, each counted once as an event:
 * recorded after the trace was completed (also by threads still running when
 * the process ends), during thread teardown, by a signal handler while it
 * interrupted recording on the same thread, or after a fatal signal while the
 * trace was completed; exits without a matching enter; events the trace file
 * could not take (a full disk). The closing perfflow_runtime record holds the
 * same count as of the moment the trace was completed. */
uint64_t perfflow_dropped_events(void);

#ifdef __cplusplus
}
#endif

#endif /* PERFFLOW_H */
