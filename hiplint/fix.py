"""Applying fixes without corrupting a file.

Each pass lints, takes the applicable fixes in order, skips any that overlaps one already taken or
reuses an isolation key, applies them, and re-parses: a pass that adds parse errors is undone and
its fixes are tried one at a time, the offenders dropped and reported. Passes repeat until nothing
changes (at most MAX_PASSES; a result seen before means the fixes go round in a cycle, and the run
stops there). Edits outside the file or running backwards are a rule bug: the fix is dropped and
reported. Line endings are kept: inserted newlines follow the file's style. Bytes outside the edits
are never decoded, so any encoding (Latin-1 comments, say) survives.
"""
from __future__ import annotations

import difflib
import os
import stat
import tempfile
from dataclasses import dataclass, field

from hiplint.cparse import error_ranges, new_parser
from hiplint.model import Applicability, Finding, Fix

MAX_PASSES = 10


@dataclass
class FixOutcome:
    data: bytes
    applied: list[Finding] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # one-line notes for fixes refused
    remaining: list[Finding] = field(default_factory=list)
    passes: int = 0
    converged: bool = True


def _line_ending(data: bytes) -> str:
    return "\r\n" if data.count(b"\r\n") * 2 > data.count(b"\n") else "\n"


BOM = b"\xef\xbb\xbf"


def apply_edits(data: bytes, fixes: list[Fix]) -> bytes:
    nl = _line_ending(data)
    edits = [e for f in fixes for e in f.edits]
    if data.startswith(BOM):
        # An insertion "before line 1" goes after a byte-order mark, which must stay the first bytes.
        edits = [type(e)(len(BOM), len(BOM), e.content) if e.start == e.end == 0 else e for e in edits]
    edits.sort(key=lambda e: (e.start, e.end))
    out = []
    pos = 0
    for e in edits:
        out.append(data[pos:e.start])
        content = e.content.replace("\r\n", "\n")
        if nl != "\n":
            content = content.replace("\n", nl)
        out.append(content.encode("utf-8"))
        pos = e.end
    out.append(data[pos:])
    return b"".join(out)


def edits_valid(fix: Fix, size: int) -> bool:
    return all(0 <= e.start <= e.end <= size for e in fix.edits)


def choose(findings: list[Finding], threshold: Applicability) -> list[Finding]:
    """Non-overlapping fixes, first come first served, one per isolation key."""
    taken: list[tuple[int, int]] = []
    keys: set[str] = set()
    chosen = []
    for f in sorted(findings, key=lambda f: (f.fix.edits[0].start if f.fix and f.fix.edits else 0, f.code)):
        fix = f.fix
        if fix is None or fix.applicability < threshold or not fix.edits:
            continue
        if fix.isolation and fix.isolation in keys:
            continue
        spans = [(e.start, e.end) for e in fix.edits]
        if any(s < te and ts < e or (s == e == ts == te) for s, e in spans for ts, te in taken):
            continue
        # Two edits of one fix must not overlap each other either.
        ordered = sorted(spans)
        if any(a[1] > b[0] for a, b in zip(ordered, ordered[1:])):
            continue
        taken.extend(spans)
        if fix.isolation:
            keys.add(fix.isolation)
        chosen.append(f)
    return chosen


def _errors(data: bytes, lang: str) -> int:
    if lang == "cuda":
        return len(error_ranges(new_parser().parse(data).root_node))
    if lang == "python":
        try:
            import libcst
            libcst.parse_module(data)
            return 0
        except Exception:
            return 1
    return 0


class ChangedLineSet:
    """The lines a `--fix --diff-base` run may fix (1-based), followed through the fixes' edits: a
    fix that adds or removes lines moves the changed lines below it, so the next pass still fixes
    only what the diff touched."""

    def __init__(self, lines):
        self.lines = set(lines)

    def allows(self, f) -> bool:
        return any(n in self.lines for n in range(f.line, max(f.line, f.end_line) + 1))

    def follow(self, data: bytes, fixes) -> None:
        """Renumber the lines after `fixes` are applied to `data` (edits of lines count as the line)."""
        edits = sorted((e for fx in fixes for e in fx.edits), key=lambda e: (e.start, e.end))
        if not edits:
            return
        starts = [0]
        for i, b in enumerate(data):
            if b == 10:
                starts.append(i + 1)
        moved = set()
        for n in self.lines:
            if n - 1 >= len(starts):
                moved.add(n)
                continue
            at = starts[n - 1]
            delta = sum(e.content.count("\n") - data[e.start:e.end].count(b"\n") for e in edits if e.end <= at)
            moved.add(n + delta)
        self.lines = moved


