"""Turning a function into a traced one: the decision by kind of function,
shared by ``perfflow.trace`` and ``perfflowaspect.aspect.critical_path``."""

import functools
import inspect
import sys

from . import _native

POINTCUTS = ("around", "before", "after", "around_async", "before_async", "after_async")

_warned = set()


def _warn_once(message):
    """Says ``message`` on stderr once; a stderr that is gone (closed, a
    pipe without a reader, None) makes it say nothing rather than fail the
    program's decoration."""
    if message in _warned:
        return
    _warned.add(message)
    if sys.stderr is None:
        return
    try:
        print("perfflow warning: " + message, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _noop():
    pass


def wrap(func, pointcut="around", scope="", flow="NA", name=None):
    """Returns ``func`` traced at a site named ``name`` (default: its
    ``__qualname__``) in the category of its module; ``func`` itself when
    ``log-enable=False`` or the pointcut is unknown (with a warning)."""
    if isinstance(func, (staticmethod, classmethod)):
        # Above @staticmethod or @classmethod: the function they hold is
        # traced, and keeps its kind.
        return type(func)(wrap(func.__func__, pointcut, scope, flow, name))
    if not callable(func):
        hint = ""
        if isinstance(func, str):
            hint = "; to name its spans, write @perfflow.trace(name={!r})".format(func)
        elif isinstance(func, property):
            hint = "; put it below @property, on the getter"
        raise TypeError("perfflow traces functions; got {!r}{}".format(func, hint))
    if not _native.log_enable_option():
        return func
    if pointcut not in POINTCUTS:
        _warn_once(
            "unknown pointcut {!r} for {!r}: expected one of {}; "
            "the function is not traced".format(pointcut, func, ", ".join(POINTCUTS))
        )
        return func
    if name is None:
        name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)
    category = getattr(func, "__module__", None) or "python"
    if inspect.iscoroutinefunction(func):
        return _coroutine(func, name, category, pointcut, scope)
    if inspect.isasyncgenfunction(func):
        _warn_once("{!r} is an async generator, which is not traced".format(func))
        return func
    site = _native.site(name, category, pointcut, scope, flow)
    if inspect.isgeneratorfunction(func):
        return _generator(func, site)
    return _call(func, site)


# The wrappers below are Python functions, so a traced function is a
# function like any other (attributes, weak references, pickling by name,
# ``inspect``), and no frame of the native module is on the stack while it
# runs: CPython ends a daemon thread still running at exit by unwinding its
# stack (``pthread_exit``), which only Python and C frames let through.


def _call(func, site):
    """Each call of ``func`` is a span of ``site``; one left by an
    exception ends ``raised`` (not StopIteration or GeneratorExit, which
    end an iteration or a generator normally)."""
    enter, leave, leave_raised = site.enter, site.exit, site.exit_raised

    @functools.wraps(func)
    def traced(*args, **kwargs):
        enter()
        try:
            result = func(*args, **kwargs)
        except (StopIteration, GeneratorExit):
            leave()
            raise
        except BaseException:
            leave_raised()
            raise
        leave()
        return result

    return traced


def _generator(func, site):
    """A generator function: each generator it makes is wrapped in a
    ``_Resumptions``."""

    @functools.wraps(func)
    def traced(*args, **kwargs):
        return _Resumptions(func(*args, **kwargs), _native.Resumptions(site))

    return traced


class _Resumptions:
    """A generator of a traced generator function: every resumption
    (``next``, ``send``, ``throw``, ``close``) is one span on the thread
    that resumes it, so spans nest correctly whichever thread drives the
    generator and however long it stays suspended. One collected while
    suspended closes the generator it wraps without a span, as nothing
    resumed it."""

    __slots__ = ("_gen", "_spans")

    def __init__(self, gen, spans):
        self._gen = gen
        self._spans = spans

    def __iter__(self):
        return self

    def __next__(self):
        return self._resume(self._gen.__next__)

    def send(self, value):
        return self._resume(self._gen.send, value)

    def throw(self, *args):
        return self._resume(self._gen.throw, *args)

    def close(self):
        return self._resume(self._gen.close)

    def __getattr__(self, name):
        return getattr(self._gen, name)

    def _resume(self, method, *args):
        spans = self._spans
        height = spans.begin()
        try:
            result = method(*args)
        except (StopIteration, GeneratorExit):
            spans.end(height, False)
            raise
        except BaseException:
            spans.end(height, True)
            raise
        spans.end(height, False)
        return result


def _coroutine(func, name, category, pointcut, scope):
    """An ``async def`` function: "around" pointcuts make one async "b"/"e"
    pair (category: the scope, else the module) from the coroutine's first
    entry to its final return or exception, whatever it awaits in between;
    "before"/"after" pointcuts an instant at first entry / at the end.

    The "e" of a coroutine left by an exception says ``"outcome":"raised"``;
    so does that of a cancelled one (asyncio.CancelledError), since whoever
    awaits it gets that exception. A coroutine closed before it finished
    (``close()``: GeneratorExit, which its closer does not see) ends as
    one that returned."""
    async_category = scope or category
    if pointcut in ("around", "around_async"):
        begin, end = _native.async_begin, _native.async_end

        @functools.wraps(func)
        async def traced(*args, **kwargs):
            op = begin(name, async_category)
            try:
                result = await func(*args, **kwargs)
            except GeneratorExit:
                end(name, op, async_category)
                raise
            except BaseException:
                end(name, op, async_category, True)
                raise
            end(name, op, async_category)
            return result

        return traced
    mark = _call(_noop, _native.site(name, category, pointcut, scope))
    at_entry = pointcut.startswith("before")

    @functools.wraps(func)
    async def traced(*args, **kwargs):
        if at_entry:
            mark()
            return await func(*args, **kwargs)
        try:
            return await func(*args, **kwargs)
        finally:
            mark()

    return traced
