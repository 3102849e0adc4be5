"""Shared knowledge and analysis for the warp rules: which values are lane or thread indices,
which integers are 32 bits wide, which functions do their lane arithmetic in 32s."""
from __future__ import annotations

import re

from hiplint.cparse import iter_nodes

# Warp-synchronous intrinsics that take a mask first (CUDA 9+, HIP 6.2+).
SYNC_WITH_MASK = frozenset({
    "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync",
    "__any_sync", "__all_sync", "__uni_sync", "__match_any_sync", "__match_all_sync", "__syncwarp",
    "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync", "__reduce_and_sync",
    "__reduce_or_sync", "__reduce_xor_sync",
})
# Calls whose result is a lane mask: 64-bit (unsigned long long) in HIP, 32-bit in CUDA.
LANE_MASK_CALLS = frozenset({
    "__ballot", "__ballot_sync", "__activemask", "__match_any", "__match_any_sync", "__match_all",
    "__match_all_sync", "__ballot64", "__lanemask_lt", "__lanemask_le", "__lanemask_gt", "__lanemask_ge",
    "__lanemask_eq",
})
SHUFFLES = frozenset({"__shfl", "__shfl_up", "__shfl_down", "__shfl_xor",
                      "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync"})
# Width is the last parameter: (mask,) var, lane/delta, width  -- legacy forms have no mask.
SHUFFLE_ARGS_WITHOUT_WIDTH = {n: (3 if n.endswith("_sync") else 2) for n in SHUFFLES}

THREAD_SOURCE = re.compile(r"\b(threadIdx|hipThreadIdx_[xyz]|__lane_id|__laneid|laneid|thread_rank|lane_id\s*\(|"
                           r"__hip_get_thread_idx_[xyz]|hipBlockDim_[xyz]|blockDim)\b")
THREAD_PARAM_NAME = re.compile(r"^(lane(_?id|_?idx|_?index)?|tid|thread_?id|thread_?idx|local_?tid|ltid|thread)$", re.I)
WARP_SIZE_NAME = re.compile(r"^(k_?)?(warp|wave|wavefront)_?(size|sz|threads|width|lanes|len)$|"
                            r"^(k_?)?(threads|lanes)_?(per|in)_?(warp|wave)$|^WARPSIZE$", re.I)
MASK_NAME = re.compile(r"mask", re.I)

INT32_TYPES = frozenset({"int", "unsigned", "unsigned int", "signed", "signed int", "uint32_t", "int32_t",
                         "uint", "u32", "s32", "uint32", "int32", "unsigned int32_t", "short", "unsigned short"})
INT64_TYPES = frozenset({"unsigned long long", "long long", "unsigned long long int", "long long int",
                         "uint64_t", "int64_t", "size_t", "unsigned long", "long", "u64", "uint64",
                         "lane_mask_t", "hipLaneMask_t"})


def text(ctx, node) -> str:
    return ctx.text(node)


def type_text(ctx, decl) -> str:
    """The base type of a declaration or parameter, qualifiers dropped: 'unsigned int', 'uint32_t'."""
    t = decl.child_by_field_name("type")
    return " ".join(ctx.text(t).split()) if t is not None else ""


def int_literal(s: str):
    """(value, suffix) of an integer literal, or None."""
    m = re.match(r"^(0[xX][0-9a-fA-F']+|0[bB][01']+|[0-9']+)([uUlL]*)$", s.strip())
    if not m:
        return None
    body = m.group(1).replace("'", "")
    try:
        value = int(body, 0) if not re.match(r"^0[0-7]+$", body) else int(body, 8)
    except ValueError:
        return None
    return value, m.group(2).lower()


def literal_width(s: str):
    lit = int_literal(s)
    if lit is None:
        return None
    value, suffix = lit
    if "ll" in suffix or "l" in suffix or value >= 2 ** 32:
        return 64
    return 32


