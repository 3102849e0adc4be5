"""Applying fixes without corrupting a file.

Each pass lints, takes the applicable fixes in order, skips any that overlaps one already taken or
reuses an isolation key, applies them, and re-parses: a pass that adds parse errors is undone and
its fixes are tried one at a time, the offenders dropped and reported. Passes repeat until no fix
is left to apply (a fixed point). Every pass applies at least one fix, so a file whose fixes create no
new fixable findings needs at most one pass per fixable finding of the first pass, plus one to see
that none is left: that is the bound (`pass_limit`), whatever the number of kernels in the file.
Past it, a pass runs only while the number of findings strictly drops, so a fix that keeps
creating fixable findings cannot run forever; a result seen before means the fixes go round in a
cycle, and the run stops there. The outcome is "not converged" only when a fix that could be
applied is really left. Edits outside the file or running backwards are a rule bug: the fix is dropped and
reported. Line endings are kept: inserted newlines follow the file's style. Bytes outside the edits
are never decoded, so any encoding (Latin-1 comments, say) survives.
"""
from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field

from hiplint.cparse import error_ranges, new_parser
from hiplint.model import Applicability, Finding, Fix



def pass_limit(fixable: int) -> int:
    """Passes allowed for a file with `fixable` applicable fixes in its first pass: one applied per
    pass at worst (overlaps and isolation keys defer the rest), plus the pass that finds none left."""
    return fixable + 1


@dataclass
class FixOutcome:
    data: bytes
    applied: list[Finding] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # one-line notes for fixes refused
    remaining: list[Finding] = field(default_factory=list)
    passes: int = 0
    converged: bool = True
    refused: dict = field(default_factory=dict)  # (code, fix key) -> why the fix was dropped

    def why_left(self, finding: Finding) -> str | None:
        """Why a remaining finding's fix was not applied: dropped (a parse error, an edit outside the
        file), or the run stopped (a cycle, the bound). None when it was not tried."""
        if finding.fix is None:
            return None
        reason = self.refused.get(fix_key(finding))
        if reason is not None:
            return reason
        if not self.converged:
            return "the fixes did not converge (they undo each other or keep adding findings)"
        return None


def fix_key(f: Finding) -> tuple[str, str]:
    """A fix across passes: its rule, title and line text (offsets move as other fixes land)."""
    return (f.code, f.fix.title + f.source_line)


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


MAX_TRIALS = 64  # re-parses per pass to find the fixes that add parse errors


def _offenders(data: bytes, chosen: list[Finding], lang: str, base_errors: int):
    """(finding, None) for each fix that can be kept, (finding, why) for each dropped. Groups of fixes
    are tried whole and halved when they add a parse error (bisection: a few offenders among thousands
    of fixes cost a few dozen parses, where trying each alone re-parsed the file once per fix); after
    MAX_TRIALS parses the fixes not yet cleared are dropped: the work stays linear in the file."""
    good: list[Finding] = []
    out = []
    groups = [chosen]
    trials = 0
    while groups:
        group = groups.pop(0)
        if trials >= MAX_TRIALS:
            out.extend((f, "not checked for parse errors (too many fixes broke the parse)") for f in group)
            continue
        trials += 1
        if _errors(apply_edits(data, [g.fix for g in good + group]), lang) <= base_errors:
            good.extend(group)
            out.extend((f, None) for f in group)
        elif len(group) == 1:
            out.append((group[0], PARSE_ERROR))
        else:
            mid = len(group) // 2
            groups[0:0] = [group[:mid], group[mid:]]
    return out


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
    refused = outcome.refused
    seen = {data}
    limit = None
    previous = None  # the number of findings before the last pass
    n = 0
    while True:
        findings = lint(outcome.data)
        candidates = [f for f in _candidates(findings, outcome, refused, threshold) if only is None or only.allows(f)]
        if limit is None:
            limit = pass_limit(len(candidates))
        elif n >= limit and not (previous is not None and len(findings) < previous):
            # Past the bound, and the last pass did not reduce the findings: fixes that keep
            # creating fixable findings. Stop; "not converged" only if something is left to apply.
            outcome.passes = n
            outcome.remaining = findings
            outcome.converged = not choose(candidates, threshold)
            return outcome
        previous = len(findings)
        chosen = choose(candidates, threshold)
        if not chosen:
            outcome.remaining = findings
            outcome.passes = n
            return outcome
        new = apply_edits(outcome.data, [f.fix for f in chosen])
        if _errors(new, lang) > base_errors:
            # Find the offenders; keep the rest.
            good = []
            for f, why in _offenders(outcome.data, chosen, lang, base_errors):
                if why is None:
                    good.append(f)
                    continue
                refused[fix_key(f)] = why
                outcome.dropped.append(f"{f.path}:{f.line}:{f.column}: {f.code} fix dropped: {why}")
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
        n += 1
    outcome.converged = False
    outcome.remaining = lint(outcome.data)
    return outcome


