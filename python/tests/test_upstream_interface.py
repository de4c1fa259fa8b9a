"""perfflowaspect.aspect as PerfFlowAspect documents it: the same pointcuts,
options, file names and event fields, and its smoke tests' expectations."""

import socket

from support import async_pairs, counts

# Three decorated functions, each call of foo calling bar calling bas, foo
# called four times: PerfFlowAspect's smoke test expects 24 begin/end events
# (12 complete events in compact form) named foo, bar and bas.
NESTED_CALLS = """
    import perfflowaspect
    import perfflowaspect.aspect

    @perfflowaspect.aspect.critical_path(pointcut="around")
    def bas():
        return 1

    @perfflowaspect.aspect.critical_path(pointcut="around")
    def bar():
        return bas() + 1

    @perfflowaspect.aspect.critical_path()
    def foo(msg):
        return bar() if msg == "hello" else 0

    for _ in range(4):
        assert foo("hello") == 2
"""


def test_the_smoke_test_writes_24_begin_and_end_events_named_after_the_functions(program):
    program.run(NESTED_CALLS)
    [trace] = program.traces()
    assert trace.name.startswith("perfflow.array.{}.".format(socket.gethostname()))
    events = program.only_trace()
    assert len(events) == 24
    assert counts(events) == {
        (name, ph): 4 for name in ("foo", "bar", "bas") for ph in ("B", "E")
    }
    assert all(e["cat"] == "__main__" for e in events)
    assert all(set(e) >= {"name", "cat", "pid", "tid", "ts", "ph"} for e in events)
    # Properly nested: foo > bar > bas on one thread.
    order = [(e["name"], e["ph"]) for e in events[:6]]
    assert order == [("foo", "B"), ("bar", "B"), ("bas", "B"), ("bas", "E"), ("bar", "E"), ("foo", "E")]


def test_compact_form_writes_12_complete_events(program):
    program.run(NESTED_CALLS, options="log-event=compact")
    events = program.only_trace()
    assert counts(events) == {(name, "X"): 4 for name in ("foo", "bar", "bas")}


def test_log_dir_and_name_options_place_and_name_the_file(program):
    program.run(NESTED_CALLS, options="log-dir=./logdir:name=mycomponent:log-filename-include=name")
    assert [p.relative_to(program.workdir).as_posix() for p in program.traces()] == [
        "logdir/perfflow.array.mycomponent.pfw"
    ]


def test_log_enable_false_writes_no_file_and_returns_functions_unchanged(program):
    program.run(
        """
        import perfflowaspect.aspect, perfflow

        def plain(x):
            return x + 1

        traced = perfflowaspect.aspect.critical_path()(plain)
        assert traced is plain
        assert perfflow.trace(plain) is plain
        assert traced(1) == 2
        perfflowaspect.aspect.sync_event("before", "s", "c")
        perfflowaspect.aspect.sync_event("after", "s", "c")
        """,
        options="log-enable=False",
    )
    assert program.traces() == []


def test_every_pointcut_writes_its_events(program):
    program.run(
        """
        from perfflowaspect.aspect import critical_path

        @critical_path(pointcut="before")
        def before(): pass

        @critical_path(pointcut="after")
        def after(): pass

        @critical_path(pointcut="around_async", scope="io")
        def around_async(): pass

        @critical_path(pointcut="before_async", scope="io")
        def before_async(): pass

        @critical_path(pointcut="after_async", scope="io")
        def after_async(): pass

        for f in (before, after, around_async, before_async, after_async):
            for _ in range(3):
                f()
        """
    )
    events = program.only_trace()
    assert counts(events) == {
        ("before", "i"): 3,
        ("after", "i"): 3,
        ("around_async", "b"): 3,
        ("around_async", "e"): 3,
        ("before_async", "n"): 3,
        ("after_async", "n"): 3,
    }
    asyncs = [e for e in events if e["ph"] in "bne"]
    assert all(e["cat"] == "io" for e in asyncs)
    begins = [e["id"] for e in asyncs if e["ph"] == "b"]
    ends = [e["id"] for e in asyncs if e["ph"] == "e"]
    assert sorted(begins) == sorted(ends) and len(set(begins)) == 3


