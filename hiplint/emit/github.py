"""`github`: GitHub Actions workflow commands, one annotation a finding.

Escaping follows @actions/core: in the message `%`, CR and LF; in properties also `:` and `,`.
GitHub shows at most 10 annotations of each level per step; the job summary (`checklist`) or
SARIF carries the full list.
"""
from __future__ import annotations

from hiplint.emit import Report, also_at, emitter

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(f, path: str, relpath=None) -> str:
    props = [("file", path), ("line", f.line), ("col", f.column), ("endLine", f.end_line),
             ("endColumn", f.end_column), ("title", f"hiplint ({f.code})")]
    head = ",".join(f"{k}={escape_property(str(v))}" for k, v in props)
    message = f.message
    if f.related:
        message += f"\nAlso at: {also_at(f, relpath)}"
    return f"::{COMMANDS[f.severity.value]} {head}::{escape_data(message)}"


@emitter("github")
def to_github(report: Report) -> str:
    return "".join(annotation(f, report.relpath(f.path), report.relpath) + "\n" for f in report.findings)
