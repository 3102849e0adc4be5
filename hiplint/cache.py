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

An entry is trusted only when it is whole and was made here: every field is checked (one that is not
what hiplint writes is a miss, never a crash), and each entry carries an HMAC-SHA256 over its run key,
entry key and content, keyed with a per-user secret kept outside the repository
(`$XDG_CACHE_HOME/hiplint/key`, else `~/.cache/hiplint/key`, created 0600 on first use). An entry
edited by hand (`"findings": []`), committed to a repository or copied from another machine is a miss.
"""
from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import os
import re
import sys
from pathlib import Path

from hiplint import __version__
from hiplint.fix import replace_file
from hiplint.model import Applicability, Edit, Finding, Fix, Impact, RelatedLocation, Severity

# Settings that change how findings are shown or gated, not which findings a file has.
_NOT_IN_KEY = {"output_format", "fix", "unsafe_fixes", "jobs", "cache_dir", "config_path", "extra"}
# Keys in Settings.extra that only gate or format results.
_EXTRA_NOT_IN_KEY = {"baseline", "fail-on", "cache", "fail-on-skipped"}
_FORMAT = 3  # 2: findings carry `related` locations; 3: entries carry a MAC
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
    tops: set[str] = set()  # packages already looked at (Path.resolve is 0.1 ms a rule)
    for r in rule_classes:
        # A manifest entry (hiplint.manifest.RuleEntry) names its module without it being imported.
        name = getattr(r, "module", None) if not isinstance(r, type) else r.__module__
        mod = sys.modules.get(name)
        package = getattr(mod, "__package__", "") or "" if mod is not None else name.rpartition(".")[0]
        if not package:
            if mod is not None and getattr(mod, "__file__", None):
                lone.add(Path(mod.__file__).resolve())  # a lone top-level module: just itself
            continue
        # The rule pack's package (e.g. hiplint.rules, wherever it is installed): all of it.
        top_name = ".".join(package.split(".")[:2])
        if top_name in tops:
            continue
        tops.add(top_name)
        top = sys.modules.get(top_name)
        if top is None and mod is None:
            import importlib

            top = importlib.import_module(top_name)  # a package's __init__, not the rules'
        if top is not None and getattr(top, "__file__", None):
            roots.add(Path(top.__file__).resolve().parent)
    # The built-in rules' package, whose every code and data file this run already hashed to check the
    # manifest (hiplint.manifest): that digest stands for them (also where the package sits inside
    # hiplint's own, as installed), so they are read once per run.
    covered = {root: d for root in roots if (d := _manifest_digest(root))}
    files = [str(p) for p in sorted(lone)]
    h = hashlib.sha256()
    for root, digest in sorted(covered.items()):
        h.update(f"{root}\0manifest:{digest}\0".encode())
    skip = {str(root) for root in covered}
    for root in sorted(roots):
        if root not in covered:
            files += _code_files(str(root), skip)[:5000]
    for f in files:
        try:
            with open(f, "rb") as fh:
                h.update(f.encode() + b"\0" + fh.read())
        except OSError:
            pass
    return h.hexdigest()


def _manifest_digest(root: Path) -> str:
    """The digest of the rules package at `root` when this run already checked its manifest (a scan
    from manifest entries), else ''. Never loads the manifest itself."""
    manifest = sys.modules.get("hiplint.manifest")
    if manifest is None or not manifest.load.cache_info().currsize:
        return ""
    m = manifest.load()
    if m is None or not m.digest:
        return ""
    try:
        return m.digest if Path(manifest.rules_dir()).resolve() == root else ""
    except OSError:
        return ""


def _code_files(root: str, skip=frozenset()) -> list[str]:
    """The code and data files under `root` (no __pycache__, nothing under the folders `skip`),
    sorted: os.walk, several times quicker than Path.rglob on hiplint's 200 files."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__" and os.path.join(dirpath, d) not in skip]
        out.extend(os.path.join(dirpath, n) for n in filenames if os.path.splitext(n)[1] in _CODE_SUFFIXES)
    return sorted(out)


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


