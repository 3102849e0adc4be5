"""Finding rules: the built-in pack and third-party packs, through one interface.

A pack registers under the entry-point group `hiplint.rules`; the value is a module (walked for
Rule subclasses, submodules included) or a callable returning rule classes. The built-in pack is
`hiplint.rules` itself. Third-party rules load but stay unselected until a selector names them, so a
pack installed as a dependency of something else cannot change a CI gate's result.
"""
from __future__ import annotations

import importlib
import inspect
import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType

from hiplint.config import ConfigError
from hiplint.rule import CODE_RE, NAME_RE, CudaRule, FileRule, Rule

BUILTIN_MODULE = "hiplint.rules"
GROUP = "hiplint.rules"


def _rules_in_module(module: ModuleType) -> list[type[Rule]]:
    found: dict[str, type[Rule]] = {}
    mods = [module]
    if hasattr(module, "__path__"):
        import pkgutil  # imported here: a scan from the manifest never walks the rules

        for info in pkgutil.walk_packages(module.__path__, module.__name__ + "."):
            mods.append(importlib.import_module(info.name))
    for mod in mods:
        for _, obj in inspect.getmembers(mod, inspect.isclass):
            if (issubclass(obj, Rule) and obj not in (Rule, CudaRule, FileRule) and obj.code
                    and obj.__module__ == mod.__name__):
                found[obj.code] = obj
    return list(found.values())


def _load_pack(target) -> list[type[Rule]]:
    if isinstance(target, ModuleType):
        return _rules_in_module(target)
    if callable(target):
        return list(target())
    raise TypeError("a hiplint.rules entry point must name a module or a callable")


def _validate(rule: type[Rule], pack: str, seen_codes: dict, seen_names: dict) -> None:
    if not CODE_RE.match(rule.code):
        raise ConfigError(f"rule pack {pack!r}: invalid code {rule.code!r} (expected e.g. WRP001)")
    if not NAME_RE.match(rule.name):
        raise ConfigError(f"rule pack {pack!r}: rule {rule.code} has invalid name {rule.name!r} (kebab-case)")
    if rule.code in seen_codes:
        raise ConfigError(f"rule code {rule.code} is defined by both {seen_codes[rule.code]!r} and {pack!r}")
    if rule.name in seen_names:
        raise ConfigError(f"rule name {rule.name} is defined by both {seen_names[rule.name]!r} and {pack!r}")
    seen_codes[rule.code] = pack
    seen_names[rule.name] = pack


@dataclass(frozen=True)
class Registry:
    rules: tuple[type[Rule], ...]

    def by_code(self, code: str) -> type[Rule] | None:
        code = code.upper()
        for r in self.rules:
            if r.code == code:
                return r
        return None

    def by_name_or_code(self, key: str) -> type[Rule] | None:
        for r in self.rules:
            if r.code == key.upper() or r.name == key:
                return r
        return None


def _declares_a_pack(text: str) -> bool:
    """Whether an entry_points.txt names a pack in GROUP other than the built-in one."""
    section = None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == GROUP and "=" in line and not line.startswith(("#", ";")):
            if line.split("=", 1)[1].strip() != BUILTIN_MODULE:
                return True
    return False


