"""The project headers a C-family file includes, and the macros they define for AMD.

Ports often replace CUDA intrinsics in one compatibility header (`#ifdef USE_ROCM` /
`#define __shfl_xor_sync(mask, var, lane) __shfl_xor(var, lane)`), and every kernel file sees the
replacement through an include. A rule that must not report what such a macro already handles asks
`amd_macros(ctx)`. The engine asks `platform_map(...)` for every C-family file: the file's #if
branches, knowing the platform switches the project defines in it and its headers
(`#define LIB_DEVICE_CUDA` only in the `#else` of an AMD test). `includers(ctx)` goes the other way,
for a header: the sources beside it that include it.

- Only quoted includes (`#include "compat.cuh"`) are followed: angle-bracket ones are the toolkit's
  and the system's. Each is looked up beside the including file, then in its parent directories (the
  project's `-I` roots are usually one of them), to a bounded depth and count.
- For `amd_macros`, an include or a `#define` inside an NVIDIA-only branch does not count
  (hiplint.preproc decides, as for the file itself); for the switches, it counts as NVIDIA's.
- Every file read is a dependency of the file asking: the cache keeps its digest with the file's
  entry and lints the file again when it changes (hiplint.cache); so is every place an include was
  looked for and not found, as an absent file.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from hiplint.cparse import error_ranges, for_parsing, iter_nodes, new_parser
from hiplint.preproc import AMD_SURE, AMD_SURE_HIP

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
    # (macro name, region kind, defined as 0?) for every #define: what preproc.derive_macros reads
    switch_defines: tuple[tuple[str, str | None, bool], ...] = ()
    nvidia_includes: tuple[str, ...] = ()  # quoted includes inside NVIDIA-only branches
    # other headers whose macros decided this one's branches: (path, digest, size, mtime_ns)
    uses: tuple[tuple[str, str, int, int], ...] = ()


class MacroDef(NamedTuple):
    header: str | None  # the header that defines it, None for the file itself
    byte: int  # where the file defines it; -1 for a header (in effect before the file's code)
    hip_only: bool  # defined only for AMD: in a HIP-only branch, or reached through one


_FACTS: dict[tuple, HeaderFacts | None] = {}  # per process: (path, size, mtime, HIP macros) -> facts
MAX_FACTS = 4096  # headers remembered per process; memory stays flat on any tree
_BUSY: set[str] = set()  # headers being read (an include cycle stops there)
ZERO = frozenset({"0", "(0)", "0L", "0U", "false"})
ABSENT = "absent"  # the digest recorded for a place an include was looked for and not found


LISTING = "listing:"  # the digest of a directory is "listing:" and a digest of its CUDA-family file names


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def listing_digest(directory: str) -> str | None:
    """A directory's CUDA-family file names, as a dependency: a source created there (or removed)
    changes it. None when the directory cannot be read."""
    from hiplint.languages import language_of

    try:
        names = sorted(e for e in os.listdir(directory) if language_of(e) == "cuda")
    except OSError:
        return None
    return LISTING + digest_of("\n".join(names).encode("utf-8", "surrogateescape"))


def _facts_of(root, data: bytes, platform, fs_path: str | None = None) -> tuple[tuple, tuple]:
    """(defines, includes) of a parsed file outside NVIDIA-only branches (`platform`: its PlatformMap).
    With `fs_path`, an angle-bracket include found in an include directory of the project's AMD build
    (`<LightGBM/cuda/cuda_rocm_interop.h>`, hiplint.amdbuild) counts too, by its full path."""
    defines, includes = [], []
    for node in iter_nodes(root, DEFINES | {"preproc_include"}):
        kind = platform.kind_at(node.start_byte) if platform is not None else None
        if kind in ("nvidia", "never"):
            continue
        if node.type == "preproc_include":
            path = node.child_by_field_name("path")
            if path is not None and path.type == "string_literal":
                includes.append((data[path.start_byte:path.end_byte].decode("utf-8", "replace").strip('"'), kind == "hip"))
            elif path is not None and path.type == "system_lib_string" and fs_path is not None:
                from hiplint.amdbuild import project_include
                found = project_include(fs_path, data[path.start_byte:path.end_byte].decode("utf-8", "replace").strip("<>"))
                if found is not None:
                    includes.append((found, kind == "hip"))
        else:
            name = node.child_by_field_name("name")
            if name is not None:
                defines.append((data[name.start_byte:name.end_byte].decode("utf-8", "replace"), node.start_byte,
                                kind == "hip"))
    return tuple(defines), tuple(includes)


def _first_test(data: bytes, name: str) -> int:
    """Offset of the first conditional directive that names `name` (len(data) if none)."""
    m = re.search(rb"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef)\b[^\n]*\b" + re.escape(name.encode()) + rb"\b",
                  data, re.M)
    return m.start() if m else len(data)


def _switch_defines(root, data: bytes, platform, positions: bool = False) -> tuple:
    """(name, region kind, defined as 0?) for every #define of a parsed file (with its offset last when
    `positions`)."""
    out = []
    for node in iter_nodes(root, DEFINES):
        name = node.child_by_field_name("name")
        if name is None:
            continue
        kind = platform.kind_at(node.start_byte)
        if kind == "never":
            continue  # `#if 0`: defined for no build
        if kind is None and platform.off_on_amd(node.start_byte):
            # `#if __CUDACC_VER_MAJOR__ >= 11 / #define CP_ASYNC_ENABLED`: reported as code AMD loses,
            # but as a switch it is never defined on AMD, like one in NVIDIA-only code.
            kind = "nvidia"
        elif kind in (None, "hip") and platform.surely_on_amd(node.start_byte):
            # `#if __CUDA_ARCH__ >= 800 || defined(USE_AMD_ROCM) / #define FULL_BF16 1`, or no #if at all:
            # every AMD build makes the definition.
            kind = AMD_SURE if kind is None else AMD_SURE_HIP
        value = node.child_by_field_name("value") if node.type == "preproc_def" else None
        zero = value is not None and data[value.start_byte:value.end_byte].strip().decode("utf-8", "replace") in ZERO
        entry = (data[name.start_byte:name.end_byte].decode("utf-8", "replace"), kind, zero)
        out.append(entry + (node.start_byte,) if positions else entry)
    return tuple(out)


def _includes_by_side(root, data: bytes, platform, fs_path: str | None = None) -> list[tuple[str, str | None]]:
    """Quoted includes with the kind of branch they sit in (None, "hip" or "nvidia"); with `fs_path`,
    also angle-bracket ones found in an include directory of the project's build (by full path:
    Faiss's `<faiss/gpu/utils/Float16.cuh>`)."""
    out = []
    for node in iter_nodes(root, {"preproc_include"}):
        path = node.child_by_field_name("path")
        kind = platform.kind_at(node.start_byte)
        if path is None or kind == "never":
            continue
        if path.type == "string_literal":
            out.append((data[path.start_byte:path.end_byte].decode("utf-8", "replace").strip('"'), kind))
        elif path.type == "system_lib_string" and fs_path is not None:
            from hiplint.amdbuild import project_include
            found = project_include(fs_path, data[path.start_byte:path.end_byte].decode("utf-8", "replace").strip("<>"))
            if found is not None:
                out.append((found, kind))
    return out


