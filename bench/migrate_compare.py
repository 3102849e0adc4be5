#!/usr/bin/env python3
"""How far does `hiplint migrate` get real CUDA programs, against a plain rename, hipify-perl and hand ports?

Programs are listed in `bench/migrate_compare.toml` (a seeded draw; `select` writes it). For every
program, four HIP versions are written into a scratch directory and compiled side by side:
  - hiplint:  `hiplint migrate` of the staged CUDA tree (default options, `--target gfx942,gfx1100`);
  - plain:    a textual rename of every C-family file, the baseline people start from with sed:
              cuda->hip, CUDA->HIP, cublas->hipblas, curand->hiprand, cusolver->hipsolver,
              cusparse->hipsparse, cufft->hipfft (and their upper-case forms), everywhere in the text
              and in file names (so `#include "helper_cuda.h"`, renamed too, still resolves); it gets
              `-I/usr/include/hip -I/usr/include/hiprand` for the flat includes such a rename writes;
  - hipify:   `hipify-perl` (ROCm/HIPIFY, `bin/hipify-perl`, run from a checkout given with `--hipify`)
              on every C-family file;
  - hand:     the project's own hand-written HIP port, where the list names one.
Each translation unit (a `.cu`/`.hip` file no other file of the program includes) is compiled with the
full ROCm 7.2 toolchain of tests/oracle (clang 22 + HIP 7.2 headers in a Debian sid chroot; `-x hip
-std=c++17 -O0 -c`, codegen included), for every target. A program compiles for a target when all its
translation units do. Both targets go in one call; when a device pass fails, the targets clang did not
reach are compiled alone. Logs go to SCRATCH/logs/VARIANT/PROGRAM/FILE.log (both) and FILE.ARCH.log; the first error line of every
failing unit goes to the JSON summary, and the migrate failures are grouped by cause (CAUSES).

    python bench/migrate_compare.py select --trees DIR [--seed 22] [--samples 36] [--write bench/migrate_compare.toml]
    python bench/migrate_compare.py run --trees DIR --hipify HIPIFY_CHECKOUT --scratch /work/compare-out
                                       [--programs bench/migrate_compare.toml] [--archs gfx942,gfx1100]
                                       [--variants hiplint,plain,hipify,hand] [--only NAME,...] [--jobs 2]

`--trees DIR` holds each repository of the list checked out at its commit, in a folder named as the
tree (cuda-samples, hipex, gpu-rodinia). No code of those projects is kept in this repository.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from hiplint.config import Settings  # noqa: E402
from hiplint.languages import language_of  # noqa: E402
from hiplint.migrate import MigrateOptions, Migrator  # noqa: E402
from hiplint.registry import load_registry, select_rules  # noqa: E402
from oracle.toolchain import ROCM72_CLANG, ROCM72_ROOT, _rocm72_device_libs, rocm72_full_missing  # noqa: E402

PROGRAMS = os.path.join(HERE, "migrate_compare.toml")
VARIANTS = ("hiplint", "plain", "hipify", "hand")
ARCHS = ("gfx942", "gfx1100")

# --- the plain rename ----------------------------------------------------------------------------

PLAIN_PREFIXES = ("cublas", "curand", "cusolver", "cusparse", "cufft", "cuda")
PLAIN_RE = re.compile("|".join(PLAIN_PREFIXES + tuple(p.upper() for p in PLAIN_PREFIXES)))


def _plain(word: str) -> str:
    new = "hip" if word.lower() == "cuda" else "hip" + word[2:].lower()  # cuda -> hip, cublas -> hipblas
    return new.upper() if word.isupper() else new


def plain_rename(text: str) -> str:
    return PLAIN_RE.sub(lambda m: _plain(m.group(0)), text)


# A textual rename turns <cuda_runtime.h> into <hip_runtime.h> and <curand.h> into <hiprand.h>: give the
# baseline the flat include directories it needs, so it is not failed by its includes alone.
PLAIN_INCLUDE_DIRS = ("/usr/include/hip", "/usr/include/hiprand")

# --- which programs are eligible: only the CUDA runtime and cuRAND --------------------------------

CUDA_RUNTIME_HEADERS = {
    "cuda.h", "cuda_runtime.h", "cuda_runtime_api.h", "cuda_profiler_api.h", "device_launch_parameters.h", "device_functions.h",
    "vector_types.h", "vector_functions.h", "driver_types.h", "builtin_types.h", "texture_types.h",
    "surface_types.h", "cuda_texture_types.h", "cuda_surface_types.h", "texture_fetch_functions.h",
    "math_constants.h", "math_functions.h", "sm_20_atomic_functions.h", "sm_30_intrinsics.h",
    "cuda_fp16.h", "cuda_bf16.h", "cooperative_groups.h", "curand.h", "curand_kernel.h",
    "curand_mtgp32_host.h", "curand_mtgp32dc_p_11213.h", "curand_mtgp32_kernel.h", "curand_philox4x32_x.h",
}
CUDA_RUNTIME_PREFIXES = ("cooperative_groups/",)
# C, C++ and POSIX headers (and <windows.h>, <hooks.h>: always behind #ifdef _WIN32 / ENABLE_PARSEC_HOOKS).
SYSTEM_HEADERS = set("""
assert.h ctype.h errno.h float.h inttypes.h limits.h locale.h math.h setjmp.h signal.h stdarg.h stdbool.h
stddef.h stdint.h stdio.h stdlib.h string.h strings.h time.h wchar.h memory.h malloc.h unistd.h fcntl.h
dirent.h getopt.h error.h pthread.h sys/utsname.h sys/time.h sys/types.h sys/stat.h sys/resource.h sys/mman.h sys/wait.h
windows.h hooks.h complex.h
algorithm array atomic bitset cassert cctype cerrno cfloat chrono cinttypes climits cmath complex
condition_variable cstdarg cstddef cstdint cstdio cstdlib cstring ctime deque exception fstream functional
iomanip ios iosfwd iostream istream iterator limits list map memory mutex numeric ostream queue random
set sstream stack stdexcept string thread tuple type_traits typeinfo unordered_map unordered_set utility
vector
""".split())
# Common/ helpers of cuda-samples that need more than the runtime (driver API, OpenGL, NVRTC, libraries).
NOT_RUNTIME_HELPERS = ("helper_gl.h", "helper_cuda_drvapi.h", "helper_cusolver.h", "helper_nvJPEG.hxx",
                       "nvrtc_helper.h", "drvapi_error_string.h", "dynlink_d3d11.h", "rendercheck_gl.h",
                       "rendercheck_gles.h", "rendercheck_d3d11.h", "helper_multiprocess.h")
DRIVER_CALL = re.compile(r"\bcu(?!da|rand|Complex|blas|fft)[A-Z][A-Za-z0-9]*\s*\(")
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"]', re.M)
C_FAMILY = (".cu", ".cuh", ".h", ".hpp", ".hh", ".c", ".cc", ".cpp", ".cxx", ".inl")


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="surrogateescape") as fh:
        return fh.read()


def _resolve(name: str, including: str, dirs: list[str]) -> str | None:
    for d in [os.path.dirname(including)] + dirs:
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(cand):
            return cand
    return None


def _excluded(rel: str, patterns) -> bool:
    return any(fnmatch.fnmatch(rel, p) for p in patterns)


def translation_units(root: str, exclude=(), suffixes=(".cu", ".hip")) -> list[str]:
    """The `.cu`/`.hip` files under root that no other file there includes (paths relative to root)."""
    files, included = [], set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            if _excluded(rel, exclude) or not name.endswith(C_FAMILY + (".hip",)):
                continue
            files.append(rel)
            for _, inc in INCLUDE.findall(_read(os.path.join(dirpath, name))):
                included.add(os.path.basename(inc))
    return [f for f in files if f.endswith(suffixes) and os.path.basename(f) not in included]


def include_closure(root: str, units: list[str], dirs: list[str]):
    """Files the units reach through includes, and the include names that resolve to no file."""
    seen, unresolved, todo = set(), set(), [os.path.join(root, u) for u in units]
    while todo:
        path = os.path.normpath(todo.pop())
        if path in seen:
            continue
        seen.add(path)
        for _, name in INCLUDE.findall(_read(path)):
            found = _resolve(name, path, dirs)
            if found:
                todo.append(found)
            else:
                unresolved.add(name)
    return seen, unresolved


def header_dirs(root: str) -> list[str]:
    """The program's directories that hold headers (its build passes them with -I)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        if any(n.endswith((".h", ".cuh", ".hpp")) for n in filenames):
            out.append(dirpath)
    return out


