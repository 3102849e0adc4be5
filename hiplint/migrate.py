"""`hiplint migrate`: write the HIP version of a CUDA tree.

Per C-family source file: apply every safe fix of the enabled rules (they are written for CUDA code),
then rename CUDA API names to HIP on the syntax tree (identifiers, type and namespace names, `#include`
paths, macro bodies through their byte mappings) with the project's table (`hiplint.renames`). Names in
comments and string literals are never touched, nor names outside the table, nor code in `#if`
branches that only compile for NVIDIA. A rewrite that would add a parse error is dropped (the file is
copied unchanged and the summary says so). CMake files and Makefiles are ported to a HIP-only build
(`hiplint.buildport`); other build files are copied and listed in the checklist; other files are copied. What is left for hand work (findings, including API001/API002 for names without a HIP
equivalent) goes into the checklist beside the output.

Safety: the source tree is only written with `in_place`, after a full copy to a sibling of its resolved
path, `<parent>/<name>.hiplint-backup/` (`-2`, `-3`... when earlier backups exist: those are kept, the
first holds the original), checked file by file before anything is rewritten. hiplint's backups and
caches are never walked. `--out` refuses a non-empty directory unless forced. Every write is atomic
(temporary file + rename).
"""
from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import stat
from collections import Counter
from dataclasses import dataclass, field

from hiplint import amdbuild, buildport
from hiplint.cparse import error_ranges, iter_nodes, new_parser, parse_file
from hiplint.fix import fix_bytes, is_read_only, replace_file, write_atomic
from hiplint.languages import is_makefile_name, language_of
from hiplint.model import Applicability, Finding, Fix
from hiplint.headers import platform_map
from hiplint.preproc import HIP_MACROS
from hiplint.renames import RenameTable, declared_names, load_table

UNKNOWN_NAME_CODE = "API003"
PROJECT_DECLARED_KEY = "migrate.declared_names"  # read by rules/api/unknown_name.py

CHECKLIST_NAME = "HIPLINT_MIGRATION.md"
BACKUP_SUFFIX = ".hiplint-backup"
BACKUP_RE = re.compile(re.escape(BACKUP_SUFFIX) + r"(-\d+)?(\.partial)?$")
MAX_SOURCE_BYTES = 16 * 1024 * 1024  # larger "sources" are generated data: copied as they are
VCS_DIRS = frozenset({".git", ".hg", ".svn"})
# nvcc includes cuda_runtime.h into every .cu file by itself; the HIP version must say it.
IMPLICIT_RUNTIME_EXTENSIONS = frozenset({".cu", ".cuh"})
HIP_RUNTIME_HEADER = "hip/hip_runtime.h"
BUILD_FILE_NAMES = frozenset({"CMakeLists.txt", "Makefile", "makefile", "GNUmakefile", "setup.py", "meson.build",
                              "configure.ac", "BUILD", "BUILD.bazel"})
BUILD_FILE_EXTENSIONS = frozenset({".cmake", ".mk"})
RENAMED_NODE_TYPES = frozenset({"identifier", "type_identifier", "namespace_identifier"})
LAUNCH_STYLES = ("chevron", "ggl")


class MigrateError(Exception):
    """A problem with the request (paths, options): the CLI prints it and exits 2."""


@dataclass
class Rewrite:
    data: bytes
    renames: Counter = field(default_factory=Counter)  # "cudaMalloc -> hipMalloc" -> count
    launches: int = 0  # <<<>>> launches rewritten to hipLaunchKernelGGL
    inserted_lines: list[int] = field(default_factory=list)  # 1-based output lines added before input lines
    notes: list[str] = field(default_factory=list)


@dataclass
class FileOutcome:
    src: str  # relative path in the source tree
    dst: str  # relative path in the output tree ('' when skipped)
    action: str  # changed | unchanged | copied | skipped
    reason: str = ""
    renames: Counter = field(default_factory=Counter)
    fixes: int = 0
    applied: list[Finding] = field(default_factory=list)  # the findings whose fixes were applied
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    build_file: bool = False
    ported: str = ""  # a build file ported to HIP: what changed
    manual: list = field(default_factory=list)  # a build file's (line, what to do by hand)
    unapplied: Counter = field(default_factory=Counter)  # why a fix the migration tried was not applied -> count
    error: str = ""  # it could not be written: the migration is incomplete (exit 2)


