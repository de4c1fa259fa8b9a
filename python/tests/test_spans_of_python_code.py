"""Spans of functions, methods, generators, coroutines and exceptions, and
the perfflow module's own interface."""

from support import async_pairs, counts


def nesting_is_balanced(events):
    """Every "B" is closed by an "E" of the same name on its thread, in
    stack order."""
    stacks = {}
    for e in events:
        stack = stacks.setdefault(e["tid"], [])
        if e["ph"] == "B":
            stack.append(e["name"])
        elif e["ph"] == "E":
            assert stack and stack.pop() == e["name"], "unbalanced at {}".format(e)
    assert all(not s for s in stacks.values()), stacks
    return True


def test_methods_bind_self_and_keep_the_function_s_name_and_doc(program):
    program.run(
        """
        import perfflow, pickle

        class Account:
            def __init__(self):
                self.total = 0

            @perfflow.trace
            def add(self, amount, *, times=1):
                "Adds amount."
                self.total += amount * times
                return self.total

            @staticmethod
            @perfflow.trace
            def zero():
                return 0

            @classmethod
            @perfflow.trace
            def make(cls):
                return cls()

        a = Account.make()
        assert a.add(2) == 2 and a.add(3, times=2) == 8 and Account.zero() == 0
        assert Account.add.__name__ == "add" and Account.add.__doc__ == "Adds amount."
        assert Account.add.__qualname__ == "Account.add"
        assert Account.add.__wrapped__.__name__ == "add"

        @perfflow.trace
        def top(x):
            return x

        assert pickle.loads(pickle.dumps(top)) is top
        """
    )
    events = program.only_trace()
    assert counts(events) == {
        ("Account.add", "B"): 2,
        ("Account.add", "E"): 2,
        ("Account.zero", "B"): 1,
        ("Account.zero", "E"): 1,
        ("Account.make", "B"): 1,
        ("Account.make", "E"): 1,
    }
    assert nesting_is_balanced(events)


def test_an_exception_still_ends_the_span_and_reaches_the_caller_unchanged(program):
    program.run(
        """
        import perfflow

        @perfflow.trace
        def inner(n):
            if n == 2:
                raise KeyError(n)
            return n

        @perfflow.trace
        def outer(n):
            return inner(n)

        caught = 0
        for n in range(4):
            try:
                outer(n)
            except KeyError as e:
                assert e.args == (2,)
                caught += 1
        assert caught == 1
        try:
            with perfflow.region("block"):
                raise OSError("disk")
        except OSError:
            pass
        """
    )
    events = program.only_trace()
    assert counts(events) == {
        ("outer", "B"): 4,
        ("outer", "E"): 4,
        ("inner", "B"): 4,
        ("inner", "E"): 4,
        ("block", "B"): 1,
        ("block", "E"): 1,
    }
    assert nesting_is_balanced(events)
    ends = [(e["name"], e.get("args", {}).get("outcome")) for e in events if e["ph"] == "E"]
    assert ends == [
        ("inner", None),
        ("outer", None),
        ("inner", None),
        ("outer", None),
        ("inner", "raised"),
        ("outer", "raised"),
        ("inner", None),
        ("outer", None),
        ("block", "raised"),
    ]


def test_each_resumption_of_a_generator_is_one_span(program):
    program.run(
        """
        import perfflow

        @perfflow.trace
        def numbers(n):
            for i in range(n):
                got = yield i
                if got == "stop":
                    return

        assert list(numbers(3)) == [0, 1, 2]          # 4 resumptions
        g = numbers(10)
        assert next(g) == 0 and g.send(None) == 1     # 2
        try:
            g.send("stop")                            # 1, ends it
        except StopIteration:
            pass
        g = numbers(10)
        next(g)                                       # 1
        g.close()                                     # 1
        g = numbers(10)
        next(g)                                       # 1
        try:
            g.throw(ValueError("no"))                 # 1, raises
        except ValueError:
            pass
        """
    )
    events = program.only_trace()
    assert counts(events) == {("numbers", "B"): 11, ("numbers", "E"): 11}
    assert nesting_is_balanced(events)
    # Only the resumption the thrown ValueError left is raised; the one
    # that ended in StopIteration and the close() returned.
    outcomes = [e.get("args", {}).get("outcome") for e in events if e["ph"] == "E"]
    assert outcomes == [None] * 10 + ["raised"]


