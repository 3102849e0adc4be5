"""Settings: `[tool.hiplint]` in pyproject.toml, or hiplint.toml / .hiplint.toml, found upward.

Unknown keys are an error that names the key: a typo in a CI gate's configuration must fail the gate,
not silently turn a rule off.
"""
from __future__ import annotations

import re
import tomllib
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

_ARCH_RE = re.compile(r"^gfx[0-9a-f]{3,4}$")


def wave_size_of(arch: str) -> int:
    """gfx9 (GCN/CDNA: MI100, MI200 gfx90a, MI300 gfx942, MI350 gfx950) runs 64-lane waves;
    gfx10, gfx11 and gfx12 (RDNA) run 32-lane waves for HIP compute by default."""
    digits = arch[3:]
    major = int(digits[:-2]) if len(digits) > 2 else int(digits[0])
    return 64 if major <= 9 else 32


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


def _targets(value) -> tuple[str, ...]:
    archs = _strs("targets", value)
    for a in archs:
        base = a.split(":")[0]
        if not _ARCH_RE.match(base):
            raise ConfigError(f"`targets`: {a!r} is not an AMD GPU architecture such as gfx942")
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
    if "extend-include" in table and "include" in table:
        kw["include"] = _strs("include", table["include"]) + _strs("extend-include", table["extend-include"])
    return replace(settings, extra=extra, **kw)


def read_config_file(path: Path) -> dict | None:
    """The hiplint table of `path`, or None when a pyproject.toml has no [tool.hiplint]."""
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
    start = start.resolve()
    d = start if start.is_dir() else start.parent
    for directory in [d, *d.parents]:
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
