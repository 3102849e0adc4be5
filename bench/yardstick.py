"""The machine's speed at the time of a measurement, printed beside it: CPython running a fixed loop
(3 million multiply-adds) and the interpreter's own start-up with click, tree-sitter and pathspec
imported. On a shared machine both drift by 2x within an hour; compare a figure with the yardstick
measured with it, not with a figure from another hour."""
from __future__ import annotations

import statistics
import subprocess
import sys
import time


def loop_seconds(runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start, s = time.perf_counter(), 0
        for i in range(3_000_000):
            s += i * i
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def import_seconds(runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import click, tree_sitter, pathspec"], check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def line() -> str:
    return (f"yardstick: CPython 3M-iteration loop {loop_seconds():.3f} s; "
            f"`python -c 'import click, tree_sitter, pathspec'` {import_seconds():.3f} s")


if __name__ == "__main__":
    print(line())