def _closure(includes, directory: str, hip_macros, level: int, seen: set[str], nvidia_side: bool = False,
             missing: list | None = None, origin: str | None = None):
    """Headers reached from `includes`, (quoted include, kind of its branch) found from `directory`:
    yields (path, facts, side) breadth first, to MAX_DEPTH includes deep and MAX_HEADERS headers. The
    side is "hip" or "nvidia" for a header reached only through such branches, else None; headers
    behind NVIDIA-only branches are followed only with `nvidia_side`. `missing` receives (side, the places
    tried) for each include that could not be read. With `origin` (the file linted), an include found
    neither beside its includer nor above is looked up as the compiler would next: in the include
    directories of the project's build (`-I include`), else as the one project file whose path ends so."""
    queue = [(inc, directory, 1, kind) for inc, kind in includes if nvidia_side or kind != "nvidia"]
    while queue and len(seen) <= MAX_HEADERS:
        include, where, depth, side = queue.pop(0)
        path = resolve(include, where)
        if path is None and origin is not None:
            from hiplint.amdbuild import project_include
            path = project_include(origin, include)
        if path is None and missing is not None:
            missing.append((side, candidates(include, where)))
        if path is None or path in seen or path in _BUSY:
            continue  # unknown, seen, or being read further up (an include cycle: its facts come there)
        seen.add(path)
        facts = header_facts(path, hip_macros, level + 1)
        if facts is None:
            if missing is not None:
                missing.append((side, ()))  # unreadable: a change to it changes its stat, not its absence
            continue
        yield path, facts, side
        if depth < MAX_DEPTH:
            below = os.path.dirname(path)
            queue.extend((inc, below, depth + 1, side or ("hip" if hip else None)) for inc, hip in facts.amd_includes)
            if nvidia_side and side != "hip":
                queue.extend((inc, below, depth + 1, "nvidia") for inc in facts.nvidia_includes)


