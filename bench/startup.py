"""Start-up of one small scan, as a pre-commit hook runs it: `hiplint scan FILE` in a fresh process.

    python bench/startup.py [--runs 10] [--file fixtures/warp/reduction_kernels.cu] [--imports]

Copies the file into a temporary project and times, each in a fresh process (median of --runs):

- `--version`: the interpreter, click and the command line alone;
- a scan of the file as the hook runs it, the file changed since the last run (the usual case in a
  commit: the cache misses, the saved query plan is reused);
- the same file unchanged (served from the cache);
- `--no-cache` (everything from scratch, the query plan compiled).

Wall is the elapsed time, CPU the child's user plus system time (on a loaded machine CPU is the
steadier figure). Bytecode is compiled once first, as an installed package has it.
`--imports` also prints the ten slowest imports (`python -X importtime`).
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(args, cwd, env) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "hiplint", *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--file", default=str(ROOT / "fixtures" / "warp" / "reduction_kernels.cu"))
    ap.add_argument("--imports", action="store_true")
    args = ap.parse_args(argv)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    with tempfile.TemporaryDirectory() as tmp:
        env.setdefault("PYTHONPYCACHEPREFIX", os.path.join(tmp, "pycache"))
        name = os.path.basename(args.file)
        shutil.copy(args.file, os.path.join(tmp, name))
        hook = ["scan", "--force-exclude", "--no-progress", "--output-format", "concise", name]
        timed(hook, tmp, env)  # bytecode, cache directory and saved query plan
        original = Path(tmp, name).read_bytes()
        rows = []
        cases = [("hiplint --version", ["--version"], None),
                 ("scan, file changed (cache miss)", hook, "change"),
                 ("scan, file unchanged (cache hit)", hook, None),
                 ("scan --no-cache", hook + ["--no-cache"], None)]
        for label, cmd, mode in cases:
            walls, cpus = [], []
            for n in range(args.runs):
                if mode == "change":
                    Path(tmp, name).write_bytes(original + f"// edit {time.time_ns()}\n".encode())
                w, c = timed(cmd, tmp, env)
                walls.append(w)
                cpus.append(c)
            Path(tmp, name).write_bytes(original)
            rows.append((label, statistics.median(walls), statistics.median(cpus)))
        from yardstick import line as yardstick_line
        print(yardstick_line())
        print(f"{'run (' + name + ', ' + str(len(original)) + ' bytes)':44} {'wall s':>7} {'CPU s':>7}")
        for label, w, c in rows:
            print(f"{label:44} {w:>7.3f} {c:>7.3f}")
        if args.imports:
            proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "hiplint", *hook], cwd=tmp, env=env,
                                  capture_output=True, text=True)
            lines = [l for l in proc.stderr.splitlines() if l.startswith("import time:") and "|" in l]
            parsed = []
            for l in lines[1:]:
                own, cum, mod = l.replace("import time:", "").split("|")
                parsed.append((int(cum), int(own), mod))
            print("\nslowest imports (cumulative ms, self ms):")
            for cum, own, mod in sorted(parsed, reverse=True)[:10]:
                print(f"  {cum / 1000:7.1f} {own / 1000:7.1f}  {mod.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