def why_not_eligible(tree_root: str, prog_dir: str, include_dirs: list[str], exclude=()) -> str:
    root = os.path.join(tree_root, prog_dir)
    units = translation_units(root, exclude)
    if not units:
        return "no .cu translation unit"
    # Every source of the program, not only the units compiled here: a host .cpp that loads the kernels
    # with NVRTC or the driver API makes it more than a runtime program.
    sources = [u for u in translation_units(root, exclude, C_FAMILY) if not u.endswith((".h", ".cuh", ".hpp", ".hh", ".inl"))]
    files, unresolved = include_closure(root, sources, [root] + header_dirs(root) + [os.path.join(tree_root, d) for d in include_dirs])
    for name in sorted(unresolved):
        if name in SYSTEM_HEADERS or name in CUDA_RUNTIME_HEADERS or name.startswith(CUDA_RUNTIME_PREFIXES):
            continue
        return f"needs <{name}>"
    for path in sorted(files):
        if os.path.basename(path) in NOT_RUNTIME_HELPERS:
            return f"needs {os.path.basename(path)}"
        if not path.startswith(root + os.sep):  # a helper (helper_cuda.h wraps cuGetErrorName behind a switch)
            continue
        m = DRIVER_CALL.search(_read(path))
        if m:
            return f"driver API ({m.group(0).rstrip('( ')})"
    return ""


