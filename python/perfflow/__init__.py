"""perfflow for Python: spans of Python code in the same trace as woven C/C++.

Events are recorded by the perfflow runtime (the Rust library that woven
C/C++ programs use), through its C interface; a process has one runtime and
one trace file, whoever records into it. Options come from PERFFLOW_OPTIONS,
as for C/C++.

    import perfflow

    @perfflow.trace
    def step(x): ...

    with perfflow.region("load"):
        ...

    op = perfflow.async_begin("transfer", scope="io")
    ...                                   # on any thread
    perfflow.async_end("transfer", op, scope="io")

Plain functions, methods and each resumption of a generator are "B"/"E"
spans on the calling thread; an ``async def`` coroutine is one async "b"/"e"
pair from its first entry to its final return, across suspensions. A span
left by an exception still ends, and its end says ``"outcome":"raised"``
(cancellation of a coroutine included); StopIteration and GeneratorExit
(a generator or coroutine closed early) end it as a return.
"""

import atexit
import os
import sys

from . import _native
from ._wrap import wrap

Region = _native.Region

__all__ = [
    "trace",
    "region",
    "async_begin",
    "async_end",
    "enabled",
    "dropped_events",
    "runtime_library",
    "finish",
]


def trace(func=None, *, name=None, scope="", pointcut="around"):
    """Decorator: each call of the function is a span named after its
    ``__qualname__`` (or ``name``) in the category of its module.

    Usable bare (``@perfflow.trace``) or with arguments
    (``@perfflow.trace(name="load", pointcut="before")``). With
    ``log-enable=False`` in PERFFLOW_OPTIONS the function is returned
    unchanged.
    """
    if func is None:
        return lambda f: wrap(f, pointcut=pointcut, scope=scope, name=name)
    return wrap(func, pointcut=pointcut, scope=scope, name=name)


def region(name, scope=None, flow=None):
    """Context manager: ``with perfflow.region("name"):`` records the block
    as a span of category "region" on the calling thread; a block left by
    an exception (not GeneratorExit or StopIteration) ends ``raised``.
    Open across a ``yield`` of a traced generator, the region is one span
    inside each resumption that runs its code, the last one ending with
    the block.

    With ``flow`` ("in", "out", "inout", "outin", as in the C annotation),
    flows of ``scope`` arrive at the span or leave it: a driver that starts
    a woven program with ``PERFFLOW_FLOW_PREFIX=<tag>`` in its environment
    links to it with ``flow="out", scope="<tag>/<the program's scope>"``."""
    return _native.Region(name, scope, flow)


def async_begin(name, scope=None):
    """Begins an async operation ("b" event, category ``scope`` or
    "default") and returns its id; end it with :func:`async_end`, on any
    thread. Returns 0, and records nothing, while tracing is off."""
    return _native.async_begin(name, scope)


def async_end(name, id, scope=None, raised=False):
    """Ends the async operation ``id`` begun by :func:`async_begin` with the
    same name and scope ("e" event). Id 0 is ignored. With ``raised=True``
    the end says the operation was left by an exception
    (``"outcome":"raised"``)."""
    _native.async_end(name, id, scope, raised)


def enabled():
    """True when tracing is on: ``log-enable`` is not False and the trace
    file could be created. It stays True after :func:`finish`: the events
    of traced code that runs after it are dropped and counted, not
    recorded."""
    return _native.enabled()


def dropped_events():
    """Number of events the runtime could not write so far."""
    return _native.dropped_events()


def runtime_library():
    """Path of the library whose runtime records this process's events."""
    return _native.runtime_library()


def finish():
    """Completes the trace now, as the process's exit would; later events
    are dropped. For processes that end with ``os._exit``: multiprocessing's
    forked workers are handled already."""
    _native.finish()


# An uncaught KeyboardInterrupt (Ctrl-C) ends the interpreter by SIGINT, raised
# again after the interpreter is finalized, which skips the C exit handler that
# completes the trace. Python's exit handlers still run, and the exception is
# in sys.last_value by then: only in that case is the trace completed here
# (a program that embeds Python may record after finalizing it).
def _finish_after_keyboard_interrupt():
    if isinstance(getattr(sys, "last_value", None), KeyboardInterrupt):
        _native.finish()


atexit.register(_finish_after_keyboard_interrupt)


# A forked multiprocessing worker ends with os._exit, which skips the exit
# handler that completes the trace: its finalizers, which do run, complete
# it instead. The hook is registered before each fork, once multiprocessing
# is in use, so importing perfflow does not import multiprocessing.
_hooked_multiprocessing = False


def _finish_in_worker(_module):
    sys.modules["multiprocessing.util"].Finalize(None, _native.finish, exitpriority=-(2**31))


def _before_fork():
    global _hooked_multiprocessing
    util = sys.modules.get("multiprocessing.util")
    if util is not None and not _hooked_multiprocessing:
        util.register_after_fork(sys.modules[__name__], _finish_in_worker)
        _hooked_multiprocessing = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork)


# A multiprocessing worker that imports perfflow itself, after its fork
# (the fork server's children, when the server had not imported the main
# module) or in a new interpreter (spawn), does so before its bootstrap,
# which runs the after-fork hooks: the same hook completes its trace. One
# that imports it only once its bootstrap ran (inside the task it runs)
# registers the finalizer at once: its current process is then the one
# started, which has a parent.
def _in_started_worker():
    process = sys.modules.get("multiprocessing.process")
    current = process.current_process() if process is not None else None
    return getattr(current, "_parent_pid", None) is not None


if "multiprocessing.util" in sys.modules:
    if _in_started_worker():
        _finish_in_worker(None)
    _before_fork()