@dataclass
class MigrationResult:
    src: str
    dst: str
    files: list[FileOutcome] = field(default_factory=list)
    backup: str = ""
    checklist: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        return [f"{os.path.join(self.src, f.src)}: {f.error}" for f in self.files if f.error]

    def count(self, action: str) -> int:
        return sum(1 for f in self.files if f.action == action)

    unsafe_fixes: bool = False  # the run applied unsafe fixes too

    @property
    def findings(self) -> list[Finding]:
        return sorted((x for f in self.files for x in f.findings), key=Finding.sort_key)

    @property
    def unapplied(self) -> Counter:
        total = Counter()
        for f in self.files:
            total.update(f.unapplied)
        return total

    def left_line(self) -> str:
        """What is left, and why: a manual step, an unsafe fix not asked for, a fix that could not be made."""
        left = self.findings
        level = Counter(f.fix.applicability for f in left if f.fix is not None)
        safe = level[Applicability.SAFE]  # only with --no-fix: every other safe fix was applied or is below
        unsafe = 0 if self.unsafe_fixes else level[Applicability.UNSAFE]
        not_applied = sum(self.unapplied.values())
        manual = len(left) - safe - unsafe - not_applied
        parts = [f"{manual} need a manual step"]
        if safe:
            parts.append(f"{safe} with safe fixes (migrate again without --no-fix)")
        if unsafe:
            parts.append(f"{unsafe} with only unsafe fixes (review them: migrate again with --unsafe-fixes)")
        if not_applied:
            parts.append(f"{not_applied} whose fix could not be applied, listed below")
        return (f"{len(left)} finding(s) left ({', '.join(parts)}); "
                f"see {self.checklist or CHECKLIST_NAME}.")

    def summary(self) -> str:
        lines = [f"Migrated {len(self.files)} file(s) from {self.src} to {self.dst}: "
                 f"{self.count('changed')} changed, {self.count('unchanged')} unchanged, "
                 f"{self.count('copied')} copied, {self.count('skipped')} skipped."]
        for action in ("unchanged", "copied", "skipped"):
            reasons = Counter(f.reason for f in self.files if f.action == action and f.reason)
            for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
                lines.append(f"  {action} {n}: {reason}")
        renames = sum(sum(f.renames.values()) for f in self.files)
        fixes = sum(f.fixes for f in self.files)
        kind = "safe and unsafe" if self.unsafe_fixes else "safe"
        lines.append(f"  {renames} name(s) renamed, {fixes} {kind} fix(es) applied.")
        lines.append("  " + self.left_line())
        for reason, n in sorted(self.unapplied.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"    {n} fix(es) not applied: {reason}")
        if self.backup:
            lines.append(f"  original tree backed up in {self.backup}")
        return "\n".join(lines)


# Rewriting one source ------------------------------------------------------------------------

def _names_namespace(node) -> bool:
    """A namespace name: `cub::X`, `namespace c = cub;`, `using namespace cub;`."""
    if node.type == "namespace_identifier":
        return True
    parent = node.parent
    return (node.type == "identifier" and parent is not None and parent.type == "using_declaration"
            and any(c.type == "namespace" for c in parent.children))


def _include_path(node, data: bytes) -> tuple[str, str, str] | None:
    """(open, path, close) of an #include's path node, or None for computed includes."""
    text = data[node.start_byte:node.end_byte].decode("utf-8", "replace")
    if len(text) >= 2 and text[0] == "<" and text[-1] == ">":
        return "<", text[1:-1], ">"
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        return '"', text[1:-1], '"'
    return None


def _launch_edits(call, data: bytes) -> list[tuple[int, int, str]] | None:
    """Edits turning `k<<<g, b, s, st>>>(args)` into `hipLaunchKernelGGL(k, g, b, s, st, args)`.

    Small edits around the pieces, so renames inside the pieces stay separate edits."""
    fn = call.child_by_field_name("function")
    args = call.child_by_field_name("arguments")
    config = next((c for c in call.children if c.type == "kernel_call_syntax"), None)
    if fn is None or args is None or config is None:
        return None
    parts = [c for c in config.named_children if c.type != "comment"]
    if not 2 <= len(parts) <= 4:
        return None
    edits = []
    name_open, name_close = "", ""
    if fn.type == "template_function" or b"<" in data[fn.start_byte:fn.end_byte]:
        # A template argument list holds commas: the kernel name must be one macro argument.
        name_open, name_close = "HIP_KERNEL_NAME(", ")"
    edits.append((fn.start_byte, fn.start_byte, "hipLaunchKernelGGL(" + name_open))
    edits.append((fn.end_byte, parts[0].start_byte, name_close + ", "))
    defaults = ", 0" * (4 - len(parts))
    real_args = [a for a in args.named_children if a.type != "comment"]
    if real_args:
        edits.append((parts[-1].end_byte, real_args[0].start_byte, defaults + ", "))
    else:
        edits.append((parts[-1].end_byte, args.end_byte, defaults + ")"))
    return edits


def _runtime_insert_point(root, data: bytes) -> int:
    """Before the first top-level #include, else before the first top-level code."""
    first_code = None
    for child in root.children:
        if child.type == "preproc_include":
            return child.start_byte
        if child.type != "comment" and first_code is None:
            first_code = child.start_byte
    return first_code if first_code is not None else len(data)


