"""Settings: `[tool.hiplint]` in pyproject.toml, or hiplint.toml / .hiplint.toml, found upward.

Unknown keys are an error that names the key: a typo in a CI gate's configuration must fail the gate,
not silently turn a rule off.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from hiplint.model import Severity
from hiplint.preproc import HIP_MACROS


class ConfigError(Exception):
    """A configuration or usage problem: exit code 2."""


DEFAULT_TARGETS = ("gfx90a", "gfx942", "gfx1100")
DEFAULT_ROCM = "7.0"
# `amd_detail`/`nvidia_detail`: copies of ROCm's own HIP headers (`include/hip/amd_detail/`) that
# projects vendor; they implement HIP, they are not code to port.
DEFAULT_EXCLUDE = (".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox",
                   ".hiplint_cache", ".mypy_cache", ".pytest_cache", "_deps", "amd_detail", "nvidia_detail")
CONFIG_NAMES = (".hiplint.toml", "hiplint.toml", "pyproject.toml")
OUTPUT_FORMATS = ("full", "concise", "json")  # extended by hiplint.emit at import time

# The AMD GPU architectures hiplint knows, with the wave size HIP compute runs on each: the one table
# `targets` (configuration and --target) is checked against. gfx8 and gfx9 (GCN/CDNA: MI100 gfx908,
# MI200 gfx90a, MI300 gfx942, MI350 gfx950) run 64-lane waves; gfx10, gfx11 and gfx12 (RDNA) run
# 32-lane waves by default. A name not listed is a configuration error: a typo (`gfx9420`) must not
# quietly become a wave32 target that turns most wave64 rules off.
KNOWN_TARGETS: dict[str, int] = {
    **{a: 64 for a in ("gfx801", "gfx802", "gfx803", "gfx805", "gfx810",
                       "gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a", "gfx90c",
                       "gfx940", "gfx941", "gfx942", "gfx950")},
    **{a: 32 for a in ("gfx1010", "gfx1011", "gfx1012", "gfx1013",
                       "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
                       "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153",
                       "gfx1200", "gfx1201")},
}


def wave_size_of(arch: str) -> int:
    """The wave size HIP compute runs on `arch` (a key of KNOWN_TARGETS)."""
    return KNOWN_TARGETS[arch]


def parse_version(text: str) -> tuple[int, int]:
    m = re.match(r"^\s*(\d+)(?:\.(\d+))?(?:\.\d+)?\s*$", str(text))
    if not m:
        raise ConfigError(f"invalid ROCm version {text!r}: expected MAJOR.MINOR, e.g. \"6.2\"")
    return int(m.group(1)), int(m.group(2) or 0)


@dataclass
class Settings:
    root: Path = field(default_factory=Path.cwd)  # directory of the config file, or cwd
    config_path: Path | None = None
    select: tuple[str, ...] | None = None  # None: the default set
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    include: tuple[str, ...] = ()  # extra globs to include beyond the known source types
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    force_exclude: bool = False
    severity: dict[str, Severity] = field(default_factory=dict)
    targets: tuple[str, ...] = DEFAULT_TARGETS
    # Where `targets` comes from: "default", "configuration", "--target", BUILD_TARGETS (asked for, not
    # yet read), or the build file that lists the project's AMD architectures (amdbuild.declared_targets).
    targets_source: str = "default"
    rocm_version: tuple[int, int] = parse_version(DEFAULT_ROCM)
    hip_macros: frozenset[str] = HIP_MACROS
    report_nvidia_branches: bool = False
    fix: bool = False
    unsafe_fixes: bool = False
    output_format: str = "full"
    rule_options: dict[str, dict] = field(default_factory=dict)
    jobs: int = 0  # 0: all cores
    cache_dir: str = ".hiplint_cache"
    extra: dict[str, object] = field(default_factory=dict)  # keys owned by later features

    @property
    def wave_sizes(self) -> frozenset[int]:
        return frozenset(wave_size_of(a) for a in self.targets)

    def with_overrides(self, **kw) -> "Settings":
        return replace(self, **{k: v for k, v in kw.items() if v is not None})


def available_cores() -> int:
    """The CPUs this process may run on (its affinity), which a container or `taskset` can make fewer
    than the machine's."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _strs(key: str, value) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"`{key}` must be a list of strings")
    return tuple(value)


