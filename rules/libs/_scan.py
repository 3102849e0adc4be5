"""Shared analysis for the library rules (LIB) and the type rules (MEM) that look at includes and names.

One walk per file collects the `#include` lines and the identifiers that could name a library API;
every rule that asks reuses it (through `ctx.cache`). Positions are file bytes, so macro bodies and
the file itself are seen the same way.
"""
from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from hiplint.cparse import is_defined_name, iter_nodes
from hiplint.triggers import regex_literals
from hiplint.lazy import lazy_re

NAME_TYPES = frozenset({"identifier", "type_identifier", "namespace_identifier"})
_DATA_DIR = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def load_table(name: str, directory: str | None = None) -> dict:
    """A TOML knowledge table beside the rules (`rules/<family>/<name>.toml`)."""
    from hiplint import tomlcopy

    base = Path(directory) if directory else _DATA_DIR
    return tomlcopy.load(base / name)  # from its parsed copy (X.json) when that matches


@dataclass(frozen=True)
class Include:
    path: str  # the header as written, without quotes or angle brackets
    angle: bool  # <...> rather than "..."
    start: int  # file bytes of the whole directive (without its newline)
    end: int
    path_start: int  # file bytes of the path token (quotes included)
    path_end: int


_MEMBER = lazy_re(r"[A-Za-z_]\w*|")  # the first name of `std::atomic<int>`


@dataclass(frozen=True)
class Name:
    text: str
    kind: str  # identifier | type_identifier | namespace_identifier
    start: int
    end: int
    leading_namespace: bool  # a namespace_identifier that starts a qualified name (`cuda` in cuda::std::x)
    member: str = ""  # for a leading namespace, the name after it (`std` in cuda::std::x)
    in_namespace: bool = False  # for a leading namespace, written inside a `namespace ... {}` block


def includes(ctx) -> list[Include]:
    cached = ctx.cache.get("lib_includes")
    if cached is not None:
        return cached
    unit = ctx.units[0]
    out = []
    for node in iter_nodes(unit.root, {"preproc_include"}):
        path = node.child_by_field_name("path")
        if path is None:
            continue
        raw = unit.text(path).strip()
        angle = raw.startswith("<")
        inner = raw[1:-1] if len(raw) >= 2 and raw[0] in "<\"" else raw
        end = node.end_byte
        # The directive node holds its newline; keep the range on its own line.
        while end > node.start_byte and unit.data[end - 1:end] in (b"\n", b"\r"):
            end -= 1
        out.append(Include(inner.strip(), angle, node.start_byte, end, path.start_byte, path.end_byte))
    ctx.cache["lib_includes"] = out
    return out


_CONDITION_PARENTS = frozenset({"preproc_if", "preproc_elif", "preproc_ifdef", "preproc_elifdef"})


_DIRECTIVE_TEST = re.compile(rb"[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef)\b")


def _line_start(data: bytes, at: int) -> int:
    return data.rfind(b"\n", 0, at) + 1


_WRAPPING_DECLARATORS = frozenset({"pointer_declarator", "reference_declarator", "array_declarator"})


def _declares_variable(node) -> bool:
    """The name a variable declaration gives (`bool nvshmem_enabled = false;`, `int cudnn_ok;`)."""
    parent = node.parent
    if node.type != "identifier" or parent is None:
        return False
    while parent is not None and parent.type in _WRAPPING_DECLARATORS and parent.child_by_field_name("declarator") == node:
        node, parent = parent, parent.parent  # `char* nvshmem_config = getenv(...)`, `int cudnn_ids[4]`
    if parent is None:
        return False
    if parent.type == "init_declarator" and parent.child_by_field_name("declarator") == node:
        return True
    return parent.type == "declaration" and any(c == node for c in parent.children_by_field_name("declarator"))


