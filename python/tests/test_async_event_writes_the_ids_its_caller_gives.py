"""``async_event(..., id=...)`` as PerfFlowAspect has it: the events carry
the caller's id, so the caller pairs them, whatever the order and the
threads; without an id (or with a false one) the runtime's ids pair the
k-th "after" with the k-th "before"."""

from support import counts


def test_given_ids_are_written_and_pair_begins_with_ends_in_any_order(program):
    program.run(
        """
        import threading
        from perfflowaspect import aspect

        for op in (1000, 2000, 3000):
            aspect.async_event("before", "transfer", "io", id=op)
        aspect.async_event("instant", "checkpoint", "io", id=2000)
        # Ended last to first, each on a thread of its own.
        for op in (3000, 2000, 1000):
            t = threading.Thread(target=aspect.async_event, args=("after", "transfer", "io"),
                                 kwargs={"id": op})
            t.start()
            t.join()
        aspect.async_event("before", "plain", "io", id=0)
        aspect.async_event("after", "plain", "io")
        """
    )
    events = program.only_trace()
    assert counts(events) == {
        ("transfer", "b"): 3,
        ("transfer", "e"): 3,
        ("checkpoint", "n"): 1,
        ("plain", "b"): 1,
        ("plain", "e"): 1,
    }
    begins = {e["id"]: e for e in events if e["name"] == "transfer" and e["ph"] == "b"}
    ends = {e["id"]: e for e in events if e["name"] == "transfer" and e["ph"] == "e"}
    assert sorted(begins) == sorted(ends) == [1000, 2000, 3000]
    assert all(e["cat"] == "io" for e in events)
    # The last end written is that of the first operation begun.
    assert max(ends.values(), key=lambda e: e["ts"])["id"] == 1000
    assert len({e["tid"] for e in ends.values()} | {begins[1000]["tid"]}) == 4
    (mark,) = [e for e in events if e["ph"] == "n"]
    assert mark["id"] == 2000
    plain = [e for e in events if e["name"] == "plain"]
    assert plain[0]["id"] == plain[1]["id"] and plain[0]["id"] not in (0, 1000, 2000, 3000)


def test_an_id_that_is_not_an_integer_is_refused_with_what_was_expected(program):
    done = program.run(
        """
        from perfflowaspect import aspect
        try:
            aspect.async_event("before", "transfer", "io", id="op-1")
        except ValueError as e:
            print(e)
        """
    )
    assert "async_event id must be an integer from 0 to 2**64-1, got 'op-1'" in done.stdout
