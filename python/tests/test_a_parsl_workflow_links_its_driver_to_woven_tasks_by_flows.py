"""The composite workflow of examples/parsl: a Parsl driver whose Python
apps are traced with perfflowaspect and whose bash app runs a C++ program
woven by the plugin, once per task. Each process writes a trace that
perfflow-trace accepts, with exact event counts, and the driver's departure
for task i has the id of task i's arrival: the task gets its flow scope's
prefix from PERFFLOW_FLOW_PREFIX."""

import subprocess
import sys

import pytest

from support import REPO, counts, read_trace, weave

pytest.importorskip("parsl", reason="the composite workflow runs on Parsl")

TASKS = 3
SWEEPS = 4


def flow_id(scope, k):
    """The runtime's id of the k-th flow of ``scope`` (README, flow rule)."""
    h = 0x811C9DC5
    for b in scope.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return ((h & 0xFFFFF) << 32) | k


@pytest.fixture(scope="module")
def simulate(tmp_path_factory):
    return weave(
        "clang++-19",
        REPO / "examples" / "parsl" / "simulate.cpp",
        tmp_path_factory.mktemp("woven") / "simulate",
    )


def test_driver_and_tasks_link_by_flows(program, simulate):
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "examples" / "parsl" / "parsl_workflow.py"),
            str(simulate),
            str(TASKS),
            str(SWEEPS),
        ],
        cwd=str(program.workdir),
        env=program.env(),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    traces = [read_trace(path) for path in program.traces()]
    assert len(traces) == TASKS + 1, program.traces()
    drivers = [t for t in traces if any(e["name"] == "prepare" for e in t)]
    assert len(drivers) == 1
    driver = drivers[0]
    tasks = [t for t in traces if t is not driver]

    assert counts(driver) == {
        ("prepare", "B"): TASKS,
        ("prepare", "E"): TASKS,
        ("launch simulate", "B"): TASKS,
        ("launch simulate", "E"): TASKS,
        ("gather", "B"): 1,
        ("gather", "E"): 1,
        **{("task{}/simulate".format(i), "s"): 1 for i in range(TASKS)},
    }
    departures = {e["name"]: e["id"] for e in driver if e["ph"] == "s"}
    assert departures == {
        "task{}/simulate".format(i): flow_id("task{}/simulate".format(i), 0) for i in range(TASKS)
    }

    # Task i runs SWEEPS + i sweeps (prepare's result): its arrival is
    # matched to its departure by id, and its counts by that.
    arrivals = {}
    for trace in tasks:
        (arrival,) = [e for e in trace if e["ph"] == "f"]
        task = [i for i in range(TASKS) if departures["task{}/simulate".format(i)] == arrival["id"]]
        assert len(task) == 1, "arrival {} matches no departure {}".format(arrival, departures)
        arrivals[task[0]] = arrival
        assert counts(trace) == {
            ("simulate", "B"): 1,
            ("simulate", "E"): 1,
            ("simulate", "f"): 1,
            ("relax", "B"): SWEEPS + task[0],
            ("relax", "E"): SWEEPS + task[0],
        }
    assert sorted(arrivals) == list(range(TASKS))