def _str(key: str, value) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"`{key}` must be a string")
    return value


def _bool(key: str, value) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"`{key}` must be true or false")
    return value


# `targets = "build"` / `--target build`: the architectures the project's own build lists.
BUILD_TARGETS = "build"


def _targets(value) -> tuple[str, ...]:
    archs = _strs("targets", value)
    if archs == (BUILD_TARGETS,):
        return archs
    for a in archs:
        base = a.split(":")[0]  # target features (`gfx90a:xnack+`) do not change the wave size
        if base not in KNOWN_TARGETS:
            raise ConfigError(f"`targets`: {a!r} is not a known AMD GPU architecture (known: "
                              f"{', '.join(KNOWN_TARGETS)})")
    if not archs:
        raise ConfigError("`targets` must name at least one architecture")
    return tuple(a.split(":")[0] for a in archs)


def _severity_map(value) -> dict[str, Severity]:
    if not isinstance(value, dict):
        raise ConfigError("`severity` must be a table of selector = \"error\"|\"warning\"|\"info\"")
    out = {}
    for k, v in value.items():
        try:
            out[k] = Severity(v)
        except ValueError:
            raise ConfigError(f"`severity.{k}`: {v!r} is not one of error, warning, info") from None
    return out


def _pfi(value) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise ConfigError("`per-file-ignores` must be a table of glob = [codes]")
    return {k: _strs(f"per-file-ignores.{k}", v) for k, v in value.items()}


# key -> (Settings attribute, converter). Later features register theirs in EXTRA_KEYS.
KEYS = {
    "select": ("select", lambda v: _strs("select", v)),
    "extend-select": ("extend_select", lambda v: _strs("extend-select", v)),
    "ignore": ("ignore", lambda v: _strs("ignore", v)),
    "per-file-ignores": ("per_file_ignores", _pfi),
    "include": ("include", lambda v: _strs("include", v)),
    "extend-include": ("include", lambda v: _strs("extend-include", v)),
    "exclude": ("exclude", lambda v: _strs("exclude", v)),
    "extend-exclude": ("extend_exclude", lambda v: _strs("extend-exclude", v)),
    "respect-gitignore": ("respect_gitignore", lambda v: _bool("respect-gitignore", v)),
    "force-exclude": ("force_exclude", lambda v: _bool("force-exclude", v)),
    "severity": ("severity", _severity_map),
    "targets": ("targets", _targets),
    "rocm-version": ("rocm_version", parse_version),
    "hip-macros": ("hip_macros", lambda v: HIP_MACROS | frozenset(_strs("hip-macros", v))),
    "report-nvidia-branches": ("report_nvidia_branches", lambda v: _bool("report-nvidia-branches", v)),
    "fix": ("fix", lambda v: _bool("fix", v)),
    "unsafe-fixes": ("unsafe_fixes", lambda v: _bool("unsafe-fixes", v)),
    "output-format": ("output_format", lambda v: _format(v)),
    "rule-options": ("rule_options", lambda v: _rule_options(v)),
    "jobs": ("jobs", lambda v: _int("jobs", v)),
    "cache-dir": ("cache_dir", lambda v: _str("cache-dir", v)),
}
# Keys whose values later features read from Settings.extra: name -> validator.
EXTRA_KEYS: dict[str, object] = {
    # CI gate (hiplint.gate): the baseline file, the severity that fails the run, the scan cache.
    "baseline": lambda v: _strs("baseline", v)[0],
    "fail-on": lambda v: _fail_on(v),
    "cache": lambda v: _bool("cache", v),
    # A skipped file (too large, binary, nested too deep, a stream that does not end) fails the run.
    "fail-on-skipped": lambda v: _bool("fail-on-skipped", v),
}