def _side_of(side: str | None, kind: str | None) -> str | None:
    """Where a definition holds: `kind` of its branch in a header reached through `side`; "never" when
    the two contradict (an NVIDIA-only branch of a header included only for AMD)."""
    if kind in (AMD_SURE, AMD_SURE_HIP):
        # Surely defined where the header is read; a header read only for NVIDIA defines it for NVIDIA.
        if side in (None, "hip"):
            return kind
        return "nvidia" if kind == AMD_SURE else "never"
    if side is None or kind is None or side == kind:
        return side or kind
    return "never"


def platform_map(root, data: bytes, hip_macros, errors, fs_path: str | None, depends: dict | None = None,
                 level: int = 0):
    """The file's PlatformMap, knowing the platform switches its project defines (preproc.derive_macros).

    Headers are read only when a condition of the file tests a macro hiplint cannot settle on AMD and
    the file has quoted includes or defines such a macro itself. `depends` receives every header read."""
    from hiplint.preproc import (AMD_ONLY, AMD_ONLY_DEFINED, DEFINED_ON_AMD, NVIDIA_ONLY, ZERO_ON_AMD, PlatformMap,
                                 derive_macros)

    platform = PlatformMap(root, data, hip_macros, errors)
    if not platform.open_names:
        return platform
    header_defines = []
    includes = _includes_by_side(root, data, platform, fs_path)
    missing: list = []  # includes that could not be read, by side: switches may hide there
    if includes and fs_path is not None and level <= MAX_DEPTH:
        here = os.path.dirname(os.path.abspath(fs_path))
        # Headers behind NVIDIA-only branches count too: what they define is defined for NVIDIA.
        for path, facts, side in _closure(includes, here, hip_macros, level, {os.path.abspath(fs_path)}, True,
                                          missing, fs_path):
            if depends is not None:
                depends[path] = facts.digest
                depends.update((p, d) for p, d, _, _ in facts.uses)
            header_defines.extend((name, _side_of(side, kind), zero) for name, kind, zero in facts.switch_defines
                                  if name in platform.open_names and _side_of(side, kind) != "never")
    if depends is not None:
        # Creating a header where the include would find it changes what is derived: the places
        # tried are dependencies too, as absent files.
        depends.update((place, ABSENT) for _, places in missing for place in places)
    # A header of the other side that could not be read may define the switch there too.
    unread = {side for side, _ in missing}
    other_side_unread = {AMD_ONLY: "nvidia" in unread, NVIDIA_ONLY: "hip" in unread, ZERO_ON_AMD: "hip" in unread,
                         DEFINED_ON_AMD: False, AMD_ONLY_DEFINED: "nvidia" in unread}
    # The file's own definitions may sit in branches that only the switches settle: settle again.
    asked = platform.open_names
    derived: dict = {}
    for _ in range(3):
        # A definition of the file's own that comes after its first test cannot settle that test: the
        # preprocessor reads in order (`#ifdef X ... #endif` then `#define X`).
        own = [(name, kind, zero) for name, kind, zero, at in _switch_defines(root, data, platform, True)
               if name in asked and not (kind in (AMD_SURE, AMD_SURE_HIP) and at > _first_test(data, name))]
        found = {k: v for k, v in derive_macros(header_defines + own).items() if k in asked and not other_side_unread[v]}
        if found == derived:
            break
        derived = found
        platform = PlatformMap(root, data, hip_macros, errors, derived)
    return platform


