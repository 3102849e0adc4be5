"""Baseline files: adopt hiplint on existing code and fail only on findings that are new.

    {"version": 1, "hiplint": "0.1.0",
     "files": {"src/k.cu": {"WRP001": {"count": 2, "fingerprints": ["9f1c...", "03ab..."]}}}}

Paths are relative to the repository root (so CI and developers agree whatever directory they run
from). Entries match findings by fingerprint (hiplint.fingerprint: no line numbers, so edits above a
finding keep it matched), as a multiset: two equal lines need two entries. Entries that match
nothing any more are stale: the finding was fixed or its code changed. Only files that were scanned
can make entries stale, so scanning a subdirectory does not call the rest of the baseline stale.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field

from hiplint import __version__
from hiplint.config import ConfigError

VERSION = 1


@dataclass
class Baseline:
    files: dict[str, dict[str, Counter]] = field(default_factory=dict)  # path -> code -> fingerprints

    @classmethod
    def from_findings(cls, findings, relpath) -> "Baseline":
        b = cls()
        for f in findings:
            b.files.setdefault(relpath(f.path), {}).setdefault(f.code, Counter())[f.fingerprint] += 1
        return b

    def to_json(self) -> str:
        files = {}
        for path in sorted(self.files):
            codes = {}
            for code in sorted(self.files[path]):
                fps = sorted(self.files[path][code].elements())
                if fps:
                    codes[code] = {"count": len(fps), "fingerprints": fps}
            if codes:
                files[path] = codes
        return json.dumps({"version": VERSION, "hiplint": __version__, "files": files}, indent=2) + "\n"

    def write(self, path: str) -> None:
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(self.to_json())
            os.replace(tmp, path)
        except OSError as exc:
            raise ConfigError(f"baseline {path}: cannot write: {exc.strerror}") from None


def load(path: str) -> Baseline:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"--baseline: {path}: no such file (create it with --write-baseline)") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"--baseline: {path}: not a hiplint baseline: {exc}") from None
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("files"), dict):
        raise ConfigError(f"--baseline: {path}: not a version-{VERSION} hiplint baseline")
    b = Baseline()
    for fpath, codes in data["files"].items():
        if not isinstance(codes, dict):
            raise ConfigError(f"--baseline: {path}: entry for {fpath!r} is not a table of codes")
        for code, entry in codes.items():
            fps = entry.get("fingerprints") if isinstance(entry, dict) else None
            if not isinstance(fps, list) or not all(isinstance(x, str) for x in fps):
                raise ConfigError(f"--baseline: {path}: {fpath} {code}: `fingerprints` must be a list of strings")
            b.files.setdefault(fpath, {})[code] = Counter(fps)
    return b


@dataclass
class Match:
    new: list  # findings the baseline does not cover: these are reported
    matched: Baseline  # the entries that still match: what --prune-baseline keeps
    stale: list[tuple[str, str, int]]  # (path, code, how many entries matched nothing)


def apply(baseline: Baseline, findings, relpath, scanned_paths: set[str]) -> Match:
    remaining = {p: {c: Counter(fps) for c, fps in codes.items()} for p, codes in baseline.files.items()}
    matched = Baseline()
    new = []
    for f in findings:
        rel = relpath(f.path)
        pool = remaining.get(rel, {}).get(f.code)
        if pool and pool[f.fingerprint] > 0:
            pool[f.fingerprint] -= 1
            matched.files.setdefault(rel, {}).setdefault(f.code, Counter())[f.fingerprint] += 1
        else:
            new.append(f)
    stale = []
    for rel, codes in remaining.items():
        for code, pool in codes.items():
            left = sum(n for n in pool.values() if n > 0)
            if not left:
                continue
            if rel in scanned_paths:
                stale.append((rel, code, left))
            else:  # not scanned this time: keep as it was
                matched.files.setdefault(rel, {}).setdefault(code, Counter()).update(+pool)
    return Match(new, matched, sorted(stale))