def rewrite_source(data: bytes, path: str, table: RenameTable | None = None, launch_syntax: str = "chevron",
                   hip_macros=None, hip_extension: bool = False, fs_path: str | None = None) -> Rewrite:
    """The file renamed for HIP. NVIDIA-only branches stay CUDA; they are found as the linter finds
    them, with the project's own switches from the file and (given `fs_path`) its headers."""
    table = table or load_table()
    parser = new_parser()
    units = parse_file(parser, data)
    root = units[0].root
    platform = platform_map(root, data, HIP_MACROS if hip_macros is None else hip_macros, None, fs_path)
    edits: list[tuple[int, int, str]] = []
    out = Rewrite(data)

    def nvidia_only(byte: int) -> bool:
        return platform.kind_at(byte) == "nvidia"

    for unit in units:
        for node in iter_nodes(unit.root, RENAMED_NODE_TYPES):
            name = unit.text(node)
            new = table.namespaces.get(name) if _names_namespace(node) else table.names.get(name)
            if new is None:
                continue
            start, end = unit.file_range(node)
            if start < 0 or end > len(data) or data[start:end].decode("utf-8", "replace") != name:
                continue  # a node of the macro wrapper, or a name spliced across a line continuation
            if nvidia_only(start):
                continue
            edits.append((start, end, new))
            out.renames[f"{name} -> {new}"] += 1
        if unit.is_macro or launch_syntax != "ggl":
            continue
        for call in iter_nodes(unit.root, {"call_expression"}):
            if any(c.type == "kernel_call_syntax" for c in call.children) and not nvidia_only(call.start_byte):
                launch = _launch_edits(call, data)
                if launch is None:
                    line = data.count(b"\n", 0, call.start_byte) + 1
                    out.notes.append(f"{path}:{line}: kernel launch kept as <<<>>>: unusual launch configuration")
                    continue
                edits.extend(launch)
                out.launches += 1

    has_runtime = False
    for inc in iter_nodes(root, {"preproc_include"}):
        node = inc.child_by_field_name("path")
        parsed = _include_path(node, data) if node is not None else None
        if parsed is None:
            continue
        opener, header, closer = parsed
        if header == HIP_RUNTIME_HEADER:
            has_runtime = True
        new = table.headers.get(header)
        if new is not None and opener == '"' and fs_path is not None and \
                os.path.isfile(os.path.join(os.path.dirname(os.path.abspath(fs_path)), header)):
            # `#include "cuda.h"` beside the project's own util/cuda/cuda.h (Rodinia's b+tree): a quoted
            # include is looked up beside the file first, so it names that header, not the toolkit's.
            new = None
        if new is None and hip_extension and opener == '"' and header.endswith(".cu"):
            new = header[:-3] + ".hip"  # `#include "kernel.cu"` follows the file's new name
        if new is None or nvidia_only(inc.start_byte):
            continue
        if new == HIP_RUNTIME_HEADER:
            has_runtime = True
        edits.append((node.start_byte, node.end_byte, f"{opener}{new}{closer}"))
        out.renames[f"<{header}> -> <{new}>"] += 1

    ext = os.path.splitext(path)[1].lower()
    if ext in IMPLICIT_RUNTIME_EXTENSIONS and not has_runtime:
        at = _runtime_insert_point(root, data)
        nl = "\r\n" if b"\r\n" in data else "\n"
        edits.append((at, at, f"#include <{HIP_RUNTIME_HEADER}>{nl}"))
        out.inserted_lines.append(data.count(b"\n", 0, at) + 1)

    edits.sort(key=lambda e: (e[0], e[1]))
    pieces, pos = [], 0
    for start, end, text in edits:
        if start < pos:  # overlapping edits: keep the first; the name stays for the checklist
            out.notes.append(f"{path}: overlapping rewrite at byte {start} skipped")
            continue
        pieces.append(data[pos:start])
        pieces.append(text.encode("utf-8"))
        pos = end
    pieces.append(data[pos:])
    out.data = b"".join(pieces)
    return out


def parse_error_count(data: bytes) -> int:
    return len(error_ranges(new_parser().parse(data).root_node))


PROTECTED_NODE_TYPES = frozenset({"comment", "string_literal", "raw_string_literal", "char_literal"})


def protected_texts(data: bytes) -> list[bytes]:
    """Every comment and string literal, in the file and in macro bodies (not #include paths), in order:
    a migration must leave this list exactly as it was."""
    out = []
    for unit in parse_file(new_parser(), data):
        for node in iter_nodes(unit.root, PROTECTED_NODE_TYPES):
            if node.parent is not None and node.parent.type == "preproc_include":
                continue
            out.append(unit.data[node.start_byte:node.end_byte])
    return out