def test_an_unknown_pointcut_leaves_the_function_untraced_with_a_warning(program):
    done = program.run(
        """
        from perfflowaspect.aspect import critical_path

        def f(): return 5
        assert critical_path(pointcut="sideways")(f) is f
        """
    )
    assert "unknown pointcut 'sideways'" in done.stderr
    assert program.traces() == []


def test_sync_event_writes_a_begin_and_an_end_in_the_given_category(program):
    program.run(
        """
        from perfflowaspect import aspect

        def foo():
            aspect.sync_event("before", "foo", "program.py")
            aspect.sync_event("after", "foo", "program.py")

        aspect.sync_event("before", "main", "program.py")
        for _ in range(5):
            foo()
        aspect.sync_event("after", "main", "program.py")
        try:
            aspect.sync_event("during", "main", "program.py")
        except ValueError as e:
            assert "Invalid pointcut" in str(e)
        else:
            raise AssertionError("no ValueError")
        """
    )
    events = program.only_trace()
    assert counts(events) == {("main", "B"): 1, ("main", "E"): 1, ("foo", "B"): 5, ("foo", "E"): 5}
    assert {e["cat"] for e in events} == {"program.py"}


def test_async_event_pairs_a_begin_on_one_thread_with_an_end_on_another(program):
    program.run(
        """
        from concurrent.futures import ThreadPoolExecutor
        from perfflowaspect import aspect

        def finish():
            aspect.async_event("after", "bar", "program.py")

        with ThreadPoolExecutor(3) as pool:
            for _ in range(20):
                aspect.async_event("before", "bar", "program.py")
                pool.submit(finish).result()
        aspect.async_event("instant", "mark", "program.py")
        """
    )
    events = program.only_trace()
    assert counts(events) == {("bar", "b"): 20, ("bar", "e"): 20, ("mark", "n"): 1}
    pairs = async_pairs(events, "bar")
    assert len(pairs) == 20
    assert all(b["tid"] != e["tid"] for b, e in pairs.values())


def test_an_async_pointcut_on_a_pool_thread_and_a_sync_one_around_it_pair_up(program):
    # PerfFlowAspect's future smoke test: foo (around) submits bar
    # (around_async) to a thread pool and waits for it.
    program.run(
        """
        import time
        from concurrent.futures import ThreadPoolExecutor
        import perfflowaspect.aspect

        pool = ThreadPoolExecutor(3)

        @perfflowaspect.aspect.critical_path(pointcut="around_async")
        def bar(message):
            time.sleep(0.01)
            return message

        @perfflowaspect.aspect.critical_path(pointcut="around")
        def foo():
            future = pool.submit(bar, "hello")
            assert future.result() == "hello"

        foo()
        pool.shutdown()
        """
    )
    events = program.only_trace()
    assert counts(events) == {("foo", "B"): 1, ("foo", "E"): 1, ("bar", "b"): 1, ("bar", "e"): 1}
    [(b, e)] = async_pairs(events, "bar").values()
    assert b["tid"] == e["tid"] != next(x["tid"] for x in events if x["name"] == "foo")


def test_flows_join_a_producer_and_a_consumer_of_one_scope(program):
    program.run(
        """
        from perfflowaspect.aspect import critical_path

        @critical_path(scope="handoff", flow="out")
        def produce(): pass

        @critical_path(scope="handoff", flow="in")
        def consume(): pass

        for _ in range(3):
            produce()
            consume()
        """
    )
    events = program.only_trace()
    flows = [e for e in events if e["ph"] in ("s", "f")]
    assert sorted(e["ph"] for e in flows) == ["f"] * 3 + ["s"] * 3
    assert {e["id"] for e in flows if e["ph"] == "s"} == {e["id"] for e in flows if e["ph"] == "f"}


def test_calls_run_unchanged_when_the_trace_file_cannot_be_created(program):
    done = program.run(
        """
        import perfflow
        from perfflowaspect.aspect import critical_path

        @critical_path()
        def add(a, b):
            return a + b

        assert [add(i, 1) for i in range(1000)] == list(range(1, 1001))
        assert not perfflow.enabled()
        """,
        options="log-dir=/proc/perfflow-cannot-create-this",
    )
    assert "perfflow-cannot-create-this" in done.stderr
    assert program.traces() == []
