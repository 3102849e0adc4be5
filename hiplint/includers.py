"""Headers only NVIDIA code includes, in a project that already builds for AMD.

A header is compiled wherever a source includes it. In a project whose AMD build hiplint read (or
whose build names a switch per vendor: hiplint.amdbuild), a header whose every include in the project
sits in code the AMD build never compiles (a source of an NVIDIA-only target, a `cuda/` backend with a
HIP twin, an `#ifdef __HIP_PLATFORM_NVIDIA__` or `#if X_USE_CUDA` branch, another such header) is
NVIDIA code too: GROMACS's `cuda_arch_utils.cuh`, a vendored JIT library included under
`#ifdef __HIP_PLATFORM_NVCC__`, PTX helpers included from the CUDA target's headers only. A header
that nothing in the project includes (a public API header, one included by users) is not.

The include index is built once per project and process: every C-family file of the project is read
for its `#include` lines (the preprocessor's own reading, so unparsable files count).
"""
from __future__ import annotations

import fnmatch
import os
import re
import stat
from functools import lru_cache

from hiplint.amdbuild import C_FAMILY, HEADERS, PROJECT_MARKER, SKIP_DIRS, for_path, root_of

_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)
# Headers of NVIDIA libraries with no AMD counterpart to hipify to (cuQuantum, cuFile): a file that
# includes one where the AMD build would see the include cannot be compiled for AMD.
_NVIDIA_ONLY_LIBRARY = re.compile(
    rb'^[ \t]*#[ \t]*include[ \t]*[<"](?:custatevec|custatevecEx|cutensornet|cudensitymat|custabilizer|cufile|cupti|'
    rb'cupti_\w+|nvml|nvperf_\w+)\.h[>"]',
    re.M)
MAX_FILES = 60000  # files indexed per project
MAX_BYTES = 2_000_000  # per file
MAX_DEPTH = 4  # headers included only by headers included only by ... NVIDIA code


# NVIDIA libraries whose use a helper header tests through their include guard (`#ifdef CUBLAS_API_H_`):
# any spelling of the library's prefix in a file (`cublas_v2.h`, `cublasHandle_t`, `CURAND_STATUS_*`).
_LIBRARY_MENTION = re.compile(rb"(?i)\b(cublas|curand|cufft|cusparse|cusolver)")


@lru_cache(maxsize=8)
def _index(root: str) -> dict[str, list[tuple[str, int]]]:
    """Basename of an included file -> [(includer, offset of the directive, included text)] ..."""
    return _walk(root)[0]


def library_of_header(header: str) -> str | None:
    """`cublas` for `cublas_api.h`: the NVIDIA library a header belongs to, of those library_users knows."""
    m = _LIBRARY_MENTION.match(header.encode())
    return m.group(1).decode().lower() if m else None


def library_users(root: str, library: str) -> frozenset:
    """The project's C-family files that name NVIDIA library `library` (`cublas`, `curand`, `cufft`,
    `cusparse`, `cusolver`) anywhere, by path."""
    return _walk(root)[1].get(library, frozenset())


# A switch the project ships turned off: `//#define USE_TEXTURES_FIELDS` (no value, or 1) in a header.
# `//#define USE_X`, `//#define USE_X 1 // slower`: a switch offered in a comment (its own note after it).
_COMMENTED_DEFINE = re.compile(rb"^[ \t]*//+[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?:[ \t]+1)?[ \t]*(?://[^\n]*)?$", re.M)
_ACTIVE_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.M)
# Files that may turn a switch on from outside the sources: build files, scripts, CI and Python builds.
_SETS_DEFINES = re.compile(r"(?i)^(?:CMakeLists\.txt|.*\.cmake|(?:GNU)?makefile.*|.*\.(?:mk|mak|am|in|ac|m4|sh|py|"
                           r"bzl|bazel|toml|ya?ml|json|cfg|ini|txt)|configure.*|meson\.build|meson_options\.txt|BUILD|"
                           r"SConstruct|SConscript|Make\.\w+)$")


