"""Counts a lead plans with, shared by the `html` report and the `checklist`: per directory, per
rule family, per impact and per AMD target.

A finding counts for a target when its rule's problem exists at that target's wave size
(`Rule.wave_sizes`: a wave64-only rule does not apply to gfx1100, a wave32-only one not to gfx942).
"""
from __future__ import annotations

import posixpath
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from hiplint.config import DEFAULT_TARGETS, wave_size_of
from hiplint.model import Finding, Impact

ALL_WAVES = frozenset({32, 64})


def rule_wave_sizes() -> dict[str, frozenset[int]]:
    """code -> the wave sizes its rule's problem exists on (every loaded rule; {} if none load)."""
    try:
        from hiplint.registry import load_registry

        return {r.code: frozenset(r.wave_sizes) for r in load_registry().rules}
    except Exception:  # a broken pack must not break a report; every finding then counts everywhere
        return {}


def targets_of(report) -> tuple[str, ...]:
    return tuple(getattr(report.settings, "targets", None) or DEFAULT_TARGETS)


def family(code: str) -> str:
    """The rule family: the letters before the number (`WRP001` -> `WRP`)."""
    m = re.match(r"[A-Za-z]+", code)
    return m.group(0) if m else code


def directory_of(rel: str) -> str:
    d = posixpath.dirname(rel)
    return d or "."


@dataclass
class Row:
    """Counts of one group of findings (a directory, a rule family)."""

    name: str
    files: set = field(default_factory=set)
    findings: int = 0
    impacts: Counter = field(default_factory=Counter)
    targets: Counter = field(default_factory=Counter)

    def add(self, rel: str, f: Finding, applies: tuple[str, ...]) -> None:
        self.files.add(rel)
        self.findings += 1
        self.impacts[f.impact] += 1
        for t in applies:
            self.targets[t] += 1


@dataclass
class Summary:
    targets: tuple[str, ...]
    impacts: list[Impact]  # the impacts that occur, most harmful first
    directories: list[Row]
    families: list[Row]
    total: Row
    files_scanned: int
    files_by_impact: dict[Impact, int]  # files with at least one finding of the impact

    @property
    def files_clean(self) -> int:
        return max(0, self.files_scanned - len(self.total.files))


def summarize(report, relpath=None) -> Summary:
    relpath = relpath or report.relpath
    targets = targets_of(report)
    waves = rule_wave_sizes()
    by_dir: dict[str, Row] = {}
    by_family: dict[str, Row] = {}
    total = Row("Total")
    files_by_impact: dict[Impact, set] = defaultdict(set)
    rel_cache: dict[str, str] = {}
    for f in report.findings:
        rel = rel_cache.get(f.path)
        if rel is None:
            rel = rel_cache[f.path] = relpath(f.path)
        sizes = waves.get(f.code, ALL_WAVES)
        applies = tuple(t for t in targets if wave_size_of(t) in sizes)
        d = directory_of(rel)
        by_dir.setdefault(d, Row(d)).add(rel, f, applies)
        fam = family(f.code)
        by_family.setdefault(fam, Row(fam)).add(rel, f, applies)
        total.add(rel, f, applies)
        files_by_impact[f.impact].add(rel)
    impacts = sorted(total.impacts, key=lambda i: i.order)
    directories = sorted(by_dir.values(), key=lambda r: r.name)
    families = sorted(by_family.values(), key=lambda r: (-r.findings, r.name))
    return Summary(targets, impacts, directories, families, total, report.files_scanned,
                   {i: len(s) for i, s in files_by_impact.items()})


IMPACT_SHORT = {
    Impact.COMPILE: "compile",
    Impact.SILENT: "silent wrong",
    Impact.HANG: "hang",
    Impact.RUNTIME: "run-time",
    Impact.PERFORMANCE: "performance",
    Impact.PORTABILITY: "portability",
}


def target_label(target: str) -> str:
    return f"{target} (wave{wave_size_of(target)})"
