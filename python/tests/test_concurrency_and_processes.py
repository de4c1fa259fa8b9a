"""Threads, thread pools and child processes: exact counts, every span
closed on its own thread, and one trace file per process."""

import signal

from support import async_pairs, counts, read_trace
from test_spans_of_python_code import nesting_is_balanced


def test_eight_threads_record_every_call_on_their_own_thread(program):
    program.run(
        """
        import threading, perfflow
        from perfflowaspect.aspect import critical_path

        @critical_path()
        def leaf(i):
            return i

        @perfflow.trace
        def work(n):
            return sum(leaf(i) for i in range(n))

        threads = [threading.Thread(target=lambda: [work(50) for _ in range(20)]) for _ in range(8)]
        for t in threads: t.start()
        for t in threads: t.join()
        """
    )
    events = program.only_trace()
    assert counts(events) == {
        ("work", "B"): 160,
        ("work", "E"): 160,
        ("leaf", "B"): 8000,
        ("leaf", "E"): 8000,
    }
    assert len({e["tid"] for e in events}) == 8
    assert nesting_is_balanced(events)


def test_a_pool_runs_decorated_functions_and_ends_operations_begun_elsewhere(program):
    program.run(
        """
        from concurrent.futures import ThreadPoolExecutor
        import perfflow

        @perfflow.trace
        def task(op):
            perfflow.async_end("job", op)
            return op

        with ThreadPoolExecutor(4) as pool:
            ops = [perfflow.async_begin("job") for _ in range(50)]
            assert list(pool.map(task, ops)) == ops
        """
    )
    events = program.only_trace()
    assert counts(events) == {("task", "B"): 50, ("task", "E"): 50, ("job", "b"): 50, ("job", "e"): 50}
    pairs = async_pairs(events, "job")
    assert len(pairs) == 50
    assert all(b["tid"] != e["tid"] for b, e in pairs.values())
    assert nesting_is_balanced(events)


CHILDREN = """
    import multiprocessing, os, perfflow

    @perfflow.trace
    def square(x):
        return x * x

    if __name__ == "__main__":
        multiprocessing.set_start_method("{method}")
        square(0)
        with multiprocessing.get_context("{method}").Pool(2) as pool:
            assert pool.map(square, range(1, 11), chunksize=1) == [x * x for x in range(1, 11)]
        pool.join()
"""


def each_process_has_its_own_file(program, method):
    program.run(CHILDREN.format(method=method))
    files = program.traces()
    per_file = {}
    for path in files:
        events = read_trace(path)
        pids = {e["pid"] for e in events}
        assert len(pids) == 1, "{} holds events of {}".format(path, pids)
        assert str(pids.pop()) in path.name
        per_file[path] = counts(events)
    # The parent's one call, then the ten calls spread over the children.
    assert len(files) >= 2
    total = sum((c for c in per_file.values()), start=type(next(iter(per_file.values())))())
    assert total == {("square", "B"): 11, ("square", "E"): 11}


def test_forked_pool_workers_each_write_their_own_file(program):
    each_process_has_its_own_file(program, "fork")


def test_spawned_pool_workers_each_write_their_own_file(program):
    each_process_has_its_own_file(program, "spawn")


def test_forkserver_pool_workers_each_write_their_own_file(program):
    each_process_has_its_own_file(program, "forkserver")


def test_a_forkserver_child_that_imports_perfflow_itself_keeps_its_events(program):
    # The fork server does not import the main module here, so the child
    # imports perfflow after its fork, and ends with os._exit.
    program.run(
        """
        import multiprocessing, perfflow

        @perfflow.trace
        def work(x):
            return x

        if __name__ == "__main__":
            child = multiprocessing.get_context("forkserver").Process(target=work, args=(3,))
            child.start()
            child.join()
            assert child.exitcode == 0
        """
    )
    files = program.traces()
    assert len(files) == 1, files
    assert counts(read_trace(files[0])) == {("work", "B"): 1, ("work", "E"): 1}


def test_an_uncaught_keyboard_interrupt_leaves_a_complete_trace(program):
    # The interpreter ends by SIGINT, raised again after it is finalized.
    done = program.run(
        """
        import os, signal, perfflow

        @perfflow.trace
        def inner(i):
            return i

        @perfflow.trace
        def work():
            for i in range(100):
                inner(i)
            os.kill(os.getpid(), signal.SIGINT)
            while True:
                pass

        work()
        """,
        expect_rc=-signal.SIGINT,
    )
    assert "KeyboardInterrupt" in done.stderr
    files = program.traces()
    assert len(files) == 1, files
    found = counts(read_trace(files[0]))
    assert found[("inner", "B")] == 100 and found[("inner", "E")] == 100, found
    assert found[("work", "B")] == 1, found


def test_workers_that_import_perfflow_inside_their_task_keep_their_events(program):
    # The worker's bootstrap has run its after-fork hooks by the time the
    # task imports perfflow; fork and forkserver workers end with os._exit.
    program.run(
        """
        import sys, multiprocessing, concurrent.futures as cf

        def work(i):
            import perfflow

            @perfflow.trace
            def inner(x):
                return x

            return inner(i)

        if __name__ == "__main__":
            for method in ("fork", "forkserver", "spawn"):
                context = multiprocessing.get_context(method)
                with cf.ProcessPoolExecutor(2, mp_context=context) as pool:
                    assert sorted(pool.map(work, range(20))) == list(range(20))
        """
    )
    files = program.traces()
    total = {}
    for path in files:
        for key, n in counts(read_trace(path)).items():
            total[key] = total.get(key, 0) + n
    name = "work.<locals>.inner"
    assert total == {(name, "B"): 60, (name, "E"): 60}, (total, files)
