"""Running Python programs against the perfflow package of this build and
reading the traces they leave.

The package is staged from the sources (python/perfflow, python/perfflowaspect)
and the extension built by ``cargo build -p perfflow-python``
(``target/debug/lib_native.so``, or the file named by PERFFLOW_PYTHON_NATIVE).
Every program runs in its own scratch directory with the runtime's
variables removed from its environment, so a test sets exactly what it
means to test. Every trace is checked with ``perfflow-trace check`` from
the build before it is read.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))

RUNTIME_VARIABLES = [
    "PERFFLOW_OPTIONS",
    "PERFFLOW_INSTANCE_PATH",
    "PERFFLOW_RUNTIME_LIB",
    "PERFFLOW_FLOW_PREFIX",
    "FLUX_JOB_ID",
    "FLUX_URI",
    "SLURM_JOB_ID",
    "SLURM_STEP_ID",
    "LSB_JOBID",
    "LS_JOBPID",
    "PBS_JOBID",
    "OAR_JOB_ID",
    "OAR_JOBID",
]


def native_module():
    path = Path(os.environ.get("PERFFLOW_PYTHON_NATIVE", TARGET / "debug" / "lib_native.so"))
    if not path.is_file():
        raise RuntimeError(
            "{} not found: build the extension with `cargo build -p perfflow-python` "
            "or name it in PERFFLOW_PYTHON_NATIVE".format(path)
        )
    return path


def build_dir():
    return Path(os.environ.get("PERFFLOW_BUILD_DIR", REPO / "build"))


def trace_tool():
    for candidate in (build_dir() / "bin" / "perfflow-trace", TARGET / "debug" / "perfflow-trace"):
        if candidate.is_file():
            return candidate
    raise RuntimeError(
        "perfflow-trace not found in {}/bin or {}/debug: run scripts/build.sh or "
        "`cargo build -p perfflow-trace`".format(build_dir(), TARGET)
    )


def weave(compiler, source, out, *flags):
    """Compiles ``source`` to ``out`` through the build's plugin, linked
    against its libperfflow_runtime.so, and returns ``out``."""
    lib = build_dir() / "lib"
    plugin = lib / "libWeavePass.so"
    for needed in (plugin, lib / "libperfflow_runtime.so"):
        assert needed.is_file(), "{} not found: run scripts/build.sh".format(needed)
    subprocess.run(
        [
            compiler,
            "-O1",
            *flags,
            "-fpass-plugin={}".format(plugin),
            "-I{}".format(REPO / "runtime" / "include"),
            str(source),
            "-L{}".format(lib),
            "-Wl,-rpath,{}".format(lib),
            "-lperfflow_runtime",
            "-o",
            str(out),
        ],
        check=True,
        timeout=120,
    )
    return out


def stage_package(into):
    """Lays out the importable packages under ``into`` and returns it."""
    into = Path(into)
    for package in ("perfflow", "perfflowaspect"):
        dest = into / package
        dest.mkdir(parents=True, exist_ok=True)
        for source in (REPO / "python" / package).glob("*.py"):
            shutil.copy(source, dest / source.name)
    native = into / "perfflow" / "_native.abi3.so"
    if native.exists() or native.is_symlink():
        native.unlink()
    native.symlink_to(native_module())
    return into


class Program:
    """One Python program run in a scratch directory."""

    def __init__(self, package_dir, workdir):
        self.package_dir = Path(package_dir)
        self.workdir = Path(workdir)

    def env(self, options=None, extra=None):
        env = {k: v for k, v in os.environ.items() if k not in RUNTIME_VARIABLES}
        env["PYTHONPATH"] = str(self.package_dir)
        if options is not None:
            env["PERFFLOW_OPTIONS"] = options
        env.update(extra or {})
        return env

    def run(self, source, options=None, extra_env=None, expect_rc=0, args=()):
        script = self.workdir / "program.py"
        script.write_text(textwrap.dedent(source))
        done = subprocess.run(
            [sys.executable, str(script), *args],
            cwd=str(self.workdir),
            env=self.env(options, extra_env),
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == expect_rc, "exit {}\nstdout:\n{}\nstderr:\n{}".format(
            done.returncode, done.stdout, done.stderr
        )
        return done

    def traces(self, under=None):
        return sorted((under or self.workdir).glob("**/perfflow*.pfw"))

    def only_trace(self):
        found = self.traces()
        assert len(found) == 1, "expected one trace file, found {}".format(found)
        return read_trace(found[0])


def read_trace(path):
    """The events of a trace other than metadata ("M"), after checking the
    file with perfflow-trace."""
    checked = subprocess.run(
        [str(trace_tool()), "check", str(path)], capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 0, "perfflow-trace check {}:\n{}{}".format(
        path, checked.stdout, checked.stderr
    )
    with open(path) as f:
        events = json.load(f)
    return [e for e in events if e.get("ph") != "M"]


def counts(events):
    """Counter of (name, ph)."""
    return Counter((e["name"], e["ph"]) for e in events)


def async_pairs(events, name):
    """{id: (b, e)} of the async events named ``name``; asserts that each id
    has exactly one "b" and one "e", the "e" not earlier than the "b"."""
    begins, ends = {}, {}
    for e in events:
        if e["name"] == name and e["ph"] in ("b", "e"):
            side = begins if e["ph"] == "b" else ends
            assert e["id"] not in side, "id {} repeated in {}".format(e["id"], e)
            side[e["id"]] = e
    assert begins.keys() == ends.keys(), "unpaired ids: {}".format(begins.keys() ^ ends.keys())
    for i in begins:
        assert ends[i]["ts"] >= begins[i]["ts"] and ends[i]["cat"] == begins[i]["cat"]
    return {i: (begins[i], ends[i]) for i in begins}


def read_pftrace(path):
    """The events of a .pftrace, decoded by Perfetto's own generated classes
    (runtime/tests/support/pftrace_events.py), in the shape of the JSON
    events, after checking the file with perfflow-trace."""
    checked = subprocess.run(
        [str(trace_tool()), "check", str(path)], capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 0, "perfflow-trace check {}:\n{}{}".format(
        path, checked.stdout, checked.stderr
    )
    script = REPO / "runtime" / "tests" / "support" / "pftrace_events.py"
    decoded = subprocess.run(
        [sys.executable, str(script), str(path)], capture_output=True, text=True, timeout=120
    )
    assert decoded.returncode == 0, "pftrace_events {}:\n{}".format(path, decoded.stderr)
    return json.loads(decoded.stdout)["events"]


def trace_sql(database, query):
    """Rows of ``perfflow-trace sql DATABASE QUERY --json``."""
    done = subprocess.run(
        [str(trace_tool()), "sql", str(database), query, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, "perfflow-trace sql {}:\n{}".format(query, done.stderr)
    return json.loads(done.stdout)


def import_db(trace, database):
    """Imports ``trace`` into ``database`` with ``perfflow-trace db``."""
    done = subprocess.run(
        [str(trace_tool()), "db", "-o", str(database), str(trace)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, "perfflow-trace db {}:\n{}{}".format(trace, done.stdout, done.stderr)
    return database


def run_without_misuse(program, tmp_path, source, log_format):
    """Runs ``source`` writing a trace of ``log_format`` into its own
    directory under ``tmp_path``; asserts that the runtime said nothing (no
    misuse: every exit met its enter) and returns the one trace."""
    out = tmp_path / log_format
    done = program.run(source, options="log-format={}:log-dir={}".format(log_format, out))
    assert "perfflow" not in done.stderr, done.stderr
    [trace] = [p for p in out.iterdir() if p.name.startswith("perfflow.")]
    return trace
