#!/usr/bin/env python3
"""How far does `hiplint migrate` get a CUDA tree, against a plain textual rename?

For a corpus, writes two HIP versions of it into a scratch directory:
  - hiplint:  `hiplint migrate CORPUS --out ...` (default options);
  - plain:    a textual rename of every C-family file, the baseline people start from with sed:
              cuda->hip, CUDA->HIP, cublas->hipblas, curand->hiprand, cusolver->hipsolver,
              cusparse->hipsparse, cufft->hipfft (and their upper-case forms), everywhere in the text
              and in file names (so `#include "helper_cuda.h"`, renamed too, still resolves).
Then compiles every `.cu` file of both versions for one AMD target with the compile oracle
(Debian clang-19 + HIP 5.2 headers, tests/hip_toolchain.py; `-c`, codegen included), and counts the
files that compile, the compiler errors, and the findings `hiplint migrate` left for hand work.

    python bench/migrate_compare.py CORPUS [--arch gfx942] [--include Common] [--shim tests/oracle/sync_shim.h]
                                           [--limit N] [--jobs 2] [--json out.json]

`--shim` passes a header with `-include` to both versions (HIP 5.2 lacks the `*_sync` warp functions;
the project's shim supplies them). `--include` adds include directories relative to the tree root. The plain version also gets
/usr/include/hip and /usr/include/hiprand, for the flat includes a textual rename produces.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from hip_toolchain import compile_hip, missing  # noqa: E402

from hiplint.config import load_settings  # noqa: E402
from hiplint.languages import language_of  # noqa: E402
from hiplint.migrate import MigrateOptions, Migrator  # noqa: E402
from hiplint.registry import load_registry, select_rules  # noqa: E402

PLAIN_PREFIXES = ("cublas", "curand", "cusolver", "cusparse", "cufft", "cuda")
PLAIN_RE = re.compile("|".join(PLAIN_PREFIXES + tuple(p.upper() for p in PLAIN_PREFIXES)))


def _plain(word: str) -> str:
    new = "hip" if word.lower() == "cuda" else "hip" + word[2:].lower()  # cuda -> hip, cublas -> hipblas
    return new.upper() if word.isupper() else new


def plain_rename(text: str) -> str:
    return PLAIN_RE.sub(lambda m: _plain(m.group(0)), text)


def write_plain(src: str, dst: str) -> None:
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".hg", ".svn")]
        for name in filenames:
            spath = os.path.join(dirpath, name)
            rel = os.path.relpath(spath, src)
            dpath = os.path.join(dst, plain_rename(rel))  # helper_cuda.h -> helper_hip.h, as its includes say
            os.makedirs(os.path.dirname(dpath), exist_ok=True)
            with open(spath, "rb") as fh:
                data = fh.read()
            if language_of(rel) == "cuda" and b"\0" not in data[:8192]:
                data = plain_rename(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
            with open(dpath, "wb") as fh:
                fh.write(data)


def compile_units(root: str, limit: int | None) -> list[str]:
    """The `.cu` files of the corpus (their paths in the plain version go through plain_rename)."""
    units = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".cu"):
                units.append(os.path.relpath(os.path.join(dirpath, name), root))
    return units[:limit] if limit else units


# A textual rename turns <cuda_runtime.h> into <hip_runtime.h> and <curand.h> into <hiprand.h>: give the
# baseline the flat include directories it needs, so it is not failed by its includes alone.
PLAIN_INCLUDE_DIRS = ("/usr/include/hip", "/usr/include/hiprand")


def compile_tree(root: str, units: list[str], arch: str, includes: list[str], shim: str | None, jobs: int,
                 system_dirs=()):
    extra = ["-include", os.path.abspath(shim)] if shim else []

    def one(rel):
        path = os.path.join(root, rel)
        if not os.path.exists(path):
            path = os.path.join(root, plain_rename(rel))
        dirs = [os.path.dirname(path)] + [os.path.join(root, d) for d in includes] + list(system_dirs)
        result = compile_hip(path, (arch,), extra=extra, include_dirs=dirs)
        errors = len(re.findall(r"\berror:", result.stderr))
        return rel, result.ok, errors

    with ThreadPoolExecutor(max_workers=jobs) as ex:
        return list(ex.map(one, units))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus")
    ap.add_argument("--arch", default="gfx942")
    ap.add_argument("--include", action="append", default=[], help="include directory relative to the tree root")
    ap.add_argument("--shim", help="header passed with -include to both versions (e.g. the *_sync shim)")
    ap.add_argument("--limit", type=int, help="compile only the first N .cu files (sorted by path)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", help="also write the figures as JSON here")
    ap.add_argument("--keep", help="write the two versions here instead of a temporary directory")
    ap.add_argument("--versions", default="hiplint,plain", help="which versions to build and compile (comma-separated)")
    args = ap.parse_args()
    why = missing()
    if why:
        print(f"compile oracle unavailable: {why}", file=sys.stderr)
        return 2
    scratch = args.keep or tempfile.mkdtemp(prefix="hiplint-compare-")
    hip_dir, plain_dir = os.path.join(scratch, "hiplint"), os.path.join(scratch, "plain")
    versions = {v.strip() for v in args.versions.split(",") if v.strip()}
    units = compile_units(args.corpus, args.limit)
    figures = {"corpus": args.corpus, "arch": args.arch, "shim": args.shim, "files_compiled": len(units)}
    migration = None
    if "hiplint" in versions:
        settings = load_settings([args.corpus], None, True)
        migration = Migrator(settings, select_rules(settings, load_registry()),
                             MigrateOptions(out=hip_dir, force=True)).run(args.corpus)
    if "plain" in versions:
        write_plain(args.corpus, plain_dir)
    for label, root, system_dirs in (("hiplint", hip_dir, ()), ("plain", plain_dir, PLAIN_INCLUDE_DIRS)):
        if label not in versions:
            continue
        results = compile_tree(root, units, args.arch, args.include, args.shim, args.jobs, system_dirs)
        figures[label] = {"compile": sum(ok for _, ok, _ in results), "errors": sum(e for _, _, e in results),
                          "failed": [rel for rel, ok, _ in results if not ok]}
    n = len(units)
    print(f"corpus: {args.corpus}   target: {args.arch}   .cu files compiled: {n}   shim: {args.shim or 'none'}")
    print("| version | compile | compiler errors | findings left for hand work |")
    print("|---|---|---|---|")
    if migration is not None:
        findings = migration.findings
        h = figures["hiplint"]
        h["findings"] = len(findings)
        h["findings_by_code"] = dict(sorted(Counter(f.code for f in findings).items()))
        h["renamed"] = sum(sum(f.renames.values()) for f in migration.files)
        print(f"| hiplint migrate | {h['compile']}/{n} | {h['errors']} | {h['findings']} "
              f"({', '.join(f'{k} {v}' for k, v in h['findings_by_code'].items()) or 'none'}) |")
    if "plain" in figures:
        p = figures["plain"]
        print(f"| plain rename | {p['compile']}/{n} | {p['errors']} | (none reported) |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
