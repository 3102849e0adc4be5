"""`sarif`: SARIF 2.1.0 as GitHub code scanning reads it.

Rule ids are hiplint's codes (stable across releases). `partialFingerprints` is left out on
purpose: github/codeql-action's upload-sarif computes `primaryLocationLineHash` itself when it is
missing, and a tool-made value that is not exactly the action's makes alerts churn. hiplint's own
line-independent id goes into `fingerprints["hiplint/v1"]`. A finding's related locations (the uses
of a reported constant, a build file's other options) are `relatedLocations`, each with a message.
"""
from __future__ import annotations

import json
import urllib.parse

from hiplint import __version__
from hiplint.emit import Report, emitter, rule_url
from hiplint.fingerprint import unique_ids

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
# GitHub's `problem.severity` vocabulary: error, warning, recommendation.
PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "info": "recommendation"}


def _rule_entry(code: str, rule, finding) -> dict:
    from hiplint.docs import rule_markdown

    entry: dict = {"id": code}
    if rule is None:  # a plugin rule that is gone from the registry: what the finding says is all there is
        entry.update(name=finding.name, shortDescription={"text": finding.message},
                     defaultConfiguration={"level": LEVELS[finding.severity.value]})
        return entry
    markdown = rule_markdown(rule)
    intro = rule.doc_sections().get("_intro", "").strip() or rule.summary
    entry.update(
        name=rule.name,
        shortDescription={"text": rule.summary},
        fullDescription={"text": intro},
        help={"text": markdown, "markdown": markdown},
        defaultConfiguration={"level": LEVELS[rule.severity.value]},
        properties={"tags": sorted({"hiplint", "portability", rule.impact.value}),
                    "problem.severity": PROBLEM_SEVERITY[rule.severity.value],
                    "impact": rule.impact.value},
    )
    url = rule_url(code)
    if url.startswith(("http://", "https://")):  # helpUri must be absolute
        entry["helpUri"] = url
    return entry


def _fix(f, uri: str) -> dict | None:
    if f.fix is None or not f.fix.edits:
        return None
    return {
        "description": {"text": f.fix.title},
        "artifactChanges": [{
            "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
            "replacements": [{"deletedRegion": {"byteOffset": e.start, "byteLength": e.end - e.start},
                              "insertedContent": {"text": e.content}} for e in f.fix.edits],
        }],
    }


def _related(i: int, r, report: Report) -> dict:
    """A SARIF location (3.28) for a related location; `id` is unique within the result."""
    loc = {"id": i, "physicalLocation": {
        "artifactLocation": {"uri": urllib.parse.quote(report.relpath(r.path).replace("\\", "/"), safe="/"),
                             "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": r.line, "startColumn": r.column, "endLine": r.end_line, "endColumn": r.end_column},
    }, "message": {"text": r.message or "related location"}}
    return loc


def sarif_log(report: Report) -> dict:
    from hiplint.registry import load_registry

    registry = load_registry()
    rules: list[dict] = []
    index: dict[str, int] = {}
    results = []
    paths = [report.relpath(f.path) for f in report.findings]
    ids = unique_ids(report.findings, paths)
    # artifactLocation.uri is a URI reference (SARIF 2.1.0 3.4.3): `a b.cu`, `100%.cu`, `c:d.cu` (a scheme)
    # and `x#y.cu` (a fragment) must be percent-encoded to name the file.
    uris = [urllib.parse.quote(p.replace("\\", "/"), safe="/") for p in paths]
    for f, uri, uid in zip(report.findings, uris, ids):
        if f.code not in index:
            index[f.code] = len(rules)
            rules.append(_rule_entry(f.code, registry.by_code(f.code), f))
        result = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": LEVELS[f.severity.value],
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": f.line, "startColumn": f.column,
                           "endLine": f.end_line, "endColumn": f.end_column},
            }}],
            "fingerprints": {"hiplint/v1": uid},
        }
        if f.related:
            result["relatedLocations"] = [_related(i, r, report) for i, r in enumerate(f.related)]
        fix = _fix(f, uri)
        if fix is not None:
            result["fixes"] = [fix]
        results.append(result)
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "hiplint", "semanticVersion": __version__, "version": __version__,
                                "rules": rules}},
            "automationDetails": {"id": "hiplint/"},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


@emitter("sarif")
def to_sarif(report: Report) -> str:
    return json.dumps(sarif_log(report), indent=2) + "\n"
