"""Per-file ignores and severity overrides from the settings."""
from __future__ import annotations

import os
from functools import lru_cache

import pathspec

from hiplint.registry import matches_any


@lru_cache(maxsize=256)
def _spec(pattern: str) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines([pattern])


def relative_to_root(settings, path: str) -> str:
    try:
        rel = os.path.relpath(os.path.abspath(path), settings.root)
    except ValueError:
        rel = path
    return rel.replace(os.sep, "/")


def per_file_ignored(settings, path: str, code: str, name: str) -> bool:
    if not settings.per_file_ignores:
        return False
    rel = relative_to_root(settings, path)
    for pattern, selectors in settings.per_file_ignores.items():
        if _spec(pattern).match_file(rel) or _spec(pattern).match_file(os.path.basename(rel)):
            if matches_any(code, name, selectors):
                return True
    return False


def severity_for(settings, code: str, name: str):
    """The override for a rule: the most specific selector wins (a code beats its prefix)."""
    best, best_len = None, -1
    for selector, sev in settings.severity.items():
        s = selector.strip()
        if s == name:
            length = 100
        elif code.startswith(s.upper()) or s.upper() == "ALL":
            length = len(s) if s.upper() != "ALL" else 0
        else:
            continue
        if length > best_len:
            best, best_len = sev, length
    return best
