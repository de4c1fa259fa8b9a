#!/usr/bin/env python3
"""A Python driver traced with perfflow: it prepares inputs on a thread
pool, runs the woven C++ example workflow (its path is the first argument)
as a component, and gathers results with asyncio. Run it in an empty
directory: it leaves its own perfflow.array.<host>.<pid>.pfw next to the
component's, with the same PERFFLOW_OPTIONS rules.

    python3 examples/driver.py ./workflow
"""

import asyncio
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import perfflow
import perfflowaspect.aspect


@perfflowaspect.aspect.critical_path()
def prepare(block):
    return sum(i * i for i in range(20_000 + block))


@perfflow.trace
async def gather_result(block):
    await asyncio.sleep(0.002 * block)
    return block


@perfflow.trace
def run_component(program):
    subprocess.run([program], check=True, stdout=subprocess.DEVNULL)


async def collect(blocks):
    return await asyncio.gather(*(gather_result(b) for b in blocks))


def main():
    with perfflow.region("prepare inputs"):
        with ThreadPoolExecutor(3) as pool:
            list(pool.map(prepare, range(6)))
    if len(sys.argv) > 1:
        run_component(sys.argv[1])
    asyncio.run(collect(range(6)))


if __name__ == "__main__":
    main()