# --- select: the seeded draw ---------------------------------------------------------------------

TREES = [
    {"name": "cuda-samples", "repo": "github:NVIDIA/cuda-samples", "commit": "c94ff366aed18c797b8a85dfaac7817b0228b420",
     "include": ["Common"]},
    {"name": "hipex", "repo": "github:ROCm-Developer-Tools/HIP-Examples", "commit": "8a3b04c9b10bae344c7483a63c13034869da184b",
     "include": [], "hand_include": ["rodinia_3.0/common"]},  # the hand ports include its RDTimer.h
    {"name": "gpu-rodinia", "repo": "github:yuhc/gpu-rodinia", "commit": "9c10d3ea16ddba2ba057cc3951a9efc4c2cc18a4",
     "include": ["cuda/util"]},  # its Makefiles pass -I../util
]
HAND_EXCLUDE = ["cusrc/*", "*/cusrc/*"]  # HIP-Examples keeps the CUDA originals there


def select(args) -> int:
    trees = {t["name"]: t for t in TREES}
    programs, skipped = [], []
    # Rodinia: every program with a hand port in HIP-Examples (its CUDA version from the same repository),
    # and the gpu-rodinia programs HIP-Examples has no CUDA version of (hand port where it has one).
    hipex = os.path.join(args.trees, "hipex", "rodinia_3.0")
    hip_ports = set(os.listdir(os.path.join(hipex, "hip")))
    rodinia = []
    for name in sorted(os.listdir(os.path.join(hipex, "cuda"))):
        rodinia.append({"name": f"rodinia/{name}", "tree": "hipex", "cuda": f"rodinia_3.0/cuda/{name}",
                        **({"hand": f"rodinia_3.0/hip/{name}"} if name in hip_ports else {})})
    gr = os.path.join(args.trees, "gpu-rodinia", "cuda")
    for name in sorted(os.listdir(gr)):
        if not os.path.isdir(os.path.join(gr, name)) or name == "util" or \
                os.path.isdir(os.path.join(hipex, "cuda", name)):
            continue
        rodinia.append({"name": f"rodinia/{name}", "tree": "gpu-rodinia", "cuda": f"cuda/{name}",
                        **({"hand": f"rodinia_3.0/hip/{name}"} if name in hip_ports else {})})
    for p in rodinia:
        why = why_not_eligible(os.path.join(args.trees, p["tree"]), p["cuda"], trees[p["tree"]]["include"])
        (skipped if why else programs).append({**p, "why": why} if why else p)
    samples = []
    base = os.path.join(args.trees, "cuda-samples")
    for cat in sorted(os.listdir(os.path.join(base, "Samples"))):
        cdir = os.path.join(base, "Samples", cat)
        if not os.path.isdir(cdir):
            continue
        for name in sorted(os.listdir(cdir)):
            rel = f"Samples/{cat}/{name}"
            if not os.path.isdir(os.path.join(base, rel)):
                continue
            why = why_not_eligible(base, rel, trees["cuda-samples"]["include"])
            if why:
                skipped.append({"name": f"cuda-samples/{name}", "why": why})
            else:
                samples.append({"name": f"cuda-samples/{name}", "tree": "cuda-samples", "cuda": rel})
    drawn = sorted(random.Random(args.seed).sample(samples, min(args.samples, len(samples))), key=lambda p: p["name"])
    print(f"eligible: {len(programs)} Rodinia programs (all taken), {len(samples)} cuda-samples "
          f"({len(drawn)} drawn with seed {args.seed}); not eligible: {len(skipped)}", file=sys.stderr)
    for s in skipped:
        print(f"  skipped {s['name']}: {s['why']}", file=sys.stderr)
    lines = [
        "# Programs for bench/migrate_compare.py, written by `python bench/migrate_compare.py select "
        f"--trees DIR --seed {args.seed} --samples {args.samples}`.",
        "# Eligible: a program (one directory) whose translation units reach, through their includes, only",
        "# C/C++/POSIX headers, CUDA runtime and cuRAND headers, and files of the tree (no driver API call).",
        "# Rodinia: every eligible program (they have the hand ports); cuda-samples: a seeded draw.",
        "# Paths are relative to --trees DIR/<tree>, checked out at `commit`. No code of these projects is",
        "# kept in this repository.",
        "",
        f"seed = {args.seed}",
        f"samples_eligible = {len(samples)}",
        "",
    ]
    for t in TREES:
        lines += ["[[tree]]", f'name = "{t["name"]}"', f'repo = "{t["repo"]}"', f'commit = "{t["commit"]}"',
                  "include = [" + ", ".join(f'"{d}"' for d in t["include"]) + "]"]
        if t.get("hand_include"):
            lines.append("hand_include = [" + ", ".join(f'"{d}"' for d in t["hand_include"]) + "]")
        lines.append("")
    for p in programs + drawn:
        lines += ["[[program]]", f'name = "{p["name"]}"', f'tree = "{p["tree"]}"', f'cuda = "{p["cuda"]}"']
        if "hand" in p:
            lines += ['hand_tree = "hipex"', f'hand = "{p["hand"]}"']
        lines.append("")
    text = "\n".join(lines)
    if args.write:
        with open(args.write, "w") as fh:
            fh.write(text)
    else:
        print(text)
    return 0


