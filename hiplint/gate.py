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


def statistics(findings) -> str:
    """`count  code  [*] name`, most frequent first; [*] when every finding of the code has a safe fix."""
    counts = Counter(f.code for f in findings)
    if not counts:
        return ""
    names = {f.code: f.name for f in findings}
    safe = {code: all(f.fix is not None and f.fix.applicability == Applicability.SAFE
                      for f in findings if f.code == code) for code in counts}
    width = len(str(max(counts.values())))
    lines = []
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"{n:>{width}}  {code:<7} {'[*]' if safe[code] else '   '} {names[code]}")
    return "\n".join(lines) + "\n"
