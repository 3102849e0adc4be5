"""Human formats: `full` (default, with a code frame) and `concise` (one line a finding)."""
from __future__ import annotations

from hiplint.emit import Report, also_at, emitter
from hiplint.model import Applicability

_SEV_COLOR = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[36m"}
_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"


def _marker(f) -> str:
    if f.fix is not None and f.fix.applicability == Applicability.SAFE:
        return "[*] "
    return ""


def _head(f, color: bool) -> str:
    loc = f"{f.path}:{f.line}:{f.column}:"
    code = f.code
    if color:
        loc = _BOLD + loc + _RESET
        code = _SEV_COLOR.get(f.severity.value, "") + _BOLD + code + _RESET
    return f"{loc} {code} {_marker(f)}{f.message}"


def _related_count(f) -> str:
    n = len(f.related)
    return f" (+{n} related location{'s' if n != 1 else ''})" if n else ""


def _summary(report: Report) -> str:
    n = len(report.findings)
    lines = []
    if report.fixed:
        lines.append(f"Fixed {len(report.fixed)} finding{'s' if len(report.fixed) != 1 else ''}.")
    if n:
        safe = sum(1 for f in report.findings if f.fix and f.fix.applicability == Applicability.SAFE)
        unsafe = sum(1 for f in report.findings if f.fix and f.fix.applicability == Applicability.UNSAFE)
        lines.append(f"Found {n} finding{'s' if n != 1 else ''} in {len({f.path for f in report.findings})} of {report.files_scanned} file{'s' if report.files_scanned != 1 else ''}.")
        if safe and report.show_fix_hint:
            lines.append(f"[*] {safe} fixable with `--fix`.")
        if unsafe and report.show_fix_hint:
            lines.append(f"{unsafe} more fixable with `--fix --unsafe-fixes`.")
    elif report.incomplete:
        lines.append(f"No findings, but not every check ran ({report.files_scanned} file"
                     f"{'s' if report.files_scanned != 1 else ''}): see the internal errors above.")
    elif report.skipped:
        lines.append(f"No findings, but {_skipped(report.skipped)} not checked ({report.files_scanned} file"
                     f"{'s' if report.files_scanned != 1 else ''}): see the notes above.")
        return "\n".join(lines)
    elif not report.fixed:
        lines.append(f"All checks passed ({report.files_scanned} file{'s' if report.files_scanned != 1 else ''}).")
    if report.skipped:
        lines.append(f"Skipped, not checked: {_skipped(report.skipped)} (see the notes above).")
    return "\n".join(lines)


def _skipped(n: int) -> str:
    return f"{n} file{'s' if n != 1 else ''} or path{'s' if n != 1 else ''}"


@emitter("concise")
def concise(report: Report) -> str:
    out = [_head(f, report.color) + _related_count(f) for f in report.findings]
    out.append(_summary(report))
    return "\n".join(out) + "\n"


@emitter("full")
def full(report: Report) -> str:
    out = []
    for f in report.findings:
        out.append(_head(f, report.color))
        src = report.sources.get(f.path)
        width = len(str(f.end_line)) + 1
        if src is not None:
            first = max(1, f.line - 1)
            last = min(src.line_count(), f.line + 1 if f.end_line == f.line else min(f.end_line, f.line + 3))
            for ln in range(first, last + 1):
                text = src.line_text(ln).replace("\t", "    ")
                gutter = f"{ln:>{width}} |"
                out.append(f"{gutter} {text}".rstrip())
                if ln == f.line:
                    prefix = src.line_text(ln)[: f.column - 1].replace("\t", "    ")
                    span = (f.end_column - f.column) if f.end_line == f.line else max(1, len(text) - len(prefix))
                    caret = " " * len(prefix) + "^" * max(1, span)
                    out.append(f"{' ' * width} | {caret}")
        if f.related:
            out.append(f"{' ' * width} = also at: {also_at(f)}")
        if f.fix is not None:
            kind = {2: "Safe fix", 1: "Unsafe fix", 0: "Suggested change"}[int(f.fix.applicability)]
            out.append(f"{' ' * width} = {kind}: {f.fix.title}")
        if f.checklist and (f.fix is None or f.fix.applicability != Applicability.SAFE):
            out.append(f"{' ' * width} = help: {f.checklist}")
        out.append("")
    out.append(_summary(report))
    return "\n".join(out) + "\n"
