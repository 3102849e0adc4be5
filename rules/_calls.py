"""Small tree-sitter helpers shared by the cuRAND and cuSOLVER rules: call arguments, the declared
type of a variable, whether a value derives from the thread index."""
from __future__ import annotations

import re

from hiplint.cparse import iter_nodes
from hiplint.lazy import lazy_re

THREAD_INDEX = lazy_re(r"\b(threadIdx|blockIdx|blockDim|hipThreadIdx_[xyz]|hipBlockIdx_[xyz]|"
                          r"thread_rank|__lane_id|global_thread_id)\b")
DECLARATORS = frozenset({"declaration", "parameter_declaration"})
NULLS = frozenset({"NULL", "nullptr", "0", "0L", "0UL", "(void*)0", "__null"})


def call_name(ctx, call) -> str:
    fn = call.child_by_field_name("function")
    if fn is None:
        return ""
    if fn.type == "identifier":
        return ctx.text(fn)
    if fn.type == "qualified_identifier" and fn.child_by_field_name("scope") is None:
        name = fn.child_by_field_name("name")
        return ctx.text(name) if name is not None else ""
    return ""


def call_args(call) -> list:
    args = call.child_by_field_name("arguments")
    return [a for a in args.named_children if a.type != "comment"] if args is not None else []


def base_identifier(node):
    """`&s`, `s`, `&states[i]`, `states + i`, `(s)` -> the identifier node naming the variable."""
    while node is not None and node.type in ("pointer_expression", "parenthesized_expression", "subscript_expression",
                                             "binary_expression", "cast_expression"):
        if node.type == "pointer_expression":
            node = node.child_by_field_name("argument")
        elif node.type == "subscript_expression":
            node = node.child_by_field_name("argument")
        elif node.type == "binary_expression":
            node = node.child_by_field_name("left")
        elif node.type == "cast_expression":
            node = node.child_by_field_name("value")
        else:
            node = node.named_children[0] if node.named_children else None
    return node if node is not None and node.type == "identifier" else None


def _declared_name(declarator):
    while declarator is not None and declarator.type not in ("identifier", "field_identifier"):
        inner = declarator.child_by_field_name("declarator")
        if inner is None:
            return None
        declarator = inner
    return declarator


def find_declaration(ctx, scope, name: str):
    """(declaration node, declarator identifier, type node) for `name` in scope (parameters included)."""
    found = None
    for decl in iter_nodes(scope, DECLARATORS):
        type_node = decl.child_by_field_name("type")
        for d in decl.children_by_field_name("declarator"):
            ident = _declared_name(d)
            if ident is not None and ctx.text(ident) == name:
                found = (decl, d, ident, type_node)
                return found
    return None


def declared_type(ctx, scope, ident_node) -> tuple[str, object]:
    """The declared type text of the variable named by ident_node, and its type node ('' if unknown)."""
    if ident_node is None:
        return "", None
    found = find_declaration(ctx, scope, ctx.text(ident_node))
    if found is None and scope is not ctx.unit.root:
        found = find_declaration(ctx, ctx.unit.root, ctx.text(ident_node))
    if found is None or found[3] is None:
        return "", None
    return ctx.text(found[3]), found[3]


def initializer_text(ctx, scope, name: str) -> str:
    found = find_declaration(ctx, scope, name)
    if found is None:
        return ""
    d = found[1]
    if d.type == "init_declarator":
        value = d.child_by_field_name("value")
        return ctx.text(value) if value is not None else ""
    return ""


def thread_derived(ctx, scope, node, depth: int = 0) -> bool:
    """Whether the expression uses the thread/block index, directly or through local variables."""
    text = ctx.text(node)
    if THREAD_INDEX.search(text):
        return True
    if depth > 3:
        return False
    for ident in iter_nodes(node, frozenset({"identifier"})):
        init = initializer_text(ctx, scope, ctx.text(ident))
        if init and THREAD_INDEX.search(init):
            return True
        if init and depth < 3:
            found = find_declaration(ctx, scope, ctx.text(ident))
            value = found[1].child_by_field_name("value") if found and found[1].type == "init_declarator" else None
            if value is not None and value.id != node.id and thread_derived(ctx, scope, value, depth + 1):
                return True
    return False


def int_value(text: str) -> int | None:
    t = text.strip().rstrip("uUlL")
    try:
        return int(t, 0)
    except ValueError:
        return None