# --- run ------------------------------------------------------------------------------------------

def _copy(src: str, dst: str) -> None:
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(src, dst)


def stage(trees_dir: str, tree: dict, programs: list[dict], dst: str) -> None:
    """Copy what the programs of one tree need: their directories, the tree's include directories
    (C-family files) and any other file of the tree their includes reach."""
    root = os.path.join(trees_dir, tree["name"])
    dirs = [os.path.join(root, d) for d in tree["include"]]
    for d in tree["include"]:
        for dirpath, _, filenames in os.walk(os.path.join(root, d)):
            for name in filenames:
                if name.endswith(C_FAMILY):
                    src = os.path.join(dirpath, name)
                    _copy(src, os.path.join(dst, os.path.relpath(src, root)))
    for p in programs:
        pdir = os.path.join(root, p["cuda"])
        for dirpath, _, filenames in os.walk(pdir):
            for name in filenames:
                src = os.path.join(dirpath, name)
                if os.path.getsize(src) < (4 << 20):
                    _copy(src, os.path.join(dst, os.path.relpath(src, root)))
        files, _ = include_closure(pdir, translation_units(pdir), [pdir] + header_dirs(pdir) + dirs)
        for f in files:
            rel = os.path.relpath(f, root)
            if not rel.startswith(".."):
                _copy(f, os.path.join(dst, rel))


