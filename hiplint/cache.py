"""The scan cache: an unchanged file is not parsed again.

Layout: `<cache-dir>/<hiplint version>/<run key>/<xx>/<entry key>.json`, one small file per source
file (and `<cache-dir>/<hiplint version>/plans/`: the rules' query split, hiplint.engine), so concurrent runs never share a file they write (each entry is written to a temporary name
and renamed into place, which is atomic on POSIX and Windows).

- The run key hashes what decides findings besides the file: hiplint's version, the grammar version,
  the lint-relevant settings, the enabled rule codes, and the text of hiplint's and the rules' own
  Python sources (so editing a rule in a checkout never serves its old findings).
- The entry key hashes the file's path as reported, its language and its content (not its mtime: a
  checkout or `touch` that keeps the content keeps the entry).
- The entry key also says whether the file has a HIP twin (a `cuda/` directory beside `hip/`):
  hiplint.layout.
- An entry lists the other files its findings depend on (project headers a rule read: hiplint.headers)
  with their digests; a header that changed or went away makes the entry a miss.

Entries are JSON, never pickle: a cache directory checked into a repository must not be able to
run code. Only plain scans use the cache; `--fix` and `--diff` always lint afresh.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
from pathlib import Path

from hiplint import __version__
from hiplint.fix import replace_file
from hiplint.model import Applicability, Edit, Finding, Fix, Impact, RelatedLocation, Severity

# Settings that change how findings are shown or gated, not which findings a file has.
_NOT_IN_KEY = {"output_format", "fix", "unsafe_fixes", "jobs", "cache_dir", "config_path", "extra"}
# Keys in Settings.extra that only gate or format results.
_EXTRA_NOT_IN_KEY = {"baseline", "fail-on", "cache"}
_FORMAT = 2  # 2: findings carry `related` locations
_CODE_SUFFIXES = (".py", ".toml", ".json", ".scm")


def _jsonable(value):
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "value"):
        return value.value
    raise TypeError(type(value).__name__)


def _code_digest(rule_classes) -> str:
    """Hash of hiplint's package sources and of the packages that hold the enabled rules (helpers
    beside the rules, e.g. rules/warp/_lanes.py, and their data files count too)."""
    roots = {Path(__file__).resolve().parent}
    lone: set[Path] = set()
    for r in rule_classes:
        mod = sys.modules.get(r.__module__)
        package = getattr(mod, "__package__", "") or ""
        if not package:
            if mod is not None and getattr(mod, "__file__", None):
                lone.add(Path(mod.__file__).resolve())  # a lone top-level module: just itself
            continue
        # The rule pack's package (e.g. hiplint.rules, wherever it is installed): all of it.
        top = sys.modules.get(".".join(package.split(".")[:2]))
        if top is not None and getattr(top, "__file__", None):
            roots.add(Path(top.__file__).resolve().parent)
    files = sorted(lone)
    for root in sorted(roots):
        files += sorted(p for p in root.rglob("*") if p.suffix in _CODE_SUFFIXES and "__pycache__" not in p.parts)[:5000]
    h = hashlib.sha256()
    for f in files:
        try:
            h.update(str(f).encode() + b"\0" + f.read_bytes())
        except OSError:
            pass
    return h.hexdigest()


def run_key(settings, rule_classes) -> str:
    from hiplint.cparse import GRAMMAR_VERSION

    fields = {k: v for k, v in dataclasses.asdict(settings).items() if k not in _NOT_IN_KEY}
    fields["extra"] = {k: v for k, v in settings.extra.items() if k not in _EXTRA_NOT_IN_KEY}
    blob = json.dumps({"hiplint": __version__, "grammar": GRAMMAR_VERSION, "settings": fields,
                       "rules": sorted(r.code for r in rule_classes), "code": _code_digest(rule_classes)},
                      sort_keys=True, default=_jsonable)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def finding_to_json(f: Finding) -> dict:
    d = {k: getattr(f, k) for k in ("code", "name", "message", "path", "line", "column", "end_line",
                                    "end_column", "start_byte", "end_byte", "checklist", "fingerprint", "source_line")}
    d["severity"] = f.severity.value
    d["impact"] = f.impact.value
    d["related"] = [[r.path, r.line, r.column, r.end_line, r.end_column, r.message] for r in f.related]
    if f.fix is not None:
        d["fix"] = {"title": f.fix.title, "applicability": int(f.fix.applicability), "isolation": f.fix.isolation,
                    "edits": [[e.start, e.end, e.content] for e in f.fix.edits]}
    return d


# Enum members by value: calling the enum classes was a fifth of a warm scan's time reading entries.
_SEVERITY = {m.value: m for m in Severity}
_IMPACT = {m.value: m for m in Impact}
_APPLICABILITY = {int(m): m for m in Applicability}


_TYPES = {"code": str, "name": str, "message": str, "path": str, "line": int, "column": int, "end_line": int,
          "end_column": int, "start_byte": int, "end_byte": int, "checklist": (str, type(None)),
          "fingerprint": (str, type(None)), "source_line": str}


def finding_from_json(d: dict) -> Finding:
    # An entry is JSON that anything may have written (another version, a hand edit): a field of the
    # wrong type makes it a miss (TypeError below), never a report that crashes later.
    for key, kind in _TYPES.items():
        if not isinstance(d[key], kind) or isinstance(d[key], bool):
            raise TypeError(f"cache entry field {key!r}")
    fix = None
    if d.get("fix"):
        fx = d["fix"]
        fix = Fix(tuple(Edit(s, e, c) for s, e, c in fx["edits"]), _APPLICABILITY[fx["applicability"]],
                  fx["title"], fx["isolation"])
    related = []
    for r in d["related"]:
        path, line, column, end_line, end_column, message = r
        if not (isinstance(path, str) and isinstance(message, str)
                and all(type(n) is int for n in (line, column, end_line, end_column))):
            raise TypeError("cache entry field 'related'")
        related.append(RelatedLocation(path, line, column, end_line, end_column, message))
    return Finding(code=d["code"], name=d["name"], message=d["message"], severity=_SEVERITY[d["severity"]],
                   path=d["path"], line=d["line"], column=d["column"], end_line=d["end_line"],
                   end_column=d["end_column"], start_byte=d["start_byte"], end_byte=d["end_byte"], fix=fix,
                   impact=_IMPACT[d["impact"]], checklist=d["checklist"], fingerprint=d["fingerprint"],
                   source_line=d["source_line"], related=tuple(related))


class Cache:
    """Per-file entries under one run key. Picklable: workers receive it and write their own entries."""

    def __init__(self, directory: str):
        self.directory = directory

    @classmethod
    def for_run(cls, settings, rule_classes) -> "Cache":
        base = settings.cache_dir
        if not os.path.isabs(base):
            base = os.path.join(str(settings.root), base)
        _mark(base)
        return cls(os.path.join(base, __version__, run_key(settings, rule_classes)))

    @staticmethod
    def plans_directory(settings) -> str:
        """Where the engine saves the split of the rules' query patterns (hiplint.engine): shared by
        every run key, since the file name hashes the patterns themselves."""
        base = settings.cache_dir
        if not os.path.isabs(base):
            base = os.path.join(str(settings.root), base)
        _mark(base)
        return os.path.join(base, __version__, "plans")

    @staticmethod
    def entry_key(display: str, language: str, data: bytes, path: str | None = None) -> str:
        from hiplint.layout import hip_twin

        h = hashlib.sha256()
        h.update(display.encode("utf-8", "surrogateescape") + b"\0" + language.encode() + b"\0")
        # Whether the file has a HIP twin decides its findings too (hiplint.layout): adding a hip/
        # directory beside cuda/ must not serve the entries written before.
        h.update(b"cuda-backend\0" if path is not None and hip_twin(path) else b"\0")
        # So does what the project's AMD build says about it (hiplint.amdbuild): a CMakeLists.txt that
        # starts compiling it as HIP, or stops, must not serve the entries written before.
        if path is not None:
            from hiplint.amdbuild import facts_for
            h.update(facts_for(path).signature() + b"\0")
        h.update(data)
        return h.hexdigest()

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key + ".json")

    def load(self, key: str):
        """(findings, notes) stored for `key`, or None on a miss or an unreadable entry."""
        try:
            with open(self._path(key), encoding="utf-8") as fh:
                d = json.load(fh)
            if d.get("format") != _FORMAT:
                return None
            for path, digest in d.get("depends", ()):
                if not _unchanged(path, digest):
                    return None  # a header it read changed: lint the file again
            return [finding_from_json(x) for x in d["findings"]], list(d["notes"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def store(self, key: str, findings, notes, depends: dict | None = None) -> None:
        path = self._path(key)
        entry = {"format": _FORMAT, "findings": [finding_to_json(f) for f in findings], "notes": notes}
        if depends:
            entry["depends"] = sorted(depends.items())
        blob = json.dumps(entry)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            replace_file(path, blob.encode("utf-8"), durable=False)
        except OSError:
            pass  # a read-only or full disk makes the next scan slower, never wrong


def _unchanged(path: str, digest: str) -> bool:
    from hiplint.headers import ABSENT, LISTING, digest_of, listing_digest

    if digest == ABSENT:
        return not os.path.exists(path)  # an include looked for there and not found
    if digest.startswith(LISTING):
        return listing_digest(path) == digest  # a directory whose sources were looked through
    try:
        with open(path, "rb") as fh:
            return digest_of(fh.read()) == digest
    except OSError:
        return False


def _mark(base: str) -> None:
    """Create the cache root with a .gitignore and CACHEDIR.TAG so it is never committed or backed up."""
    try:
        os.makedirs(base, exist_ok=True)
        gi = os.path.join(base, ".gitignore")
        if not os.path.exists(gi):
            with open(gi, "w") as fh:
                fh.write("# Created by hiplint\n*\n")
        tag = os.path.join(base, "CACHEDIR.TAG")
        if not os.path.exists(tag):
            with open(tag, "w") as fh:
                fh.write("Signature: 8a477f597d28d172789f06886806bc55\n# hiplint cache: https://bford.info/cachedir/\n")
    except OSError:
        pass