# `#define EIGEN_CUDACC __CUDACC__`: a project's own name for an NVIDIA compiler macro.
_COMPILER_ALIAS = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+(__CUDACC__|__NVCC__|__HIPCC__|__HIP__|"
                             rb"__HIP_PLATFORM_AMD__)[ \t]*(?://[^\n]*|/\*[^\n]*)?$", re.M)
_NVCC_MACROS = frozenset({b"__CUDACC__", b"__NVCC__"})
_HIP_MACROS = frozenset({b"__HIPCC__", b"__HIP__", b"__HIP_PLATFORM_AMD__"})
_HIP_COMPILER_TEST = re.compile(rb"^[ \t]*#[ \t]*(?:if|ifdef|elif)\b[^\n]*\b(?:__HIPCC__|__HIP__|__HIP_PLATFORM_AMD__)\b", re.M)


def compiler_aliases(root: str) -> tuple[frozenset, frozenset]:
    """Macros the project defines only as another name of a compiler macro, in every definition it has:
    (those of `__CUDACC__` / `__NVCC__`, those of `__HIPCC__` / `__HIP__` / `__HIP_PLATFORM_AMD__`). Eigen's
    `#define EIGEN_CUDACC __CUDACC__` is defined exactly where nvcc compiles, so undefined under
    hip-clang, and its `#define EIGEN_HIPCC __HIPCC__` exactly where hip-clang does. So is, on the nvcc
    side, a name every definition of which sits under `#ifdef __CUDACC__` in a file that tests
    `__HIPCC__` too (`#ifdef __CUDACC__ / #define X_CUCXTYPE_THRUST 1 / #elif defined __HIPCC__ / ...`)."""
    return _walk(root)[3]


_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(ifdef|ifndef|if|elif|else|endif|define)\b[ \t]*([^\n]*)$", re.M)
_DEFINED_ONE = re.compile(rb"^(?:defined[ \t]*\([ \t]*(\w+)[ \t]*\)|defined[ \t]+(\w+))[ \t]*(?://[^\n]*|/\*[^\n]*)?$")


def _guards_of_defines(data: bytes, guarded: dict, unguarded: set) -> None:
    """For each `#define N` of a file, the names of the `#ifdef X` / `#if defined(X)` branches around it
    (an `#else` or `#elif` branch, and any other condition, guards by no name)."""
    stack: list = []
    for m in _DIRECTIVE.finditer(data):
        what, rest = m.group(1), m.group(2).strip()
        if what == b"ifdef":
            stack.append(rest.split()[0] if rest.split() else None)
        elif what == b"if":
            one = _DEFINED_ONE.match(rest)
            stack.append((one.group(1) or one.group(2)) if one else None)
        elif what == b"ifndef":
            stack.append(None)
        elif what in (b"elif", b"else"):
            if stack:
                stack[-1] = None
        elif what == b"endif":
            if stack:
                stack.pop()
        else:
            name = rest.split()[0].split(b"(")[0] if rest.split() else b""
            if not name:
                continue
            guards = frozenset(g for g in stack if g)
            if guards:
                guarded.setdefault(name, []).append(guards)
            else:
                unguarded.add(name)


def off_switches(root: str) -> frozenset:
    """Macros the project ships switched off: each is defined only in comments (`//#define
    USE_TEXTURES_FIELDS`, the way a header offers an optional feature), no C-family file defines it, and no
    build file, script or configuration names it (where a `-D` could turn it on). Code under `#ifdef` of
    one is compiled by no build the project describes (hiplint.context)."""
    return _walk(root)[2]


