"""Helpers shared by the API rules."""

_CONDITIONALS = ("preproc_if", "preproc_elif", "preproc_ifdef", "preproc_elifdef")


def in_preproc_condition(node) -> bool:
    """Inside the condition of `#if`/`#elif`/`#ifdef`: a version or feature test, not a use of the API."""
    parent = node.parent
    if parent is not None and parent.type == "preproc_defined":
        return True
    n = parent
    while n is not None:
        if n.type in _CONDITIONALS:
            cond = n.child_by_field_name("condition") or n.child_by_field_name("name")
            return cond is not None and cond.start_byte <= node.start_byte < cond.end_byte
        if n.type in ("compound_statement", "translation_unit"):
            return False
        n = n.parent
    return False