# Files ---------------------------------------------------------------------------------------

def is_build_file(rel: str) -> bool:
    name = os.path.basename(rel)
    return name in BUILD_FILE_NAMES or os.path.splitext(name)[1] in BUILD_FILE_EXTENSIONS or is_makefile_name(name)


def output_name(rel: str, hip_extension: bool) -> str:
    root, ext = os.path.splitext(rel)
    if hip_extension and ext == ".cu":
        return root + ".hip"
    return rel


def _write_file(path: str, data: bytes, mode: int) -> None:
    """Atomic: temporary file beside the target, then rename over it."""
    if os.path.lexists(path) and not os.path.islink(path):
        write_atomic(path, data)
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    replace_file(path, data, mode)


def _copy_file(src: str, dst: str) -> None:
    if os.path.islink(src):
        if os.path.lexists(dst):
            os.unlink(dst)
        os.makedirs(os.path.dirname(os.path.abspath(dst)), exist_ok=True)
        os.symlink(os.readlink(src), dst)
        return
    with open(src, "rb") as fh:
        data = fh.read()
    _write_file(dst, data, stat.S_IMODE(os.stat(src).st_mode))


def _skipped_dir(name: str, path: str) -> bool:
    """Directories a migration never walks, copies or backs up into: version control, hiplint's own
    backups (`X.hiplint-backup`, `X.hiplint-backup-N`, a `.partial` one) and scan caches."""
    if name in VCS_DIRS or BACKUP_RE.search(name):
        return True
    from hiplint.cache import CACHE_DIR_NAME, is_cache_dir
    return name == CACHE_DIR_NAME or is_cache_dir(path)


def _walk(src: str, skipped: list[str] | None = None):
    """Relative paths of every file under src, sorted, without version-control metadata, hiplint's
    backups and caches. Symbolic links to directories count as files (they are copied as links,
    never followed). Directories left out are added to `skipped` (relative paths)."""
    for dirpath, dirnames, filenames in os.walk(src):
        keep, links = [], []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if os.path.islink(full):
                links.append(d)
            elif _skipped_dir(d, full):
                if skipped is not None and d not in VCS_DIRS:
                    skipped.append(os.path.relpath(full, src))
            else:
                keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames + links):
            yield os.path.relpath(os.path.join(dirpath, name), src)


def _walk_dirs(src: str):
    """Relative paths of every directory under src that _walk enters (so empty ones too)."""
    for dirpath, dirnames, _ in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))
                             and not _skipped_dir(d, os.path.join(dirpath, d)))
        for d in dirnames:
            yield os.path.relpath(os.path.join(dirpath, d), src)


