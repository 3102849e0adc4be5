"""`html`: one self-contained page a lead reads and attaches to a migration plan.

No network resource: the style sheet, the readiness chart (SVG) and the few lines of script that sort
the tables are inline. Sections: readiness (files that would compile and run on AMD as they are, files
with compile breaks, silent wrong results, performance notes), the change since `--baseline`, a
sortable table per directory and per rule family (counts by impact and by target: a finding counts
for a target when its rule's problem exists at that target's wave size), the top problems with their
rule pages, and every finding with its code frame and fix, one collapsed <details> per file so that
a report of 10,000 findings stays small and quick to open.

Everything taken from the scan (paths, messages, source lines, fix titles) is HTML-escaped.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from html import escape

from hiplint import __version__
from hiplint.emit import Report, emitter, rule_url
from hiplint.emit.summary import IMPACT_SHORT as _IMPACT_SHORT, Row, Summary, summarize, target_label
from hiplint.model import Applicability, Impact

TOP_PROBLEMS = 15
OPEN_FILES_UP_TO = 20  # with this many files or fewer, every file's findings are shown open

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1200px;padding:16px 24px;color:#1d2733;background:#fff}
h1{font-size:24px;margin:8px 0 4px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
.meta{color:#57606a;margin:0 0 12px}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}
.card{border:1px solid #d0d7de;border-radius:6px;padding:8px 14px;min-width:150px}
.card b{display:block;font-size:24px}.card span{color:#57606a;font-size:13px}
.ok b{color:#1a7f37}.ce b{color:#cf222e}.sr b{color:#bc4c00}.pf b{color:#8250df}
table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}
th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:right;white-space:nowrap}
td.t{white-space:normal;text-align:left}
th{background:#f6f8fa;cursor:pointer;user-select:none;white-space:nowrap}
td:first-child,th:first-child,th.l{text-align:left}
tr.total td{font-weight:bold;background:#f6f8fa}
td.z{color:#afb8c1}
details{border:1px solid #d0d7de;border-radius:6px;margin:6px 0;padding:0 10px}
summary{cursor:pointer;padding:6px 0;font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
.f{border-top:1px solid #eaeef2;padding:6px 0}
.f .h{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
.se{color:#cf222e;font-weight:bold}.sw{color:#9a6700;font-weight:bold}.si{color:#0969da;font-weight:bold}
.imp{color:#57606a;font-size:12px}
pre{background:#f6f8fa;margin:4px 0;padding:4px 8px;overflow-x:auto;font-size:12px;line-height:1.35}
pre i{font-style:normal;color:#8c959f}pre mark{background:#fff8c5}
.fix{color:#1a7f37}.help{color:#57606a}
a{color:#0969da}
"""

# Sorts a table by the clicked column: numbers numerically (descending first), text alphabetically.
# The total row stays last. It reads only the table's own cells.
_JS = """
document.querySelectorAll('table.sortable th').forEach(function(th){th.addEventListener('click',function(){
var t=th.closest('table'),b=t.tBodies[0],i=Array.prototype.indexOf.call(th.parentNode.children,th);
var rows=Array.prototype.slice.call(b.rows).filter(function(r){return !r.classList.contains('total')});
var tot=Array.prototype.slice.call(b.rows).filter(function(r){return r.classList.contains('total')});
var d=th.dataset.dir==='a'?'d':'a';th.dataset.dir=d;
rows.sort(function(x,y){var a=x.cells[i].textContent,c=y.cells[i].textContent,n=parseFloat(a),m=parseFloat(c);
var r=(!isNaN(n)&&!isNaN(m))?n-m:a.localeCompare(c);return d==='a'?r:-r;});
rows.concat(tot).forEach(function(r){b.appendChild(r)});});});
"""



def _e(text) -> str:
    return escape(str(text), quote=True)


def _num(n: int) -> str:
    return f'<td class="z">0</td>' if n == 0 else f"<td>{n}</td>"


def _table(first: str, rows: list[Row], summary: Summary, table_id: str) -> str:
    head = [f"<th>{_e(first)}</th>", "<th>files</th>", "<th>findings</th>"]
    head += [f'<th title="{_e(i.title)}">{_e(_IMPACT_SHORT[i])}</th>' for i in summary.impacts]
    head += [f"<th>{_e(target_label(t))}</th>" for t in summary.targets]
    out = [f'<table class="sortable" id="{table_id}"><thead><tr>{"".join(head)}</tr></thead><tbody>']
    for row in rows + [summary.total]:
        cls = ' class="total"' if row is summary.total else ""
        cells = [f"<td>{_e(row.name)}</td>", f"<td>{len(row.files)}</td>", f"<td>{row.findings}</td>"]
        cells += [_num(row.impacts.get(i, 0)) for i in summary.impacts]
        cells += [_num(row.targets.get(t, 0)) for t in summary.targets]
        out.append(f"<tr{cls}>{''.join(cells)}</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _bar(parts: list[tuple[str, int, str]], total: int) -> str:
    if total <= 0:
        return ""
    width, x, rects = 800, 0.0, []
    for label, n, color in parts:
        if n <= 0:
            continue
        w = width * n / total
        rects.append(f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="22" fill="{color}">'
                     f"<title>{_e(label)}: {n}</title></rect>")
        x += w
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="22" role="img" '
            f'aria-label="files by worst impact">{"".join(rects)}</svg>')