def _is(value, kind) -> bool:
    return isinstance(value, kind) and not isinstance(value, bool)


def finding_from_json(d: dict) -> Finding:
    # An entry is JSON that anything may have written (another version, a hand edit): a field of the
    # wrong type makes it a miss (TypeError below), never a report that crashes later.
    if not isinstance(d, dict):
        raise TypeError("cache entry finding")
    for key, kind in _TYPES.items():
        if not _is(d[key], kind):
            raise TypeError(f"cache entry field {key!r}")
    fix = None
    if d.get("fix"):
        fx = d["fix"]
        if not (isinstance(fx, dict) and isinstance(fx["edits"], list) and _is(fx["title"], str)
                and _is(fx["isolation"], (str, type(None))) and _is(fx["applicability"], int)):
            raise TypeError("cache entry fix")
        edits = []
        for e in fx["edits"]:
            if not (isinstance(e, list) and len(e) == 3 and _is(e[0], int) and _is(e[1], int) and _is(e[2], str)):
                raise TypeError("cache entry edit")
            edits.append(Edit(*e))
        fix = Fix(tuple(edits), _APPLICABILITY[fx["applicability"]], fx["title"], fx["isolation"])
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

    def __init__(self, directory: str, secret: bytes | None = None):
        self.directory = directory
        # The key entries are signed with: an entry another key signed (another user's or machine's,
        # or none) is a miss. None: no key could be had; the cache is then neither read nor written.
        self.secret = secret

    @classmethod
    def for_run(cls, settings, rule_classes) -> "Cache | None":
        """The cache of this run, or None when hiplint cannot keep one where configured (the scan then
        lints everything). Raises ConfigError for a `cache-dir` hiplint must not use (cache_root)."""
        version_dir = _version_dir(settings)
        if version_dir is None:
            return None
        return cls(os.path.join(version_dir, run_key(settings, rule_classes)), user_key())

    @staticmethod
    def plans_directory(settings) -> str | None:
        """Where the engine saves the split of the rules' query patterns (hiplint.engine): shared by
        every run key, since the file name hashes the patterns themselves."""
        version_dir = _version_dir(settings)
        if version_dir is None or os.path.islink(os.path.join(version_dir, "plans")):
            return None
        return os.path.join(version_dir, "plans")

    @staticmethod
    def entry_key(display: str, language: str, data: bytes, path: str | None = None) -> str:
        from hiplint.layout import hip_twin

        h = hashlib.sha256()
        h.update(display.encode("utf-8", "surrogateescape") + b"\0" + language.encode() + b"\0")
        # Whether the file has a HIP twin decides its findings too (hiplint.layout): adding a hip/
        # directory beside cuda/ must not serve the entries written before.
        # So does what the project's AMD build says about it (hiplint.amdbuild): a CMakeLists.txt that
        # starts compiling it as HIP, or stops, must not serve the entries written before.
        if path is not None:
            from hiplint.amdbuild import facts_for
            facts = facts_for(path)
            if path.lower().endswith(".h") and b"register" in data:
                # A C header that only C sources include keeps `register` (NV008): who includes it decides.
                from hiplint.includers import c_only_header
                h.update(b"c-header\0" if c_only_header(path) else b"\0")
            h.update(b"cuda-backend\0" if hip_twin(path, facts.project_builds_for_amd) else b"\0")
            h.update(_library_guard_key(path, data))
            h.update(_off_switch_key(path, data))
            h.update(facts.signature() + b"\0")
            if facts.builds_for_amd:
                # A header included from NVIDIA-only code alone (hiplint.includers): an includer that
                # moves the include out of its `#ifdef` must not serve the entries written before.
                from hiplint.amdbuild import HEADERS
                from hiplint.includers import dead_header, includers, nvidia_only_header
                h.update(b"nvidia-header\0" if nvidia_only_header(path) else b"\0")
                h.update(b"dead-header\0" if dead_header(path) else b"\0")
                # Who includes a header decides what a shim they include first settles
                # (hiplint.headers.includers_define): a new includer must not serve the entries before.
                if os.path.splitext(path)[1].lower() in HEADERS:
                    for includer, at in sorted(includers(path)):
                        h.update(includer.encode("utf-8", "surrogateescape") + b"\0%d\0" % at)
        else:
            h.update(b"\0")
        h.update(data)
        return h.hexdigest()

    def _inside(self, directory: str) -> bool:
        """`directory` really lies under this cache's directory (no symbolic link leads elsewhere)."""
        checked = self.__dict__.setdefault("_checked", set())
        if directory not in checked:
            top = os.path.realpath(os.path.dirname(self.directory))
            if not os.path.lexists(directory):
                return os.path.realpath(os.path.dirname(directory)) == top  # a run directory still to make
            if os.path.commonpath([top, os.path.realpath(directory)]) != top:
                return False
            checked.add(directory)
        return True

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key + ".json")

    def _mac(self, key: str, body: dict) -> str:
        # The run key (the directory's name) and the entry key (path, language, content) are signed with
        # the body: an entry moved to another file's or run's place is a miss too.
        blob = json.dumps([os.path.basename(self.directory), key, body], sort_keys=True, separators=(",", ":"))
        return hmac.new(self.secret, blob.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()

    def load(self, key: str):
        """(findings, notes) stored for `key`, or None on a miss, an entry that is not whole, or one this
        user's key did not sign."""
        if self.secret is None:
            return None
        try:
            with open(self._path(key), encoding="utf-8") as fh:
                d = json.load(fh)
            if not isinstance(d, dict) or d.get("format") != _FORMAT or not isinstance(d.get("body"), dict):
                return None
            body, mac = d["body"], d.get("mac")
            if not isinstance(mac, str) or not hmac.compare_digest(mac, self._mac(key, body)):
                return None  # edited, forged, or made with another key
            findings, notes, depends = body["findings"], body["notes"], body.get("depends", [])
            if not (isinstance(findings, list) and isinstance(notes, list) and isinstance(depends, list)
                    and all(isinstance(n, str) for n in notes)):
                return None
            for dep in depends:
                if not (isinstance(dep, list) and len(dep) == 2 and all(isinstance(x, str) for x in dep)):
                    return None
            for path, digest in depends:
                if not _unchanged(path, digest):
                    return None  # a header it read changed: lint the file again
            return [finding_from_json(x) for x in findings], list(notes)
        except Exception:  # unreadable, cut short, or not what hiplint writes: a miss, never a crash
            return None

    def store(self, key: str, findings, notes, depends: dict | None = None) -> None:
        if self.secret is None:
            return  # no key to sign with: such files are simply linted again
        path = self._path(key)
        body = {"findings": [finding_to_json(f) for f in findings], "notes": list(notes)}
        if depends:
            body["depends"] = [list(x) for x in sorted(depends.items())]
        blob = json.dumps({"format": _FORMAT, "mac": self._mac(key, body), "body": body})
        try:
            if not self._inside(self.directory):
                return  # a link planted in the cache: never write through it
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if not self._inside(os.path.dirname(path)):
                return
            replace_file(path, blob.encode("utf-8"), durable=False)
        except OSError:
            pass  # a read-only or full disk makes the next scan slower, never wrong


def key_path() -> str:
    """Where this user's cache key lives: outside any repository, so no checkout can bring one."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "hiplint", "key")


_USER_KEY: list = []


def user_key() -> bytes | None:
    """This user's secret for signing cache entries: read, or created (0600) on first use. None when it
    can be neither read nor made (the cache is then off) or when the file is not this user's alone."""
    if _USER_KEY:
        return _USER_KEY[0]
    path = key_path()
    key = None
    for _ in range(2):
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            try:
                st = os.fstat(fd)
                data = os.read(fd, 4096)
            finally:
                os.close(fd)
            if os.name == "posix" and (st.st_uid != os.getuid() or st.st_mode & 0o077):
                break  # readable by others, or not ours: not a secret
            data = data.strip()
            if len(data) >= 32:
                key = data
            break
        except FileNotFoundError:
            import secrets  # imported here: the key is made once per user

            try:
                os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(secrets.token_hex(32).encode())
            except FileExistsError:
                continue  # another run made it first: read theirs
            except OSError:
                break
        except OSError:
            break
    _USER_KEY.append(key)
    return key


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


# Where the cache lives, and cleaning it ---------------------------------------------------------
#
# A repository's configuration chooses `cache-dir`, and `hiplint clean` deletes the cache: so hiplint
# only ever writes and deletes inside a directory it made and marked for itself.
#   - `cache-dir` must resolve (links followed) to a directory strictly inside the project root (the
#     configuration file's directory, or the working directory): never the root itself, an ancestor,
#     or anything outside (cache_root; a ConfigError, exit 2).
#   - An existing directory is used only when it is empty or carries hiplint's CACHEDIR.TAG; hiplint
#     writes that tag only into a directory it has just created or found empty (_claim).
#   - Entries live under `<cache-dir>/<version>/`, itself tagged; a link there, or anywhere under it,
#     is never written through (the cache is then not used, or the entry not stored).
#   - `clean` deletes only the tagged (or version-named) subdirectories, never following links, then
#     its own two files and the directory itself if nothing else is left in it (clean_cache).

TAG_NAME = "CACHEDIR.TAG"
TAG_TEXT = "Signature: 8a477f597d28d172789f06886806bc55\n# hiplint cache: https://bford.info/cachedir/\n"
GITIGNORE_TEXT = "# Created by hiplint\n*\n"
CACHE_DIR_NAME = ".hiplint_cache"
_VERSION_RE = re.compile(r"^\d+\.\d+(\.\d+)?([.+-][0-9A-Za-z.+-]*)?$")


def cache_root(settings) -> str:
    """The cache directory of `settings`, resolved; a ConfigError when it is not inside the project."""
    from hiplint.config import ConfigError

    root = os.path.realpath(str(settings.root))
    base = settings.cache_dir
    real = os.path.realpath(base if os.path.isabs(base) else os.path.join(root, base))
    if real == root or os.path.commonpath([root, real]) != root:
        where = "is the project root" if real == root else (
            "contains the project root" if os.path.commonpath([root, real]) == real else "lies outside the project root")
        raise ConfigError(f"cache-dir {base!r} resolves to {real}, which {where} {root}: hiplint keeps its cache "
                          f"in a directory of its own inside the project (e.g. {CACHE_DIR_NAME!r})")
    return real


def is_cache_dir(path: str) -> bool:
    """A directory hiplint made for its cache: its own CACHEDIR.TAG (links not followed)."""
    tag = os.path.join(path, TAG_NAME)
    if os.path.islink(path) or os.path.islink(tag):
        return False
    try:
        with open(tag, encoding="utf-8", errors="replace") as fh:
            return "hiplint cache" in fh.read(512)
    except OSError:
        return False


def _create(path: str, text: str) -> None:
    """A new file; never through an existing name or link (O_EXCL)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return
    with os.fdopen(fd, "w") as fh:
        fh.write(text)


def _being_made(directory: str, wait: float = 2.0) -> bool:
    """Whether another run is making `directory` hiplint's right now: it holds nothing but the tag and
    .gitignore, the tag not written yet. Waits up to `wait` seconds for the tag's text; False when it
    does not come (or the directory holds anything else: _claim then refuses it)."""
    import time

    deadline = time.monotonic() + wait
    while True:
        try:
            names = set(os.listdir(directory))
        except OSError:
            return False
        if TAG_NAME not in names or not names <= {TAG_NAME, ".gitignore"}:
            # The run that made it may have finished meanwhile (it writes the tag before anything else
            # goes in); any other file with no hiplint tag is not hiplint's.
            return is_cache_dir(directory)
        if is_cache_dir(directory):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)


def _claim(directory: str) -> bool:
    """Make `directory` hiplint's (create it, tag it), or find it hiplint's already. ConfigError for an
    existing directory (or file) that is not; False when it cannot be made (read-only disk)."""
    from hiplint.config import ConfigError

    if os.path.islink(directory) or (os.path.lexists(directory) and not os.path.isdir(directory)):
        raise ConfigError(f"cache-dir: {directory} exists and is not a directory hiplint made; refusing to use it")
    if os.path.isdir(directory):
        if is_cache_dir(directory) or _being_made(directory):
            return True
        if os.listdir(directory):
            raise ConfigError(f"cache-dir: {directory} is an existing directory that hiplint did not make "
                              f"(it holds other files and no hiplint {TAG_NAME}); refusing to use it as the "
                              f"cache: name a new or empty directory")
    try:
        os.makedirs(directory, exist_ok=True)
        _create(os.path.join(directory, TAG_NAME), TAG_TEXT)
        _create(os.path.join(directory, ".gitignore"), GITIGNORE_TEXT)
    except OSError:
        return False
    return is_cache_dir(directory)


def _version_dir(settings) -> str | None:
    """`<cache-dir>/<version>`, claimed, or None when no cache can be kept there."""
    base = cache_root(settings)
    if not _claim(base):
        return None
    version_dir = os.path.join(base, __version__)
    try:
        if not _claim(version_dir):
            return None
    except Exception:
        return None  # a link or a stray file where the version directory goes: no cache this run
    return version_dir


def clean_cache(base: str) -> list[str]:
    """Delete what hiplint keeps in the tagged directory `base`; the names it left there (not hiplint's).
    `base` itself goes only when nothing else is left in it."""
    kept = []
    for name in sorted(os.listdir(base)):
        full = os.path.join(base, name)
        if name in (TAG_NAME, ".gitignore"):
            continue
        if not os.path.islink(full) and os.path.isdir(full) and (is_cache_dir(full) or _VERSION_RE.match(name)):
            import shutil  # imported here: only `hiplint clean` removes directories

            shutil.rmtree(full)  # rmtree removes links inside, never what they point to
        else:
            kept.append(name)
    if not kept:
        for name in (".gitignore", TAG_NAME):
            full = os.path.join(base, name)
            if os.path.lexists(full) and not os.path.isdir(full):
                os.unlink(full)
        os.rmdir(base)
    return kept


def _off_switch_key(path: str, data: bytes) -> bytes:
    """The switches the project ships turned off that the file names (hiplint.includers.off_switches):
    uncommenting `//#define USE_TEXTURES_FIELDS` in another header must not serve the entries written before."""
    if b"define" not in data and b"#if" not in data:
        return b"\0"  # nothing a switch could change
    from hiplint.amdbuild import root_of
    from hiplint.includers import off_switches
    names = sorted(n for n in off_switches(root_of(os.path.abspath(path))) if n.encode() in data)
    return ("off:" + ",".join(names) + "\0").encode()


def _library_guard_key(path: str, data: bytes) -> bytes:
    """Whether other files of the project name the NVIDIA libraries whose include guards the file tests
    (`#ifdef CUBLAS_API_H_`): API004 is quiet where none does, so a file that starts using cuBLAS
    must not serve the entries written before."""
    from hiplint.amdbuild import root_of
    from hiplint.includers import library_of_header, library_users
    from hiplint.renames import load_table

    out = []
    for guard, header in sorted(load_table().header_guards.items()):
        library = library_of_header(header)
        if library is not None and guard.encode() in data:
            used = bool(library_users(root_of(os.path.abspath(path)), library) - {os.path.abspath(path)})
            out.append(f"{library}={int(used)}")
    return ("guards:" + ",".join(out) + "\0").encode()
