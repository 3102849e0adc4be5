"""Library API tables (rules/<family>/api.toml) and the table-driven rule base they feed.

A table row: `cuda` (the CUDA name), `hip` (the hipify-renamed name, absent when there is none),
`status` (supported | differs | unsupported | not-supported-at-runtime), `since` (the ROCm release
whose headers first declare the HIP name), `note` (one line), `source` (keys of the file's
[sources] table). Rules look names up in both spellings, so hiplint works before and after hipify.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from hiplint import CudaRule, tomlcopy
from hiplint.lazy import lazy_re


class _Resources:
    """`importlib.resources.files` for hiplint.rules, a regular package on disk: its folder. The real
    one brings zipfile, tempfile and shutil (10 ms of a one-file run)."""

    @staticmethod
    def files(package: str):
        import importlib
        from pathlib import Path

        return Path(importlib.import_module(package).__file__).resolve().parent


resources = _Resources()

STATUSES = ("supported", "differs", "unsupported", "not-supported-at-runtime")
VERSION_RE = lazy_re(r"^\d+\.\d+(\.\d+)?$")
# Parents under which an identifier is a declaration or a member, not a use of the library's name.
_DECLARING = frozenset({"function_declarator", "field_expression", "enumerator", "preproc_def",
                        "preproc_function_def", "namespace_definition", "field_declaration"})


@dataclass(frozen=True)
class ApiRow:
    cuda: str
    hip: str
    kind: str
    family: str
    status: str
    since: str
    note: str
    source: str

    @property
    def since_tuple(self) -> tuple[int, ...]:
        return tuple(int(x) for x in self.since.split(".")) if self.since else ()


@dataclass(frozen=True)
class ApiTable:
    library: str
    sources: dict
    rows: tuple[ApiRow, ...]

    def by_name(self) -> dict[str, ApiRow]:
        """CUDA and HIP spellings -> row (HIP names shared by several CUDA names keep the first)."""
        out: dict[str, ApiRow] = {}
        for r in self.rows:
            out.setdefault(r.cuda, r)
            if r.hip and r.hip != "int":
                out.setdefault(r.hip, r)
        return out


# Each api.toml has a parsed copy beside it, api.json, with the SHA-256 of the TOML it was made from
# (hiplint.tomlcopy): reading it takes a few milliseconds where parsing the cuSOLVER table as TOML takes
# about 0.1 s (a sixth of a one-file run). A copy that does not match its TOML is ignored (the TOML is
# parsed), so a stale one costs time, never correctness. `python -m hiplint.tomlcopy` (or
# `python -m hiplint.rules._apitable`) writes them; a test checks that the shipped ones are current.
PARSED_NAME = "api.json"
_parsed_copy = tomlcopy.copy_text


def read_table_data(family: str) -> dict:
    """The parsed `rules/<family>/api.toml` (from its api.json when that matches it)."""
    folder = resources.files("hiplint.rules").joinpath(family)
    raw = folder.joinpath("api.toml").read_bytes()
    try:
        copy = folder.joinpath(PARSED_NAME).read_bytes()
    except OSError:
        copy = None
    return tomlcopy.from_copy(raw, copy)


@lru_cache(maxsize=None)
def load_table(family: str) -> ApiTable:
    """The table of `rules/<family>/api.toml`, shipped as package data of hiplint.rules."""
    data = read_table_data(family)
    rows = tuple(ApiRow(cuda=r["cuda"], hip=r.get("hip", ""), kind=r.get("kind", ""), family=r.get("family", ""),
                        status=r["status"], since=r.get("since", ""), note=r.get("note", ""),
                        source=r.get("source", "")) for r in data.get("api", ()))
    return ApiTable(family, dict(data.get("sources", {})), rows)


@lru_cache(maxsize=None)
def names_with(family: str, statuses: frozenset[str], exclude: frozenset[str] = frozenset()) -> dict[str, ApiRow]:
    return {n: r for n, r in load_table(family).by_name().items()
            if r.status in statuses and n not in exclude and r.cuda not in exclude}


def any_of_query(names) -> str:
    """One pattern for identifiers and type names in the set: calls, types, enumerators, arguments."""
    quoted = " ".join(f'"{n}"' for n in sorted(names))
    # A cheap prefix test first: a long #any-of? list checked against every identifier of a file
    # was the most expensive query of the whole rule set.
    prefixes = sorted({n[:5] for n in names})
    prefix = "^(" + "|".join(re.escape(x) for x in prefixes) + ")"
    return f'([(identifier) (type_identifier)] @name (#match? @name "{prefix}") (#any-of? @name {quoted}))'


def is_library_use(node) -> bool:
    """False for a declaration of the same name, a member, or a name qualified by a user namespace."""
    parent = node.parent
    if parent is None:
        return True
    if parent.type in _DECLARING:
        return False
    if parent.type == "qualified_identifier":
        scope = parent.child_by_field_name("scope")
        return scope is None  # `::curandCreateGenerator` is the library's; `mylib::curand_init` is not
    if parent.type in ("init_declarator", "declaration", "parameter_declaration", "pointer_declarator",
                       "reference_declarator", "array_declarator") and node.type == "identifier":
        # `int curandSetStream = 0;` declares a variable of that name; a use would be an initializer.
        decl = parent.child_by_field_name("declarator")
        return decl is None or decl.id != node.id
    return True


def spelled(row: ApiRow, name: str) -> str:
    return "HIP" if name != row.cuda else "CUDA"


class TableRule(CudaRule):
    """Reports uses of the table names whose status is in `statuses` (both spellings)."""

    family = ""
    statuses: frozenset[str] = frozenset()
    # Names whose problems a semantic rule of the family reports with more precision.
    exclude: frozenset[str] = frozenset()
    in_macros = True

    def table_names(self) -> dict[str, ApiRow]:
        return names_with(self.family, self.statuses, self.exclude)

    def check(self, ctx, captures):
        names = self.table_names()
        for node in captures.get("name", ()):
            text = ctx.text(node)
            row = names.get(text)
            if row is None or not is_library_use(node):
                continue
            self.report_row(ctx, node, text, row)

    def report_row(self, ctx, node, text, row):  # pragma: no cover - subclasses
        raise NotImplementedError


class VersionGate:
    """Rows whose HIP name appeared after the configured ROCm version are unavailable there."""

    @staticmethod
    def too_new(ctx, row: ApiRow) -> bool:
        return bool(row.since) and row.since_tuple[:2] > tuple(ctx.rocm_version)[:2]


def families() -> list[str]:
    root = resources.files("hiplint.rules")
    return sorted(d.name for d in root.iterdir() if d.is_dir() and d.joinpath("api.toml").is_file())


def main(argv=None) -> int:
    """Write each api.toml's api.json (`--check`: exit 1 when one is missing or stale)."""
    import sys

    argv = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in argv
    stale = []
    for family in families():
        folder = resources.files("hiplint.rules").joinpath(family)
        want = _parsed_copy(folder.joinpath("api.toml").read_bytes())
        target = folder.joinpath(PARSED_NAME)
        have = target.read_text(encoding="utf-8") if target.is_file() else None
        if have != want:
            stale.append(family)
            if not check:
                with open(str(target), "w", encoding="utf-8") as fh:
                    fh.write(want)
    for family in stale:
        print(f"{'stale' if check else 'wrote'}: rules/{family}/{PARSED_NAME}")
    return 1 if (check and stale) else 0


if __name__ == "__main__":
    raise SystemExit(main())
