"""The CUDA -> HIP rename table: data in `rules/rename/*.toml`, one file per family.

Each file has a `[family]` (title, source), and any of: `[prefix]` (from, to, names: names renamed by
the family's systematic prefix rule, e.g. cudaX -> hipX), `[rename]` (CUDA name = HIP name, for names that
break the pattern), `[unsupported]` (CUDA name = what to do: no HIP equivalent), `[headers]` and
`[unsupported_headers]` (include paths), `[namespaces]` (C++ namespaces, e.g. cub -> hipcub),
`[header_guards]` (include-guard macro of a CUDA header = the header; API004), and `[versioned]` for
names whose HIP name changed between ROCm releases: `[versioned.cublasGemmEx]` with
`"6.0" = "hipblasGemmEx_v2"` and `"7.0" = "hipblasGemmEx"` means the first from ROCm 6.0 and the second
from 7.0 on. The rename follows the configured `rocm-version` (`RenameTable.for_rocm`): the entry of the
newest release not after it, or the oldest entry below them all. `load_table()` gives the table for
hiplint's default ROCm version.
Only names listed here are ever renamed: a user's own `cudaHelper_t` is not in the table.
`hiplint migrate` renames with it; rule API001/API002 report its `unsupported` entries.
"""
from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path


class TableError(ValueError):
    pass


@dataclass(frozen=True)
class Family:
    key: str
    title: str
    source: str


@dataclass
class RenameTable:
    names: dict[str, str] = field(default_factory=dict)  # CUDA identifier -> HIP identifier
    unsupported: dict[str, str] = field(default_factory=dict)  # CUDA identifier -> what to do instead
    headers: dict[str, str] = field(default_factory=dict)  # CUDA include path -> HIP include path
    unsupported_headers: dict[str, str] = field(default_factory=dict)
    namespaces: dict[str, str] = field(default_factory=dict)
    header_guards: dict[str, str] = field(default_factory=dict)  # CUDA header include-guard macro -> header
    family_of: dict[str, str] = field(default_factory=dict)  # any key above -> family key
    families: dict[str, Family] = field(default_factory=dict)
    # CUDA identifier -> ((ROCm version, HIP identifier), ...), oldest first; `names` holds the entry
    # for `rocm_version`.
    versioned: dict[str, tuple[tuple[tuple[int, int], str], ...]] = field(default_factory=dict)
    rocm_version: tuple[int, int] | None = None

    def family(self, name: str) -> Family | None:
        key = self.family_of.get(name)
        return self.families.get(key) if key else None

    def for_rocm(self, version) -> "RenameTable":
        """The table for a port to ROCm `version` ((major, minor)): versioned names resolved for it."""
        version = tuple(version)[:2]
        if version == self.rocm_version or not self.versioned:
            return self
        names = dict(self.names)
        names.update({cuda: pick_version(entries, version) for cuda, entries in self.versioned.items()})
        return dataclasses.replace(self, names=names, rocm_version=version)


def pick_version(entries, version: tuple[int, int]) -> str:
    """The HIP name of the newest entry not after `version`; the oldest one when all are after it."""
    chosen = entries[0][1]
    for since, hip in entries:
        if since <= version:
            chosen = hip
    return chosen


def table_dir() -> Path:
    import hiplint.rules  # the package's __init__: its folder, without importlib.resources (zipfile, tempfile)

    return Path(os.path.dirname(os.path.abspath(hiplint.rules.__file__))) / "rename"


def _put(table: RenameTable, section: dict, key: str, value: str, family: str, where: str) -> None:
    for other_name, other in (("names", table.names), ("unsupported", table.unsupported),
                              ("headers", table.headers), ("unsupported_headers", table.unsupported_headers),
                              ("namespaces", table.namespaces), ("header_guards", table.header_guards)):
        if key in other:
            raise TableError(f"{where}: {key!r} is already in {other_name} (family {table.family_of.get(key)})")
    section[key] = value
    table.family_of[key] = family


