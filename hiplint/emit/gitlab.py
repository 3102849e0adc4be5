"""`gitlab`: GitLab Code Quality report (a JSON array of issues, each with a unique fingerprint)."""
from __future__ import annotations

import json

from hiplint.emit import Report, emitter
from hiplint.fingerprint import unique_ids

# Code Quality severities: info, minor, major, critical, blocker.
SEVERITIES = {"error": "major", "warning": "minor", "info": "info"}


@emitter("gitlab")
def to_gitlab(report: Report) -> str:
    paths = [report.relpath(f.path) for f in report.findings]
    issues = []
    for f, path, uid in zip(report.findings, paths, unique_ids(report.findings, paths)):
        issue = {
            "type": "issue",
            "check_name": f.code,
            "description": f"{f.code} {f.message}",
            "categories": ["Compatibility"],
            "severity": SEVERITIES[f.severity.value],
            "fingerprint": uid,
            "location": {"path": path, "lines": {"begin": f.line, "end": f.end_line}},
        }
        if f.related:  # Code Climate's `other_locations`: the other places the issue stands for
            issue["other_locations"] = [{"path": report.relpath(r.path), "lines": {"begin": r.line, "end": r.end_line}}
                                        for r in f.related]
        issues.append(issue)
    return json.dumps(issues, indent=2) + "\n"
