"""Turning a function into a traced one: the decision by kind of function,
shared by ``perfflow.trace`` and ``perfflowaspect.aspect.critical_path``."""

import functools
import importlib
import inspect
import sys

from . import _native

POINTCUTS = ("around", "before", "after", "around_async", "before_async", "after_async")

_warned = set()


def _warn_once(message):
    if message not in _warned:
        _warned.add(message)
        print("perfflow warning: " + message, file=sys.stderr)


def lookup(module, qualname):
    """The object named ``qualname`` in ``module``: how a traced function
    is found again when unpickled."""
    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def _noop():
    pass


def wrap(func, pointcut="around", scope="", flow="NA", name=None):
    """Returns ``func`` traced at a site named ``name`` (default: its
    ``__qualname__``) in the category of its module; ``func`` itself when
    ``log-enable=False`` or the pointcut is unknown (with a warning)."""
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
    return _native.traced(
        func, name, category, pointcut, scope, flow, inspect.isgeneratorfunction(func)
    )


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
    mark = _native.traced(_noop, name, category, pointcut, scope, "NA", False)
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
