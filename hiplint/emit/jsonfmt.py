"""`json`: the contract CI gates rely on. A JSON array; one object per finding."""
from __future__ import annotations

import json

from hiplint.emit import Report, emitter, rule_url


def finding_dict(f, source=None) -> dict:
    fix = None
    if f.fix is not None:
        fix = {
            "applicability": f.fix.applicability.label,
            "message": f.fix.title,
            "edits": [
                e.to_json(source) if source is not None else {"content": e.content, "start_byte": e.start, "end_byte": e.end}
                for e in f.fix.edits
            ],
        }
    return {
        "code": f.code,
        "name": f.name,
        "severity": f.severity.value,
        "impact": f.impact.value,
        "message": f.message,
        "path": f.path,
        "line": f.line,
        "column": f.column,
        "end_line": f.end_line,
        "end_column": f.end_column,
        "fix": fix,
        "related": [r.to_json() for r in f.related],
        "checklist": f.checklist,
        "fingerprint": f.fingerprint or None,
        "url": rule_url(f.code),
    }


@emitter("json")
def to_json(report: Report) -> str:
    return json.dumps([finding_dict(f, report.sources.get(f.path)) for f in report.findings], indent=2) + "\n"
