"""Fix a copy of a real code base and check that nothing got worse.

    python tests/oracle/fix_project.py SRC_DIR [--unsafe-fixes] [--keep WORK_DIR]

Copies SRC_DIR (never touched), counts the tree-sitter ERROR regions of every C-family file, runs
`hiplint scan --fix` on the copy, counts again, and then runs `hiplint scan --diff` to show that a
second run has nothing left to fix. Exit 0 when no file gained parse errors and the second run is clean.
Used for the numbers in docs/oracle.md; the code base itself is never committed.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from hiplint.cparse import error_ranges, new_parser
from hiplint.languages import language_of


def parse_errors(root: Path) -> dict[str, int]:
    parser = new_parser()
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink() and language_of(str(p)) == "cuda":
            out[str(p.relative_to(root))] = len(error_ranges(parser.parse(p.read_bytes()).root_node))
    return out


def hiplint(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hiplint", *args], cwd=cwd, capture_output=True, text=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("--unsafe-fixes", action="store_true")
    ap.add_argument("--keep", help="fix in this directory instead of a temporary one")
    args = ap.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="hiplint-fix-project-"))
    copy = work / "tree"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(args.src, copy, symlinks=True)
    before = parse_errors(copy)
    flags = ["--unsafe-fixes"] if args.unsafe_fixes else []
    common = ["--isolated", "--no-progress", "--exit-zero", "--output-format", "concise"]
    first = hiplint("scan", "--fix", *flags, *common, ".", cwd=copy)
    after = parse_errors(copy)
    changed = subprocess.run(["diff", "-rq", args.src, str(copy)], capture_output=True, text=True).stdout.splitlines()
    worse = {f: (before.get(f, 0), n) for f, n in after.items() if n > before.get(f, 0)}
    second = hiplint("scan", "--diff", *flags, "--isolated", "--no-progress", ".", cwd=copy)
    fixed_line = next((l for l in first.stdout.splitlines() if l.startswith("Fixed ")), "Fixed 0 findings.")
    remaining = next((l for l in first.stdout.splitlines() if l.startswith("Found ")), "Found 0 findings.")
    print(f"files: {len(before)} C-family; with parse errors before: {sum(1 for n in before.values() if n)}")
    print(f"first run: {fixed_line} {remaining} files changed: {len(changed)}")
    for note in first.stderr.splitlines():
        if "dropped" in note or "converge" in note or "internal error" in note or "not written" in note:
            print("  note:", note)
    print(f"files with new parse errors: {len(worse)}" + "".join(f"\n  {f}: {a} -> {b}" for f, (a, b) in worse.items()))
    print(f"second run: {'nothing left to fix' if not second.stdout else 'WOULD FIX AGAIN:'}")
    if second.stdout:
        print(second.stdout[:4000])
    if not args.keep:
        shutil.rmtree(work)
    return 0 if not worse and not second.stdout and first.returncode != 2 and second.returncode != 2 else 1


if __name__ == "__main__":
    sys.exit(main())
