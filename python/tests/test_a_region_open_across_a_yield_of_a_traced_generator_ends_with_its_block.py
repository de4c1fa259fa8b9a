"""A ``perfflow.region`` open across a ``yield`` of a traced generator:
each resumption of the generator is a span, and the region's code runs
in several of them, so the region is one slice inside each resumption that
runs it, the last ending when its block does, with the block's outcome
(``raised`` when an exception leaves it). The trace checks, nothing is
dropped or warned about, and ``perfflow-trace db`` gives each slice of the
region the resumption as its parent."""

from collections import Counter

import pytest

from support import import_db, read_pftrace, read_trace, run_without_misuse, trace_sql

PROGRAM = """
    import threading, perfflow

    @perfflow.trace
    def chunks(fail):
        with perfflow.region("read"):
            yield 1
            with perfflow.region("parse"):
                yield 2
            if fail:
                raise OSError("disk")
        yield 3

    @perfflow.trace
    def consume():
        return sum(chunks(False))

    # Three resumptions run the region; the third leaves it and yields 3.
    assert consume() == 6

    # Left by an exception in its third resumption.
    it = chunks(True)
    assert next(it) == 1 and next(it) == 2
    try:
        next(it)
    except OSError:
        pass

    # Closed while suspended inside both regions: they end with the close.
    it = chunks(False)
    next(it)
    next(it)
    it.close()

    # Resumed on another thread: the region's slices follow the generator.
    it = chunks(False)
    next(it)
    worker = threading.Thread(target=lambda: next(it))
    worker.start()
    worker.join()
    assert list(it) == [3]
"""

# (name, outcome): spans.
EXPECTED = Counter(
    {
        ("consume", "returned"): 1,
        # 4 + 3 + 3 + 4 resumptions.
        ("chunks", "returned"): 13,
        ("chunks", "raised"): 1,
        # 3 + 3 + 3 + 3 resumptions run the region.
        ("read", "returned"): 11,
        ("read", "raised"): 1,
        # 2 + 2 + 2 + 2: from the second yield to the next resumption.
        ("parse", "returned"): 8,
    }
)


def ends_by_outcome(events):
    ends = Counter()
    for e in events:
        if e["ph"] == "E":
            ends[(e["name"], e.get("args", {}).get("outcome", "returned"))] += 1
    return ends


@pytest.mark.parametrize("log_format", ["array", "perfetto"])
def test_a_region_across_a_yield_is_a_slice_of_each_resumption_that_runs_it(
    program, tmp_path, log_format
):
    trace = run_without_misuse(program, tmp_path, PROGRAM, log_format)
    # Both readers check the trace first (perfflow-trace check).
    events = read_trace(trace) if log_format == "array" else read_pftrace(trace)
    assert ends_by_outcome(events) == EXPECTED

    database = import_db(trace, tmp_path / "runs.sqlite")
    rows = trace_sql(database, "SELECT name, outcome, COUNT(*) AS n FROM span GROUP BY name, outcome")
    assert Counter({(r["name"], r["outcome"]): r["n"] for r in rows}) == EXPECTED
    parents = trace_sql(
        database,
        "SELECT s.name, p.name AS parent, COUNT(*) AS n FROM span s "
        "LEFT JOIN span p ON p.id = s.parent WHERE s.name IN ('read', 'parse') "
        "GROUP BY s.name, p.name",
    )
    assert {(r["name"], r["parent"]): r["n"] for r in parents} == {
        ("read", "chunks"): 12,
        ("parse", "read"): 8,
    }
    # The raised slice is the last of its region, in the resumption the
    # exception left.
    rows = trace_sql(
        database,
        "SELECT p.outcome FROM span s JOIN span p ON p.id = s.parent "
        "WHERE s.name = 'read' AND s.outcome = 'raised'",
    )
    assert [r["outcome"] for r in rows] == ["raised"]
    # Two threads ran the generator's code, and the region's.
    threads = trace_sql(
        database, "SELECT COUNT(DISTINCT thread) AS n FROM span WHERE name = 'read'"
    )
    assert threads[0]["n"] == 2


def test_a_region_with_a_flow_across_a_yield_has_its_flows_once(program):
    done = program.run(
        """
        import perfflow

        @perfflow.trace
        def send():
            with perfflow.region("hand", scope="data", flow="inout"):
                yield 1
                yield 2

        assert list(send()) == [1, 2]
        """
    )
    assert "perfflow" not in done.stderr, done.stderr
    events = program.only_trace()
    assert ends_by_outcome(events) == {("send", "returned"): 3, ("hand", "returned"): 3}
    flows = [e["ph"] for e in events if e.get("cat") == "flow"]
    # One arrival where the region begins, one departure where its first
    # slice ends.
    assert sorted(flows) == ["f", "s"], events


def test_a_region_of_a_plain_generator_left_while_suspended_is_not_begun_again(program):
    done = program.run(
        """
        import perfflow

        def plain():
            with perfflow.region("inner"):
                yield 1
                yield 2

        @perfflow.trace
        def outer(it):
            yield next(it)
            yield 0

        it = plain()
        o = outer(it)
        assert next(o) == 1      # "inner" begins in this resumption of outer
        assert next(it) == 2     # plain resumed outside outer
        it.close()               # "inner" is left
        assert list(o) == [0]    # outer resumes: "inner" stays ended
        """
    )
    assert "perfflow" not in done.stderr, done.stderr
    events = program.only_trace()
    assert ends_by_outcome(events) == {("outer", "returned"): 3, ("inner", "returned"): 1}
