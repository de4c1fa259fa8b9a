"""``critical_path``, ``sync_event`` and ``async_event``, as PerfFlowAspect
documents them, recorded by the perfflow runtime.

Differences from PerfFlowAspect's own package, all where it misbehaves:
with ``log-enable=False`` a decorated function is returned unchanged (it is
still called); an ``async def`` function gets one span over its whole run,
not over the creation of its coroutine; a generator function gets one span
per resumption; ``async_event`` without an ``id`` gets the runtime's ids
(the k-th "after" of a name, category and scope ends its k-th "before", on
any thread) instead of one fixed id for every event.
"""

from perfflow import _native
from perfflow._wrap import wrap

__all__ = ["critical_path", "sync_event", "async_event"]


def critical_path(pointcut="around", scope="", flow="NA"):
    """Decorator factory: ``@critical_path(pointcut="around", scope="")``.

    Pointcuts: around (B/E), before, after (one instant), and their _async
    forms (b/e, n). Each span is named after the function's ``__qualname__``
    in the category of its module.
    """

    def decorator(func):
        return wrap(func, pointcut=pointcut, scope=scope, flow=flow)

    return decorator


def sync_event(pointcut, name, category):
    """``before`` writes a "B" event named ``name`` in ``category``;
    ``after`` the matching "E" on the same thread."""
    _native.sync_event(pointcut, name, category)


def async_event(pointcut, name, category, scope=None, id=None):
    """``before`` writes a "b" event named ``name`` in ``category``,
    ``after`` the matching "e", ``instant`` an "n" event. Given an ``id``
    (a positive integer), each event carries it, so the caller pairs them:
    ``after`` with ``id=7`` ends the operation ``before`` began with
    ``id=7``, and an ``instant`` with that id belongs to it."""
    _native.async_event(pointcut, name, category, scope, id)
