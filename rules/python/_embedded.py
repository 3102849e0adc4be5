"""CUDA C++ source embedded in Python (CuPy raw kernels): found, then checked by the C-family rules.

A Python rule that meets kernel source in a string asks here for what the project's C-family rules
find in it, so the source gets the same checks (and suppression comments) as a `.cu` file.
"""
from __future__ import annotations

from hiplint.lazy import libcst as cst

from hiplint.pyparse import PyModule, assigned_values, string_value

_LINTER: list = [None, None]  # [settings, Linter] of the last scan: built once per settings


def literal_source(py: PyModule, node) -> str | None:
    """The text of a string literal, or of a variable assigned one string literal once (in its
    function or at module level) and never added to."""
    text = string_value(node)
    if text is not None or not isinstance(node, cst.Name):
        return text
    values = list(assigned_values(py, node, include_augmented=True))
    return string_value(values[0]) if len(values) == 1 else None


def cuda_findings(ctx, source: str) -> list | None:
    """The findings of the enabled C-family rules in `source` (engine codes HLxxx left out), or None
    when no C-family rule is enabled (`--select PY006`): nothing checked the source."""
    from hiplint.engine import Linter
    from hiplint.registry import select_rules

    if _LINTER[0] is not ctx.settings:
        _LINTER[:] = [ctx.settings, Linter(ctx.settings, select_rules(ctx.settings))]
    linter = _LINTER[1]
    if "cuda" not in linter.languages:
        return None
    # The Python file's path: its findings belong to that file, so per-file-ignores written for it
    # apply to its kernels too. (A C rule that judged a file by its extension would see `.py`.)
    result = linter.lint_bytes(ctx.path, source.encode("utf-8", "surrogatepass"), "cuda")
    return [f for f in result.findings if not f.code.startswith("HL")]