@lru_cache(maxsize=8)
def _walk(root: str) -> tuple[dict, dict, frozenset, tuple, tuple, bool]:
    """One read of every C-family file of the project: the include index, and which files name each
    NVIDIA library (_LIBRARY_MENTION)."""
    by_name: dict[str, list] = {}
    mentions: dict[str, set] = {}
    commented: set = set()
    active: set = set()
    aliases: set = set()
    other_definitions: set = set()
    guarded: dict[bytes, list] = {}  # name -> the `#ifdef` names around each of its definitions
    unguarded: set = set()  # names defined somewhere outside any `#ifdef X`
    definitions: dict[bytes, int] = {}  # name -> how many `#define`s of it the project has
    under_nvcc: dict[bytes, int] = {}  # ... of which under `#ifdef __CUDACC__` in a file that tests HIP's macros too
    under_hip: dict[bytes, int] = {}  # ... of which under `#ifdef __HIPCC__` (or `__HIP__`, `__HIP_PLATFORM_AMD__`)
    setters: list = []  # build files and scripts, read only if a switch is offered in a comment
    count = 0
    complete = True
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith(".") and d.lower() not in SKIP_DIRS
                            and not os.path.exists(os.path.join(directory, d, PROJECT_MARKER)))
        for name in files:
            if os.path.splitext(name)[1].lower() not in C_FAMILY:
                if _SETS_DEFINES.match(name):
                    setters.append(os.path.join(directory, name))
                continue
            count += 1
            if count > MAX_FILES:
                complete = False
                break
            path = os.path.join(directory, name)
            data = _read_regular(path)
            if data is None:
                complete = False  # a file not read may define any switch
                continue
            for m in set(_LIBRARY_MENTION.findall(data)):
                mentions.setdefault(m.decode().lower(), set()).add(path)
            if b"define" in data:
                commented.update(_COMMENTED_DEFINE.findall(data))
                defined = _ACTIVE_DEFINE.findall(data)
                active.update(defined)
                for d in defined:
                    definitions[d] = definitions.get(d, 0) + 1
                _guards_of_defines(data, guarded, unguarded)
                if _HIP_COMPILER_TEST.search(data):
                    local: dict[bytes, list] = {}
                    _guards_of_defines(data, local, set())
                    for d, guards in local.items():
                        n = sum(1 for g in guards if g & _NVCC_MACROS) if b"__CUDACC__" in data else 0
                        if n:
                            under_nvcc[d] = under_nvcc.get(d, 0) + n
                        n = sum(1 for g in guards if g & _HIP_MACROS)
                        if n:
                            under_hip[d] = under_hip.get(d, 0) + n
                if b"__CUDACC__" in data or b"__NVCC__" in data or b"__HIP" in data:
                    pairs = _COMPILER_ALIAS.findall(data)
                    found = [name for name, _ in pairs]
                    aliases.update(pairs)
                    other_definitions.update(d for d in set(defined) if defined.count(d) > found.count(d))
                else:
                    other_definitions.update(defined)
            if b"include" not in data:
                continue
            for m in _INCLUDE.finditer(data):
                text = m.group(1).decode("utf-8", "replace").strip()
                by_name.setdefault(os.path.basename(text), []).append((path, m.start(), text))
        if count > MAX_FILES:
            break
    off = (commented - active) if complete else set()
    # Switches defined only inside code an off switch guards (`#ifdef USE_TEXTURE` / `#define
    # USE_TEXTURE_XCOEFF` / `#endif`) are off too.
    while off:
        more = {n for n, guards in guarded.items() if n not in off and n not in unguarded
                and all(g & off for g in guards)}
        if not more:
            break
        off |= more
    for path in setters if off else ():
        data = _read_regular(path)
        if data is None:
            off = set()  # a file not read may set any switch
            break
        off = {name for name in off if name not in data}
        if not off:
            break
    # A name is an alias when every definition of it names a compiler macro of one vendor.
    sides: dict[bytes, set] = {}
    for name, value in aliases:
        sides.setdefault(name, set()).add(value in _NVCC_MACROS)
    kept = {n: side for n, side in sides.items() if n not in other_definitions and len(side) == 1} if complete else {}
    # `#ifdef __CUDACC__ / #define X_CUCXTYPE_THRUST 1 / #elif defined __HIPCC__ / #define X_HIPCXTYPE_CXSMPL 1`:
    # a name the project defines only where nvcc compiles, in files that give hip-clang its own branch, is
    # undefined under hip-clang as `__CUDACC__` is: another name for the NVIDIA compile.
    # And on the other side, `#if defined __HIPCC__ / #define X_HAS_NO_CURAND 1`: defined wherever hip-clang
    # compiles (a build's `-D` may define it elsewhere too; that does not undefine it under hip-clang).
    if complete:
        nvcc_only = {n for n, count in under_nvcc.items()
                     if count == definitions.get(n, 0) and n not in sides and n not in _NVCC_MACROS}
        for path in setters if nvcc_only else ():
            data = _read_regular(path)  # a build's `-DX` would define it under hip-clang too
            nvcc_only = {n for n in nvcc_only if data is not None and n not in data}
            if not nvcc_only:
                break
        for n in nvcc_only:
            kept[n] = {True}
        for n, count in under_hip.items():
            if count == definitions.get(n, 0) and n not in sides and n not in kept and n not in _HIP_MACROS:
                kept[n] = {False}
    compiler = (frozenset(n.decode() for n, side in kept.items() if True in side),
                frozenset(n.decode() for n, side in kept.items() if False in side))
    return (by_name, {k: frozenset(v) for k, v in mentions.items()}, frozenset(n.decode() for n in off), compiler,
            tuple(setters), complete)


