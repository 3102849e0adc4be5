"""The built-in rules at a glance (`rules/manifest.json`), so that a scan imports only the rules it needs.

Importing every rule module costs about 70 ms, a sixth of a one-file run (a pre-commit hook), and
most rules can do nothing in a given file: their query patterns wait behind strings the file does
not contain (hiplint.triggers), or they look at other languages. The manifest lists, per built-in
rule, what selecting and configuring needs (code, name, pack, default selection), what discovery
needs (languages, wave sizes) and what the file must contain for the rule to report anything
(`wants`: one of these strings; null: any file of its languages). It also holds the split of all
built-in rules' query patterns (hiplint.queryplan's layout), from which the plan of any subset of
them is made without compiling them all.

    python -m hiplint.manifest            # write it (after adding or changing a rule)
    python -m hiplint.manifest --check    # exit 1 when it is missing or stale

The manifest carries the SHA-256 of everything it was made from (every file of the rules package,
hiplint's modules that decide patterns and triggers, the grammar's version). A manifest that does
not match the sources is not used: the scan imports every rule, as without one (slower, never
wrong). `tests/test_manifest.py` fails while the shipped one is stale.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache

MANIFEST_NAME = "manifest.json"
_FORMAT = 1
# hiplint's own modules whose code decides what the manifest says: the rule base class and the meta
# rules, how rules are found, and how patterns are split and gated.
_CORE = ("rule.py", "meta.py", "registry.py", "queryplan.py", "triggers.py", "lookup.py", "cparse.py",
         "renames.py", "lazy.py", "manifest.py")
_SUFFIXES = (".py", ".toml", ".json", ".scm")


def rules_dir() -> str:
    import hiplint.rules  # the package's __init__ is a docstring

    return os.path.dirname(os.path.abspath(hiplint.rules.__file__))


def source_digest() -> str:
    """SHA-256 of what the manifest is made from (about 4 ms: some 130 files, 1.9 MB)."""
    import tree_sitter

    from hiplint.cparse import GRAMMAR_VERSION

    h = hashlib.sha256(json.dumps([_FORMAT, GRAMMAR_VERSION, getattr(tree_sitter, "__version__", "")]).encode())
    here = os.path.dirname(os.path.abspath(__file__))
    for name in _CORE:
        h.update(b"\0hiplint/" + name.encode() + b"\0")
        with open(os.path.join(here, name), "rb") as fh:
            h.update(fh.read())
    root = rules_dir()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
        for name in sorted(filenames):
            if not name.endswith(_SUFFIXES) or (rel == "." and name == MANIFEST_NAME):
                continue
            h.update(b"\0rules/" + f"{rel}/{name}".encode() + b"\0")
            with open(os.path.join(dirpath, name), "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()


def query_digest(rule) -> str:
    """What a rule instance's patterns and declared triggers are, as the plan's layout saw them."""
    return hashlib.sha256("\0".join([rule.query] + sorted(rule.triggers)).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class RuleEntry:
    """A built-in rule as the manifest lists it: enough to select it and to know whether a file needs
    it, without importing it. `load()` gives the rule class."""

    code: str
    name: str
    module: str
    qualname: str
    pack: str
    default_enabled: bool
    kind: str  # cuda (a CudaRule) | file (a FileRule) | meta (reported by the engine itself)
    unit: bool  # a CudaRule with a check_unit
    languages: frozenset
    wave_sizes: frozenset
    custom_enabled: bool  # overrides Rule.enabled_for: the class decides
    wants: frozenset | None  # bytes; None: it may report in any file of its languages

    def load(self):
        obj = importlib.import_module(self.module)
        for part in self.qualname.split("."):
            obj = getattr(obj, part)
        return obj

    def enabled_for(self, settings) -> bool:
        """Rule.enabled_for of an instance, without importing the rule unless it overrides it."""
        if self.custom_enabled:
            return self.load()().enabled_for(settings)
        return bool(self.wave_sizes & settings.wave_sizes)

    def needed_for(self, data: bytes, language: str) -> bool:
        """Whether the rule could report anything in a file of `language` whose (decoded) bytes are
        `data`: the engine runs a CudaRule only on C-family files ("cuda"), a FileRule only on its
        languages, and neither where none of the strings it wants occurs (hiplint.triggers)."""
        if self.kind == "meta":
            return True
        if self.kind == "cuda" and language != "cuda":
            return False
        if self.kind == "file" and language not in self.languages:
            return False
        return self.wants is None or any(w in data for w in self.wants)


@dataclass(frozen=True)
class Manifest:
    entries: tuple[RuleEntry, ...]
    order: dict  # code -> position in `entries` (registry order)
    queries: dict  # code -> query_digest of a rule with patterns
    layout: dict  # QueryPlan.layout of every built-in rule with patterns, rules named by code
    digest: str = ""  # source_digest() of the rules package and hiplint's modules it was checked against


@lru_cache(maxsize=1)
def load() -> Manifest | None:
    """The shipped manifest, or None when it is missing, unreadable or not made from these sources."""
    try:
        with open(os.path.join(rules_dir(), MANIFEST_NAME), "rb") as fh:
            data = json.loads(fh.read())
        if data.get("format") != _FORMAT or data.get("digest") != source_digest():
            return None
        entries = tuple(RuleEntry(
            code=r["code"], name=r["name"], module=r["module"], qualname=r["qualname"], pack=r["pack"],
            default_enabled=r["default_enabled"], kind=r["kind"], unit=r["unit"],
            languages=frozenset(r["languages"]), wave_sizes=frozenset(r["wave_sizes"]),
            custom_enabled=r["custom_enabled"],
            wants=None if r["wants"] is None else frozenset(w.encode("utf-8", "surrogateescape") for w in r["wants"]))
            for r in data["rules"])
        return Manifest(entries, {e.code: i for i, e in enumerate(entries)}, dict(data["queries"]), data["layout"],
                        data["digest"])
    except (OSError, ValueError, KeyError, TypeError, ImportError):
        return None


def resolve(rules) -> list:
    """Rule classes for a mix of classes and entries, in the same order. A rule module that fails to
    import is a ConfigError naming its pack, as hiplint.registry.load_registry reports it."""
    from hiplint.config import ConfigError

    out = []
    for r in rules:
        if isinstance(r, RuleEntry):
            try:
                r = r.load()
            except Exception as exc:
                raise ConfigError(f"cannot load rule pack {r.pack!r}: {type(exc).__name__}: {exc}") from None
        out.append(r)
    return out


def languages_of(rules, settings) -> set[str]:
    """hiplint.engine.Linter(settings, rules).languages, for manifest entries (what discovery looks for)."""
    from hiplint.engine import META_CODES

    out: set[str] = set()
    for r in rules:
        if r.code in META_CODES:
            continue
        if r.kind == "cuda" and r.unit:
            adds = {"cuda"}  # a check_unit rule: C-family files
        elif r.kind == "file":
            adds = set(r.languages)
        else:
            continue  # query patterns alone add no language
        # Asked only when it would add one: a rule that decides itself (enabled_for) is then imported.
        if not adds <= out and r.enabled_for(settings):
            out |= adds
    return out


def plan_layout(cuda_rules) -> dict | None:
    """The layout (QueryPlan.from_layout) of these rule instances' patterns, cut from the manifest's:
    None unless every one is a built-in rule whose patterns are the ones the manifest was made from,
    in the manifest's order."""
    m = load()
    if m is None:
        return None
    index = {}
    last = -1
    for i, rule in enumerate(cuda_rules):
        cls = type(rule)
        pos = m.order.get(rule.code)
        if pos is None or pos <= last:
            return None
        entry = m.entries[pos]
        if entry.module != cls.__module__ or entry.qualname != cls.__qualname__ \
                or m.queries.get(rule.code) != query_digest(rule):
            return None
        index[rule.code] = i
        last = pos

    def cut(members):
        return [[index[code], pid, text] for code, pid, text in members if code in index]

    gates = [[wants, cut(members)] for wants, members in m.layout["gates"]]
    return {"base": cut(m.layout["base"]),
            "gates": [g for g in gates if g[1]],
            "lookups": [[wants, index[code], pid, text] for wants, code, pid, text in m.layout["lookups"]
                        if code in index]}