def _fail_on(v):
    if v not in ("error", "warning", "info"):
        raise ConfigError(f"`fail-on`: {v!r} is not one of error, warning, info")
    return v


def _int(key, v):
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise ConfigError(f"`{key}` must be a non-negative integer")
    return v


def _format(v):
    if v not in OUTPUT_FORMATS:
        raise ConfigError(f"`output-format`: {v!r} is not one of {', '.join(OUTPUT_FORMATS)}")
    return v


def _rule_options(v):
    if not isinstance(v, dict) or not all(isinstance(x, dict) for x in v.values()):
        raise ConfigError("`rule-options` must be a table of CODE = { option = value }")
    return v


def apply_table(settings: Settings, table: dict, source: str) -> Settings:
    kw = {}
    extra = dict(settings.extra)
    for key, value in table.items():
        if key in KEYS:
            attr, conv = KEYS[key]
            kw[attr] = conv(value)
        elif key in EXTRA_KEYS:
            extra[key] = EXTRA_KEYS[key](value)
        else:
            import difflib

            names = sorted(list(KEYS) + list(EXTRA_KEYS))
            close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
            if not close and "_" in key:  # `fail_on` for `fail-on`
                close = difflib.get_close_matches(key.replace("_", "-"), names, n=1, cutoff=0.6)
            if close:
                raise ConfigError(f"{source}: unknown key `{key}` in hiplint settings; did you mean `{close[0]}`?")
            raise ConfigError(f"{source}: unknown key `{key}` in hiplint settings (known keys: {', '.join(names)})")
    if "targets" in kw:
        if kw["targets"] == (BUILD_TARGETS,):
            kw["targets"], kw["targets_source"] = settings.targets, BUILD_TARGETS
        else:
            kw["targets_source"] = "configuration"
    if "extend-include" in table and "include" in table:
        kw["include"] = _strs("include", table["include"]) + _strs("extend-include", table["extend-include"])
    return replace(settings, extra=extra, **kw)


def read_config_file(path: Path) -> dict | None:
    """The hiplint table of `path`, or None when a pyproject.toml has no [tool.hiplint]."""
    import tomllib  # imported here: a run without a configuration file never parses TOML

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: `tool` must be a table")
    table = tool.get("hiplint") if path.name == "pyproject.toml" or ("tool" in data and len(data) == 1) else data
    if path.name != "pyproject.toml" and table is None:
        table = data
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: `tool.hiplint` must be a table")
    return table


def find_config(start: Path) -> Path | None:
    """The nearest configuration file at or above `start`, looked for up to the repository root (the
    first directory with a `.git`), as ruff does: a stray ~/pyproject.toml above a checkout must not
    change its settings. Outside any repository the walk stops below the home directory (a file there
    counts only when the scan starts there); `--config` names any file."""
    start = start.resolve()
    d = start if start.is_dir() else start.parent
    chain = [d, *d.parents]
    root = next((i for i, p in enumerate(chain) if (p / ".git").exists()), None)
    if root is not None:
        chain = chain[:root + 1]
    else:
        try:
            home = Path.home().resolve()
        except (RuntimeError, OSError):
            home = None
        if home is not None and home in chain[1:]:
            chain = chain[:chain.index(home)]
    for directory in chain:
        for name in CONFIG_NAMES:
            p = directory / name
            if p.is_file():
                if name == "pyproject.toml" and read_config_file(p) is None:
                    continue
                return p
    return None


def load_settings(paths: list[str], config: str | None = None, isolated: bool = False) -> Settings:
    if isolated:
        return Settings()
    if config:
        path = Path(config)
        if not path.is_file():
            raise ConfigError(f"--config: {config}: no such file")
    else:
        start = Path(paths[0]) if paths and paths[0] != "-" else Path.cwd()
        if not start.exists():
            start = Path.cwd()
        path = find_config(start)
    if path is None:
        return Settings()
    table = read_config_file(path) or {}
    return apply_table(Settings(root=path.resolve().parent, config_path=path), table, str(path))