def header_facts(path: str, hip_macros, level: int = 0) -> HeaderFacts | None:
    """What a header defines and includes for AMD; None if it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (path, st.st_size, st.st_mtime_ns, hip_macros)
    known = _FACTS.get(key)
    if key in _FACTS and (known is None or _still(known.uses)):
        return known
    if path in _BUSY:
        return None  # an include cycle
    facts = None
    if st.st_size <= MAX_HEADER_BYTES:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            data = None
        if data is not None and b"\0" not in data[:8192]:
            root = new_parser().parse(for_parsing(data)).root_node
            uses: dict[str, str] = {}
            _BUSY.add(path)
            try:
                platform = platform_map(root, data, hip_macros, error_ranges(root), path, uses, level)
            finally:
                _BUSY.discard(path)
            defines, includes = _facts_of(root, data, platform, path)
            facts = HeaderFacts(digest_of(data), defines, includes, _switch_defines(root, data, platform),
                                tuple(inc for inc, kind in _includes_by_side(root, data, platform) if kind == "nvidia"),
                                tuple(_stamp(p, d) for p, d in sorted(uses.items())))
    if len(_FACTS) >= MAX_FACTS:
        _FACTS.clear()
    _FACTS[key] = facts
    return facts


def _stamp(path: str, digest: str) -> tuple[str, str, int, int]:
    try:
        st = os.stat(path)
        return path, digest, st.st_size, st.st_mtime_ns
    except OSError:
        return path, digest, -1, -1


def _still(uses) -> bool:
    """Are the headers a remembered header's facts were decided by unchanged (or still absent) since?"""
    for path, _, size, mtime in uses:
        try:
            st = os.stat(path)
        except OSError:
            if size == -1:
                continue  # absent then, absent now
            return False
        if (st.st_size, st.st_mtime_ns) != (size, mtime):
            return False
    return True


def candidates(include: str, directory: str) -> list[str]:
    """Where an `#include "include"` in `directory` may be found, in order: beside it, then in parents."""
    if os.path.isabs(include):
        return [include]
    out = []
    d = directory
    for _ in range(PARENT_LEVELS + 1):
        out.append(os.path.normpath(os.path.join(d, include)))
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return out


def resolve(include: str, directory: str) -> str | None:
    """The file an `#include "include"` in `directory` most likely names: beside it, else in a parent."""
    return next((c for c in candidates(include, directory) if os.path.isfile(c)), None)


def amd_macros(ctx) -> dict[str, MacroDef]:
    """Macros the file and its project headers define outside NVIDIA-only branches, by name.
    Computed once per file; the headers read become the file's dependencies (`ctx.depends`)."""
    cached = ctx.cache.get("amd_macros")
    if cached is not None:
        return cached
    unit = ctx.units[0]
    own_defines, own_includes = _facts_of(unit.root, unit.data, ctx.platform, ctx.fs_path)
    macros: dict[str, MacroDef] = {}
    for name, byte, hip in own_defines:
        macros.setdefault(name, MacroDef(None, byte, hip))
    here = os.path.dirname(os.path.abspath(ctx.fs_path))
    includes = [(inc, "hip" if hip else None) for inc, hip in own_includes]
    missing: list = []
    headers = []
    for path, facts, side in _closure(includes, here, ctx.hip_macros, 0, {os.path.abspath(ctx.fs_path)},
                                      missing=missing, origin=ctx.fs_path):
        headers.append(path)
        ctx.depends[path] = facts.digest
        ctx.depends.update((p, d) for p, d, _, _ in facts.uses)
        for name, _, hip in facts.amd_defines:
            macros.setdefault(name, MacroDef(path, -1, side == "hip" or hip))
    ctx.depends.update((place, ABSENT) for _, places in missing for place in places)
    ctx.cache["amd_macros"] = macros
    ctx.cache["project_headers"] = headers
    return macros