# Making it -------------------------------------------------------------------------------------

def build() -> dict:
    """The manifest of the built-in rules (and the engine's own), as JSON data."""
    from hiplint.queryplan import QueryPlan
    from hiplint.registry import load_registry
    from hiplint.rule import CudaRule, FileRule, Rule, has_query

    classes = [r for r in load_registry().rules if r.pack in ("builtin", "hiplint")
               and (r.__module__.startswith("hiplint.rules.") or r.__module__ == "hiplint.meta")]
    instances = [r() for r in classes]
    cuda = [r for r in instances if isinstance(r, CudaRule) and has_query(r)]
    unit = [r for r in instances if isinstance(r, CudaRule) and type(r).check_unit is not CudaRule.check_unit]
    plan = QueryPlan.build(cuda, unit)
    always: set[str] = set()
    wants: dict[str, set[bytes]] = {}
    for rule, _ in plan.base_owners:
        if rule is not None:
            always.add(rule.code)
    for gate in plan.gates:
        for rule, _ in gate.owners:
            wants.setdefault(rule.code, set()).update(gate.wants)
    for lookup in plan.lookups:
        wants.setdefault(lookup.owner[0].code, set()).update(lookup.wants)
    for rule in unit:
        if rule.code in plan.rule_wants:
            wants.setdefault(rule.code, set()).update(plan.rule_wants[rule.code])
        else:
            always.add(rule.code)
    rows = []
    for cls, rule in zip(classes, instances):
        if isinstance(rule, CudaRule):
            kind = "cuda"
            runs = rule in cuda or rule in unit
            want = None if (rule.code in always or not runs) else wants.get(rule.code, set())
        elif isinstance(rule, FileRule):
            kind = "file"
            want = set(rule.trigger_bytes) if rule.triggers else None
        else:
            kind, want = "meta", None
        rows.append({
            "code": cls.code, "name": cls.name, "module": cls.__module__, "qualname": cls.__qualname__,
            "pack": cls.pack, "default_enabled": bool(cls.default_enabled), "kind": kind,
            "unit": rule in unit, "languages": sorted(cls.languages), "wave_sizes": sorted(cls.wave_sizes),
            "custom_enabled": type(rule).enabled_for is not Rule.enabled_for,
            "wants": None if want is None else sorted(w.decode("utf-8", "surrogateescape") for w in want),
        })
    layout = plan.layout(cuda)
    codes = [r.code for r in cuda]

    def named(entry):
        return [codes[entry[0]], entry[1], entry[2]]

    return {
        "format": _FORMAT,
        "digest": source_digest(),
        "rules": rows,
        "queries": {r.code: query_digest(r) for r in cuda},
        "layout": {"base": [named(e) for e in layout["base"]],
                   "gates": [[w, [named(e) for e in members]] for w, members in layout["gates"]],
                   "lookups": [[e[0]] + named(e[1:]) for e in layout["lookups"]]},
    }


def render() -> str:
    return json.dumps(build(), ensure_ascii=False, indent=0, sort_keys=True) + "\n"


def main(argv=None) -> int:
    """Write rules/manifest.json (`--check`: exit 1 when it is missing or stale)."""
    import sys

    argv = list(sys.argv[1:] if argv is None else argv)
    target = os.path.join(rules_dir(), MANIFEST_NAME)
    want = render()
    try:
        with open(target, encoding="utf-8") as fh:
            have = fh.read()
    except OSError:
        have = None
    if have == want:
        return 0
    if "--check" in argv:
        print(f"stale: rules/{MANIFEST_NAME}: the rules changed since it was made; run `python -m hiplint.manifest`")
        return 1
    with open(target, "w", encoding="utf-8") as fh:
        fh.write(want)
    print(f"wrote: rules/{MANIFEST_NAME}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