def write_plain(src: str, dst: str) -> None:
    for dirpath, dirnames, filenames in os.walk(src):
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


def write_hipify(src: str, dst: str, hipify_perl: str, jobs: int) -> None:
    jobs_list = []
    for dirpath, _, filenames in os.walk(src):
        for name in filenames:
            spath = os.path.join(dirpath, name)
            dpath = os.path.join(dst, os.path.relpath(spath, src))
            os.makedirs(os.path.dirname(dpath), exist_ok=True)
            if language_of(spath) == "cuda":
                jobs_list.append((spath, dpath))
            else:
                shutil.copyfile(spath, dpath)

    def one(pair):
        spath, dpath = pair
        p = subprocess.run(["perl", hipify_perl, "-quiet-warnings", spath], capture_output=True)
        with open(dpath, "wb") as fh:
            fh.write(p.stdout if p.returncode == 0 and p.stdout else open(spath, "rb").read())

    with ThreadPoolExecutor(max_workers=jobs) as ex:
        list(ex.map(one, jobs_list))


FAILED_FOR = re.compile(r"errors? generated when compiling for (\S+)\.")


def compile_unit(path: str, archs: list[str], include_dirs: list[str], log: str) -> tuple[bool, str, str]:
    """Compile one file inside the ROCm 7.2 chroot (paths are inside it); write the log.
    Returns (ok, first error line, the pass that failed: an arch, "host" or "")."""
    inside = lambda p: "/" + os.path.relpath(p, ROCM72_ROOT)  # noqa: E731
    obj = path + f".{'-'.join(archs)}.o"
    cmd = ["nice", "chroot", str(ROCM72_ROOT), ROCM72_CLANG, "-x", "hip", "-std=c++17", "--rocm-path=/usr",
           f"--rocm-device-lib-path={_rocm72_device_libs()}", "-Wno-unused-result", "-O0"]
    cmd += [f"--offload-arch={a}" for a in archs] + [f"-I{inside(os.path.dirname(path))}"]
    cmd += [f"-I{d if d.startswith('/usr/') else inside(d)}" for d in include_dirs]
    cmd += ["-c", inside(path), "-o", inside(obj)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        ok, out = p.returncode == 0, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        ok, out = False, "error: timed out after 600s"
    if os.path.exists(obj):
        os.remove(obj)
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "w") as fh:
        fh.write(" ".join(cmd) + "\n\n" + out)
    first = "" if ok else next((l for l in out.splitlines() if "error:" in l), (out.strip().splitlines() or ["failed"])[-1])
    failed = FAILED_FOR.search(out)
    return ok, re.sub(r"/src/hiplint-compare/[^/]+/", "", first), failed.group(1) if failed else ""