def test_a_coroutine_is_one_async_span_from_first_entry_to_final_return(program):
    program.run(
        """
        import asyncio, perfflow

        @perfflow.trace
        async def fetch(i):
            await asyncio.sleep(0.001 * (i % 5))
            if i == 7:
                raise LookupError(i)
            return i

        async def main():
            results = await asyncio.gather(*(fetch(i) for i in range(100)), return_exceptions=True)
            assert results[:7] == list(range(7)) and isinstance(results[7], LookupError)

        asyncio.run(main())
        """
    )
    events = program.only_trace()
    assert counts(events) == {("fetch", "b"): 100, ("fetch", "e"): 100}
    pairs = async_pairs(events, "fetch")
    assert len(pairs) == 100
    raised = [e for _, e in pairs.values() if e.get("args") == {"outcome": "raised"}]
    assert len(raised) == 1 and all("args" not in e for _, e in pairs.values() if e not in raised)
    assert {b["cat"] for b, _ in pairs.values()} == {"__main__"}
    # 100 tasks were suspended at once: every begin precedes every end
    # of the tasks that slept.
    last_begin = max(b["ts"] for b, _ in pairs.values())
    assert sum(1 for _, e in pairs.values() if e["ts"] >= last_begin) >= 80


def test_the_perfflow_module_traces_with_a_decorator_a_region_and_async_ids(program):
    program.run(
        """
        import threading, perfflow

        @perfflow.trace
        def plain():
            return 1

        @perfflow.trace(name="renamed", scope="io")
        def other():
            return 2

        with perfflow.region("setup"):
            assert plain() == 1 and other() == 2
        ids = [perfflow.async_begin("transfer", scope="net") for _ in range(10)]
        assert len(set(ids)) == 10 and 0 not in ids
        t = threading.Thread(target=lambda: [perfflow.async_end("transfer", i, scope="net") for i in ids])
        t.start(); t.join()
        assert perfflow.enabled() and perfflow.dropped_events() == 0
        """
    )
    events = program.only_trace()
    assert counts(events) == {
        ("setup", "B"): 1,
        ("setup", "E"): 1,
        ("plain", "B"): 1,
        ("plain", "E"): 1,
        ("renamed", "B"): 1,
        ("renamed", "E"): 1,
        ("transfer", "b"): 10,
        ("transfer", "e"): 10,
    }
    pairs = async_pairs(events, "transfer")
    assert {b["cat"] for b, _ in pairs.values()} == {"net"}
    assert {e["cat"] for e in events if e["name"] == "setup"} == {"region"}
    assert nesting_is_balanced(events)


def test_a_cancelled_coroutine_ends_its_span_raised_and_instants_mark_its_edges(program):
    program.run(
        """
        import asyncio
        from perfflowaspect.aspect import critical_path

        @critical_path()
        async def forever():
            await asyncio.sleep(3600)

        @critical_path(pointcut="before")
        async def starts():
            await asyncio.sleep(0)

        @critical_path(pointcut="after")
        async def ends():
            await asyncio.sleep(0)

        async def main():
            task = asyncio.ensure_future(forever())
            await asyncio.sleep(0.01)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            await starts()
            await ends()

        asyncio.run(main())
        """
    )
    events = program.only_trace()
    assert counts(events) == {
        ("forever", "b"): 1,
        ("forever", "e"): 1,
        ("starts", "i"): 1,
        ("ends", "i"): 1,
    }
    [(_, end)] = async_pairs(events, "forever").values()
    assert end["args"] == {"outcome": "raised"}


def test_a_recursive_nested_function_and_its_wrapper_are_freed_by_the_collector(program):
    program.run(
        """
        import gc, weakref, perfflow

        def make():
            @perfflow.trace
            def countdown(n):
                return 0 if n == 0 else countdown(n - 1)
            countdown(3)
            return weakref.ref(countdown.__wrapped__)

        refs = [make() for _ in range(3)]
        gc.collect()
        assert [r() for r in refs] == [None, None, None]
        """
    )
    assert counts(program.only_trace()) == {("make.<locals>.countdown", "B"): 12, ("make.<locals>.countdown", "E"): 12}
