"""A traced function is a Python function wrapping the original: what
ends a thread inside it (CPython ends daemon threads still running at exit
by unwinding their stacks) passes through it, decorators stacked on it find
a function, and recursion goes as deep as through any wrapper."""

import signal

from support import counts, read_pftrace
from test_spans_of_python_code import nesting_is_balanced


def test_daemon_threads_inside_traced_code_at_exit_end_quietly(program):
    done = program.run(
        """
        import threading, time, perfflow

        @perfflow.trace
        def work():
            time.sleep(0.001)

        @perfflow.trace
        def produce():
            while True:
                time.sleep(0.001)
                yield 1

        def calls():
            while True:
                work()

        def resumptions():
            for _ in produce():
                pass

        for target in (calls, resumptions):
            threading.Thread(target=target, daemon=True).start()
        time.sleep(0.2)
        print("main done", flush=True)
        """
    )
    assert done.stdout == "main done\n"
    assert "FATAL" not in done.stderr and -done.returncode != signal.SIGABRT
    events = program.only_trace()
    names = {name for name, _ in counts(events)}
    assert names == {"work", "produce"}, names


def test_decorators_and_tools_that_expect_a_function_accept_a_traced_one(program):
    program.run(
        """
        import abc, inspect, typing, weakref, perfflow

        @perfflow.trace
        def handler(x):
            "Handles x."
            return x + 1

        handler.calls = 0
        handler.__doc__ = handler.__doc__ + " Traced."
        assert inspect.isfunction(handler) and handler.__doc__ == "Handles x. Traced."
        assert weakref.ref(handler)() is handler
        assert typing.no_type_check(handler) is handler
        assert inspect.signature(handler) == inspect.signature(handler.__wrapped__)

        class Base(abc.ABC):
            @abc.abstractmethod
            @perfflow.trace
            def run(self):
                ...

        class Job(Base):
            @perfflow.trace
            def run(self):
                return handler(1)

        try:
            Base()
        except TypeError:
            pass
        else:
            raise AssertionError("an abstract method was not abstract")
        assert Job().run() == 2
        """
    )
    events = program.only_trace()
    assert counts(events) == {
        ("Job.run", "B"): 1,
        ("Job.run", "E"): 1,
        ("handler", "B"): 1,
        ("handler", "E"): 1,
    }
    assert nesting_is_balanced(events)


def test_traced_recursion_goes_as_deep_as_through_a_plain_wrapper(program):
    done = program.run(
        """
        import sys, perfflow
        sys.setrecursionlimit(100000)

        @perfflow.trace
        def depth(n):
            return 0 if n == 0 else 1 + depth(n - 1)

        print(depth(12000))
        """
    )
    assert done.stdout == "12000\n"
    # Every span of it is in the trace, nested.
    assert done.stderr == ""
    events = program.only_trace()
    assert counts(events) == {("depth", "B"): 12001, ("depth", "E"): 12001}
    assert nesting_is_balanced(events)


def test_a_function_named_as_its_module_keeps_its_name_in_a_pftrace(program):
    (program.workdir / "train.py").write_text(
        "import perfflow\n\n"
        "@perfflow.trace\ndef load():\n    return 1\n\n"
        "@perfflow.trace\ndef train():\n    return load() + 1\n"
    )
    program.run(
        """
        import train
        assert train.load() == 1 and train.train() == 2
        """,
        options="log-format=perfetto",
    )
    (trace,) = sorted(program.workdir.glob("perfflow*.pftrace"))
    events = [e for e in read_pftrace(trace) if e["ph"] in ("B", "E")]
    assert counts(events) == {("load", "B"): 2, ("load", "E"): 2, ("train", "B"): 1, ("train", "E"): 1}
    assert {e["cat"] for e in events if e["ph"] == "B"} == {"train"}


def test_a_warning_with_stderr_closed_leaves_the_decoration_alone(program):
    done = program.run(
        """
        import os, sys, perfflow

        os.close(2)

        @perfflow.trace
        async def ticks():
            yield 1

        @perfflow.trace(pointcut="sideways")
        def step():
            return 2

        assert step() == 2
        print("decorated", flush=True)
        """
    )
    assert done.stdout == "decorated\n"


def test_a_nested_function_decorated_at_every_call_keeps_memory_flat(program):
    done = program.run(
        """
        import gc, perfflow

        def rss_kib():
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * 4

        def handle(x):
            @perfflow.trace
            def inner(y):
                return y + 1
            return inner(x)

        for i in range(50_000):
            handle(i)
        gc.collect()
        before = rss_kib()
        for i in range(200_000):
            handle(i)
        gc.collect()
        print(rss_kib() - before)
        """
    )
    # 200,000 decorations: the site is made once for them all (a site per
    # decoration took about 25 MB).
    assert int(done.stdout) < 4096, done.stdout


def test_static_and_class_methods_are_traced_whichever_decorator_comes_first(program):
    program.run(
        """
        import perfflow

        class Grid:
            @perfflow.trace
            @staticmethod
            def zero():
                return 0

            @perfflow.trace
            @classmethod
            def make(cls):
                return cls()

        assert Grid.zero() == 0 and Grid().zero() == 0
        assert isinstance(Grid.make(), Grid) and isinstance(Grid().make(), Grid)

        for wrong, hint in (("load", "name='load'"), (property(lambda self: 1), "below @property")):
            try:
                perfflow.trace(wrong)
            except TypeError as error:
                assert hint in str(error), error
            else:
                raise AssertionError("{!r} was taken as a function".format(wrong))
        """
    )
    events = program.only_trace()
    assert counts(events) == {
        ("Grid.zero", "B"): 2,
        ("Grid.zero", "E"): 2,
        ("Grid.make", "B"): 2,
        ("Grid.make", "E"): 2,
    }