def is_full_mask_32(ctx, node) -> bool:
    """0xffffffff, 0xFFFFFFFFu, ~0u, ~0, -1, (unsigned)-1: every lane of a 32-lane warp."""
    t = ctx.text(node).replace(" ", "")
    while t.startswith("(") and t.endswith(")"):
        t = t[1:-1]
    lit = int_literal(t)
    if lit is not None:
        return lit[0] == 0xFFFFFFFF and "l" not in lit[1]
    if t in ("~0", "~0u", "~0U", "-1", "~0x0", "~0x0u", "-1u", "-1U", "(unsigned)-1", "(unsignedint)-1",
             "(uint32_t)-1"):
        return True
    return False


_COMMENT = re.compile(r"//.*$|/\*.*?\*/", re.S)


def macro_value(text: str) -> str:
    """A #define body without comments (tree-sitter keeps a trailing comment in preproc_arg)."""
    return _COMMENT.sub("", text).strip()


def file_macros(ctx) -> dict[str, str]:
    """Object-like macros of the file: name -> body text (first definition wins)."""
    cache = ctx.cache.get("wrp_macros")
    if cache is None:
        cache = {}
        unit = ctx.units[0]
        for node in iter_nodes(unit.root, {"preproc_def"}):
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is not None and value is not None:
                cache.setdefault(unit.text(name), macro_value(unit.text(value)))
        ctx.cache["wrp_macros"] = cache
    return cache


def declared_types(ctx, scope) -> dict[str, str]:
    """Local declarations and parameters in `scope`: name -> base type text."""
    key = ("wrp_decls", id(ctx.unit), scope.id)
    cache = ctx.cache.get(key)
    if cache is None:
        cache = {}
        for node in iter_nodes(scope, {"declaration", "parameter_declaration"}):
            t = type_text(ctx, node)
            if not t:
                continue
            for d in node.children_by_field_name("declarator"):
                ident = d
                while ident is not None and ident.type not in ("identifier",):
                    ident = ident.child_by_field_name("declarator")
                if ident is not None and d.type in ("identifier", "init_declarator"):
                    cache.setdefault(ctx.text(ident), t)
        ctx.cache[key] = cache
    return cache


def int_width(ctx, node, scope, depth: int = 0):
    """32, 64, or None (unknown) for an integer expression, as the HIP mask static_assert sees it."""
    if node is None or depth > 8:
        return None
    t = node.type
    if t == "number_literal":
        return literal_width(ctx.text(node))
    if t == "parenthesized_expression":
        inner = node.named_children
        return int_width(ctx, inner[0], scope, depth + 1) if inner else None
    if t == "unary_expression":
        op = node.child_by_field_name("operator")
        if op is not None and ctx.text(op) == "!":
            return 32
        return int_width(ctx, node.child_by_field_name("argument"), scope, depth + 1)
    if t == "cast_expression":
        ty = node.child_by_field_name("type")
        tt = " ".join(ctx.text(ty).split()) if ty is not None else ""
        if tt in INT32_TYPES:
            return 32
        if tt in INT64_TYPES:
            return 64
        return None
    if t == "call_expression":
        fn = node.child_by_field_name("function")
        name = ctx.text(fn) if fn is not None else ""
        if name in LANE_MASK_CALLS:
            return 64
        return None
    if t == "binary_expression":
        op = node.child_by_field_name("operator")
        ot = ctx.text(op) if op is not None else ""
        left = int_width(ctx, node.child_by_field_name("left"), scope, depth + 1)
        if ot in ("<<", ">>"):
            return left
        if ot in ("&&", "||", "==", "!=", "<", ">", "<=", ">="):
            return 32
        right = int_width(ctx, node.child_by_field_name("right"), scope, depth + 1)
        if left is None or right is None:
            return None
        return max(left, right)
    if t == "conditional_expression":
        a = int_width(ctx, node.child_by_field_name("consequence"), scope, depth + 1)
        b = int_width(ctx, node.child_by_field_name("alternative"), scope, depth + 1)
        return None if a is None or b is None else max(a, b)
    if t == "identifier":
        name = ctx.text(node)
        decls = declared_types(ctx, scope)
        if name in decls:
            ty = decls[name]
            return 32 if ty in INT32_TYPES else 64 if ty in INT64_TYPES else None
        return None
    return None