def _tree_listing(root: str) -> dict[str, tuple]:
    """relative path -> what a backup must reproduce: ("dir",), ("link", target) or ("file", size, sha256)."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            if os.path.islink(full):
                out[rel] = ("link", os.readlink(full))
            elif os.path.isdir(full):
                out[rel] = ("dir",)
            elif os.path.isfile(full):
                h = hashlib.sha256()
                with open(full, "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 20), b""):
                        h.update(block)
                out[rel] = ("file", os.path.getsize(full), h.hexdigest())
            else:
                out[rel] = ("other",)
    return out


def _compare_trees(original: str, copy: str) -> str:
    """'' when `copy` holds every directory, link and file of `original` with the same bytes."""
    a, b = _tree_listing(original), _tree_listing(copy)
    missing = sorted(set(a) - set(b))
    if missing:
        return f"{len(missing)} entries missing, e.g. {missing[0]}"
    differ = sorted(k for k in a if a[k] != b[k])
    if differ:
        return f"{len(differ)} entries differ, e.g. {differ[0]}"
    files = sum(1 for v in a.values() if v[0] == "file")
    if files != sum(1 for v in b.values() if v[0] == "file") or len(a) != len(b):
        return "the copy holds more entries than the original"
    return ""


def _shift(findings: list[Finding], inserted: list[int], path: str) -> list[Finding]:
    import dataclasses

    def moved(line: int) -> int:
        return line + sum(1 for i in inserted if i <= line)

    for f in findings:
        n = sum(1 for line in inserted if line <= f.line)
        f.line += n
        f.end_line += n
        # Related locations are in the same file: they move with the lines inserted above them.
        f.related = tuple(dataclasses.replace(r, path=path, line=moved(r.line), end_line=r.end_line + moved(r.line) - r.line)
                          if r.path == f.path else r for r in f.related)
        f.path = path
    return findings


@dataclass
class MigrateOptions:
    out: str | None = None
    in_place: bool = False
    force: bool = False
    hip_extension: bool = False
    launch_syntax: str = "chevron"
    apply_fixes: bool = True
    unsafe_fixes: bool = False  # apply the unsafe fixes too (review the diff)
    report_unknown_names: bool = True  # API003, with the names the whole tree declares


class Migrator:
    def __init__(self, settings, rule_classes, options: MigrateOptions, table: RenameTable | None = None):
        self.settings = settings
        self.options = options
        self.table = table or load_table().for_rocm(settings.rocm_version)
        self.rule_classes = list(rule_classes)
        self.linter = None  # built in run(), once the names the project declares are known
        self.progress = None  # called with (files done, files in all) after each file
        self.facts = buildport.TreeFacts()  # what build-file ports need from the tree (set by run())

    def _build_linter(self, src: str) -> None:
        """Every selected rule, plus API003 (names the table does not know), which needs to know
        the names the whole tree declares: the user's `cudaHelper_t` in a header is not an API."""
        from hiplint.engine import Linter
        from hiplint.registry import load_registry
        declared = set()
        parser = new_parser()
        for rel in _walk(src):
            path = os.path.join(src, rel)
            if language_of(rel, self.settings.include) != "cuda" or os.path.islink(path):
                continue
            try:
                with open(path, "rb") as fh:
                    data = fh.read(MAX_SOURCE_BYTES + 1)
            except OSError:
                continue
            if b"\0" in data[:8192] or len(data) > MAX_SOURCE_BYTES:
                continue
            try:
                declared |= declared_names(parse_file(parser, data))
            except RecursionError:
                continue
        extra = dict(self.settings.extra)
        extra[PROJECT_DECLARED_KEY] = frozenset(declared)
        self.settings = self.settings.with_overrides(extra=extra)
        rules = list(self.rule_classes)
        unknown = load_registry().by_code(UNKNOWN_NAME_CODE)
        if unknown is not None and unknown not in rules and self.options.report_unknown_names:
            rules.append(unknown)
        self.linter = Linter(self.settings, rules)

    # One file ---------------------------------------------------------------------------------
    @property
    def threshold(self) -> Applicability:
        return Applicability.UNSAFE if self.options.unsafe_fixes else Applicability.SAFE

    def migrate_source(self, rel: str, data: bytes, dst_rel: str, fs_path: str | None = None) -> tuple[bytes, FileOutcome]:
        outcome = FileOutcome(rel, dst_rel, "unchanged")
        # Reported under the new name; the project headers it includes are found from the original.
        lint = lambda d: self.linter.lint_bytes(dst_rel, d, "cuda", fs_path=fs_path).findings  # noqa: E731
        base = data
        fixed = None
        if self.options.apply_fixes:
            fixed = fix_bytes(lint, data, "cuda", self.threshold)
            outcome.notes.extend(fixed.dropped)
            base = fixed.data
            outcome.fixes = len(fixed.applied)
            outcome.applied = list(fixed.applied)
            remaining = fixed.remaining
        else:
            remaining = lint(data)
        rw = rewrite_source(base, rel, self.table, self.options.launch_syntax, self.settings.hip_macros,
                            self.options.hip_extension, fs_path)
        outcome.notes.extend(rw.notes)
        if parse_error_count(rw.data) > parse_error_count(base):
            # The fixes stay (they never add a parse error and keep the file valid CUDA); the names do not.
            outcome.notes.append(f"{rel}: rename skipped: the rewrite would add a parse error; "
                                 + ("written with its fixes only" if base != data else "copied as it was"))
            outcome.action, outcome.reason = "copied", "the rewrite would add a parse error"
            if base != data:
                outcome.action = "changed"
            outcome.findings = self._left(_shift(remaining, [], dst_rel), fixed, outcome)
            return base, outcome
        outcome.renames = rw.renames
        outcome.findings = _shift(remaining, rw.inserted_lines, dst_rel)
        final = rw.data
        if self.options.apply_fixes:
            # Some fixes only apply to the HIP spelling (HIP_SYMBOL around a hipMemcpyToSymbol
            # symbol): one more pass after the renames, so that a second migration changes nothing.
            again = fix_bytes(lint, rw.data, "cuda", self.threshold)
            if again.applied and parse_error_count(again.data) <= parse_error_count(rw.data):
                final = again.data
                outcome.fixes += len(again.applied)
                outcome.applied += again.applied
                outcome.notes.extend(again.dropped)
                outcome.findings = self._left(again.remaining, again, outcome)
            else:
                outcome.findings = self._left(outcome.findings, fixed, outcome)
        if final != data:
            outcome.action = "changed"
        return final, outcome

    def _left(self, findings: list[Finding], fixed, outcome: FileOutcome) -> list[Finding]:
        """What is left, each fix that the migration could have applied but did not marked as such:
        its fix becomes a suggestion (the checklist then promises no command that would not make it),
        and the reason is counted for the summary."""
        if fixed is None:
            return findings
        for f in findings:
            if f.fix is None or f.fix.applicability < self.threshold:
                continue
            reason = fixed.why_left(f) or "not applied"
            outcome.unapplied[reason] += 1
            f.fix = Fix(f.fix.edits, Applicability.DISPLAY_ONLY, f"{f.fix.title} (not applied: {reason})")
        return findings

    # The tree ---------------------------------------------------------------------------------
    def run(self, src: str) -> MigrationResult:
        opts = self.options
        src = os.path.normpath(src)
        if not os.path.isdir(src):
            raise MigrateError(f"{src}: not a directory")
        if opts.in_place == bool(opts.out):
            raise MigrateError("give exactly one of --out DIR or --in-place")
        if opts.launch_syntax not in LAUNCH_STYLES:
            raise MigrateError(f"--launch-syntax must be one of {', '.join(LAUNCH_STYLES)}")
        result = MigrationResult(src, src if opts.in_place else os.path.normpath(opts.out))
        result.unsafe_fixes = opts.unsafe_fixes and opts.apply_fixes
        dst = result.dst
        if opts.in_place:
            result.backup = self._backup(src, result)
        else:
            real_src, real_dst = os.path.realpath(src), os.path.realpath(dst)
            if os.path.commonpath([real_src, real_dst]) in (real_src, real_dst):
                raise MigrateError(f"--out {dst} overlaps the source tree {src}; choose a directory outside it")
            if os.path.exists(dst) and not os.path.isdir(dst):
                raise MigrateError(f"--out {dst}: exists and is not a directory")
            if os.path.isdir(dst) and os.listdir(dst) and not opts.force:
                raise MigrateError(f"--out {dst}: directory is not empty (use --force to write into it)")
            os.makedirs(dst, exist_ok=True)
            for rel in _walk_dirs(src):  # empty directories too: a build may expect them
                os.makedirs(os.path.join(dst, rel), exist_ok=True)
        self._build_linter(src)
        left_out: list[str] = []
        todo = list(_walk(src, left_out))
        self.facts = self._tree_facts(src, todo)
        for i, rel in enumerate(todo):
            result.files.append(self._one(src, dst, rel))
            if self.progress is not None:
                self.progress(i + 1, len(todo))
        for rel in left_out:
            result.notes.append(f"{os.path.join(src, rel)}: not migrated: hiplint's own backup or cache directory")
        result.checklist = os.path.join(dst, CHECKLIST_NAME)
        text = render_checklist(result, self.settings)
        _write_file(result.checklist, text.encode("utf-8"), 0o644)
        for f in result.files:
            result.notes.extend(f.notes)
        return result

    def _tree_facts(self, src: str, rels: list[str]) -> buildport.TreeFacts:
        """What the build files' ports need from the whole tree: the sources renamed `.cu` -> `.hip`, and
        the ROCm packages for every CUDA library the CMake files link (found where the toolkit was)."""
        renamed, packages, toolkit, nvidia_only = set(), [], False, set()
        for rel in rels:
            lang = language_of(rel, self.settings.include)
            if lang == "cuda" and amdbuild.facts_for(os.path.join(src, rel)).nvidia_source:
                nvidia_only.add(rel.replace(os.sep, "/"))
            if lang == "cuda" and output_name(rel, self.options.hip_extension) != rel:
                renamed.add(rel.replace(os.sep, "/"))
            elif lang == buildport.CMAKE_LANGUAGE and not os.path.islink(os.path.join(src, rel)):
                try:
                    with open(os.path.join(src, rel), "rb") as fh:
                        data = fh.read(MAX_SOURCE_BYTES + 1)
                    if len(data) <= MAX_SOURCE_BYTES and b"\0" not in data[:8192]:
                        packages.append((os.path.dirname(rel).replace(os.sep, "/"), frozenset(buildport.cmake_packages(data))))
                        toolkit = toolkit or buildport.finds_toolkit(data)
                except (OSError, RecursionError):
                    continue
        return buildport.TreeFacts(frozenset(renamed), self.options.hip_extension, tuple(packages), toolkit,
                                   frozenset(nvidia_only))

    def _backup(self, src: str, result: MigrationResult) -> str:
        """Copy the whole tree to a new sibling of its resolved path, `<parent>/<name>.hiplint-backup`
        (`-2`, `-3`... when earlier ones exist: they are kept, the first holds the original), and check
        the copy file by file before anything is rewritten. Never inside the tree it backs up."""
        real = os.path.realpath(src)
        parent, name = os.path.dirname(real), os.path.basename(real)
        if not name or parent == real:
            raise MigrateError(f"{src}: cannot back up {real} outside itself (it has no parent directory); "
                               f"migrate a copy with --out instead")
        backup = os.path.join(parent, name + BACKUP_SUFFIX)
        n = 1
        while os.path.lexists(backup) or os.path.lexists(backup + ".partial"):
            if n == 1:
                result.notes.append(f"{backup} exists: kept (an earlier backup, not overwritten)")
            n += 1
            backup = os.path.join(parent, f"{name}{BACKUP_SUFFIX}-{n}")
        tmp = backup + ".partial"
        try:
            shutil.copytree(real, tmp, symlinks=True)
            problem = _compare_trees(real, tmp)
            if problem:
                raise MigrateError(f"backup {tmp} does not match {src} ({problem}); nothing was rewritten")
            os.replace(tmp, backup)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return backup

    def _one(self, src: str, dst: str, rel: str) -> FileOutcome:
        opts = self.options
        spath = os.path.join(src, rel)
        if os.path.basename(rel) == CHECKLIST_NAME:
            return FileOutcome(rel, "", "skipped", "checklist of an earlier migration (written anew)")
        lang = language_of(rel, self.settings.include)
        build = is_build_file(rel)
        dst_rel = output_name(rel, opts.hip_extension) if lang == "cuda" else rel
        dpath = os.path.join(dst, dst_rel)
        if os.path.islink(spath):
            if opts.in_place:
                return FileOutcome(rel, rel, "skipped", "symbolic link (not written through)")
            return self._copied(spath, dst, rel, "symbolic link")
        try:
            with open(spath, "rb") as fh:
                data = fh.read(MAX_SOURCE_BYTES + 1)
        except OSError as exc:
            return self._copied(spath, dst, rel, f"unreadable ({exc.strerror or exc})")
        if b"\0" in data[:8192]:
            return self._copied(spath, dst, rel, "binary file")
        if len(data) > MAX_SOURCE_BYTES:
            return self._copied(spath, dst, rel, "larger than 16 MiB")
        if lang != "cuda":
            reason = "build file" if build else "not a C/C++/CUDA source"
            if lang in self.linter.languages or (build and lang in buildport.PORTED_LANGUAGES):
                out = self._analysed(spath, dst, rel, data, lang, reason, port=build)
            else:
                out = self._copied(spath, dst, rel, reason)
            out.build_file = build
            if build and lang not in buildport.PORTED_LANGUAGES and out.src:
                out.manual = buildport.unported_notes(data)  # setup.py, Meson, Bazel...: listed, not ported
            return out
        try:
            new, outcome = self.migrate_source(rel, data, dst_rel, spath)
        except RecursionError:
            return self._copied(spath, dst, rel, "nesting too deep to analyse")
        except Exception as exc:  # one line, the file copied, the migration goes on
            out = self._copied(spath, dst, rel, "internal error while rewriting")
            out.notes.append(f"{rel}: internal error: {type(exc).__name__}: {exc}")
            return out
        mode = stat.S_IMODE(os.stat(spath).st_mode)
        try:
            if opts.in_place and (new != data or dst_rel != rel) and is_read_only(spath):
                raise PermissionError(errno.EACCES, "read-only file; not rewritten", spath)
            if not opts.in_place or new != data or dst_rel != rel:
                _write_file(dpath, new, mode)
            if opts.in_place and dst_rel != rel:
                os.unlink(spath)
        except OSError as exc:
            reason = f"cannot write ({exc.strerror or exc})"
            return FileOutcome(rel, "", "skipped", reason, error=reason)
        return outcome

    def _analysed(self, spath: str, dst: str, rel: str, data: bytes, lang: str, reason: str,
                  port: bool = False) -> FileOutcome:
        """A file some rule reads (Python, CMake, Makefiles): a build file ported to HIP first
        (`hiplint.buildport`), then its fixes applied like a source's, no renames. Its findings are those
        of the file written: what the port did not do."""
        dpath = os.path.join(dst, rel)
        lint = lambda d: self.linter.lint_bytes(rel, d, lang, fs_path=spath).findings  # noqa: E731
        ported = None
        base = data
        if port and lang in buildport.PORTED_LANGUAGES:
            try:
                ported = buildport.port(rel.replace(os.sep, "/"), data, lang, self.settings.targets, self.facts)
            except Exception as exc:  # the migration goes on; the file is copied as it is
                ported = buildport.Port(data, refused=f"internal error: {type(exc).__name__}: {exc}")
            base = ported.data
        try:
            if lang not in self.linter.languages:
                findings, new, applied = [], base, []
            elif not self.options.apply_fixes:
                findings, new, applied = lint(base), base, []
            else:
                fixed = fix_bytes(lint, base, lang, self.threshold)
                new, applied = fixed.data, fixed.applied
        except Exception as exc:  # the migration goes on; the file is copied as it is
            out = self._copied(spath, dst, rel, reason)
            out.notes.append(f"{rel}: not analysed: {type(exc).__name__}: {exc}")
            return out
        if new == data:
            out = self._copied(spath, dst, rel, reason)
        else:
            out = FileOutcome(rel, rel, "changed", reason)
            try:
                _write_file(dpath, new, stat.S_IMODE(os.stat(spath).st_mode))
            except OSError as exc:
                return FileOutcome(rel, "", "skipped", f"cannot write ({exc.strerror or exc})")
        if ported is not None:
            out.manual = list(ported.manual)
            if ported.refused:
                out.notes.append(f"{rel}: build file not ported: {ported.refused}; copied as it was")
                out.manual.insert(0, (0, f"not ported: {ported.refused}"))
            elif ported.changed:
                out.ported = ported.describe()
        if self.options.apply_fixes and lang in self.linter.languages:
            out.fixes, out.applied = len(applied), list(applied)
            out.notes.extend(fixed.dropped)
            findings = self._left(fixed.remaining, fixed, out)
        out.findings = findings
        return out

    def _copied(self, spath: str, dst: str, rel: str, reason: str) -> FileOutcome:
        """Copy under the file's own name (a binary `.cu` does not become `.hip`)."""
        dpath = os.path.join(dst, rel)
        if self.options.in_place:
            return FileOutcome(rel, rel, "unchanged", reason)  # in place: the file stays as it is
        try:
            _copy_file(spath, dpath)
        except OSError as exc:
            problem = f"cannot copy ({exc.strerror or exc})"
            return FileOutcome(rel, "", "skipped", f"{reason}; {problem}", error=problem)
        return FileOutcome(rel, rel, "copied", reason)


