"""`json-lines`: one JSON object a line, the same objects as `json` (streams into log tools)."""
from __future__ import annotations

import json

from hiplint.emit import Report, emitter
from hiplint.emit.jsonfmt import finding_dict


@emitter("json-lines")
def to_json_lines(report: Report) -> str:
    return "".join(json.dumps(finding_dict(f, report.sources.get(f.path))) + "\n" for f in report.findings)