def fix_bytes(lint, data: bytes, lang: str, threshold: Applicability, only=None) -> FixOutcome:
    """`lint(data) -> list[Finding]`. Returns the fixed bytes and what was applied. `only`, a
    ChangedLineSet, limits the fixes to findings on those lines (`--fix --diff-base`)."""
    outcome = FixOutcome(data)
    base_errors = _errors(data, lang)
    refused: set[tuple[str, str]] = set()
    seen = {data}
    for n in range(MAX_PASSES):
        findings = lint(outcome.data)
        candidates = []
        for f in findings:
            if f.fix is None or (f.code, f.fix.title + f.source_line) in refused or f.fix.applicability < threshold:
                continue
            if only is not None and not only.allows(f):
                continue
            if not edits_valid(f.fix, len(outcome.data)):
                refused.add((f.code, f.fix.title + f.source_line))
                outcome.dropped.append(f"{f.path}:{f.line}:{f.column}: {f.code} fix dropped: its edit lies outside the file")
                continue
            candidates.append(f)
        chosen = choose(candidates, threshold)
        if not chosen:
            outcome.remaining = findings
            outcome.passes = n
            return outcome
        new = apply_edits(outcome.data, [f.fix for f in chosen])
        if _errors(new, lang) > base_errors:
            # Find the offenders one at a time; keep the rest.
            good = []
            for f in chosen:
                trial = apply_edits(outcome.data, [g.fix for g in good + [f]])
                if _errors(trial, lang) > base_errors:
                    refused.add((f.code, f.fix.title + f.source_line))
                    outcome.dropped.append(f"{f.path}:{f.line}:{f.column}: {f.code} fix dropped: it would add a parse error")
                else:
                    good.append(f)
            if not good:
                continue
            chosen = good
            new = apply_edits(outcome.data, [f.fix for f in chosen])
        if new == outcome.data:
            outcome.remaining = findings
            outcome.passes = n
            return outcome
        if new in seen:  # the fixes undo each other: stop rather than go round
            outcome.dropped.append(f"{chosen[0].path}: fixes go round in a cycle ({', '.join(sorted({f.code for f in chosen}))}); "
                                   f"stopped after {n + 1} passes")
            outcome.passes = n + 1
            break
        seen.add(new)
        if only is not None:
            only.follow(outcome.data, [f.fix for f in chosen])
        outcome.data = new
        outcome.applied.extend(chosen)
    else:
        outcome.passes = MAX_PASSES
    outcome.converged = False
    outcome.remaining = lint(outcome.data)
    return outcome


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    a = before.decode("utf-8", "replace").splitlines(keepends=True)
    b = after.decode("utf-8", "replace").splitlines(keepends=True)
    shown = path.lstrip("/")
    lines = list(difflib.unified_diff(a, b, fromfile=f"a/{shown}", tofile=f"b/{shown}"))
    return "".join(l if l.endswith("\n") else l + "\n\\ No newline at end of file\n" for l in lines)


def write_atomic(path: str, data: bytes, expected: bytes | None = None) -> None:
    """Temporary file in the same directory, permissions copied, then rename over the original.

    With `expected`, the file must still hold those bytes (it was not edited while we linted it).
    """
    if os.path.islink(path):
        raise OSError(f"{path}: refusing to write through a symbolic link")
    if not os.path.isfile(path):
        raise OSError(f"{path}: not a regular file")
    if expected is not None:
        with open(path, "rb") as fh:
            if fh.read() != expected:
                raise OSError(f"{path}: changed on disk while it was being fixed; left alone")
    replace_file(path, data, stat.S_IMODE(os.stat(path).st_mode))


def replace_file(path: str, data: bytes, mode: int | None = None, durable: bool = True) -> None:
    """Write `data` to a temporary file beside `path`, then rename it over `path`: readers see the old
    file or the new one, never half of it. Shared by the fixer, `migrate` and the cache. `durable`
    syncs the data to disk first; the cache skips that, since losing an entry costs nothing: one
    lost or cut short by a crash is unreadable JSON, which is a miss."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".hiplint-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