# Causes of failure, from the first error line (first match wins). Read the logs before trusting a group.
CAUSES = [
    ("lane mask left 32 bits (*_sync needs a 64-bit mask)", r"static assertion failed.*(64-bit|mask)|must be a 64-bit"),
    ("host string function without <cstring>", r"(undeclared identifier|no matching function for call to) '(memcpy|memset|memcmp|strlen|strcpy|strncpy|strcmp|strncmp|strcat|strchr|strstr|strtok)'"),
    ("`register` storage class (C++17)", r"ISO C\+\+17 does not allow 'register'"),
    ("header not found", r"file not found"),
    ("CUB", r"\b(hip)?cub\b"),
    ("texture sampling unavailable on gfx942", r"image/texture API not supported"),
    ("HIP header inside extern \"C\"", r"templates must have C\+\+ linkage"),
    ("expected expression (`<< <` launches, code only AMD compiles)", r"expected expression"),
    ("warpSize is not a constant expression", r"warpSize"),
    ("CUDA name left (not in the rename table)", r"(undeclared identifier|unknown type name) '(cuda|cu|CU|CUDA|curand|CURAND)[A-Za-z_]"),
    ("NVIDIA-only annotation", r"__grid_constant__"),
    ("HIP function without CUDA's template overload", r"no matching function for call to 'hip"),
    ("missing device intrinsic", r"undeclared identifier '(__[a-z0-9_]+|[a-z]*min|[a-z]*max)'"),
    ("undeclared identifier (other)", r"undeclared identifier"),
    ("no matching call (project code)", r"no matching function|ambiguous"),
    ("redefinition", r"redefinition"),
    ("inline PTX", r"asm|invalid output constraint|ptx"),
]


def cause_of(line: str) -> str:
    for name, pattern in CAUSES:
        if re.search(pattern, line):
            return name
    return "other"