def _in_condition(node) -> bool:
    """Is `node` part of an `#if`/`#elif` condition or an `#ifdef` name?"""
    child, parent = node, node.parent
    while parent is not None:
        if parent.type in _CONDITION_PARENTS:
            return child in (parent.child_by_field_name("condition"), parent.child_by_field_name("name"))
        if parent.type in ("translation_unit", "compound_statement", "function_definition"):
            return False
        child, parent = parent, parent.parent
    return False


def names(ctx) -> list[Name]:
    """Every identifier-like token of the file and its macro bodies, in file order, members excluded."""
    cached = ctx.cache.get("lib_names")
    if cached is not None:
        return cached
    out = []
    seen = set()
    defined: set[str] = set()
    for unit in ctx.units:
        for node in iter_nodes(unit.root, NAME_TYPES):
            parent = node.parent
            if parent is not None and parent.type in ("preproc_include", "preproc_def", "preproc_function_def") \
                    and parent.child_by_field_name("name") == node:
                continue  # the name a macro defines is not a use
            if is_defined_name(node):
                defined.add(unit.text(node))
                continue  # nor one the file declares itself (a stub or shim of the library's API)
            if _declares_variable(node):
                defined.add(unit.text(node))
                continue  # `static bool nvshmem_enabled = false;`: the project's own variable
            if _in_condition(node) or _DIRECTIVE_TEST.match(unit.data, _line_start(unit.data, node.start_byte)):
                continue  # `#if defined(NVSHMEM_COMMS)`: a test of a switch, not a use of the library
            leading = False
            if node.type == "namespace_identifier" and parent is not None and parent.type == "qualified_identifier":
                grand = parent.parent
                leading = not (grand is not None and grand.type == "qualified_identifier"
                               and grand.child_by_field_name("name") == parent)
            start, end = unit.file_range(node)
            if (start, end) in seen:
                continue
            seen.add((start, end))
            if leading:
                rest = parent.child_by_field_name("name")
                member = _MEMBER.match(unit.text(rest)).group(0) if rest is not None else ""
                out.append(Name(unit.text(node), node.type, start, end, True, member,
                                ctx.enclosing(node, ("namespace_definition",)) is not None))
            else:
                out.append(Name(unit.text(node), node.type, start, end, False))
    # A name the file declares itself is its own wherever the file uses it (CuPy's NVTX stub defines
    # `nvtxMessageValue_t` and uses it in the next struct).
    out = [n for n in out if n.text not in defined or n.leading_namespace]
    out.sort(key=lambda n: n.start)
    ctx.cache["lib_names"] = out
    return out


def span(item) -> tuple[int, int]:
    """Where to report an Include (the directive up to its path, not a trailing comment) or a Name."""
    if isinstance(item, Include):
        return item.start, item.path_end
    return item.start, item.end


def is_last_unit(ctx) -> bool:
    return ctx.unit is ctx.units[-1]


NO_EXTENSION = "!noext"  # a header pattern suffix: only paths whose file name has no extension


def header_matches(include: Include, patterns, here: str | None = None) -> bool:
    """`patterns` are globs on the path as written: "cudnn.h", "nvtx3/*", "<cuda/*" (angle form only),
    "=mma.h" (that path only: CUTLASS and CuTe have their own `arch/mma.h`). `here`: the directory of
    the including file, where a quoted include of the project's own header is found."""
    for p in patterns:
        if p.endswith(NO_EXTENSION):
            # libcu++'s headers have no extension (`<cuda/atomic>`, `<cuda/std/span>`): a `<cuda/x.cuh>`
            # is a project's own `cuda/` directory (ginkgo's backend).
            p = p[:-len(NO_EXTENSION)]
            if "." in include.path.rsplit("/", 1)[-1]:
                continue
        angle_only = p.startswith("<")
        exact = p.startswith("=")
        pat = p[1:] if angle_only or exact else p
        if angle_only and not include.angle:
            continue
        wildcard = any(c in pat for c in "*?[")
        if wildcard and not include.angle and here is not None and os.path.isfile(os.path.join(here, include.path)):
            continue  # the project's own `nvshmem_utils.h` beside the file, not the library's
        if fnmatch.fnmatchcase(include.path, pat):
            return True
        # A bare file name also matches in a subdirectory ("nccl.h" in <nccl/nccl.h> or "third_party/nccl.h");
        # a glob does not: <gromacs/gpu_utils/nvshmem_utils.h> is a project's header, and the library's
        # own subdirectories are patterns of their own ("host/nvshmem_*.h").
        if not exact and not wildcard and "/" not in pat \
                and fnmatch.fnmatchcase(include.path.rsplit("/", 1)[-1], pat):
            if here is not None and "/" in include.path and _project_header(here, include.path):
                continue  # mscclpp's own <mscclpp/ext/nccl/nccl.h>, found in the project: not NCCL's
            return True
    return False


