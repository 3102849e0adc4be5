"""What a CI gate does with a scan's findings: baseline, --diff-base, thresholds, statistics, reports."""
from __future__ import annotations

from collections import Counter

from hiplint.config import ConfigError
from hiplint.model import Applicability, Severity

FAIL_ON = ("error", "warning", "info")


def parse_report_specs(specs) -> list[tuple[str, str]]:
    """`--report FMT=PATH` values, checked against the known formats."""
    from hiplint import emit

    out = []
    for spec in specs or ():
        fmt, sep, path = spec.partition("=")
        fmt, path = fmt.strip(), path.strip()
        if not sep or not fmt or not path:
            raise ConfigError(f"--report: {spec!r} is not FORMAT=PATH (e.g. sarif=hiplint.sarif)")
        if fmt not in emit.EMITTERS:
            raise ConfigError(f"--report: {fmt!r} is not one of {', '.join(sorted(emit.EMITTERS))}")
        out.append((fmt, path))
    return out


def fails(findings, threshold: str) -> bool:
    """Whether any finding is at or above the severity threshold."""
    rank = Severity(threshold).rank
    return any(f.severity.rank >= rank for f in findings)


def statistics(findings, fmt: str = "full") -> str:
    """`count  code  [*] name`, most frequent first, then the total; [*] when every finding of the code
    has a safe fix. With fmt "json": {"total": N, "rules": [{code, name, count, fixable}]}."""
    import json

    counts = Counter(f.code for f in findings)
    names = {f.code: f.name for f in findings}
    safe = {code: all(f.fix is not None and f.fix.applicability == Applicability.SAFE
                      for f in findings if f.code == code) for code in counts}
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if fmt in ("json", "json-lines"):
        return json.dumps({"total": len(findings), "rules": [
            {"code": code, "name": names[code], "count": n, "fixable": safe[code]} for code, n in ranked]}, indent=2) + "\n"
    if not counts:
        return ""
    width = len(str(max(counts.values())))
    lines = []
    for code, n in ranked:
        lines.append(f"{n:>{width}}  {code:<7} {'[*]' if safe[code] else '   '} {names[code]}")
    lines.append(f"Found {len(findings)} finding{'' if len(findings) == 1 else 's'}.")
    return "\n".join(lines) + "\n"


def apply_gates(findings, scanned: list[str], settings, relpath, options: dict, note=None, record=None):
    """--write-baseline, --baseline / --prune-baseline, then --diff-base.

    `options` holds the command-line values (write_baseline, baseline_path, prune_baseline,
    diff_base); `note` prints a line for the user (None: quiet). Returns (findings to report,
    whether a baseline was written: that run exits 0). `record`, a dict, receives what the baseline
    changed: record["baseline"] = {path, new, fixed, unchanged} (the html report shows it).
    """
    import os

    note = note or (lambda message: None)
    if options.get("write_baseline"):
        from hiplint import baseline as bl

        bl.Baseline.from_findings(findings, relpath).write(options["write_baseline"])
        return findings, True  # the command line prints the one-line summary
    path = options.get("baseline_path")
    if not path and settings.extra.get("baseline"):
        path = settings.extra["baseline"]
        if not os.path.isabs(path):
            path = os.path.join(str(settings.root), path)  # configured paths are relative to the configuration
    if options.get("prune_baseline") and not path:
        raise ConfigError("--prune-baseline needs --baseline FILE (or `baseline` in the configuration)")
    if path:
        from hiplint import baseline as bl  # imported here: most runs have no baseline

        match = bl.apply(bl.load(path), findings, relpath, {relpath(p) for p in scanned})
        stale = sum(k for _, _, k in match.stale)
        if record is not None:
            record["baseline"] = {"path": path, "new": len(match.new), "fixed": stale,
                                  "unchanged": len(findings) - len(match.new)}
        findings = match.new
        if options.get("prune_baseline"):
            match.matched.write(path)
            note(f"hiplint: pruned {stale} stale entr{'y' if stale == 1 else 'ies'} from {path}")
        elif stale:
            note(f"hiplint: {stale} baseline entr{'y' if stale == 1 else 'ies'} in {path} no longer match "
                 f"(fixed or changed); remove them with --prune-baseline:")
            for rel, code, k in match.stale:
                note(f"  {rel}: {code} x{k}")
    if options.get("diff_base"):
        from hiplint.gitdiff import changed_lines
        changed = changed_lines(options["diff_base"])
        findings = [f for f in findings if changed.contains(f)]
    return findings, False
