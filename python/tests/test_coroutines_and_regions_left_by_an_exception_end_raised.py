"""Coroutines, regions without a flow and manual async operations go
through the runtime's name-based calls; left by an exception they end
``raised`` as decorated functions do, in the JSON trace (``"args":
{"outcome":"raised"}`` on the ``E`` or ``e``), in the Perfetto trace (the
slice end's debug annotation ``outcome``) and in ``perfflow-trace db``
(``span.outcome``, and ``span-types``' raised column).

What counts as raised is what the caller sees: a cancelled coroutine
raises CancelledError into whoever awaits it, so it is ``raised``; a
coroutine or generator closed early (GeneratorExit, which its closer does
not see) and a region it was in end ``returned``."""

from collections import Counter

import pytest

from support import async_pairs, import_db, read_pftrace, read_trace, run_without_misuse, trace_sql

PROGRAM = """
    import asyncio, perfflow

    def make_step(i):
        @perfflow.trace(name="step{}".format(i))
        async def step():
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            if i % 3 == 0:
                raise ValueError(i)
            return i
        return step

    @perfflow.trace
    async def fetch(i):
        await asyncio.sleep(0)
        if i % 2:
            raise LookupError(i)
        return i

    @perfflow.trace
    async def stage():
        # Six tasks of distinct names and six of one name, interleaved on
        # this thread: every step begins before any ends.
        steps = await asyncio.gather(*(make_step(i)() for i in range(6)), return_exceptions=True)
        fetched = await asyncio.gather(*(fetch(i) for i in range(6)), return_exceptions=True)
        assert [type(r).__name__ for r in steps] == ["ValueError", "int", "int"] * 2
        assert [type(r).__name__ for r in fetched] == ["int", "LookupError"] * 3
        raise RuntimeError("two steps failed")

    @perfflow.trace
    async def forever():
        await asyncio.sleep(3600)

    @perfflow.trace
    async def patient():
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            return "stopped cleanly"

    @perfflow.trace
    async def abandoned():
        await asyncio.sleep(0)
        return "never"

    async def produce():
        with perfflow.region("produce"):
            yield 1
            yield 2

    async def main():
        try:
            await stage()
        except RuntimeError:
            pass
        tasks = [asyncio.ensure_future(forever()), asyncio.ensure_future(patient())]
        await asyncio.sleep(0.01)
        for task in tasks:
            task.cancel()
        done = await asyncio.gather(*tasks, return_exceptions=True)
        assert type(done[0]).__name__ == "CancelledError" and done[1] == "stopped cleanly"
        rows = produce()
        assert await rows.__anext__() == 1
        await rows.aclose()

    asyncio.run(main())

    # A coroutine closed after its first suspension, never finished.
    coro = abandoned()
    coro.send(None)
    coro.close()

    # Regions without a flow, left by an exception or not, and one inside a
    # generator closed early.
    try:
        with perfflow.region("load"):
            raise OSError("disk")
    except OSError:
        pass
    with perfflow.region("commit"):
        pass

    def lines():
        with perfflow.region("read"):
            yield "a"
            yield "b"

    it = lines()
    assert next(it) == "a"
    it.close()

    # Manual async operations.
    op = perfflow.async_begin("transfer", scope="net")
    perfflow.async_end("transfer", op, scope="net", raised=True)
    op = perfflow.async_begin("transfer", scope="net")
    perfflow.async_end("transfer", op, scope="net")
"""

# (name, outcome): number of spans.
EXPECTED = Counter(
    {
        ("step0", "raised"): 1,
        ("step1", "returned"): 1,
        ("step2", "returned"): 1,
        ("step3", "raised"): 1,
        ("step4", "returned"): 1,
        ("step5", "returned"): 1,
        ("fetch", "returned"): 3,
        ("fetch", "raised"): 3,
        ("stage", "raised"): 1,
        ("forever", "raised"): 1,
        ("patient", "returned"): 1,
        ("abandoned", "returned"): 1,
        ("produce", "returned"): 1,
        ("load", "raised"): 1,
        ("commit", "returned"): 1,
        ("read", "returned"): 1,
        ("transfer", "raised"): 1,
        ("transfer", "returned"): 1,
    }
)

ASYNC = {"stage", "fetch", "forever", "patient", "abandoned", "transfer"} | {
    "step{}".format(i) for i in range(6)
}


def ends_by_outcome(events):
    """Counter of (name, outcome) over the end events (``E``, ``e``), an
    end without an outcome counting as ``returned``; asserts that begins
    and ends pair."""
    ends = Counter()
    for e in events:
        if e["ph"] in ("E", "e"):
            ends[(e["name"], e.get("args", {}).get("outcome", "returned"))] += 1
    begins = Counter(e["name"] for e in events if e["ph"] in ("B", "b"))
    ended = Counter()
    for (name, _), n in ends.items():
        ended[name] += n
    assert begins == ended
    return ends


@pytest.mark.parametrize("log_format", ["array", "perfetto"])
def test_coroutines_and_regions_left_by_an_exception_end_raised_in_the_trace_and_the_database(
    program, tmp_path, log_format
):
    trace = run_without_misuse(program, tmp_path, PROGRAM, log_format)
    if log_format == "array":
        events = read_trace(trace)
        for name in ASYNC:
            async_pairs(events, name)
        phases = {(e["name"], e["ph"]) for e in events if e["ph"] in ("e", "E")}
        assert {name for name, ph in phases if ph == "e"} == ASYNC
    else:
        events = read_pftrace(trace)
    assert ends_by_outcome(events) == EXPECTED

    database = import_db(trace, tmp_path / "runs.sqlite")
    rows = trace_sql(database, "SELECT name, outcome, COUNT(*) AS n FROM span GROUP BY name, outcome")
    assert Counter({(r["name"], r["outcome"]): r["n"] for r in rows}) == EXPECTED
    # The raised coroutines are those of the tasks that raised, whatever
    # order their ends came in: step0 and step3 began first and fourth.
    rows = trace_sql(
        database,
        "SELECT name, outcome FROM span WHERE name LIKE 'step%' ORDER BY start_ns, name",
    )
    assert [(r["name"], r["outcome"]) for r in rows] == [
        ("step{}".format(i), "raised" if i % 3 == 0 else "returned") for i in range(6)
    ]
    types = {r["name"]: r for r in trace_sql(database, "span-types")}
    assert (types["fetch"]["spans"], types["fetch"]["raised"]) == (6, 3)
    assert (types["load"]["spans"], types["load"]["raised"]) == (1, 1)
    assert (types["produce"]["spans"], types["produce"]["raised"]) == (1, 0)