PARSE_ERROR = "it would add a parse error"
OUTSIDE = "its edit lies outside the file"


def _candidates(findings: list[Finding], outcome: FixOutcome, refused: dict, threshold: Applicability) -> list[Finding]:
    """The findings whose fix may be applied in this pass (edits outside the file are refused, once)."""
    candidates = []
    for f in findings:
        if f.fix is None or fix_key(f) in refused or f.fix.applicability < threshold:
            continue
        if not edits_valid(f.fix, len(outcome.data)):
            refused[fix_key(f)] = OUTSIDE
            outcome.dropped.append(f"{f.path}:{f.line}:{f.column}: {f.code} fix dropped: its edit lies outside the file")
            continue
        candidates.append(f)
    return candidates


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    a = before.decode("utf-8", "replace").splitlines(keepends=True)
    b = after.decode("utf-8", "replace").splitlines(keepends=True)
    shown = path.lstrip("/")
    import difflib  # imported here: a plain scan never shows a diff

    lines = list(difflib.unified_diff(a, b, fromfile=f"a/{shown}", tofile=f"b/{shown}"))
    return "".join(l if l.endswith("\n") else l + "\n\\ No newline at end of file\n" for l in lines)


class SymlinkRefused(OSError):
    """A symbolic link is never written through: by design, not a failure."""


def write_atomic(path: str, data: bytes, expected: bytes | None = None) -> None:
    """Temporary file in the same directory, permissions copied, then rename over the original.

    With `expected`, the file must still hold those bytes (it was not edited while we linted it).
    """
    if os.path.islink(path):
        raise SymlinkRefused(f"{path}: refusing to write through a symbolic link")
    if not os.path.isfile(path):
        raise OSError(f"{path}: not a regular file")
    st = os.stat(path)
    if is_read_only(path, st):
        # Renaming over the file would succeed (it replaces the directory entry): honour the mode.
        raise PermissionError(errno.EACCES, "read-only file; not rewritten", path)
    if expected is not None:
        with open(path, "rb") as fh:
            if fh.read() != expected:
                raise OSError(f"{path}: changed on disk while it was being fixed; left alone")
    replace_file(path, data, stat.S_IMODE(st.st_mode))


def is_read_only(path: str, st: os.stat_result | None = None) -> bool:
    """No write permission for us in the file's mode bits. Decided from the bits, not os.access:
    root may write anything, but a file someone made read-only must still not be rewritten."""
    st = st or os.stat(path)
    if os.name == "posix" and hasattr(os, "geteuid") and st.st_uid == os.geteuid():
        return not st.st_mode & stat.S_IWUSR
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        return True
    return hasattr(os, "geteuid") and os.geteuid() != 0 and not os.access(path, os.W_OK)


def _mkstemp(directory: str) -> tuple[int, str]:
    """tempfile.mkstemp(prefix=".hiplint-", dir=directory): a new file only this process can have
    opened (O_EXCL, mode 0600, never through a link), without importing tempfile (shutil, random,
    bz2...: 6 ms of every scan that writes a cache entry)."""
    flags = (os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
             | getattr(os, "O_BINARY", 0))
    for _ in range(100):
        name = os.path.join(directory, ".hiplint-" + os.urandom(6).hex())
        try:
            return os.open(name, flags, 0o600), os.path.abspath(name)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no usable temporary file name found", directory)


def replace_file(path: str, data: bytes, mode: int | None = None, durable: bool = True) -> None:
    """Write `data` to a temporary file beside `path`, then rename it over `path`: readers see the old
    file or the new one, never half of it. Shared by the fixer, `migrate` and the cache. `durable`
    syncs the data to disk first; the cache skips that, since losing an entry costs nothing: one
    lost or cut short by a crash is unreadable JSON, which is a miss."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = _mkstemp(directory)
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
