"""Which lines changed since a git base: `--diff-base REF` reports only findings on them.

Changed = added or modified in `git diff -U0 --no-renames <merge-base of REF and HEAD>` of the work
tree, so both the branch's commits and uncommitted edits count (clang-tidy-diff and reviewdog's
`added` filter work the same way). Files git does not track yet count as wholly changed.
"""
from __future__ import annotations

import os
import re
import subprocess

from hiplint.config import ConfigError

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def _git(args: list[str], cwd: str) -> str:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=120)
    except FileNotFoundError:
        raise ConfigError("--diff-base needs git, which is not installed") from None
    except subprocess.TimeoutExpired:
        raise ConfigError(f"--diff-base: `git {' '.join(args)}` timed out") from None
    if out.returncode != 0:
        msg = out.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ConfigError(f"--diff-base: `git {' '.join(args)}` failed: {msg[-1] if msg else out.returncode}")
    return out.stdout.decode("utf-8", "surrogateescape")


def parse_diff(text: str) -> dict[str, set[int]]:
    """Repository-relative path -> added/changed line numbers (new side) of a `git diff -U0`."""
    changed: dict[str, set[int]] = {}
    current: set[int] | None = None
    for line in text.splitlines():
        if line.startswith("+++ "):
            target = line[4:]
            if target == "/dev/null":
                current = None
                continue
            if target.startswith('"'):  # git quotes unusual names C-style
                target = target[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")
            target = target[2:] if target.startswith("b/") else target
            current = changed.setdefault(target, set())
            continue
        m = _HUNK.match(line)
        if m and current is not None:
            start, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
            current.update(range(start, start + count))
    return changed


class ChangedLines:
    def __init__(self, toplevel: str, lines: dict[str, set[int]], untracked: set[str]):
        self.toplevel = toplevel
        self.lines = lines
        self.untracked = untracked

    def _rel(self, path: str) -> str:
        return os.path.relpath(os.path.realpath(path), self.toplevel).replace(os.sep, "/")

    def contains(self, finding) -> bool:
        """Whether the finding, or one of its related locations (a new use of a reported constant, a
        new option of a build file's grouped finding), is on an added or changed line."""
        places = [(finding.path, finding.line, finding.end_line)]
        places += [(r.path, r.line, r.end_line) for r in finding.related]
        return any(self._touches(*place) for place in places)

    def lines_of(self, path: str, line_count: int) -> set[int]:
        """The changed lines of `path` (every line of a file git does not track yet)."""
        rel = self._rel(path)
        if rel in self.untracked:
            return set(range(1, line_count + 1))
        return set(self.lines.get(rel, ()))

    def _touches(self, path: str, line: int, end_line: int) -> bool:
        rel = self._rel(path)
        if rel in self.untracked:
            return True
        changed = self.lines.get(rel)
        if not changed:
            return False
        return any(ln in changed for ln in range(line, end_line + 1))


def _is_shallow(cwd: str) -> bool:
    try:
        return _git(["rev-parse", "--is-shallow-repository"], cwd).strip() == "true"
    except ConfigError:
        return False


def changed_lines(base: str, cwd: str | None = None) -> ChangedLines:
    cwd = cwd or os.getcwd()
    toplevel = _git(["rev-parse", "--show-toplevel"], cwd).strip()
    try:
        merge_base = _git(["merge-base", base, "HEAD"], cwd).strip()
    except ConfigError as exc:
        if _is_shallow(cwd):
            raise ConfigError(
                f"--diff-base: no merge base of {base} and HEAD in this shallow clone (its history stops "
                f"before the branches meet). Fetch the full history: `fetch-depth: 0` in actions/checkout, "
                f"`GIT_DEPTH: \"0\"` on GitLab, or `git fetch --unshallow` (then make sure {base} is fetched)") from exc
        raise
    # Diffing the merge base against the work tree covers committed and uncommitted changes.
    diff = _git(["-c", "core.quotepath=off", "diff", "-U0", "--no-renames", "--no-color", "--no-ext-diff",
                 merge_base, "--"], toplevel)
    untracked = _git(["-c", "core.quotepath=off", "ls-files", "--others", "--exclude-standard", "-z"], toplevel)
    return ChangedLines(os.path.realpath(toplevel), parse_diff(diff), {p for p in untracked.split("\0") if p})