def thread_derived(ctx, scope) -> set[str]:
    """Names in `scope` whose value derives from a thread or lane index (to a fixpoint)."""
    key = ("wrp_taint", id(ctx.unit), scope.id)
    cache = ctx.cache.get(key)
    if cache is not None:
        return cache
    assigns: list[tuple[str, str]] = []
    names: set[str] = set()
    for node in iter_nodes(scope, {"init_declarator", "assignment_expression", "parameter_declaration"}):
        if node.type == "parameter_declaration":
            d = node.child_by_field_name("declarator")
            if d is not None and d.type == "identifier" and THREAD_PARAM_NAME.match(ctx.text(d)):
                names.add(ctx.text(d))
            continue
        left = node.child_by_field_name("declarator") if node.type == "init_declarator" else node.child_by_field_name("left")
        right = node.child_by_field_name("value") if node.type == "init_declarator" else node.child_by_field_name("right")
        if left is None or right is None or left.type != "identifier":
            continue
        assigns.append((ctx.text(left), ctx.text(right)))
    changed = True
    while changed:
        changed = False
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(names))) + r")\b") if names else None
        for name, value in assigns:
            if name in names:
                continue
            if THREAD_SOURCE.search(value) or (pattern is not None and pattern.search(value)):
                names.add(name)
                changed = True
    ctx.cache[key] = names
    return names


def mentions_thread_index(ctx, node, scope) -> bool:
    s = ctx.text(node)
    if THREAD_SOURCE.search(s):
        return True
    names = thread_derived(ctx, scope)
    if not names:
        return False
    for ident in iter_nodes(node, {"identifier"}):
        if ctx.text(ident) in names:
            return True
    return False


LANE_ARITH = {("&", 31), ("%", 32), ("/", 32), (">>", 5)}


def lane_arith_32(ctx, node, scope) -> bool:
    """`x & 31`, `x % 32`, `x / 32`, `x >> 5` with x a thread index (or blockDim for warps per block)."""
    if node.type != "binary_expression":
        return False
    op = node.child_by_field_name("operator")
    right = node.child_by_field_name("right")
    left = node.child_by_field_name("left")
    if op is None or right is None or left is None or right.type != "number_literal":
        return False
    lit = int_literal(ctx.text(right))
    if lit is None or (ctx.text(op), lit[0]) not in LANE_ARITH:
        return False
    return mentions_thread_index(ctx, left, scope)


def function_is_32_based(ctx, scope) -> bool:
    """Does the function do lane or warp arithmetic in 32s (literals or a WARP_SIZE-like 32)?"""
    key = ("wrp_32", id(ctx.unit), scope.id)
    if key in ctx.cache:
        return ctx.cache[key]
    macros = file_macros(ctx)
    result = False
    for node in iter_nodes(scope, {"binary_expression"}):
        if lane_arith_32(ctx, node, scope):
            result = True
            break
        right = node.child_by_field_name("right")
        op = node.child_by_field_name("operator")
        if right is not None and right.type == "identifier" and op is not None and ctx.text(op) in ("%", "/", "&"):
            name = ctx.text(right)
            if WARP_SIZE_NAME.match(name) and macros.get(name, "").strip("()") == "32" and \
                    mentions_thread_index(ctx, node.child_by_field_name("left"), scope):
                result = True
                break
    ctx.cache[key] = result
    return result


def top_level_ancestor(node):
    n = node
    while n.parent is not None and n.parent.type != "translation_unit":
        n = n.parent
    return n
