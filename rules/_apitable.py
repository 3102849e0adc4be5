"""Library API tables (rules/<family>/api.toml) and the table-driven rule base they feed.

A table row: `cuda` (the CUDA name), `hip` (the hipify-renamed name, absent when there is none),
`status` (supported | differs | unsupported | not-supported-at-runtime), `since` (the ROCm release
whose headers first declare the HIP name), `note` (one line), `source` (keys of the file's
[sources] table). Rules look names up in both spellings, so hiplint works before and after hipify.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from hiplint import CudaRule

STATUSES = ("supported", "differs", "unsupported", "not-supported-at-runtime")
VERSION_RE = re.compile(r"^\d+\.\d+(\.\d+)?$")
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


@lru_cache(maxsize=None)
def load_table(family: str) -> ApiTable:
    """The table of `rules/<family>/api.toml`, shipped as package data of hiplint.rules."""
    text = resources.files("hiplint.rules").joinpath(family, "api.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
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
