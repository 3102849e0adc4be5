"""Draw a random sample of hiplint's findings on a tree, for judging precision by reading.

    python bench/sample_findings.py TREE [--n 20] [--seed 1] [--select ...] > sample.md

Scans TREE (`python -m hiplint scan TREE --output-format json --no-cache`), reports the findings per
1,000 lines of C-family, Python and build code, and writes a Markdown sheet of N findings drawn
uniformly at random (fixed seed): each with its rule, message and the source around it, and a verdict
line for the reviewer (true-useful / advisory / false). docs/accuracy.md says how the sheets were judged.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from pathlib import Path

CODE_SUFFIXES = {".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".hxx", ".inl", ".py"}
BUILD_NAMES = {"CMakeLists.txt", "Makefile", "makefile", "GNUmakefile"}


def scan(tree: str, extra: list[str]) -> list[dict]:
    proc = subprocess.run([sys.executable, "-m", "hiplint", "scan", tree, "--no-cache", "--exit-zero", "-q",
                           "--no-progress", "--output-format", "json", *extra], capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stderr)
    return json.loads(proc.stdout or "[]")


def lines_of_code(tree: str) -> int:
    total = 0
    for root, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if Path(name).suffix in CODE_SUFFIXES or name in BUILD_NAMES or name.endswith(".cmake"):
                try:
                    with open(os.path.join(root, name), "rb") as fh:
                        total += fh.read().count(b"\n")
                except OSError:
                    pass
    return total


def frame(path: str, line: int, before: int = 8, after: int = 4) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "(unreadable)"
    lo, hi = max(0, line - 1 - before), min(len(text), line + after)
    return "\n".join(f"{'>' if i + 1 == line else ' '}{i + 1:5} | {text[i]}" for i in range(lo, hi))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--from-json", help="findings already scanned (`hiplint scan TREE --output-format json`), paths relative to --cwd")
    ap.add_argument("--cwd", default=".", help="the directory the scan ran in (with --from-json)")
    ap.add_argument("hiplint_args", nargs="*", help="extra arguments for `hiplint scan` (after --)")
    args = ap.parse_args()
    if args.from_json:
        findings = json.loads(Path(args.from_json).read_text() or "[]")
        os.chdir(args.cwd)
    else:
        findings = scan(args.tree, args.hiplint_args)
    loc = lines_of_code(args.tree)
    by_code: dict[str, int] = {}
    for f in findings:
        by_code[f["code"]] = by_code.get(f["code"], 0) + 1
    print(f"# Sample of hiplint findings on `{args.tree}`\n")
    print(f"{len(findings)} findings in {loc} lines: {1000 * len(findings) / max(loc, 1):.2f} per 1,000 lines.")
    print("By rule: " + ", ".join(f"{c} {n}" for c, n in sorted(by_code.items(), key=lambda kv: -kv[1])) + "\n")
    sample = random.Random(args.seed).sample(findings, min(args.n, len(findings)))
    for i, f in enumerate(sample, 1):
        path = f["path"] if os.path.isabs(f["path"]) else os.path.join(os.getcwd(), f["path"])
        print(f"## {i}. {f['code']} ({f['severity']}, {f['impact']}) {f['path']}:{f['line']}\n")
        print(f"{f['message']}\n")
        print("```\n" + frame(path, f["line"]) + "\n```\n")
        print("Verdict: \n")


if __name__ == "__main__":
    main()