# The checklist -------------------------------------------------------------------------------

BUILD_ADVICE = ("CMake files and Makefiles are ported to a HIP-only build (`hiplint.buildport`): the HIP "
                "language instead of CUDA, the AMD targets, the hip* packages and libraries, hipcc, nvcc options "
                "translated or dropped. Review each one; the items under a file are what it still needs by hand. "
                "Other build files (setup.py, meson.build, Bazel, configure.ac) are copied unchanged: point them "
                "at HIP by hand (hipcc or `clang++ -x hip`, `--offload-arch` per AMD target, the hip* libraries, "
                "no nvcc-only options; a PyTorch `CUDAExtension` builds for ROCm as it is, see the PY rules).")


def _build_lines(f: FileOutcome) -> list[str]:
    if f.ported:
        head = f"- [ ] `{f.dst or f.src}`: ported ({f.ported})"
    elif f.action == "changed":
        head = f"- [ ] `{f.dst or f.src}`: fixes applied, nothing to port"
    elif f.manual:
        head = f"- [ ] `{f.src}`: copied unchanged"
    else:
        head = f"- [ ] `{f.src}`: copied unchanged (nothing to port, or it already builds HIP)"
    lines = [head]
    for line, text in f.manual:
        lines.append(f"  - [ ] {'line ' + str(line) + ': ' if line else ''}{text}")
    return lines


