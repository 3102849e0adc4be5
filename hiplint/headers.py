"""The project headers a C-family file includes, and the macros they define for AMD.

Ports often replace CUDA intrinsics in one compatibility header (`#ifdef USE_ROCM` /
`#define __shfl_xor_sync(mask, var, lane) __shfl_xor(var, lane)`), and every kernel file sees the
replacement through an include. A rule that must not report what such a macro already handles asks
`amd_macros(ctx)`.

- Only quoted includes (`#include "compat.cuh"`) are followed: angle-bracket ones are the toolkit's
  and the system's. Each is looked up beside the including file, then in its parent directories (the
  project's `-I` roots are usually one of them), to a bounded depth and count.
- An include or a `#define` inside an NVIDIA-only branch does not count (hiplint.preproc decides, as
  for the file itself).
- Every header read is a dependency of the file: the cache keeps its digest with the file's entry and
  lints the file again when the header changes (hiplint.cache).
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import NamedTuple

from hiplint.cparse import error_ranges, iter_nodes, new_parser

MAX_DEPTH = 4  # include chains followed this deep (kernel.cu -> common.cuh -> vendors/hip.h is 2)
MAX_HEADERS = 64  # headers read per file, at most
PARENT_LEVELS = 4  # directories above the including file tried for an include path
MAX_HEADER_BYTES = 2 * 1024 * 1024
DEFINES = frozenset({"preproc_def", "preproc_function_def"})


@dataclass(frozen=True)
class HeaderFacts:
    digest: str
    # (macro name, byte, in a HIP-only branch?) for each #define outside NVIDIA-only branches
    amd_defines: tuple[tuple[str, int, bool], ...]
    amd_includes: tuple[tuple[str, bool], ...]  # (quoted include path, in a HIP-only branch?), likewise


class MacroDef(NamedTuple):
    header: str | None  # the header that defines it, None for the file itself
    byte: int  # where the file defines it; -1 for a header (in effect before the file's code)
    hip_only: bool  # defined only for AMD: in a HIP-only branch, or reached through one


_FACTS: dict[tuple, HeaderFacts | None] = {}  # per process: (path, size, mtime, HIP macros) -> facts
MAX_FACTS = 4096  # headers remembered per process; memory stays flat on any tree


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _facts_of(root, data: bytes, platform) -> tuple[tuple, tuple]:
    """(defines, includes) of a parsed file outside NVIDIA-only branches (`platform`: its PlatformMap)."""
    defines, includes = [], []
    for node in iter_nodes(root, DEFINES | {"preproc_include"}):
        kind = platform.kind_at(node.start_byte) if platform is not None else None
        if kind == "nvidia":
            continue
        if node.type == "preproc_include":
            path = node.child_by_field_name("path")
            if path is not None and path.type == "string_literal":
                includes.append((data[path.start_byte:path.end_byte].decode("utf-8", "replace").strip('"'), kind == "hip"))
        else:
            name = node.child_by_field_name("name")
            if name is not None:
                defines.append((data[name.start_byte:name.end_byte].decode("utf-8", "replace"), node.start_byte,
                                kind == "hip"))
    return tuple(defines), tuple(includes)


def header_facts(path: str, hip_macros) -> HeaderFacts | None:
    """What a header defines and includes for AMD; None if it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (path, st.st_size, st.st_mtime_ns, hip_macros)
    if key in _FACTS:
        return _FACTS[key]
    facts = None
    if st.st_size <= MAX_HEADER_BYTES:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            data = None
        if data is not None and b"\0" not in data[:8192]:
            from hiplint.preproc import PlatformMap

            root = new_parser().parse(data).root_node
            defines, includes = _facts_of(root, data, PlatformMap(root, data, hip_macros, error_ranges(root)))
            facts = HeaderFacts(digest_of(data), defines, includes)
    if len(_FACTS) >= MAX_FACTS:
        _FACTS.clear()
    _FACTS[key] = facts
    return facts


def resolve(include: str, directory: str) -> str | None:
    """The file an `#include "include"` in `directory` most likely names: beside it, else in a parent."""
    if os.path.isabs(include):
        return include if os.path.isfile(include) else None
    d = directory
    for _ in range(PARENT_LEVELS + 1):
        candidate = os.path.normpath(os.path.join(d, include))
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return None


def amd_macros(ctx) -> dict[str, MacroDef]:
    """Macros the file and its project headers define outside NVIDIA-only branches, by name.
    Computed once per file; the headers read become the file's dependencies (`ctx.depends`)."""
    cached = ctx.cache.get("amd_macros")
    if cached is not None:
        return cached
    unit = ctx.units[0]
    own_defines, own_includes = _facts_of(unit.root, unit.data, ctx.platform)
    macros: dict[str, MacroDef] = {}
    for name, byte, hip in own_defines:
        macros.setdefault(name, MacroDef(None, byte, hip))
    here = os.path.dirname(os.path.abspath(ctx.fs_path))
    queue = [(inc, here, 1, hip) for inc, hip in own_includes]
    seen: set[str] = {os.path.abspath(ctx.fs_path)}
    while queue and len(seen) <= MAX_HEADERS:
        include, directory, depth, via_hip = queue.pop(0)
        path = resolve(include, directory)
        if path is None or path in seen:
            continue
        seen.add(path)
        facts = header_facts(path, ctx.settings.hip_macros)
        if facts is None:
            continue
        ctx.depends[path] = facts.digest
        for name, _, hip in facts.amd_defines:
            macros.setdefault(name, MacroDef(path, -1, via_hip or hip))
        if depth < MAX_DEPTH:
            queue.extend((inc, os.path.dirname(path), depth + 1, via_hip or hip) for inc, hip in facts.amd_includes)
    ctx.cache["amd_macros"] = macros
    return macros