def _project_header(here: str, path: str) -> bool:
    """Does the project (one that builds for AMD: hiplint.amdbuild) hold the header `path` names?"""
    from hiplint.amdbuild import project_include
    return project_include(os.path.join(here, "_"), path) is not None


def unguarded(ctx, start: int) -> bool:
    """Not inside an `#if` branch that only builds for AMD or only for NVIDIA beside a HIP branch."""
    return ctx.platform_kind(start) is None


@dataclass(frozen=True)
class Library:
    """A whole library that needs a manual port: how to recognise it in a file."""

    key: str
    title: str
    headers: tuple[str, ...] = ()
    name_pattern: str = ""  # regex on identifiers (full match)
    namespaces: tuple[str, ...] = ()  # leading namespaces (`cutlass` in cutlass::gemm::...)
    # Names after a namespace that are surely the library's (`std`, `atomic` after `cuda::`). When
    # given, any other member counts only outside the project's own namespaces, where a `cuda::` can
    # be the project's (RAJA::cuda, written `cuda::IndexGlobal` inside `namespace RAJA`).
    members: frozenset[str] = frozenset()

    def triggers(self) -> tuple[str, ...]:
        """Strings one of which a file that uses the library contains (its rules run only there):
        the literal part of each header glob, each namespace, the literal starts of the names regex.
        Empty when the names regex has no literal start (then the rules run on every file)."""
        out = [max(re.split(r"[*?\[\]]", h.removesuffix(NO_EXTENSION).lstrip("<=")), key=len) for h in self.headers]
        # A leading namespace is followed by `::` (a space before it is the only spelling seen besides).
        out.extend(f"{ns}{sep}::" for ns in self.namespaces for sep in ("", " "))
        if self.name_pattern:
            starts = regex_literals(self.name_pattern)
            if starts is None:
                return ()
            out.extend(starts)
        return tuple(sorted(set(out)))

    @staticmethod
    def from_table(key: str, table: dict) -> "Library":
        return Library(key, table["title"], tuple(table.get("headers", ())), table.get("names", ""),
                       tuple(table.get("namespaces", ())), frozenset(table.get("namespace_members", ())))


def _own_namespaces(ctx, lib: Library) -> frozenset:
    """The library's namespace names the file opens itself (`namespace cuda {` in a test): there a
    `cuda::value` is the file's own unless the member is surely the library's (`cuda::std`)."""
    key = ("own-namespaces", lib.namespaces)
    if key not in ctx.cache:
        data = ctx.source.data
        ctx.cache[key] = frozenset(ns for ns in lib.namespaces if re.search(
            rb"\bnamespace\s+(?:\w+\s*::\s*)*" + re.escape(ns.encode()) + rb"\s*(?:::\s*\w+\s*)*\{", data))
    return ctx.cache[key]