_COLORS = {None: "#2da44e", Impact.COMPILE: "#cf222e", Impact.SILENT: "#e16f24", Impact.HANG: "#a40e26",
           Impact.RUNTIME: "#bf8700", Impact.PERFORMANCE: "#8250df", Impact.PORTABILITY: "#8c959f"}


def _readiness(report: Report, summary: Summary, rel) -> str:
    worst: dict[str, Impact] = {}
    for f in report.findings:
        p = rel(f.path)
        if p not in worst or f.impact.order < worst[p].order:
            worst[p] = f.impact
    by_worst = Counter(worst.values())
    fi = summary.files_by_impact
    cards = [
        ("ok", summary.files_clean, "files compile and run on AMD as they are (no findings)"),
        ("ce", fi.get(Impact.COMPILE, 0), "files with compile or build breaks"),
        ("sr", fi.get(Impact.SILENT, 0), "files with silent wrong results"),
        ("pf", fi.get(Impact.PERFORMANCE, 0), "files with performance notes"),
    ]
    for impact in (Impact.HANG, Impact.RUNTIME, Impact.PORTABILITY):
        if fi.get(impact):
            cards.append(("", fi[impact], f"files with {impact.title.lower()}"))
    out = ['<div class="cards">']
    for cls, n, label in cards:
        out.append(f'<div class="card {cls}"><b>{n}</b><span>{_e(label)}</span></div>')
    out.append("</div>")
    parts = [("no findings", summary.files_clean, _COLORS[None])]
    parts += [(f"worst: {i.title}", by_worst.get(i, 0), _COLORS[i]) for i in sorted(Impact, key=lambda i: i.order)]
    bar = _bar(parts, summary.files_scanned if summary.files_scanned >= len(worst) else len(worst))
    if bar:
        legend = " · ".join(f'<span style="color:{c}">■</span> {_e(l)} ({n})' for l, n, c in parts if n)
        out.append(f"<p>Files by their worst problem:</p>{bar}<p class=\"meta\">{legend}</p>")
    return "\n".join(out)


def _baseline(report: Report) -> str:
    b = getattr(report, "baseline", None)
    if not b:
        return ""
    return (f'<h2 id="baseline">Since the baseline</h2><p>Baseline <code>{_e(b["path"])}</code>: '
            f'<b>{b["new"]}</b> new finding{"" if b["new"] == 1 else "s"} (listed in this report), '
            f'<b>{b["fixed"]}</b> fixed or changed (baseline entries that match nothing now), '
            f'{b["unchanged"]} unchanged (in the baseline, not listed).</p>')


def _top(report: Report) -> str:
    counts = Counter(f.code for f in report.findings)
    if not counts:
        return ""
    first = {}
    files = defaultdict(set)
    for f in report.findings:
        first.setdefault(f.code, f)
        files[f.code].add(f.path)
    ranked = sorted(counts, key=lambda c: (first[c].impact.order, -counts[c], c))[:TOP_PROBLEMS]
    out = ['<h2 id="top">Top problems</h2><table class="sortable"><thead><tr><th>rule</th><th>impact</th>'
           '<th>findings</th><th>files</th><th class="l">what it is</th></tr></thead><tbody>']
    for c in ranked:
        f = first[c]
        out.append(f'<tr><td><a href="{_e(rule_url(c))}">{_e(c)}</a> {_e(f.name)}</td><td>{_e(f.impact.value)}</td>'
                   f'<td>{counts[c]}</td><td>{len(files[c])}</td><td class="t">{_e(f.checklist or f.message)}</td></tr>')
    out.append("</tbody></table>")
    return "\n".join(out)


def _frame(report: Report, f) -> str:
    src = report.sources.get(f.path) if report.sources is not None else None
    lines: list[tuple[int, str]] = []
    if src is not None:
        first = max(1, f.line - 1)
        last = min(src.line_count(), f.line + 1 if f.end_line == f.line else min(f.end_line, f.line + 3))
        lines = [(n, src.line_text(n)) for n in range(first, last + 1)]
    elif f.source_line:
        lines = [(f.line, f.source_line)]
    if not lines:
        return ""
    width = len(str(lines[-1][0]))
    out = []
    for n, text in lines:
        text = _e(text.replace("\t", "    ").rstrip())
        if f.line <= n <= f.end_line:
            text = f"<mark>{text}</mark>"
        out.append(f"<i>{n:>{width}}</i> {text}")
    return "<pre>" + "\n".join(out) + "</pre>"


