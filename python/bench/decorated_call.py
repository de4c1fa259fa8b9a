#!/usr/bin/env python3
"""Cost of a decorated empty function: a plain call, perfflow's
``perfflowaspect.aspect.critical_path`` (tracing on, and log-enable=False),
and PerfFlowAspect's own package from PyPI, with 1 and 4 threads.

Prints ns per call (wall time of all calls over their number, the GIL
serialising the threads), CPU ns per call (CPU time of the calling threads
only: not the runtime's writer thread, not time spent waiting for a core or
for the GIL) and trace bytes per event. A benchmark, not a test.

    python3 python/bench/decorated_call.py [--calls N] [--upstream-calls N]
        [--python PY] [--no-upstream]

``--python`` is the interpreter with perfflow installed (``pip install
./python``; default: this one). PerfFlowAspect 0.1.0 is installed into a
temporary virtual environment (needs network); --no-upstream skips it.
Every run uses the same PERFFLOW_OPTIONS (the defaults, or the variable's
value when set).
"""

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

WORKER = r"""
import sys, threading, time
mode, threads, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def empty():
    pass

if mode == "plain":
    f = empty
else:
    import perfflowaspect.aspect
    f = perfflowaspect.aspect.critical_path()(empty)

per_thread = calls // threads
start = threading.Barrier(threads + 1)
cpu = []

def loop():
    start.wait()
    c0 = time.thread_time_ns()
    for _ in range(per_thread):
        f()
    cpu.append(time.thread_time_ns() - c0)

workers = [threading.Thread(target=loop) for _ in range(threads)]
for w in workers:
    w.start()
t0 = time.perf_counter_ns()
start.wait()
for w in workers:
    w.join()
elapsed = time.perf_counter_ns() - t0
made = per_thread * threads
print(elapsed / made, sum(cpu) / made, made)
"""


def run(python, mode, threads, calls, options=None):
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ)
        if options is not None:
            env["PERFFLOW_OPTIONS"] = options
        done = subprocess.run(
            [python, "-c", WORKER, mode, str(threads), str(calls)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit("{} {} failed:\n{}".format(python, mode, done.stderr))
        ns, cpu_ns, made = done.stdout.split()
        size = sum(p.stat().st_size for p in Path(work).glob("*.pfw"))
        events = 2 * int(made) if mode != "plain" else 0
        return float(ns), float(cpu_ns), (size / events if events and size else None)


def upstream_python(where):
    venv = Path(where) / "upstream"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "perfflowaspect==0.1.0"],
        capture_output=True,
        text=True,
    )
    if pip.returncode != 0:
        print("PerfFlowAspect from PyPI not installable, left out:\n" + pip.stderr, file=sys.stderr)
        return None
    return str(venv / "bin" / "python")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--upstream-calls", type=int, default=50_000)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--no-upstream", action="store_true")
    args = parser.parse_args()
    options = os.environ.get("PERFFLOW_OPTIONS")
    disabled = ((options + ":") if options else "") + "log-enable=False"

    with tempfile.TemporaryDirectory() as where:
        upstream = None if args.no_upstream else upstream_python(where)
        print(
            "{:<28} {:>7} {:>9} {:>10} {:>13} {:>12}".format(
                "variant", "threads", "calls", "ns/call", "CPU ns/call", "bytes/event"
            )
        )
        for threads in (1, 4):
            rows = [
                ("plain call", args.python, "plain", args.calls, options),
                ("perfflow", args.python, "traced", args.calls, options),
                ("perfflow, log-enable=False", args.python, "traced", args.calls, disabled),
            ]
            if upstream:
                rows.append(("PerfFlowAspect 0.1.0", upstream, "traced", args.upstream_calls, options))
            for label, python, mode, calls, opts in rows:
                ns, cpu_ns, per_event = run(python, mode, threads, calls, opts)
                print(
                    "{:<28} {:>7} {:>9} {:>10.1f} {:>13.1f} {:>12}".format(
                        label,
                        threads,
                        calls,
                        ns,
                        cpu_ns,
                        "-" if per_event is None else "{:.1f}".format(per_event),
                    )
                )


if __name__ == "__main__":
    main()