def _own_members(ctx, lib: Library) -> frozenset:
    """`(ns, member)` pairs the file opens as a namespace itself (HPX's `namespace hpx::cuda::experimental
    {`): there `cuda::experimental::f` is the file's own, although libcu++ has a `cuda::experimental` too."""
    key = ("own-members", lib.namespaces)
    if key not in ctx.cache:
        data = ctx.source.data
        found = set()
        for ns in lib.namespaces:
            e = re.escape(ns.encode())
            for m in re.finditer(rb"\bnamespace\s+(?:\w+\s*::\s*)*" + e + rb"\s*::\s*(\w+)", data):
                found.add((ns, m.group(1).decode()))
            for m in re.finditer(rb"\bnamespace\s+(?:\w+\s*::\s*)*" + e + rb"\s*\{\s*(?:inline\s+)?namespace\s+(\w+)",
                                 data):
                found.add((ns, m.group(1).decode()))
        ctx.cache[key] = frozenset(found)
    return ctx.cache[key]


_USING_NAMESPACE = re.compile(rb"\busing\s+namespace\s+(?!std\b|cuda\b|thrust\b|cub\b)(?:::)?\w+")


def _uses_project_namespace(ctx) -> bool:
    """Does the file bring another namespace in (`using namespace tim;`)? Then `cuda::set_device` may be
    that namespace's own `cuda` (timemory's `tim::cuda`), as inside a namespace block."""
    key = "using-project-namespace"
    if key not in ctx.cache:
        ctx.cache[key] = _USING_NAMESPACE.search(ctx.source.data) is not None
    return ctx.cache[key]


def _namespace_hit(ctx, n: Name, lib: Library) -> bool:
    if not (n.leading_namespace and n.text in lib.namespaces):
        return False
    if lib.members and n.member not in lib.members and (n.in_namespace or n.text in _own_namespaces(ctx, lib)
                                                         or _uses_project_namespace(ctx)):
        return False
    if n.member and (n.text, n.member) in _own_members(ctx, lib):
        return False  # the file's own `cuda::experimental` namespace, opened in this file
    return True


def uses(ctx, lib: Library) -> list[Name]:
    """Every name of the file that is `lib`'s (by its names regex or a leading namespace), in order."""
    pattern = re.compile(lib.name_pattern) if lib.name_pattern else None
    return [n for n in names(ctx)
            if (pattern is not None and n.kind != "namespace_identifier" and pattern.fullmatch(n.text))
            or _namespace_hit(ctx, n, lib)]


def relate_uses(ctx, finding, lib: Library, what: str) -> None:
    """A finding that stands for a file's use of `lib` as a whole lists the library's other includes
    and its names in the file as related locations (those in branches the rule skips are left out)."""
    if finding is None:
        return
    found = []
    here = os.path.dirname(ctx.fs_path) if ctx.fs_path else None
    for inc in includes(ctx):
        if lib.headers and header_matches(inc, lib.headers, here):
            loc = ctx.related_range(*span(inc), f"<{inc.path}>: {what}")
            if loc is not None:
                found.append(loc)
    for n in uses(ctx, lib):
        loc = ctx.related_range(n.start, n.end, f"`{n.text}`: {what}")
        if loc is not None:
            found.append(loc)
    finding.add_related(*found)


def first_use(ctx, lib: Library, prefer=frozenset()):
    """Where a file first uses `lib`: ("include", Include) or ("name", Name), or None.

    An include is the place to report; only a file without one (the header comes through another
    header) is reported at its first name. A file whose only includes sit in platform branches has
    been ported already: nothing to report.
    """
    here = os.path.dirname(ctx.fs_path) if ctx.fs_path else None
    incs = [i for i in includes(ctx) if header_matches(i, lib.headers, here)]
    if prefer:  # e.g. a header the AMD port does not support: the include worth reporting
        incs.sort(key=lambda i: i.path not in prefer)
    if incs:
        for inc in incs:
            if unguarded(ctx, inc.start):
                return "include", inc
        return None
    pattern = re.compile(lib.name_pattern) if lib.name_pattern else None
    for n in names(ctx):
        hit = (pattern is not None and n.kind != "namespace_identifier" and pattern.fullmatch(n.text)) or \
            _namespace_hit(ctx, n, lib)
        if hit and unguarded(ctx, n.start):
            return "name", n
    return None