def run(args) -> int:
    why = rocm72_full_missing()
    if why:
        print(f"ROCm 7.2 toolchain unavailable: {why}", file=sys.stderr)
        return 2
    with open(args.programs, "rb") as fh:
        spec = tomllib.load(fh)
    trees = {t["name"]: t for t in spec["tree"]}
    programs = spec["program"]
    if args.only:
        wanted = set(args.only.split(","))
        programs = [p for p in programs if p["name"] in wanted]
    variants = [v for v in args.variants.split(",") if v]
    archs = [a for a in args.archs.split(",") if a]
    work = os.path.join(str(ROCM72_ROOT), "src", "hiplint-compare")  # compiled inside the chroot
    for d in ["cuda", "hand-include"] + variants:
        shutil.rmtree(os.path.join(work, d), ignore_errors=True)
    logs = os.path.join(args.scratch, "logs")
    for v in variants:
        shutil.rmtree(os.path.join(logs, v), ignore_errors=True)
    settings = Settings().with_overrides(targets=tuple(archs))
    rules = select_rules(settings, load_registry())
    findings = defaultdict(list)  # program name -> findings left in its files
    for tname, tree in trees.items():
        mine = [p for p in programs if p["tree"] == tname]
        if not mine:
            continue
        staged = os.path.join(work, "cuda", tname)
        stage(args.trees, tree, mine, staged)
        if "hiplint" in variants:
            result = Migrator(settings, rules, MigrateOptions(out=os.path.join(work, "hiplint", tname), force=True)).run(staged)
            for f in result.findings:
                for p in mine:
                    if f.path.startswith(p["cuda"] + "/") or any(f.path.startswith(d + "/") for d in tree["include"]):
                        findings[p["name"]].append(f)
        if "plain" in variants:
            write_plain(staged, os.path.join(work, "plain", tname))
        if "hipify" in variants:
            write_hipify(staged, os.path.join(work, "hipify", tname), os.path.join(args.hipify, "bin", "hipify-perl"), args.jobs)
    if "hand" in variants:
        for tname, tree in trees.items():
            for d in tree.get("hand_include", []):
                for dirpath, _, filenames in os.walk(os.path.join(args.trees, tname, d)):
                    for name in filenames:
                        s = os.path.join(dirpath, name)
                        _copy(s, os.path.join(work, "hand-include", tname, os.path.relpath(s, os.path.join(args.trees, tname))))
        for p in programs:
            if "hand" in p:
                src = os.path.join(args.trees, p["hand_tree"], p["hand"])
                dst = os.path.join(work, "hand", p["name"])
                for dirpath, _, filenames in os.walk(src):
                    for name in filenames:
                        s = os.path.join(dirpath, name)
                        if not _excluded(os.path.relpath(s, src), HAND_EXCLUDE) and os.path.getsize(s) < (4 << 20):
                            _copy(s, os.path.join(dst, os.path.relpath(s, src)))

    jobs = []  # (program, variant, unit, arch, path, include dirs)
    for p in programs:
        tree = trees[p["tree"]]
        for v in variants:
            if v == "hand":
                if "hand" not in p:
                    continue
                root = os.path.join(work, "hand", p["name"])
                units = translation_units(root, HAND_EXCLUDE)
                dirs = header_dirs(root) + [os.path.join(work, "hand-include", p["hand_tree"], d)
                                            for d in trees[p["hand_tree"]].get("hand_include", [])]
            else:
                base = os.path.join(work, v, p["tree"])
                rel_dir = plain_rename(p["cuda"]) if v == "plain" else p["cuda"]
                root = os.path.join(base, rel_dir)
                units = translation_units(root)
                dirs = [root] + header_dirs(root) + [os.path.join(base, plain_rename(d) if v == "plain" else d)
                                                     for d in tree["include"]]
                if v == "plain":
                    dirs += list(PLAIN_INCLUDE_DIRS)
            for u in units:
                jobs.append((p["name"], v, u, os.path.join(root, u), dirs))
    print(f"{len(programs)} programs, {len(jobs)} translation units", file=sys.stderr)

    def one(job):
        """All targets in one call (the host pass is shared). clang compiles the device passes one after
        the other and stops at the first that fails, naming it ("errors generated when compiling for
        gfx1100"): the targets it did not reach are then compiled alone. A failing host pass fails all."""
        name, v, u, path, dirs = job
        ok, first, failed = compile_unit(path, archs, dirs, os.path.join(logs, v, name, f"{u}.log"))
        if ok or len(archs) == 1 or failed == "host":
            return job, {a: (ok, first) for a in archs}
        result = {failed: (False, first)} if failed in archs else {}
        for a in archs:
            if a not in result:
                alone = compile_unit(path, [a], dirs, os.path.join(logs, v, name, f"{u}.{a}.log"))
                result[a] = alone[:2]
        return job, result

    results = defaultdict(dict)  # (program, variant) -> {(unit, arch): (ok, first)}
    done = 0
    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        for (name, v, u, _, _), per_arch in ex.map(one, jobs):
            for a, (ok, first) in per_arch.items():
                results[(name, v)][(u, a)] = (ok, first)
            done += 1
            if done % 50 == 0:
                print(f"  {done}/{len(jobs)}", file=sys.stderr)

    summary = {"archs": archs, "variants": variants, "programs": {}}
    for p in programs:
        entry = summary["programs"][p["name"]] = {}
        for v in variants:
            r = results.get((p["name"], v))
            if r is None:
                continue
            entry[v] = {a: {"ok": all(ok for (u, aa), (ok, _) in r.items() if aa == a),
                            "errors": {u: first for (u, aa), (ok, first) in sorted(r.items()) if aa == a and not ok}}
                        for a in archs}
        if p["name"] in findings:
            entry["findings"] = sorted({f"{f.code} {f.path}:{f.line}" for f in findings[p["name"]]})
    path = os.path.join(args.scratch, "summary.json")
    if args.merge and os.path.exists(path):  # keep the other versions' results of an earlier run
        with open(path) as fh:
            old = json.load(fh)
        for name, entry in old["programs"].items():
            if name in summary["programs"]:
                for v, r in entry.items():
                    if v not in variants and not (v == "findings" and "hiplint" in variants):
                        summary["programs"][name].setdefault(v, r)
        summary["variants"] = [v for v in VARIANTS if v in variants or v in old["variants"]]
    with open(path, "w") as fh:
        json.dump(summary, fh, indent=1)
    report(summary)
    return 0


LABELS = {"hiplint": "hiplint migrate", "plain": "plain rename", "hipify": "hipify-perl", "hand": "hand port"}


def _ok(entry, v, archs) -> bool:
    return all(entry[v][a]["ok"] for a in archs)


