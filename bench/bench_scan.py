"""Benchmark: hiplint on a generated corpus of CUDA files, against parsing alone.

    python bench/bench_scan.py [--files 1000] [--repeat 3] [--json results.json]

On the same corpus, in the same run, each in a fresh process (so peak memory is that run's):
  parse only   tree-sitter parse of every file, one process: the yardstick
  engine floor what every scan does before any rule logic, one process: parse, find the trigger
               strings, walk the tree with the compiled queries, parse the macro bodies
  cold scan    `hiplint scan`, all cores, empty cache
  warm scan    the same again: every file unchanged, served from the cache
  one worker   `hiplint scan -j 1 --no-cache`
  1/4 corpus   one worker on a quarter of the files: peak memory must not grow with the file count
Wall time is the best of --repeat runs (machines shared with other work are noisy); CPU is user +
system time of the process and its workers in that run. Peak memory is the largest resident set of
any one process (the scan or a worker), from wait4(2).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import generate  # noqa: E402

PARSE_ONLY = r"""
import os, sys
from tree_sitter import Language, Parser
import tree_sitter_cuda
parser = Parser(Language(tree_sitter_cuda.language()))
n = 0
for top in sys.argv[1:]:
    for d, _, files in os.walk(top):
        for f in files:
            with open(os.path.join(d, f), "rb") as fh:
                parser.parse(fh.read())
            n += 1
print(n)
"""

# The steps of a scan that no rule logic is in (hiplint.engine.Linter._lint_c without the rules):
# how much of the 2x budget is spent before the first rule runs.
ENGINE_FLOOR = r"""
import os, sys
from hiplint.config import Settings
from hiplint.cparse import macro_units
from hiplint.engine import Linter
from hiplint.registry import load_registry, select_rules
settings = Settings()
linter = Linter(settings, select_rules(settings, load_registry()))
linter.prepare()
plan, parser = linter._plan, linter._parser
n = 0
for top in sys.argv[1:]:
    for d, _, files in os.walk(top):
        for f in files:
            with open(os.path.join(d, f), "rb") as fh:
                data = fh.read()
            tree = parser.parse(data)
            queries = plan.queries_for(frozenset(plan.search.occurrences(data)))
            Linter._matches(queries, tree.root_node, [])
            macro_units(parser, tree, data)
            n += 1
print(n)
"""

# As installed by pip: compiled modules are written once and reused (a sandbox that sets
# PYTHONDONTWRITEBYTECODE would otherwise charge every run for compiling hiplint).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(cmd: list[str], cwd: str, repeat: int, before=None) -> dict:
    best = None
    for _ in range(repeat):
        if before:
            before()
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            raise SystemExit(f"benchmark command failed ({code}): {' '.join(cmd)}\n{err}")
        run = {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024}
        if best is None or run["wall"] < best["wall"]:
            best = run
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=1000, help="files in the generated corpus (default 1000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; the fastest counts (default 3)")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--keep", action="store_true", help="keep the corpus directory")
    args = ap.parse_args(argv)

    work = tempfile.mkdtemp(prefix="hiplint-bench-")
    corpus = os.path.join(work, "corpus")
    try:
        nfiles, nbytes = generate(corpus, args.files)
        dirs = sorted(os.listdir(corpus))
        quarter = dirs[: max(1, len(dirs) // 4)]
        qfiles = sum(len(os.listdir(os.path.join(corpus, d))) for d in quarter)
        qbytes = sum(os.path.getsize(os.path.join(corpus, d, f)) for d in quarter for f in os.listdir(os.path.join(corpus, d)))
        cache = os.path.join(corpus, ".hiplint_cache")

        def clear_cache():
            shutil.rmtree(cache, ignore_errors=True)

        hiplint = [sys.executable, "-m", "hiplint", "scan", "--isolated", "--no-progress", "-q",
                   "--output-format", "concise", "-o", os.devnull]
        subprocess.run(hiplint + ["--no-cache", quarter[0]], cwd=corpus, env=ENV, capture_output=True)  # compile once
        rows = {}
        rows["parse only"] = measure([sys.executable, "-c", PARSE_ONLY, "."], corpus, args.repeat)
        rows["engine floor"] = measure([sys.executable, "-c", ENGINE_FLOOR, "."], corpus, args.repeat)
        rows["cold scan"] = measure(hiplint + ["."], corpus, args.repeat, before=clear_cache)
        clear_cache()
        measure(hiplint + ["."], corpus, 1)  # fill the cache
        rows["warm scan"] = measure(hiplint + ["."], corpus, args.repeat)
        rows["one worker"] = measure(hiplint + ["--no-cache", "-j", "1", "."], corpus, args.repeat)
        rows["1/4 corpus, one worker"] = measure(hiplint + ["--no-cache", "-j", "1", *quarter], corpus, args.repeat)

        sizes = {k: (qfiles, qbytes) if k.startswith("1/4") else (nfiles, nbytes) for k in rows}
        print(f"corpus: {nfiles} files, {nbytes / 1e6:.1f} MB generated CUDA; {os.cpu_count()} cores; "
              f"load average {os.getloadavg()[0]:.1f}; best of {args.repeat}")
        print(f"{'':24} {'wall s':>7} {'CPU s':>7} {'files/s':>8} {'MB/s':>6} {'peak MB':>8}")
        for name, r in rows.items():
            n, b = sizes[name]
            r["files"], r["bytes"] = n, b
            r["files_per_s"], r["mb_per_s"] = n / r["wall"], b / 1e6 / r["wall"]
            print(f"{name:24} {r['wall']:7.2f} {r['cpu']:7.2f} {r['files_per_s']:8.0f} {r['mb_per_s']:6.2f} {r['peak_mb']:8.0f}")
        parse, cold, warm, one, small = (rows[k] for k in ("parse only", "cold scan", "warm scan", "one worker", "1/4 corpus, one worker"))
        checks = {
            "cold scan / parse only (target <= 2.0)": cold["wall"] / parse["wall"],
            "warm scan / cold scan (target < 0.10)": warm["wall"] / cold["wall"],
            "one worker / parse only (CPU)": one["cpu"] / parse["cpu"],
            "engine floor / parse only (CPU, no rule logic)": rows["engine floor"]["cpu"] / parse["cpu"],
            "peak memory, full / 1/4 corpus (flat ~ 1.0)": one["peak_mb"] / small["peak_mb"],
        }
        print()
        for k, v in checks.items():
            print(f"{k:48} {v:6.2f}")
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"rows": rows, "ratios": checks, "cores": os.cpu_count()}, fh, indent=2)
    finally:
        if args.keep:
            print(f"corpus kept in {corpus}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