def includers(header: str) -> list[tuple[str, int]]:
    """The project's (file, directive offset) pairs that include `header`, by path: a quoted include
    relative to the includer, or any include whose text the header's path ends with (unless a file of
    that name sits beside the includer: the preprocessor finds that one first)."""
    full = os.path.abspath(header)
    out = []
    for path, at, text in _index(root_of(full)).get(os.path.basename(full), ()):
        if path == full:
            continue
        norm = os.path.normpath(text)
        beside = os.path.normpath(os.path.join(os.path.dirname(path), text))
        if beside == full:
            out.append((path, at))
        elif os.path.isfile(beside):
            continue  # `#include "layers.h"` finds the includer's own neighbour first (sycl/ beside cuda/)
        elif full.endswith(os.sep + norm.lstrip("." + os.sep)) or full == norm:
            out.append((path, at))
    return out


@lru_cache(maxsize=4096)
def nvidia_only_header(header: str) -> bool:
    """Is `header` included somewhere in its project, and only from code the AMD build never compiles?
    Each includer is read with HIP's default macros and its own build definitions (hiplint.amdbuild);
    the cache key of the header's findings holds the answer (hiplint.cache)."""
    from hiplint.preproc import HIP_MACROS

    suffix = os.path.splitext(header)[1].lower()
    if suffix not in C_FAMILY or not for_path(header).facts_for(header).builds_for_amd:
        return False
    full = os.path.abspath(header)
    if suffix not in HEADERS and not _included_source(full):
        return False
    return _nvidia_only(full, HIP_MACROS, 0, frozenset())


def _included_source(full: str) -> bool:
    """A source file read only through `#include` (exachem's `ccsd_t_g2s_device_functions.cu`, included by
    the kernel file): one that some file includes, that the AMD build does not compile and whose name no
    build file writes."""
    build = for_path(full)
    if not includers(full) or build.facts_for(full).amd_compiled:
        return False
    name = os.path.basename(full)
    return not ({name, os.path.splitext(name)[0]} & build.source_names)


def _nvidia_only(header: str, hip_macros: frozenset, depth: int, seen: frozenset) -> bool:
    found = includers(header)
    if not found or depth > MAX_DEPTH:
        return False
    seen = seen | {header}
    for path, at in found:
        if path in seen:
            return False  # a cycle: not settled, so not NVIDIA's
        if not _off_on_amd(path, at, hip_macros, depth, seen):
            return False
    return True


def off_on_amd(path: str, at: int) -> bool:
    """Does the AMD build never compile the include directive at byte `at` of `path`?"""
    from hiplint.preproc import HIP_MACROS

    return _off_on_amd(os.path.abspath(path), at, HIP_MACROS, 0, frozenset())