def _finding(report: Report, f, rel) -> str:
    """One finding, compactly (10,000 of them must stay a few megabytes): the code links to the rule's
    entry in the "Rules reported" section, which holds its page link and manual step once."""
    parts = [f'<div class="f"><div class="h">{f.line}:{f.column} <a href="#rule-{_e(f.code)}">{_e(f.code)}</a> '
             f'<span class="s{f.severity.value[0]}">{_e(f.severity.value)}</span> '
             f'<span class="imp">{_e(f.impact.value)}</span></div><div>{_e(f.message)}</div>', _frame(report, f)]
    if f.fix is not None:
        kind = {2: "Safe fix", 1: "Unsafe fix", 0: "Suggested change"}[int(f.fix.applicability)]
        parts.append(f'<div class="fix">{kind}: {_e(f.fix.title)}</div>')
    if f.related:
        places = ", ".join(dict.fromkeys(f"{rel(r.path)}:{r.line}" for r in f.related[:10]))
        more = f" and {len(f.related) - 10} more" if len(f.related) > 10 else ""
        parts.append(f'<div class="help">Also at: {_e(places + more)}</div>')
    parts.append("</div>")
    return "".join(parts)


def _rules(report: Report) -> str:
    """Every rule reported, once: its page, impact, count and the manual step."""
    first: dict[str, object] = {}
    counts = Counter(f.code for f in report.findings)
    for f in report.findings:
        first.setdefault(f.code, f)
    out = ['<h2 id="rules">Rules reported</h2><table class="sortable"><thead><tr><th>rule</th><th>impact</th>'
           '<th>severity</th><th>findings</th><th class="l">what to do</th></tr></thead><tbody>']
    for code in sorted(counts):
        f = first[code]
        todo = f.checklist or f.message
        out.append(f'<tr id="rule-{_e(code)}"><td><a href="{_e(rule_url(code))}">{_e(code)}</a> {_e(f.name)}</td>'
                   f'<td>{_e(f.impact.value)}</td><td>{_e(f.severity.value)}</td><td>{counts[code]}</td>'
                   f'<td class="t">{_e(todo)}</td></tr>')
    out.append("</tbody></table>")
    return "\n".join(out)


def _findings(report: Report, rel) -> str:
    by_file: dict[str, list] = defaultdict(list)
    for f in report.findings:
        by_file[rel(f.path)].append(f)
    if not by_file:
        return ""
    is_open = " open" if len(by_file) <= OPEN_FILES_UP_TO else ""
    out = [f'<h2 id="findings">Every finding ({len(report.findings)} in {len(by_file)} files)</h2>']
    for path in sorted(by_file):
        group = sorted(by_file[path], key=lambda f: (f.line, f.column, f.code))
        impacts = Counter(f.impact for f in group)
        tally = ", ".join(f"{n} {_IMPACT_SHORT[i]}" for i, n in sorted(impacts.items(), key=lambda kv: kv[0].order))
        out.append(f"<details{is_open}><summary>{_e(path)} — {len(group)} ({_e(tally)})</summary>")
        out.extend(_finding(report, f, rel) for f in group)
        out.append("</details>")
    return "\n".join(out)


@emitter("html")
def html_report(report: Report) -> str:
    cache: dict[str, str] = {}

    def rel(path: str) -> str:
        if path not in cache:
            cache[path] = report.relpath(path)
        return cache[path]

    summary = summarize(report, rel)
    n = len(report.findings)
    body = ["<h1>CUDA to AMD migration report</h1>",
            f'<p class="meta">hiplint {_e(__version__)} · {report.files_scanned} files scanned · {n} finding'
            f'{"" if n == 1 else "s"} · targets: {_e(", ".join(target_label(t) for t in summary.targets))}'
            f'{" · fixed automatically: " + str(len(report.fixed)) if report.fixed else ""}</p>']
    if report.incomplete:
        body.append("<p><b>Not every check ran</b>: a rule failed on some file (internal error).</p>")
    body.append('<h2 id="readiness">Readiness</h2>')
    body.append(_readiness(report, summary, rel))
    body.append(_baseline(report))
    if n:
        body.append('<h2 id="directories">By directory</h2><p class="meta">Click a column to sort. '
                    "A finding counts for a target when its problem exists at the target's wave size.</p>")
        body.append(_table("directory", summary.directories, summary, "by-directory"))
        body.append('<h2 id="families">By rule family</h2>')
        body.append(_table("family", summary.families, summary, "by-family"))
        body.append(_top(report))
        body.append(_rules(report))
        body.append(_findings(report, rel))
    else:
        body.append("<p>No findings: every scanned file compiles and runs on AMD as far as hiplint can tell.</p>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            "<title>hiplint migration report</title>"
            f"<style>{_CSS}</style></head><body>\n" + "\n".join(b for b in body if b)
            + f"\n<script>{_JS}</script>\n</body></html>\n")
