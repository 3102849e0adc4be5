"""`checklist`: a Markdown migration checklist to paste into an issue or a CI job summary.

Totals first (files, findings by category and severity, what was fixed automatically, what is left
by hand), then one section per category, most harmful first (compile breaks, then silent wrong
results: `Impact.order`), with a checkbox per remaining site. Findings of one rule in one file share
a checkbox that lists their lines, so a large repository gives a list a team can work through. A
finding's related locations (the uses of a reported constant, the other options of a build file) are
sub-items under its checkbox.
"""
from __future__ import annotations

from collections import Counter, defaultdict

from hiplint.emit import Report, emitter, rule_url
from hiplint.model import Applicability, Finding, Severity

SEVERITIES = (Severity.ERROR, Severity.WARNING, Severity.INFO)
MAX_LINES_LISTED = 12  # a grouped checkbox names this many lines, then "and N more"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _todo(group: list[Finding]) -> str:
    """What to do: the rule's manual step, else the message (the same for the whole group)."""
    first = group[0]
    if first.checklist:
        return _one_line(first.checklist)
    messages = {f.message for f in group}
    return _one_line(first.message if len(messages) == 1 else first.message + " (and similar)")


def _lines(group: list[Finding]) -> str:
    lines = sorted({f.line for f in group})
    shown = ", ".join(str(n) for n in lines[:MAX_LINES_LISTED])
    if len(lines) > MAX_LINES_LISTED:
        shown += f" and {len(lines) - MAX_LINES_LISTED} more"
    return shown


def _fixable(group: list[Finding], hints: tuple[str, str]) -> str:
    """The way to the group's fix (none for a suggestion, including a fix a migration could not make)."""
    levels = {f.fix.applicability for f in group if f.fix is not None}
    if Applicability.SAFE in levels:
        return f" *(fix: {hints[0]})*"
    if Applicability.UNSAFE in levels:
        return f" *(fix, {hints[1]})*"
    return ""


def _also(group: list[Finding]) -> list[str]:
    """Sub-items under a checkbox: the related locations of its findings (the other places each
    stands for, e.g. the uses of a reported constant), MAX_LINES_LISTED of them, then a count."""
    related = sorted({(r.path, r.line, r.message) for f in group for r in f.related})
    out = []
    for path, line, message in related[:MAX_LINES_LISTED]:
        out.append(f"  - also `{path}:{line}`" + (f": {_one_line(message)}" if message else ""))
    if len(related) > MAX_LINES_LISTED:
        out.append(f"  - and {len(related) - MAX_LINES_LISTED} more")
    return out


def _item(group: list[Finding], hints: tuple[str, str]) -> str:
    f = group[0]
    if len(group) == 1:
        where = f"`{f.path}:{f.line}`"
    else:
        where = f"`{f.path}` lines {_lines(group)} ({len(group)}×)"
    head = f"- [ ] {where} [{f.code}]({rule_url(f.code)}) {f.severity.value}: {_todo(group)}{_fixable(group, hints)}"
    return "\n".join([head] + _also(group))


def _groups(findings: list[Finding]) -> list[list[Finding]]:
    by_key: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    for f in findings:
        by_key[(f.path, f.code)].append(f)
    groups = [sorted(g, key=Finding.sort_key) for g in by_key.values()]
    # Worst first, then by place.
    groups.sort(key=lambda g: (-max(f.severity.rank for f in g), g[0].path, g[0].line, g[0].code))
    return groups


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _directory_table(report: Report) -> list[str]:
    """Per directory: files and findings, by impact and by target (the html report's table; a finding
    counts for a target when its rule's problem exists at the target's wave size)."""
    from hiplint.emit.summary import IMPACT_SHORT, summarize, target_label

    s = summarize(report, relpath=lambda p: p.replace("\\", "/"))  # the paths the items below show
    head = ["Directory", "files", "findings"] + [IMPACT_SHORT[i] for i in s.impacts] + [target_label(t) for t in s.targets]
    out = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for row in s.directories + [s.total]:
        cells = [len(row.files), row.findings] + [row.impacts.get(i, 0) for i in s.impacts] + [row.targets.get(t, 0) for t in s.targets]
        if row is s.total:
            out.append("| **Total** | " + " | ".join(f"**{c}**" for c in cells) + " |")
        else:
            out.append(f"| `{_cell(row.name)}` | " + " | ".join(str(c) for c in cells) + " |")
    return out + [""]


@emitter("checklist")
def checklist(report: Report) -> str:
    left = report.findings
    fixed = report.fixed
    out = ["# CUDA to AMD migration checklist", ""]
    files_with = len({f.path for f in left})
    out.append(f"{_plural(report.files_scanned, 'file')} scanned: "
               f"**{_plural(len(left), 'finding')} left by hand** in {_plural(files_with, 'file')}, "
               f"{len(fixed)} fixed automatically.")
    out.append("")
    impacts = sorted({f.impact for f in left}, key=lambda i: i.order)
    if left:
        out.append("| Category | " + " | ".join(s.value for s in SEVERITIES) + " | total |")
        out.append("|---|" + "---:|" * (len(SEVERITIES) + 1))
        for impact in impacts:
            counts = Counter(f.severity for f in left if f.impact == impact)
            out.append(f"| {impact.title} | " + " | ".join(str(counts.get(s, 0)) for s in SEVERITIES)
                       + f" | {sum(counts.values())} |")
        totals = Counter(f.severity for f in left)
        out.append("| **Total** | " + " | ".join(f"**{totals.get(s, 0)}**" for s in SEVERITIES)
                   + f" | **{len(left)}** |")
        out.append("")
    if left:
        out.extend(_directory_table(report))
    if fixed:
        by_rule = Counter(f.code for f in fixed)
        out.append("Fixed automatically: " + ", ".join(f"[{c}]({rule_url(c)}) ×{n}" for c, n in sorted(by_rule.items())) + ".")
        out.append("")
    if not left:
        out.append("Nothing left to do by hand.")
        return "\n".join(out) + "\n"
    for impact in impacts:
        part = [f for f in left if f.impact == impact]
        groups = _groups(part)
        out.append(f"## {impact.title} ({_plural(len(part), 'finding')}, {_plural(len(groups), 'item')})")
        out.append("")
        out.extend(_item(g, report.fix_hints) for g in groups)
        out.append("")
    return "\n".join(out)
