"""What a Bazel build keeps to NVIDIA (hiplint.amdbuild reads CMake, Makefiles, Meson and Python builds).

TensorFlow-style projects (TensorFlow, XLA, BladeDISC) choose per-vendor sources inside their BUILD
files with macros that take a list and return it only when that GPU is configured: `if_cuda([...])`,
`if_cuda_is_configured([...])`, `if_tensorrt_enabled([...])` beside `if_rocm([...])`,
`if_rocm_is_configured([...])`; or with `select({"@local_config_cuda//cuda:using_nvcc": [...]})`.
Where the BUILD or `.bzl` files name an AMD path (`if_rocm`, `if_dcu`, `@local_config_rocm`), a
source or header that only NVIDIA macros list, and no other place of any BUILD file names, is
compiled by the NVIDIA build alone.

BUILD files are Starlark, a subset of Python's syntax: read with Python's own parser. A file it cannot
take is skipped. Only strings are read, not targets: a target used only through an NVIDIA macro
(`deps = if_cuda([":cutlass_kernels"])`) keeps its sources.
"""
from __future__ import annotations

import ast
import glob
import os
from dataclasses import dataclass, field

from hiplint.lazy import lazy_re

MAX_FILES = 4000  # BUILD files read per project
MAX_BYTES = 1024 * 1024
BUILD_NAMES = frozenset({"BUILD", "BUILD.bazel"})
ROOT_MARKS = ("WORKSPACE", "WORKSPACE.bazel", "MODULE.bazel")
_SKIP = frozenset({".git", "node_modules", "bazel-bin", "bazel-out", "bazel-testlogs"})
_AMD_MARK = lazy_re(rb"\bif_rocm\w*\s*\(|\bif_dcu\w*\s*\(|\bif_hip\w*\s*\(|@local_config_rocm\b|rocm_is_configured")
_NVIDIA_WORDS = frozenset({"CUDA", "NVCC", "TENSORRT", "TRT", "CUDNN", "CUTLASS", "NVSHMEM", "CUBLASLT"})
_AMD_WORDS = frozenset({"ROCM", "HIP", "DCU", "AMD", "GPU", "HIPCC"})
_C_FAMILY = frozenset({".cu", ".cuh", ".cc", ".cpp", ".cxx", ".c", ".h", ".hpp", ".hh", ".inc", ".inl", ".cu.cc",
                       ".hip"})


# Calls that name files without compiling them: `exports_files(["x.cpp"])` lets another package list it.
_NAMES_ONLY = frozenset({"exports_files", "package", "licenses", "load"})


@dataclass
class BazelFacts:
    amd: bool = False  # the BUILD or .bzl files name an AMD path
    nvidia_files: set = field(default_factory=set)  # listed only inside NVIDIA macros


def nvidia_macro(name: str) -> bool:
    """`if_cuda`, `if_cuda_is_configured`, `if_tensorrt_enabled`: a macro that keeps its list for NVIDIA
    builds alone. `if_cuda_or_rocm`, `if_gpu` are both vendors'."""
    words = set(name.upper().split("_"))
    return name.startswith("if_") and not words.isdisjoint(_NVIDIA_WORDS) and words.isdisjoint(_AMD_WORDS)


def _nvidia_key(key: str) -> bool:
    low = key.lower()
    return ("cuda" in low or "nvcc" in low) and "rocm" not in low and "hip" not in low


def _nvidia_strings(call: ast.AST) -> set[int]:
    """The ids of the string constants inside NVIDIA macros and CUDA `select()` branches below `call`."""
    inside: set[int] = set()
    for node in ast.walk(call):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        if nvidia_macro(node.func.id):
            for arg in node.args[:1]:
                inside.update(id(n) for n in ast.walk(arg) if isinstance(n, ast.Constant))
        elif node.func.id == "select" and node.args and isinstance(node.args[0], ast.Dict):
            for key, value in zip(node.args[0].keys, node.args[0].values):
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and _nvidia_key(key.value):
                    inside.update(id(n) for n in ast.walk(value) if isinstance(n, ast.Constant))
    return inside


@dataclass
class _Rule:
    """One top-level call of a BUILD file (a target, or a macro call): its name and its strings, each
    marked True where an NVIDIA macro holds it."""
    key: tuple | None  # (workspace, package relative to it, name)
    package: str
    strings: list  # [(text, in an NVIDIA macro)]