def project_headers(ctx) -> list[tuple[str, bytes]]:
    """The project headers the file includes with quotes, followed as amd_macros follows them (and
    dependencies of the file's cache entry already): [(path, bytes)]. For a rule about to report what
    a header's macro may settle (SYN005: a launch macro that sets the cooperative attribute)."""
    amd_macros(ctx)
    out = []
    for path in ctx.cache.get("project_headers", ()):
        try:
            with open(path, "rb") as fh:
                out.append((path, fh.read(MAX_HEADER_BYTES)))
        except OSError:
            continue
    return out


HEADER_EXTENSIONS = frozenset({".cuh", ".h", ".hpp", ".hh", ".hxx", ".inl", ".cuinl", ".h++", ".ipp", ".tpp"})
MAX_INCLUDERS_READ = 256  # sources read, at most, to find who includes a header


def includers(ctx) -> list[tuple[str, bytes]]:
    """The sources that include this header by its name, looked for beside it and in the directory
    above (where a kernel header's launching file usually is): [(path, bytes)]. Asked by a rule
    about to report something another file may settle (SYN005: the cooperative launch of a kernel
    defined in a header). Every source read is a dependency of the header's cache entry, and so is
    each directory's list of sources (a source created there later re-lints the header)."""
    from hiplint.languages import language_of

    full = os.path.abspath(ctx.fs_path)
    name = os.path.basename(full)
    if os.path.splitext(name)[1].lower() not in HEADER_EXTENSIONS:
        return []
    cached = ctx.cache.get("includers")
    if cached is not None:
        return cached
    here = os.path.dirname(full)
    needle = re.compile(rb'#\s*include\s*"(?:[^"]*/)?' + re.escape(name.encode()) + rb'"')
    found, read = [], 0
    for directory in (here, os.path.dirname(here)):
        try:
            entries = sorted(os.listdir(directory))
        except OSError:
            continue
        listing = listing_digest(directory)
        if listing is not None:
            ctx.depends[directory] = listing
        for entry in entries:
            path = os.path.join(directory, entry)
            if path == full or language_of(entry) != "cuda" or read >= MAX_INCLUDERS_READ or not os.path.isfile(path):
                continue
            try:
                if os.path.getsize(path) > MAX_HEADER_BYTES:
                    continue
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            read += 1
            ctx.depends[path] = digest_of(data)
            if needle.search(data):
                found.append((path, data))
    ctx.cache["includers"] = found
    return found


_QUOTED_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
_ANY_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)', re.M)
# A function defined or declared under `name` (`static __device__ int __dp4a(int a, ...)`), not a call:
# a type or qualifier word before it on the same declaration, with no `=`, `;`, brace or parenthesis between.
_DECLARING_WORDS = rb"(?:__device__|__host__|__forceinline__|inline|static|constexpr|int|unsigned|float|double|auto|void)"


def project_defines(ctx, name: str) -> bool:
    """Does the project define `name` (a function or a macro) where this file sees it: in a header the
    file includes with quotes, or, for an intrinsic (`__name`) in a header, in a file including it or
    a header that file includes (vLLM's `vecdotq.cuh` uses the `__dp4a` its includer's
    `ggml-common.h` defines for ROCm). Asked by a rule about to report a CUDA name; every file read is
    a dependency of the file's cache entry."""
    if name in amd_macros(ctx):
        return True
    # Includers are looked through only for intrinsics (`__dp4a`): what projects shim that way. Reading
    # a header's includers costs up to 512 file reads; for every reported API name it cost a quarter
    # of a scan of flashinfer's headers.
    key = "project_texts" if name.startswith("__") else "project_headers_texts"
    texts = ctx.cache.get(key)
    if texts is None:
        texts = [data for _, data in project_headers(ctx)]
        own = os.path.abspath(ctx.fs_path)
        for path, data in includers(ctx) if key == "project_texts" else ():
            texts.append(data)
            here = os.path.dirname(path)
            for m in _QUOTED_INCLUDE.finditer(data):
                found = resolve(m.group(1).decode("utf-8", "replace"), here)
                if found is None or os.path.abspath(found) == own:
                    continue
                header = _read_dependency(ctx, found)
                if header is not None:
                    texts.append(header)
        ctx.cache[key] = texts
    pattern = _definition_of(name)
    return any(pattern.search(t) for t in texts)