def _off_on_amd(path: str, at: int, hip_macros: frozenset, depth: int, seen: frozenset) -> bool:
    """Does the AMD build never compile the include at byte `at` of `path`?"""
    from hiplint.layout import hip_twin
    from hiplint.preproc import HIP, _Eval, excluded_when

    facts = for_path(path).facts_for(path)
    if facts.amd_compiled:
        pass  # the AMD build compiles the file: only its branches can keep the include out
    elif facts.nvidia_source or facts.unbuilt or facts.nvidia_build_file or hip_twin(path, facts.project_builds_for_amd):
        return True
    data = _read(path)
    if data is not None:
        ev = _Eval(data, frozenset(hip_macros) | facts.macros())
        if excluded_when(at, data, lambda name: ev.defined(name, HIP)):
            return True
        for m in _NVIDIA_ONLY_LIBRARY.finditer(data):
            if not excluded_when(m.start(), data, lambda name: ev.defined(name, HIP)):
                return True  # it includes a library AMD has no port of (qsim's cuStateVec headers): NVIDIA code
    if os.path.splitext(path)[1].lower() in HEADERS:
        return _nvidia_only(path, hip_macros, depth + 1, seen)
    return False


def _read_regular(path: str) -> bytes | None:
    """A regular file's bytes, or None: too large, unreadable, or not a regular file (a FIFO would block
    the walk forever; a link to one is followed and refused too)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            return None
        with open(path, "rb") as fh:
            return fh.read(MAX_BYTES + 1)
    except OSError:
        return None


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(MAX_BYTES)
    except OSError:
        return None


# C++ or CUDA syntax of a header's own: such a header is not compiled as C, whoever includes it.
# `::` only before a name: an asm statement's empty operand list (`:: "r"(lock)`) is C too.
_CXX_MARKS = re.compile(rb"\btemplate\s*<|\bnamespace\s*\w*\s*\{|\bclass\s+\w+\s*[:{]|::\s*[A-Za-z_~]|\b__(?:device|global|host)__\b|"
                        rb"\bnullptr\b|\bconstexpr\b|\b(?:static|reinterpret|const|dynamic)_cast\s*<")


_NOT_CODE = re.compile(rb"/\*.*?\*/|//[^\n]*|^[ \t]*#[^\n]*|\"(?:\\.|[^\"\\\n])*\"", re.S | re.M)


def _code_only(data: bytes) -> bytes:
    """The text without comments, strings and preprocessor lines (`#include "opal/class/x.h"` is no class)."""
    return _NOT_CODE.sub(b" ", data)


@lru_cache(maxsize=4096)
def c_only_header(header: str) -> bool:
    """Is `header` a `.h` file with no C++ or CUDA syntax of its own that only C sources (`.c`) include,
    directly or through other such headers? Then it is compiled as C, where `register` and other C-only
    spellings are valid (Open MPI's `opal_fifo.h`). A header nothing includes is not."""
    start = os.path.abspath(header)
    if not includers(start):
        return False
    # Every header that includes it, at any depth (C projects nest deeply): one visit each.
    todo, seen = [start], {start}
    while todo:
        current = todo.pop()
        if os.path.splitext(current)[1].lower() != ".h":
            return False  # a C++, CUDA or HIP source (or a header that is not plain C) includes it
        data = _read(current)
        if data is None or _CXX_MARKS.search(_code_only(data)):
            return False
        for path, _ in includers(current):
            if path.lower().endswith(".c") or path in seen:
                continue
            if len(seen) >= _C_ONLY_HEADERS:
                return False  # too many to settle: keep reporting
            seen.add(path)
            todo.append(path)
    return True


_C_ONLY_HEADERS = 20000  # headers visited per question at most


@lru_cache(maxsize=4096)
def dead_header(header: str) -> bool:
    """Is `header` compiled by nothing: no source of its project includes it, directly or through other
    headers, it sits beside sources (a directory of headers alone may be the library's public API, which
    its users include), and no build file, script or configuration names it? BladeDISC's top-k headers
    beside the kernels that include other headers of the directory, never these. Asked only in projects
    that already build for AMD; the include index must be complete (a file not read may include it)."""
    full = os.path.abspath(header)
    if os.path.splitext(full)[1].lower() not in HEADERS or not for_path(full).facts_for(full).builds_for_amd:
        return False
    root = root_of(full)
    walked = _walk(root)
    if not walked[5]:
        return False
    todo, seen = [full], {full}
    while todo:
        current = todo.pop()
        found = includers(current)
        if not found and not _beside_sources(os.path.dirname(current)):
            return False  # the top of the chain may be a public header: its users include it
        for path, _ in found:
            if os.path.splitext(path)[1].lower() not in HEADERS:
                return False  # a source includes it (or a header it includes)
            if path not in seen:
                if len(seen) >= _DEAD_HEADERS:
                    return False  # too many to settle: keep reporting
                seen.add(path)
                todo.append(path)
    texts = _setter_texts(root)
    if texts is None:
        return False  # a build file not read may name it
    names = {os.path.basename(h).encode() for h in seen}
    # a build file, script or configuration that names one may compile or install it
    if any(n in data for data in texts for n in names):
        return False
    # ... and so may one whose glob or `install(DIRECTORY ...)` reaches one (`hdrs = glob(["*.cuh"])`)
    return not any(_reached_by_pattern(h, root) for h in seen)


_GLOB_TOKEN = re.compile(rb"""["'\s(]([^"'\s()]*[*?][^"'\s()]*)""")
_INSTALLED_DIRECTORY = re.compile(rb"(?i)\bDIRECTORY\s+\"?([^\s\")]+)")
_VARIABLE = re.compile(r"\$[({][^)}]*[)}]")


@lru_cache(maxsize=4)
def _patterns(root: str) -> tuple:
    """(directory of the build file, glob patterns, installed directories) of each build file, script
    and configuration of the project."""
    out = []
    for path, data in zip(_walk(root)[4], _setter_texts(root) or ()):
        globs = {m.group(1).decode("utf-8", "replace") for m in _GLOB_TOKEN.finditer(data)}
        dirs = {m.group(1).decode("utf-8", "replace") for m in _INSTALLED_DIRECTORY.finditer(data)}
        if globs or dirs:
            out.append((os.path.dirname(path), tuple(globs), tuple(dirs)))
    return tuple(out)


def _reached_by_pattern(header: str, root: str) -> bool:
    """Does a glob of a build file at or above the header's directory match it (a variable counts as
    any directory), or does one install the header's directory or a directory above it?"""
    for where, globs, dirs in _patterns(root):
        if header != where and not header.startswith(where + os.sep):
            continue
        rel = os.path.relpath(header, where)
        for g in globs:
            g = _VARIABLE.sub("*", g).lstrip("./")
            if fnmatch.fnmatch(os.path.basename(header), g.rsplit("/", 1)[-1]) and (
                    "/" not in g or fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(rel, "*/" + g)):
                return True
        for d in dirs:
            d = os.path.normpath(os.path.join(where, _VARIABLE.sub("", d).lstrip("/")))
            if header.startswith(d + os.sep):
                return True
    return False


MAX_SETTER_BYTES = 64 * 1024 * 1024  # build files, scripts and configurations read for dead_header, in all


@lru_cache(maxsize=4)
def _setter_texts(root: str) -> tuple[bytes, ...] | None:
    """The project's build files, scripts and configurations (read once per project), or None where one
    could not be read or they hold more than MAX_SETTER_BYTES."""
    out, total = [], 0
    for path in _walk(root)[4]:
        data = _read_regular(path)
        if data is None:
            return None
        total += len(data)
        if total > MAX_SETTER_BYTES:
            return None
        out.append(data)
    return tuple(out)


_DEAD_HEADERS = 200  # headers of one chain visited at most


@lru_cache(maxsize=4096)
def _beside_sources(directory: str) -> bool:
    try:
        return any(os.path.splitext(e)[1].lower() in C_FAMILY and os.path.splitext(e)[1].lower() not in HEADERS
                   for e in os.listdir(directory))
    except OSError:
        return False