def _rules(tree: ast.AST, package: str, workspace: str) -> list[_Rule]:
    out = []
    for stmt in getattr(tree, "body", ()):
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.func.id in _NAMES_ONLY:
            continue
        name = next((k.value.value for k in call.keywords if k.arg == "name"
                     and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)), None)
        inside = _nvidia_strings(call)
        strings = [(n.value, id(n) in inside) for k in call.keywords if k.arg not in ("name", "visibility")
                   for n in ast.walk(k.value) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        strings += [(n.value, id(n) in inside) for a in call.args
                    for n in ast.walk(a) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        key = (workspace, os.path.relpath(package, workspace).replace(os.sep, "/").strip("."), name) if name else None
        out.append(_Rule(key, package, strings))
    return out


def _target_key(label: str, package: str, workspace: str) -> tuple | None:
    """The target a label names: `:x`, `x`, `//pkg:x`, `//pkg` (the package's own name)."""
    if label.startswith("@") or not label or "*" in label:
        return None
    if label.startswith("//"):
        pkg, _, name = label[2:].partition(":")
        return workspace, pkg.strip("/"), name or pkg.rsplit("/", 1)[-1]
    here = os.path.relpath(package, workspace).replace(os.sep, "/").strip(".")
    return workspace, here, label[1:] if label.startswith(":") else label


def _workspace(package: str, root: str) -> str:
    """The Bazel workspace a package belongs to: the nearest directory above it with a WORKSPACE or
    MODULE.bazel file (`//` labels start there), else the repository."""
    d = package
    while d.startswith(root):
        if any(os.path.isfile(os.path.join(d, m)) for m in ROOT_MARKS):
            return d
        if d == root:
            break
        d = os.path.dirname(d)
    return root


def _resolve(label: str, package: str, root: str) -> list[str]:
    """The project files a string of a BUILD file in `package` names: `kernels/x.cu.cc`, `:x.h`,
    `//pkg:x.cc` (from the package's workspace), a glob pattern (`*.cu.cc`, `**/*.h`). Targets and
    external labels name none."""
    if label.startswith("@") or not label:
        return []
    if label.startswith("//"):
        pkg, _, name = label[2:].partition(":")
        if not name:
            return []
        base = os.path.join(_workspace(package, root), pkg)
    else:
        base, name = package, label[1:] if label.startswith(":") else label
    if not any(name.endswith(s) for s in _C_FAMILY) and not name.endswith("*"):
        return []
    path = os.path.normpath(os.path.join(base, name))
    if not path.startswith(root + os.sep):
        return []
    if any(c in name for c in "*?["):
        return [p for p in glob.glob(path, recursive=True) if os.path.isfile(p)][:20000]
    return [path] if os.path.isfile(path) else []


def _build_files(root: str) -> list[str]:
    out = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.startswith("."))
        out.extend(os.path.join(directory, f) for f in files if f in BUILD_NAMES)
        if len(out) >= MAX_FILES:
            break
    return out


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(MAX_BYTES + 1)
    except OSError:
        return None


def is_bazel_project(root: str) -> bool:
    """A Bazel workspace at the top, or in a directory just below it (BladeDISC's `tao_compiler/`)."""
    if any(os.path.isfile(os.path.join(root, m)) for m in ROOT_MARKS):
        return True
    try:
        subdirs = [e.path for e in os.scandir(root) if e.is_dir(follow_symlinks=False) and e.name not in _SKIP]
    except OSError:
        return False
    return any(os.path.isfile(os.path.join(d, m)) for d in subdirs for m in ROOT_MARKS)


def read(root: str) -> BazelFacts:
    facts = BazelFacts()
    paths = _build_files(root)
    texts = {p: _read(p) for p in paths}
    bzl = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.startswith("."))
        bzl.extend(os.path.join(directory, f) for f in files if f.endswith(".bzl") or f == ".bazelrc")
        if len(bzl) >= MAX_FILES:
            break
    facts.amd = any(t and _AMD_MARK.search(t) for t in texts.values()) or any(
        (t := _read(p)) and _AMD_MARK.search(t) for p in bzl)
    if not facts.amd:
        return facts
    rules: list[_Rule] = []
    for path, data in texts.items():
        if not data or len(data) > MAX_BYTES:
            continue
        try:
            tree = ast.parse(data.decode("utf-8", "replace"), filename=path)
        except (SyntaxError, ValueError, RecursionError):
            continue  # Starlark Python cannot read: nothing learned from this file
        package = os.path.dirname(path)
        rules.extend(_rules(tree, package, _workspace(package, root)))
    # Targets only NVIDIA macros name (`deps = if_tensorrt_enabled([":trt_bridge"])`), and what only such
    # targets name in turn, are the NVIDIA build's: a fixed point over the references.
    nvidia_targets: set = set()
    for _ in range(8):
        nvidia_refs, other_refs = set(), set()
        for rule in rules:
            whole = rule.key is not None and rule.key in nvidia_targets
            for text, in_macro in rule.strings:
                key = _target_key(text, rule.package, rule.key[0] if rule.key else _workspace(rule.package, root))
                if key is not None:
                    (nvidia_refs if whole or in_macro else other_refs).add(key)
        found = {r.key for r in rules if r.key is not None and r.key in nvidia_refs and r.key not in other_refs}
        if found == nvidia_targets:
            break
        nvidia_targets = found
    nvidia: set[str] = set()
    others: set[str] = set()
    for rule in rules:
        whole = rule.key is not None and rule.key in nvidia_targets
        for text, in_macro in rule.strings:
            (nvidia if whole or in_macro else others).update(_resolve(text, rule.package, root))
    facts.nvidia_files = nvidia - others
    return facts