def includers_define(ctx, name: str) -> bool:
    """Is this header included, wherever the AMD build may compile the include, only after the includer
    has defined `name` (a macro or a function), itself, through a header it includes first, or (for an
    includer that is a header too) through its own includers? qiskit-aer's `chunk_container.hpp`
    includes `misc/hipify.hpp` (its own `__shfl_xor_sync` for ROCm) and then `thrust_kernels.hpp`, which
    includes `cuda_kernels.hpp`, which calls the intrinsic. Includers the AMD build never compiles do
    not count; a header nothing includes is not settled. Every file read is a dependency of the
    file's cache entry."""
    if not ctx.fs_path or os.path.splitext(ctx.fs_path)[1].lower() not in HEADER_EXTENSIONS \
            or not ctx.build_facts.builds_for_amd:
        return False  # (the cache keys a header's entry by its includers in such projects: hiplint.cache)
    key = ("includers_define", name)
    if key not in ctx.cache:
        ctx.cache[key] = _settled_by_includers(ctx, os.path.abspath(ctx.fs_path), _definition_of(name), 0,
                                               frozenset())
    return ctx.cache[key]


MAX_SHIM_DEPTH = 3  # includers of includers followed this far


def _defines_before(ctx, path: str, before: bytes, pattern) -> bool:
    """Does `before` (an includer's text up to the include) define it, or a project header it includes
    with quotes, or one those include (to MAX_DEPTH, MAX_HEADERS files)?"""
    if pattern.search(before):
        return True
    from hiplint.amdbuild import project_include

    queue, seen = [(before, os.path.dirname(path), 0)], {os.path.abspath(path)}
    while queue:
        text, here, level = queue.pop(0)
        for m in _ANY_INCLUDE.finditer(text):
            include = (m.group(1) or m.group(2)).decode("utf-8", "replace")
            # `#include <cuda_to_cupla.hpp>`: a project header named with angle brackets counts too.
            found = resolve(include, here) if m.group(1) else project_include(path, include)
            if found is None or os.path.abspath(found) in seen or len(seen) > MAX_HEADERS:
                continue
            seen.add(os.path.abspath(found))
            included = _read_dependency(ctx, found)
            if included is None:
                continue
            if pattern.search(included):
                return True
            if level + 1 < MAX_DEPTH:
                queue.append((included, os.path.dirname(found), level + 1))
    return False


def _settled_by_includers(ctx, header: str, pattern, depth: int, seen: frozenset) -> bool:
    from hiplint.includers import includers as project_includers, off_on_amd

    seen = seen | {header}
    settled = 0
    for path, at in project_includers(header)[:MAX_INCLUDERS_READ]:
        if off_on_amd(path, at):
            continue
        if path in seen:
            return False
        data = _read_dependency(ctx, path)
        if data is None:
            return False
        if _defines_before(ctx, path, data[:at], pattern):
            settled += 1
            continue
        if depth < MAX_SHIM_DEPTH and os.path.splitext(path)[1].lower() in HEADER_EXTENSIONS and \
                _settled_by_includers(ctx, os.path.abspath(path), pattern, depth + 1, seen):
            settled += 1
            continue
        return False
    return settled > 0


def _read_dependency(ctx, path: str) -> bytes | None:
    """A project file read on the file's behalf (its first MAX_HEADER_BYTES), recorded as a dependency of
    the file's cache entry; None when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_HEADER_BYTES)
    except OSError:
        return None
    ctx.depends[path] = digest_of(data)
    return data


@lru_cache(maxsize=512)
def _definition_of(name: str) -> re.Pattern:
    n = re.escape(name.encode())
    return re.compile(rb"#[ \t]*define[ \t]+" + n + rb"\b|\b" + _DECLARING_WORDS + rb"\b[^;{}()=]*\b" + n + rb"\s*\(")