def load_from(directory: Path) -> RenameTable:
    table = RenameTable()
    files = sorted(directory.glob("*.toml"))
    if not files:
        raise TableError(f"{directory}: no rename tables")
    from hiplint import tomlcopy

    for path in files:
        where = path.name
        try:
            data = tomlcopy.load(path)  # from its parsed copy, X.json, when that matches
        except OSError as exc:
            raise TableError(f"{where}: {exc}") from None
        except ValueError as exc:
            import tomllib

            if isinstance(exc, tomllib.TOMLDecodeError):
                raise TableError(f"{where}: {exc}") from None
            raise
        fam = data.get("family") or {}
        if not fam.get("title") or not fam.get("source"):
            raise TableError(f"{where}: [family] needs a title and a source")
        key = path.stem
        table.families[key] = Family(key, fam["title"], fam["source"])
        prefix = data.get("prefix")
        if prefix:
            src, dst = prefix["from"], prefix["to"]
            for name in prefix.get("names", ()):
                if not name.startswith(src):
                    raise TableError(f"{where}: {name!r} does not start with the prefix {src!r}")
                _put(table, table.names, name, dst + name[len(src):], key, where)
        for name, hip in (data.get("rename") or {}).items():
            _put(table, table.names, name, hip, key, where)
        for name, advice in (data.get("unsupported") or {}).items():
            _put(table, table.unsupported, name, advice, key, where)
        for name, hip in (data.get("headers") or {}).items():
            _put(table, table.headers, name, hip, key, where)
        for name, advice in (data.get("unsupported_headers") or {}).items():
            _put(table, table.unsupported_headers, name, advice, key, where)
        for name, hip in (data.get("namespaces") or {}).items():
            _put(table, table.namespaces, name, hip, key, where)
        for name, header in (data.get("header_guards") or {}).items():
            _put(table, table.header_guards, name, header, key, where)
        for name, by_version in (data.get("versioned") or {}).items():
            entries = _versions(by_version, f"{where}: [versioned.{name}]")
            _put(table, table.names, name, pick_version(entries, _default_rocm()), key, where)
            table.versioned[name] = entries
    table.rocm_version = _default_rocm()
    # A HIP name must never be a CUDA key: a second migration has to change nothing.
    for mapping in (table.names, table.headers, table.namespaces):
        for cuda, hip in mapping.items():
            if hip in mapping:
                raise TableError(f"{table.family_of[cuda]}.toml: {cuda!r} -> {hip!r}, which is itself renamed")
    for cuda, entries in table.versioned.items():
        for _, hip in entries:
            if hip in table.names:
                raise TableError(f"{table.family_of[cuda]}.toml: {cuda!r} -> {hip!r}, which is itself renamed")
    return table


def _default_rocm() -> tuple[int, int]:
    from hiplint.config import DEFAULT_ROCM, parse_version
    return parse_version(DEFAULT_ROCM)


def _versions(by_version, where: str) -> tuple[tuple[tuple[int, int], str], ...]:
    from hiplint.config import ConfigError, parse_version
    if not isinstance(by_version, dict) or not by_version:
        raise TableError(f"{where}: expected ROCm version = HIP name pairs")
    entries = []
    for version, hip in by_version.items():
        try:
            entries.append((parse_version(version), hip))
        except ConfigError as exc:
            raise TableError(f"{where}: {exc}") from None
        if not isinstance(hip, str) or not hip:
            raise TableError(f"{where}: {version!r} needs a HIP name")
    return tuple(sorted(entries))


@lru_cache(maxsize=1)
def load_table() -> RenameTable:
    return load_from(table_dir())


# Names shaped like NVIDIA's APIs (runtime, driver, libraries, NVTX, NVRTC). A name of this shape that
# is neither in the table nor declared by the project is reported (API003): it may be an API the table
# does not know yet, and a migration must not keep it silently.
API_NAME = re.compile(r"^(cuda[A-Z]|cu[A-Z][a-z]|CU[A-Z]+_[A-Z]|CUDA_[A-Z]|CUDART_|cublas[A-Z]|cublasLt[A-Z]|CUBLAS_|"
                      r"curand[A-Z_]|CURAND_|cusolver[A-Z]|CUSOLVER_|cusparse[A-Z]|CUSPARSE_|cufft[A-Z]|CUFFT_|"
                      r"nvtx[A-Z]|NVTX_|nvrtc[A-Z]|NVRTC_)")
# Where a name is declared: the child in one of these fields of a declaring node.
_DECLARING_FIELDS = ("declarator", "name")
_NOT_DECLARING = frozenset({"template_function", "template_type", "template_method", "qualified_identifier",
                            "field_expression", "preproc_ifdef", "preproc_elifdef", "call_expression",
                            "namespace_definition"})
# Declarators whose declared name is a child without a field name (`T& name`, `T&& name`).
_UNNAMED_DECLARATORS = frozenset({"reference_declarator", "structured_binding_declarator"})
_NAME_TYPES = frozenset({"identifier", "type_identifier", "field_identifier"})


def declared_names(units) -> set[str]:
    """Names a file declares or defines: variables, functions, parameters, types, fields, enumerators,
    macros. Those are the user's, whatever they look like (`cudaHelper_t`, `cudaOk`)."""
    from hiplint.cparse import iter_nodes

    out: set[str] = set()
    for unit in units:
        for node in iter_nodes(unit.root, _NAME_TYPES):
            parent = node.parent
            if parent is None or parent.type in _NOT_DECLARING:
                continue
            if parent.type in _UNNAMED_DECLARATORS:
                out.add(unit.text(node))
                continue
            for fld in _DECLARING_FIELDS:
                if any(c.id == node.id for c in parent.children_by_field_name(fld)):
                    out.add(unit.text(node))
                    break
    return out