def _may_have_packs() -> bool:
    """False when no distribution on sys.path declares a third-party pack: importing
    importlib.metadata (about 60 ms, a fifth of a one-file scan) is then not needed. Anything this
    quick look cannot read (a zip on the path, an unreadable file) answers True: the full look decides."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except NotADirectoryError:
            return True  # a zip archive or an egg: importlib.metadata reads those
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                try:
                    with open(os.path.join(entry or ".", name, "entry_points.txt"), encoding="utf-8") as fh:
                        if _declares_a_pack(fh.read()):
                            return True
                except FileNotFoundError:
                    continue
                except (OSError, UnicodeDecodeError):
                    return True
    return False


def _pack_entry_points():
    if not _may_have_packs():
        return ()
    from importlib.metadata import entry_points

    return entry_points(group=GROUP)


@lru_cache(maxsize=1)
def load_registry() -> Registry:
    from hiplint import meta  # the engine's own rules (parse errors, suppressions)

    seen_codes: dict[str, str] = {}
    seen_names: dict[str, str] = {}
    rules: list[type[Rule]] = []
    packs: list[tuple[str, object]] = [("hiplint", meta), ("builtin", importlib.import_module(BUILTIN_MODULE))]
    for ep in _pack_entry_points():
        if ep.value.strip() == BUILTIN_MODULE:
            continue
        try:
            packs.append((ep.name, ep.load()))
        except Exception as exc:  # a broken pack must be named, not crash with a traceback
            dist = ep.dist.name if ep.dist else ep.name
            raise ConfigError(f"cannot load rule pack {ep.name!r} from {dist}: {type(exc).__name__}: {exc}") from None
    for pack_name, target in packs:
        try:
            pack_rules = _load_pack(target)
        except ConfigError:
            raise
        except Exception as exc:
            raise ConfigError(f"cannot load rule pack {pack_name!r}: {type(exc).__name__}: {exc}") from None
        for rule in sorted(pack_rules, key=lambda r: r.code):
            _validate(rule, pack_name, seen_codes, seen_names)
            if pack_name not in ("hiplint", "builtin"):
                rule = type(rule.__name__, (rule,), {"pack": pack_name, "__doc__": rule.__doc__,
                                                     "__module__": rule.__module__})
            rules.append(rule)
    return Registry(tuple(sorted(rules, key=lambda r: r.code)))


@lru_cache(maxsize=1)
def rule_index() -> Registry:
    """The rules to select from, without importing them where that can be avoided: the manifest's
    entries (hiplint.manifest.RuleEntry: code, name, pack, default selection; `load()` gives the class)
    when it is current and no third-party pack is declared; else `load_registry()`'s classes.
    Selection (select_rules) and the checks of the configuration work on either."""
    if not _may_have_packs():
        from hiplint import manifest

        m = manifest.load()
        if m is not None:
            return Registry(m.entries)
    return load_registry()


# Selection ------------------------------------------------------------------------------------

def _specificity(selector: str, rule: type[Rule]) -> int:
    """How precisely `selector` names `rule`: 0 no match, larger is more specific."""
    s = selector.strip()
    if s.upper() == "ALL":
        return 1
    if s == rule.name:
        return 100
    su = s.upper()
    if rule.code.startswith(su):
        return 1 + len(su)
    return 0


def validate_selectors(selectors, registry: Registry, option: str) -> None:
    for s in selectors:
        if s.upper() == "ALL":
            continue
        if not any(_specificity(s, r) for r in registry.rules):
            raise ConfigError(f"{option}: {s!r} matches no rule code, prefix or name (see `hiplint rules`)")


def is_selected(rule: type[Rule], select, extend_select, ignore) -> bool:
    """ruff's model: the most specific matching selector wins; `ignore` wins ties.

    Opt-in rules and third-party rules need a selector that names them (a code, prefix or name):
    `ALL` and the default set do not switch them on.
    """
    named_only = (not rule.default_enabled) or rule.pack not in ("builtin", "hiplint")

    def best(selectors):
        return max((_specificity(s, rule) for s in selectors
                    if not (named_only and s.strip().upper() == "ALL")), default=0)

    if select is None:
        base = 0 if named_only else 1
    else:
        base = best(select)
    chosen = max(base, best(extend_select))
    if not chosen:
        return False
    return chosen > max((_specificity(s, rule) for s in ignore), default=0)


def select_rules(settings, registry: Registry | None = None) -> list[type[Rule]]:
    registry = registry or load_registry()
    if settings.select is not None:
        validate_selectors(settings.select, registry, "select")
    validate_selectors(settings.extend_select, registry, "extend-select")
    validate_selectors(settings.ignore, registry, "ignore")
    # The other settings that name rules: a typo there would silently do nothing.
    for pattern, codes in settings.per_file_ignores.items():
        validate_selectors(codes, registry, f"per-file-ignores[{pattern!r}]")
    validate_selectors(settings.severity.keys(), registry, "severity")
    validate_selectors(settings.rule_options.keys(), registry, "rule-options")
    return [r for r in registry.rules if is_selected(r, settings.select, settings.extend_select, settings.ignore)]


def matches_any(rule_code: str, rule_name: str, selectors) -> bool:
    for s in selectors:
        su = s.strip().upper()
        if su == "ALL" or rule_code.startswith(su) or s.strip() == rule_name:
            return True
    return False