def report(summary: dict) -> None:
    """The table, the migrate failures grouped by cause, and the programs whose hand port compiles
    where the migrated version does not (with the findings migrate left on the failing line)."""
    archs, variants, progs = summary["archs"], summary["variants"], summary["programs"]
    nhand = sum("hand" in e for e in progs.values())
    print(f"\n{len(progs)} programs ({nhand} with a hand port); ROCm 7.2 (clang 22, HIP 7.2 headers), -c per target\n")
    print("| version | " + " | ".join(archs) + " | both |")
    print("|---|" + "---|" * (len(archs) + 1))
    for v in variants:
        have = [e for e in progs.values() if v in e]
        cells = [f"{sum(e[v][a]['ok'] for e in have)}/{len(have)}" for a in archs]
        print(f"| {LABELS[v]} | " + " | ".join(cells) + f" | {sum(_ok(e, v, archs) for e in have)}/{len(have)} |")
    if nhand and "hand" in variants:
        have = [e for e in progs.values() if "hand" in e]
        print("\nThe programs with a hand port, both targets: " + ", ".join(
            f"{LABELS[v]} {sum(_ok(e, v, archs) for e in have)}/{len(have)}" for v in variants))
    if "hiplint" not in variants:
        return
    causes, per_cause = Counter(), defaultdict(list)
    for name, e in progs.items():
        seen = {}
        for a in archs:
            for u, first in e["hiplint"][a]["errors"].items():
                seen.setdefault((cause_of(first), u), []).append((a, first.strip()))
        for (c, u), where in seen.items():
            per_cause[c].append(f"{name}: {where[0][1]} [{'+'.join(a for a, _ in where)}]")
        for c in {c for c, _ in seen}:
            causes[c] += 1
    print("\nAfter hiplint migrate: failing programs by the cause of a unit's first error (a program counts once per cause):")
    for c, k in causes.most_common():
        print(f"- {c}: {k}")
        for line in per_cause[c]:
            print(f"    {line}")
    if "hand" in variants:
        print("\nMigrate fails where the hand port compiles (both targets), with migrate's findings on the failing line:")
        for name, e in progs.items():
            if "hand" not in e or not _ok(e, "hand", archs) or _ok(e, "hiplint", archs):
                continue
            for a in archs:
                for u, first in e["hiplint"][a]["errors"].items():
                    m = re.match(r"(?:\S+/)?(\S+?):(\d+):", first.strip())
                    named = [f for f in e.get("findings", []) if m and f.split(" ", 1)[1].endswith(f"{m.group(1)}:{m.group(2)}")]
                    print(f"- {name} [{a}] {first.strip()} -- findings there: {', '.join(named) or 'none'}")
                break


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("select", help="draw the programs and write the list")
    s.add_argument("--trees", required=True)
    s.add_argument("--seed", type=int, default=22)
    s.add_argument("--samples", type=int, default=36, help="how many cuda-samples programs to draw")
    s.add_argument("--write", help="write the list here (default: stdout)")
    r = sub.add_parser("run", help="migrate, rename, hipify and compile the listed programs")
    r.add_argument("--trees", required=True)
    r.add_argument("--hipify", required=True, help="a checkout of ROCm/HIPIFY (bin/hipify-perl is run)")
    r.add_argument("--scratch", required=True, help="logs and summary.json go here")
    r.add_argument("--programs", default=PROGRAMS)
    r.add_argument("--archs", default=",".join(ARCHS))
    r.add_argument("--variants", default=",".join(VARIANTS))
    r.add_argument("--only", help="comma-separated program names")
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--merge", action="store_true",
                   help="keep the results of the versions not compiled now from SCRATCH/summary.json")
    t = sub.add_parser("report", help="print the tables again from SCRATCH/summary.json")
    t.add_argument("--scratch", required=True)
    args = ap.parse_args()
    if args.cmd == "report":
        with open(os.path.join(args.scratch, "summary.json")) as fh:
            report(json.load(fh))
        return 0
    return select(args) if args.cmd == "select" else run(args)


if __name__ == "__main__":
    sys.exit(main())
