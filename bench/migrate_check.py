#!/usr/bin/env python3
"""Check a migrated tree against its source: every migrated C-family file parses with no more ERROR
nodes than its input, and no comment or string literal changed (names in them included).

    python bench/migrate_check.py SRC DST        # DST written by `hiplint migrate SRC --out DST`

Prints one line per problem and a summary; exits 1 if there is any problem.
"""
from __future__ import annotations

import argparse
import os
import sys

from hiplint.languages import language_of
from hiplint.migrate import output_name, parse_error_count, protected_texts


def check(src: str, dst: str, hip_extension: bool = False) -> tuple[int, list[str]]:
    checked, problems = 0, []
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if d not in (".git", ".hg", ".svn"))
        for name in sorted(filenames):
            spath = os.path.join(dirpath, name)
            rel = os.path.relpath(spath, src)
            if language_of(rel) != "cuda" or os.path.islink(spath):
                continue
            dpath = os.path.join(dst, output_name(rel, hip_extension))
            if not os.path.exists(dpath):
                dpath = os.path.join(dst, rel)
            try:
                with open(spath, "rb") as a, open(dpath, "rb") as b:
                    before, after = a.read(), b.read()
            except OSError as exc:
                problems.append(f"{rel}: cannot compare: {exc.strerror or exc}")
                continue
            if b"\0" in before[:8192]:
                continue
            checked += 1
            if parse_error_count(after) > parse_error_count(before):
                problems.append(f"{rel}: more parse errors after migration")
            if protected_texts(after) != protected_texts(before):
                problems.append(f"{rel}: a comment or string literal changed")
    return checked, problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--hip-extension", action="store_true", help="the migration renamed .cu files to .hip")
    args = ap.parse_args()
    checked, problems = check(args.src, args.dst, args.hip_extension)
    for p in problems:
        print(p)
    print(f"{checked} C-family file(s) checked: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