def render_checklist(result: MigrationResult, settings) -> str:
    """The migration checklist: the `checklist` output format when installed, else a Markdown list."""
    from hiplint import emit
    findings = result.findings
    head = [
        "# HIP migration checklist",
        "",
        f"Written by `hiplint migrate` for `{result.src}`.",
        "",
        "```",
        result.summary(),
        "```",
        "",
    ]
    build = [f for f in result.files if f.build_file]
    if build:
        head += ["## Build files", "", BUILD_ADVICE, ""]
        for f in build:
            head += _build_lines(f)
        head.append("")
    if "checklist" in emit.EMITTERS:
        # A fix left in the migrated tree was computed on the CUDA text, before the renames: the way
        # to it is another migration, not `hiplint fix` on the output.
        applied = [x for f in result.files for x in f.applied]
        report = emit.Report(findings, len(result.files), applied, settings, show_fix_hint=False,
                             fix_hints=("migrate again without `--no-fix`", "review it: migrate again with `--unsafe-fixes`"))
        return "\n".join(head) + "\n" + emit.render("checklist", report)
    from hiplint.model import Impact
    body = []
    if not findings:
        body += ["Nothing left for hand work that hiplint knows of.", ""]
    for impact in sorted(Impact, key=lambda i: i.order):
        group = [f for f in findings if f.impact == impact]
        if not group:
            continue
        body += [f"## {impact.title}", ""]
        for code in sorted({f.code for f in group}):
            items = [f for f in group if f.code == code]
            advice = items[0].checklist
            body.append(f"### {code} {items[0].name} ({len(items)})")
            body.append("")
            if advice:
                body += [advice, ""]
            for f in items:
                body.append(f"- [ ] `{f.path}:{f.line}:{f.column}` {f.message}")
                body += [f"  - also `{r.path}:{r.line}:{r.column}`" + (f": {r.message}" if r.message else "")
                         for r in f.related]
            body.append("")
    return "\n".join(head + body)
