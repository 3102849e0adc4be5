"""Which files a scan reads: walk the given paths, honour .gitignore and include/exclude globs.

A file named on the command line is always scanned (unless --force-exclude, which pre-commit needs
so that `exclude` still applies to the files it passes). Symlinked directories are not followed,
so a symlink loop cannot trap the walk.
"""
from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass

import pathspec

from hiplint.languages import language_of


# A directory kept for reference (`archive/`: an earlier version of the project beside the live one) is
# not walked unless a build file beside it, or at the top of the walk, names it: no build compiles it,
# so its findings would be reports on dead code. Named on the command line, it is scanned.
ARCHIVE_DIRS = frozenset({"archive", "archived", "attic"})
_BUILD_FILE_NAMES = ("CMakeLists.txt", "Makefile", "makefile", "GNUmakefile", "setup.py", "pyproject.toml",
                     "setup.cfg", "meson.build", "BUILD", "BUILD.bazel", "configure.ac", "MANIFEST.in")
MAX_BUILD_FILE_BYTES = 1024 * 1024


def _names_directory(directory: str, name: str) -> bool:
    """Whether a build file in `directory` names `name` as a path part (`add_subdirectory(archive)`,
    `"archive/csrc/x.cu"`, `packages=find_packages("archive")`)."""
    word = re.compile(r"(?<![\w.-])" + re.escape(name) + r"(?![\w.-])", re.I)
    for build in _BUILD_FILE_NAMES:
        try:
            with open(os.path.join(directory, build), "rb") as fh:
                text = fh.read(MAX_BUILD_FILE_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        if word.search(text):
            return True
    return False


def _archived(path: str, name: str, top: str) -> bool:
    if name.lower() not in ARCHIVE_DIRS:
        return False
    parent = os.path.dirname(path) or "."
    return not _names_directory(parent, name) and not (
        os.path.abspath(top) != os.path.abspath(parent) and _names_directory(top, name))


@dataclass(frozen=True)
class SourcePath:
    path: str  # to open
    display: str  # as the user should see it: as given, or relative to the working directory
    language: str


def _one_regex(spec: pathspec.PathSpec):
    """All of `spec`'s patterns as one regex, when none negates another (the usual exclude list): then
    a path is excluded when any matches, and one search replaces a dozen. None otherwise."""
    parts = []
    for pattern in spec.patterns:
        regex = getattr(pattern, "regex", None)
        if pattern.include is None:
            continue  # a blank line or a comment
        if not pattern.include or regex is None:
            return None
        parts.append(re.sub(r"\(\?P<\w+>", "(?:", regex.pattern))  # group names would clash
    try:
        return re.compile("|".join(f"(?:{p})" for p in parts)) if parts else re.compile(r"(?!)")
    except re.error:
        return None


class _Ignores:
    def __init__(self, settings):
        self.settings = settings
        patterns = list(settings.exclude) + list(settings.extend_exclude)
        self.exclude = pathspec.GitIgnoreSpec.from_lines(patterns)  # .gitignore semantics (README)
        self._any = _one_regex(self.exclude)
        self.gitignores: dict[str, pathspec.PathSpec | None] = {}

    def _matches(self, probe: str) -> bool:
        return self._any.search(probe) is not None if self._any is not None else self.exclude.match_file(probe)

    def excluded(self, path: str, is_dir: bool) -> bool:
        rel = os.path.relpath(os.path.abspath(path), self.settings.root).replace(os.sep, "/")
        probe = rel + "/" if is_dir else rel
        if not rel.startswith("../") and self._matches(probe):
            return True
        name = os.path.basename(path) + ("/" if is_dir else "")
        return self._matches(name)

    def _gitignore(self, directory: str):
        if directory not in self.gitignores:
            spec = None
            gi = os.path.join(directory, ".gitignore")
            try:
                with open(gi, encoding="utf-8", errors="replace") as fh:
                    spec = pathspec.GitIgnoreSpec.from_lines(fh.read().splitlines())
            except OSError:
                pass
            self.gitignores[directory] = spec
        return self.gitignores[directory]

    def gitignored(self, path: str, is_dir: bool, chain: list[str]) -> bool:
        if not self.settings.respect_gitignore:
            return False
        for directory in chain:
            spec = self._gitignore(directory)
            if spec is None:
                continue
            rel = os.path.relpath(path, directory).replace(os.sep, "/")
            if spec.match_file(rel + "/" if is_dir else rel):
                return True
        return False


def _display(path: str) -> str:
    return os.path.normpath(path) if not os.path.isabs(path) else path


def _git_chain(start_dir: str) -> list[str]:
    """Directories from the repository root (or filesystem root) down to start_dir."""
    chain = []
    d = os.path.abspath(start_dir)
    while True:
        chain.append(d)
        if os.path.isdir(os.path.join(d, ".git")):
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return list(reversed(chain))


def discover(paths: list[str], settings, languages: set[str] | None = None, notes: list[str] | None = None,
             empty: list[str] | None = None) -> list[SourcePath]:
    """The files to scan. A directory named in `paths` that holds none is noted, and listed in `empty`:
    a gate pointed at the wrong place must not pass as "all checks passed"."""
    ignores = _Ignores(settings)
    out: list[SourcePath] = []
    seen: set[str] = set()
    notes = notes if notes is not None else []
    found = [0]

    def add(path: str, display: str, lang: str):
        found[0] += 1
        key = os.path.abspath(path)
        if key not in seen:
            seen.add(key)
            out.append(SourcePath(path, display, lang))

    for given in paths:
        if os.path.isfile(given) or (os.path.exists(given) and not os.path.isdir(given)):
            if settings.force_exclude and (ignores.excluded(given, False) or ignores.gitignored(os.path.abspath(given), False, _git_chain(os.path.dirname(os.path.abspath(given)) or "."))):
                continue
            lang = language_of(given, settings.include) or "cuda"
            add(given, _display(given), lang)
            continue
        if not os.path.isdir(given):
            if os.path.islink(given):
                notes.append(f"{given}: broken symbolic link")
            else:
                notes.append(f"{given}: no such file or directory")
            continue
        base_chain = _git_chain(given)
        # A directory named on the command line is scanned even when a .gitignore above it ignores it
        # (as ruff does): only .gitignore files inside it apply then.
        if len(base_chain) > 1 and ignores.gitignored(os.path.abspath(given), True, base_chain[:-1]):
            base_chain = base_chain[-1:]
        before = found[0]
        # Iterative walk; each stack entry carries the chain of directories whose .gitignore applies.
        stack = [(given, base_chain)]
        while stack:
            directory, chain = stack.pop()
            try:
                entries = sorted(os.scandir(directory), key=lambda e: e.name)
            except OSError as exc:
                notes.append(f"{_display(directory)}: cannot list directory: {exc.strerror}")
                continue
            subdirs = []
            for entry in entries:
                p = entry.path
                try:
                    is_link = entry.is_symlink()
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_link and not is_dir:
                    try:
                        is_dir = os.path.isdir(p)
                    except OSError:
                        is_dir = False
                    if is_dir:
                        continue  # symlinked directories are not followed: no loops
                if is_dir:
                    if entry.name == ".git" or ignores.excluded(p, True) or ignores.gitignored(os.path.abspath(p), True, chain):
                        continue
                    if _archived(p, entry.name, given):
                        notes.append(f"{_display(p)}: not checked: a directory kept for reference that no build "
                                     "file beside it names; name it on the command line to check it")
                        continue
                    subdirs.append((p, chain + [os.path.abspath(p)]))
                    continue
                lang = language_of(entry.name, settings.include)
                if lang is None or (languages is not None and lang not in languages):
                    continue
                try:
                    if not stat.S_ISREG(entry.stat().st_mode):
                        continue  # a FIFO named k.cu would block the read forever; a socket, a device
                except OSError:
                    pass  # a dangling link: reading it says so (HL002)
                if ignores.excluded(p, False) or ignores.gitignored(os.path.abspath(p), False, chain):
                    continue
                add(p, _display(p), lang)
            stack.extend(reversed(subdirs))
        if found[0] == before:
            notes.append(f"{_display(given)}: no files to check (none of hiplint's file types, or all excluded)")
            if empty is not None:
                empty.append(given)
    return out
