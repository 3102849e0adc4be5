"""Is a byte of the file inside an `#if` whose condition mentions one of some macros?"""
from __future__ import annotations

import re

CONDITIONAL = ("preproc_if", "preproc_ifdef", "preproc_elif", "preproc_else", "preproc_elifdef")


def _head(ctx, node) -> str:
    unit = ctx.units[0]
    text = unit.text(node)
    return text.split("\n", 1)[0]


def inside_condition(ctx, start: int, end: int, pattern: str) -> bool:
    root = ctx.units[0].root
    node = root.descendant_for_byte_range(start, max(start, end - 1))
    rx = re.compile(pattern)
    while node is not None:
        if node.type in CONDITIONAL:
            if rx.search(_head(ctx, node)):
                return True
            # An #else / #elif branch is selected by the condition of the chain it belongs to.
            parent = node.parent
            if node.type in ("preproc_else", "preproc_elif") and parent is not None and parent.type in CONDITIONAL \
                    and rx.search(_head(ctx, parent)):
                return True
        node = node.parent
    return False
