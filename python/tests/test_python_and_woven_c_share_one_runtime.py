"""A Python process that calls C woven by the plugin and linked against
libperfflow_runtime.so writes one trace file holding both, whichever of
the two is loaded first, with one runtime."""

import pytest

from support import REPO, counts, weave


@pytest.fixture(scope="module")
def woven_library(tmp_path_factory):
    return weave(
        "clang-19",
        REPO / "python" / "tests" / "c" / "woven_component.c",
        tmp_path_factory.mktemp("woven") / "libwoven_component.so",
        "-shared",
        "-fPIC",
    )


CALLS = """
    import ctypes, sys

    def runtimes():
        # Files mapped in this process that export the runtime.
        paths = set()
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if path.endswith((".so", "_native.abi3.so")) and ("perfflow" in path):
                    paths.add(path)
        return paths

    def load_c():
        lib = ctypes.CDLL({library!r})
        lib.c_work.argtypes = [ctypes.c_int]
        return lib

    if sys.argv[1] == "c-first":
        lib = load_c()
        import perfflow
        assert perfflow.runtime_library().endswith("(loaded before perfflow)"), perfflow.runtime_library()
    else:
        import perfflow
        lib = load_c()
        assert perfflow.runtime_library().endswith("_native.abi3.so"), perfflow.runtime_library()
        # The component's dependency was found loaded: no second copy.
        assert not any(p.endswith("libperfflow_runtime.so") for p in runtimes()), runtimes()

    @perfflow.trace
    def driver(n):
        with perfflow.region("step"):
            return lib.c_work(n)

    for _ in range(3):
        assert driver(5) == 15
"""


@pytest.mark.parametrize("order", ["python-first", "c-first"])
def test_one_file_holds_the_python_and_the_woven_c_spans(program, woven_library, order):
    program.run(CALLS.format(library=str(woven_library)), args=[order])
    events = program.only_trace()
    assert counts(events) == {
        ("driver", "B"): 3,
        ("driver", "E"): 3,
        ("step", "B"): 3,
        ("step", "E"): 3,
        ("c_work", "B"): 3,
        ("c_work", "E"): 3,
        ("c_leaf", "B"): 15,
        ("c_leaf", "E"): 15,
    }
    assert all(e["cat"].endswith("woven_component.c") for e in events if e["name"].startswith("c_"))
    # C spans nest inside the Python ones on the same thread.
    names = [(e["name"], e["ph"]) for e in events[:5]]
    assert names == [("driver", "B"), ("step", "B"), ("c_work", "B"), ("c_leaf", "B"), ("c_leaf", "E")]
