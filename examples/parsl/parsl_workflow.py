#!/usr/bin/env python3
"""A composite workflow run by Parsl: Python apps traced with perfflowaspect
prepare and gather the tasks, a bash app runs the C++ simulation woven by
the perfflow plugin (simulate.cpp) once per task. Every process writes its
own trace in the current directory; flows link the driver to each task:

- the bash app's body is a region with a departure on scope
  "task<i>/simulate", the only departure of that scope in the driver, so
  its id is that of flow 0 of "task<i>/simulate";
- the command it returns starts the program with PERFFLOW_FLOW_PREFIX=task<i>,
  so the program's first arrival on its scope 'simulate' (flow 0 of
  "task<i>/simulate") has the same id.

    python3 examples/parsl/parsl_workflow.py ./simulate [tasks] [sweeps]

Loaded together in Perfetto, the traces show an arrow from each launch to
the task it started.
"""

import os
import shlex
import sys
import tempfile

import parsl
from parsl.app.app import bash_app, python_app
from parsl.config import Config
from parsl.executors.threads import ThreadPoolExecutor

import perfflow
from perfflowaspect.aspect import critical_path


@python_app
@critical_path()
def prepare(task, sweeps):
    return sweeps + task


@bash_app
def simulate(program, task, sweeps, stdout=None, stderr=None):
    with perfflow.region("launch simulate", scope="task{}/simulate".format(task), flow="out"):
        return "PERFFLOW_FLOW_PREFIX=task{} {} {}".format(task, shlex.quote(program), sweeps)


@python_app
@critical_path()
def gather(results):
    values = []
    for path in results:
        with open(path) as f:
            values.append(float(f.read()))
    return values


def main():
    program = os.path.abspath(sys.argv[1])
    tasks = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    sweeps = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    with tempfile.TemporaryDirectory(prefix="parsl-") as scratch:
        config = Config(
            executors=[ThreadPoolExecutor(max_threads=2, label="local")],
            run_dir=os.path.join(scratch, "runinfo"),
        )
        with parsl.load(config):
            inputs = [prepare(t, sweeps) for t in range(tasks)]
            outputs = [os.path.join(scratch, "task{}.out".format(t)) for t in range(tasks)]
            runs = [
                simulate(program, t, inputs[t], stdout=outputs[t], stderr=outputs[t] + ".err")
                for t in range(tasks)
            ]
            for run in runs:
                run.result()
            print(gather(outputs).result())


if __name__ == "__main__":
    main()
