from __future__ import annotations

from hiplint import FileRule, Impact, Severity
from hiplint import pyparse
from hiplint.rule import computed_once


def _other_rules_triggers() -> tuple[str, ...]:
    """What the other Python rules need: a file none of them would check is not parsed, so has no
    syntax error to report. () (always run) when one of them runs on every file."""
    from hiplint.manifest import RuleEntry
    from hiplint.registry import rule_index

    wanted: set[str] = set()
    for rule in rule_index().rules:  # from the manifest where it can: no rule imported to ask
        if isinstance(rule, RuleEntry):
            if rule.kind != "file" or "python" not in rule.languages or rule.code == PythonSyntaxError.code:
                continue
            if rule.wants is None:  # a file rule's wants are its triggers (hiplint.manifest)
                return ()
            wanted.update(w.decode("utf-8", "surrogateescape") for w in rule.wants)
        elif issubclass(rule, FileRule) and "python" in rule.languages and rule.code != PythonSyntaxError.code:
            if not rule.triggers:
                return ()
            wanted.update(rule.triggers)
    return tuple(sorted(wanted))


class PythonSyntaxError(FileRule):
    """A Python file hiplint could not parse, so no Python rule checked it.

    ## What it does
    Reports, once per file and on the offending line, a Python file that libcst cannot parse
    (Python 2 code, a merge conflict, a template with placeholders). The scan goes on; the other
    Python rules see nothing of this file. Only files that mention what some Python rule looks for
    (`cuda`, `nvidia`, `num_warps`, ... : the rules' `triggers`) are parsed at all, so a file
    none of them could report in is not reported either.

    ## Why it breaks on AMD
    It does not by itself. It says where hiplint's Python checks (`torch.version.cuda`, capability
    gates, extension flags, ...) did not run, so a clean result for this file is no evidence. A
    separate code from `HL001` (C/C++ parse errors, off by default) because a Python file that does
    not parse is rarely noise: every rule misses the whole file, not one region.

    ## Example
    ```python
    print "building for CUDA", torch.version.cuda
    ```

    ## Use instead
    ```python
    print("building for CUDA", torch.version.cuda)
    ```

    ## References
    - libcst parser (Python 3.0 - 3.13 grammar): https://libcst.readthedocs.io/en/latest/parser.html
    """

    code = "PY000"
    name = "python-syntax-error"
    summary = "this Python file could not be parsed; hiplint's Python rules did not check it"
    severity = Severity.WARNING
    impact = Impact.PORTABILITY
    languages = frozenset({"python"})
    triggers = computed_once(_other_rules_triggers)

    def check_file(self, ctx):
        if pyparse.get(ctx) is not None:
            return
        problem = ctx.cache[pyparse.ERROR_KEY]
        line = min(max(problem.line, 1), ctx.source.line_count())
        start = ctx.source.byte_of_line(line)
        end = start + len(ctx.source.line_text(line).encode())
        first_line = problem.message.strip().splitlines()[0] if problem.message.strip() else "syntax error"
        first_line = first_line.removeprefix("parser error: ").split(": expected", 1)[0]
        ctx.report_range(start, end, f"not valid Python 3 ({first_line}); hiplint's Python rules did not check this file")
