"""Shared knowledge and analysis for the warp rules: which values are lane or thread indices,
which integers are 32 bits wide, which functions do their lane arithmetic in 32s."""
from __future__ import annotations

import re

from hiplint.cparse import FunctionSpans, iter_nodes, path_to, strip_c_comments
from hiplint.lazy import lazy_re

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

THREAD_PARAM_NAME = lazy_re(r"^(lane(_?id|_?idx|_?index)?|tid|thread_?id|thread_?idx|local_?tid|ltid|thread)$", re.I)
WARP_SIZE_NAME = lazy_re(r"^(k_?)?(warp|wave|wavefront)_?(size|sz|threads|width|lanes|len)$|"
                            r"^(k_?)?(threads|lanes)_?(per|in)_?(warp|wave)$|^WARPSIZE$", re.I)
MASK_NAME = lazy_re(r"mask", re.I)
# The definitions of warp-size names (`#define WARP_SIZE 32`, `constexpr int kWarpSize = 64;`, an
# enumerator): WRP002 and WRP012 read the value. The predicate runs in C for every #define and
# initialised variable of a file, so only names like WARP_SIZE reach the rules' `check`.
WARP_SIZE_DEFINITIONS = """
    ((preproc_def name: (identifier) @name value: (preproc_arg) @value) @def (#match? @name "{name}"))
    ((init_declarator declarator: (identifier) @name value: (_) @value) @def (#match? @name "{name}"))
    ((enumerator name: (identifier) @name value: (_) @value) @def (#match? @name "{name}"))
    """.replace("{name}", "(?i)" + WARP_SIZE_NAME.pattern.replace("\\", "\\\\"))
# Names of lane-mask constants (FULL_MASK, WARP_MASK, kFullWarpMask, ALL_LANES...): a TAG_MASK is data.
LANE_MASK_NAME = lazy_re(r"(full|warp|wave|lane|all|active|sync|shfl|vote|ballot).*mask|mask.*(full|warp|wave|lane|all)|all_?lanes", re.I)
LANE_NAME = lazy_re(r"lane", re.I)
LANE_EXPR = lazy_re(r"__lane_id\s*\(|%\s*warpSize|&\s*\(\s*warpSize\s*-\s*1\s*\)|laneid")

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


_INT_LITERAL = lazy_re(r"^(0[xX][0-9a-fA-F']+|0[bB][01']+|[0-9']+)([uUlL]*)$")
_OCTAL = lazy_re(r"^0[0-7]+$")


def int_literal(s: str):
    """(value, suffix) of an integer literal, or None."""
    m = _INT_LITERAL.match(s.strip())
    if not m:
        return None
    body = m.group(1).replace("'", "")
    try:
        value = int(body, 0) if not _OCTAL.match(body) else int(body, 8)
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
    return is_full_mask_32_text(ctx.text(node))


def is_full_mask_32_text(text: str) -> bool:
    """The text of a 32-bit full mask (a macro body, a constant's initialiser, an argument)."""
    t = "".join(text.split())
    while t.startswith("(") and t.endswith(")"):
        t = t[1:-1]
    lit = int_literal(t)
    if lit is not None:
        return lit[0] == 0xFFFFFFFF and "l" not in lit[1]
    return t in ("~0", "~0u", "~0U", "-1", "~0x0", "~0x0u", "-1u", "-1U", "(unsigned)-1", "(unsignedint)-1",
                 "(uint32_t)-1")


_COMMENT = lazy_re(r"//.*$|/\*.*?\*/", re.S)


def literal_value(text: str) -> int | None:
    """The integer a definition's value text spells (`32`, `(64)`, `32u`), or None."""
    t = macro_value(text)
    while t.startswith("(") and t.endswith(")"):
        t = t[1:-1].strip()
    lit = int_literal(t)
    return lit[0] if lit is not None else None


def macro_value(text: str) -> str:
    """A #define body without comments (tree-sitter keeps a trailing comment in preproc_arg)."""
    return _COMMENT.sub("", text).strip()


def file_macros(ctx) -> dict[str, str]:
    """Object-like macros of the file: name -> body text (first definition with a body wins)."""
    cache = ctx.cache.get("wrp_macros")
    if cache is None:
        cache = {name: next(b for b in bodies if b is not None)
                 for name, bodies in _macro_definitions(ctx).items() if any(b is not None for b in bodies)}
        ctx.cache["wrp_macros"] = cache
    return cache


def _macro_definitions(ctx) -> dict[str, list]:
    """Object-like macros of the file: name -> every body it is given, in file order (None: no body)."""
    cache = ctx.cache.get("wrp_macro_definitions")
    if cache is None:
        cache = {}
        unit = ctx.units[0]
        for node in iter_nodes(unit.root, {"preproc_def"}):
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is not None:
                cache.setdefault(unit.text(name), []).append(macro_value(unit.text(value)) if value is not None else None)
        ctx.cache["wrp_macro_definitions"] = cache
    return cache


def declared_types(ctx, scope) -> dict[str, str]:
    """Local declarations and parameters in `scope`: name -> base type text."""
    key = ("wrp_decls", id(ctx.unit), scope.id)
    cache = ctx.cache.get(key)
    if cache is None:
        cache = {}
        for node in iter_nodes(scope, {"declaration", "parameter_declaration", "optional_parameter_declaration"}):
            t = type_text(ctx, node)
            if not t:
                continue
            for d in node.children_by_field_name("declarator"):
                ident = d
                while ident is not None and ident.type not in ("identifier",):
                    ident = ident.child_by_field_name("declarator")
                if ident is not None and (d.type in ("identifier", "init_declarator") or
                                          node.type == "optional_parameter_declaration"):
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
    if t in ("identifier", "qualified_identifier"):
        name = ctx.text(node)
        decls = declared_types(ctx, scope) if t == "identifier" else {}
        # A local first, then a constant of the file (`constexpr unsigned kFullMask = ~0u;`, `ns::kMask`).
        ty = decls.get(name) or file_constants(ctx).get(name.split("::")[-1].strip())
        if ty:
            return 32 if ty in INT32_TYPES else 64 if ty in INT64_TYPES else None
        return None
    return None


# A header's includers are not seen: a fix there cannot know every use of its macros and constants.
HEADER_PATH = lazy_re(r"\.(h|hh|hpp|hxx|cuh|inl|inc)$", re.I)


def file_constants(ctx) -> dict[str, str]:
    """Variables declared outside any function in the file (namespace scope): name -> base type."""
    return _file_constants(ctx)[0]


def file_constant_name_node(ctx, name: str):
    """The identifier node (in the file's main unit) declaring the namespace-scope variable `name`."""
    return _file_constants(ctx)[1].get(name)


def _file_constants(ctx):
    cache = ctx.cache.get("wrp_file_constants")
    if cache is None:
        cache, nodes, ambiguous = {}, {}, set()
        unit = ctx.units[0]
        for node in iter_nodes(unit.root, {"declaration"}):
            if ctx.enclosing(node, {"function_definition", "lambda_expression", "field_declaration_list"}) is not None:
                continue
            t = " ".join(unit.text(node.child_by_field_name("type")).split()) if node.child_by_field_name("type") else ""
            for d in node.children_by_field_name("declarator"):
                if d.type == "init_declarator":
                    ident = d.child_by_field_name("declarator")
                    if t and ident is not None and ident.type == "identifier":
                        name = unit.text(ident)
                        if name in cache and cache[name] != t:
                            ambiguous.add(name)  # `a::kMask` and `b::kMask` of other widths: unknown
                        cache.setdefault(name, t)
                        nodes.setdefault(name, ident)
        for name in ambiguous:
            cache.pop(name, None)
            nodes.pop(name, None)
        cache = ctx.cache["wrp_file_constants"] = (cache, nodes)
    return cache


INDEX_BUILTINS = lazy_re(r"^(threadIdx|blockIdx|blockDim|gridDim)\.[xyz]$|^hip(ThreadIdx|BlockIdx|BlockDim|GridDim)_[xyz]$")
INDEX_CALLS = lazy_re(r"(^|\.)(thread_rank|__lane_id|lane_id|laneid|__laneid|get_local_id|meta_group_rank)$")
THREAD_BUILTINS = lazy_re(r"^(threadIdx\.[xyz]|hipThreadIdx_[xyz])$")


def _index_terms(ctx, node, names):
    """(is an index expression, mentions a thread index) for + - * combinations of index terms.

    `blockIdx.x * blockDim.x + threadIdx.x` and `threadIdx.x + threadIdx.y * blockDim.x` are thread
    indices; `threadIdx.x * 4`, `x[threadIdx.x]` or `f(tid)` are values computed from one, not indices.
    """
    t = node.type
    if t == "parenthesized_expression":
        inner = node.named_children
        return _index_terms(ctx, inner[0], names) if inner else (False, False)
    if t in ("field_expression", "identifier"):
        s = ctx.text(node)
        if THREAD_BUILTINS.match(s) or s in names:
            return True, True
        if INDEX_BUILTINS.match(s):
            return True, False
        return (t == "identifier"), False  # other variables (offsets, loop counters) may join an index
    if t == "call_expression":
        fn = node.child_by_field_name("function")
        if fn is not None and INDEX_CALLS.search(ctx.text(fn)):
            return True, True
        return False, False
    if t == "cast_expression":
        v = node.child_by_field_name("value")
        return _index_terms(ctx, v, names) if v is not None else (False, False)
    if t == "number_literal":
        return True, False
    if t == "binary_expression":
        op = node.child_by_field_name("operator").type
        if op not in ("+", "-", "*", "/", "%", "&", ">>"):
            return False, False  # <<, |, ^ build bit patterns (swizzles, masks), not thread numbers
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        li, lt = _index_terms(ctx, left, names)
        ri, rt = _index_terms(ctx, right, names)
        if op == "*" and (left.type == "number_literal" or right.type == "number_literal"):
            return False, False  # a scaled thread index is a data offset, not a lane or warp number
        if op in ("%", "&"):
            return li and ri, lt  # a lane number: still one per thread
        if op in ("/", ">>"):
            # A quotient numbers groups of threads (`threadIdx.x / kThreadsPerToken`), not threads: lane
            # arithmetic on it (`token % 32`) or a bit shifted by it is not about lanes.
            return li and ri, False
        return li and ri, lt or rt
    return False, False


def thread_derived(ctx, scope) -> set[str]:
    """Names in `scope` holding a thread index (to a fixpoint): `tid = threadIdx.x`,
    `gid = blockIdx.x * blockDim.x + threadIdx.x`, `lane = __lane_id()`, parameters named `lane`/`tid`."""
    key = ("wrp_taint", id(ctx.unit), scope.id)
    cache = ctx.cache.get(key)
    if cache is not None:
        return cache
    assigns = []
    names: set[str] = set()
    for node in iter_nodes(scope, {"init_declarator", "assignment_expression", "parameter_declaration",
                                   "optional_parameter_declaration"}):
        if node.type in ("parameter_declaration", "optional_parameter_declaration"):
            d = node.child_by_field_name("declarator")
            if d is not None and d.type == "identifier" and THREAD_PARAM_NAME.match(ctx.text(d)):
                names.add(ctx.text(d))
            continue
        left = node.child_by_field_name("declarator") if node.type == "init_declarator" else node.child_by_field_name("left")
        right = node.child_by_field_name("value") if node.type == "init_declarator" else node.child_by_field_name("right")
        if left is None or right is None or left.type != "identifier":
            continue
        assigns.append((ctx.text(left), right))
    changed = True
    while changed:
        changed = False
        for name, value in assigns:
            if name in names:
                continue
            is_index, has_thread = _index_terms(ctx, value, names)
            if is_index and has_thread:
                names.add(name)
                changed = True
    ctx.cache[key] = names
    return names


def mentions_thread_index(ctx, node, scope) -> bool:
    """Is `node` a thread index expression (see _index_terms)?"""
    is_index, has_thread = _index_terms(ctx, node, thread_derived(ctx, scope))
    return is_index and has_thread


def mentions_any_index(ctx, node, scope) -> bool:
    """Looser: does `node` mention a thread index anywhere (for lane numbers inside shifts)?"""
    names = thread_derived(ctx, scope)
    for n in iter_nodes(node, {"identifier", "field_expression", "call_expression"}):
        s = ctx.text(n)
        if THREAD_BUILTINS.match(s) or (n.type == "identifier" and s in names):
            return True
        if n.type == "call_expression":
            fn = n.child_by_field_name("function")
            if fn is not None and INDEX_CALLS.search(ctx.text(fn)):
                return True
    return False


WARP_COLLECTIVE = lazy_re(r"\b(__shfl(_up|_down|_xor)?(_sync)?|__ballot(_sync)?|__any(_sync)?|__all(_sync)?|"
                             r"__match_(any|all)(_sync)?|__reduce_\w+_sync|__syncwarp|__activemask|__uni_sync|"
                             r"tiled_partition|coalesced_threads|WarpReduce|WarpScan|"
                             # SYCL's sub-group shuffles (a sub-group is a 64-lane wave on CDNA too)
                             r"shift_group_right|shift_group_left|permute_group_by_xor|select_from_group)\b")


_WORD = lazy_re(r"\w+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text))


def _mentions(words: set[str], text: str, names) -> bool:
    """Does `text` (whose maximal runs of word characters are `words`) use one of `names` as a
    whole word? A name of word characters is one of those runs; any other (`operator()`) is searched."""
    return any(n in words if _WORD.fullmatch(n) else re.search(r"(?<!\w)" + re.escape(n) + r"(?!\w)", text)
               for n in names)


def warp_functions(ctx) -> set[str]:
    """Names of functions in the file that use warp collectives, directly or through another such function."""
    cached = ctx.cache.get("wrp_warp_functions")
    if cached is not None:
        return cached
    bodies: dict[str, str] = {}
    unit = ctx.units[0]
    for fn in iter_nodes(unit.root, {"function_definition"}):
        decl = fn.child_by_field_name("declarator")
        while decl is not None and decl.type not in ("identifier", "field_identifier", "qualified_identifier", "destructor_name", "operator_name"):
            decl = decl.child_by_field_name("declarator")
        if decl is not None:
            name = unit.text(decl).split("::")[-1]
            bodies[name] = bodies.get(name, "") + unit.text(fn)
    for d in iter_nodes(unit.root, {"preproc_function_def"}):
        name, value = d.child_by_field_name("name"), d.child_by_field_name("value")
        if name is not None and value is not None:
            bodies[unit.text(name)] = unit.text(value)
    warp = {n for n, b in bodies.items() if WARP_COLLECTIVE.search(b)}
    # Macros of the project headers the file includes whose body holds a collective (pytorch_sparse's
    # `#define SHFL_SYNC(mask, var, delta) __shfl(var, delta)` in `utils.cuh`): a call of one is warp work.
    warp |= header_warp_macros(ctx) - set(bodies)
    # Words of each body, not a regex of the names found so far: compiling one per file and round
    # cost more than the rest of this function.
    words = {n: _words(b) for n, b in bodies.items() if n not in warp}
    # The closure: a function mentioning one found so far is one too. Each name found is looked for
    # once, in the functions left, in the round after it was found (testing every function against
    # every name found, round after round, was most of the warp rules' time on a long file).
    frontier = set(warp)
    while frontier and words:
        plain = {n for n in frontier if _WORD.fullmatch(n)}
        other = frontier - plain  # `operator()`: searched in the text
        frontier = {n for n, w in words.items()
                    if not w.isdisjoint(plain) or (other and _mentions(w, bodies[n], other))}
        for n in frontier:
            del words[n]
        warp |= frontier
    ctx.cache["wrp_warp_functions"] = warp
    return warp


_MACRO_DEFINITION = lazy_re(rb"(?m)^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?:\([^)\n]*\))?[ \t]+((?:[^\n]*\\\r?\n)*[^\n]*)")


def header_warp_macros(ctx) -> set[str]:
    """Names of the macros the project headers the file includes define with a warp collective in their
    body, in any branch (`#ifdef USE_ROCM` / `#define SHFL_SYNC(m, v, d) __shfl(v, d)` / `#else` /
    `#define SHFL_SYNC __shfl_sync`)."""
    cached = ctx.cache.get("wrp_header_warp_macros")
    if cached is None:
        cached = set()
        if ctx.fs_path:
            from hiplint.headers import project_headers
            for _, data in project_headers(ctx):
                if b"define" not in data:
                    continue
                for m in _MACRO_DEFINITION.finditer(data):
                    if WARP_COLLECTIVE.search(m.group(2).decode("utf-8", "replace")):
                        cached.add(m.group(1).decode())
        ctx.cache["wrp_header_warp_macros"] = cached
    return cached


def does_warp_work(ctx, scope) -> bool:
    """Does this function (or macro body) use warp collectives, directly or through a helper?
    A macro body counts when the file uses warp collectives anywhere: its uses are what matter."""
    if ctx.unit.is_macro:
        return bool(WARP_COLLECTIVE.search(ctx.source.text))
    # Once per function: asked for each lane expression in it, and a search of the function's text
    # each time is quadratic in a long one (a 1,000-branch `else if` on `threadIdx.x & 31`: 4 s).
    key = ("does_warp_work", id(ctx.unit), scope.start_byte, scope.end_byte)
    if key not in ctx.cache:
        text = ctx.text(scope)
        warp = warp_functions(ctx) if not WARP_COLLECTIVE.search(text) else None
        ctx.cache[key] = warp is None or (bool(warp) and re.search(
            r"\b(" + "|".join(map(re.escape, sorted(warp))) + r")\s*[(<]", text) is not None)
    return ctx.cache[key]


LANE_ARITH = {("&", 31), ("%", 32), ("/", 32), (">>", 5)}


_SIMPLE_OPS = frozenset({"+", "-", "*"})


def is_simple_index(node) -> bool:
    """Identifiers, members, calls and literals joined by + - *: `tid`, `blockIdx.x * blockDim.x + threadIdx.x`.
    Bit-twiddled values (`(t << 1) | (t >> 4)`) are index permutations, not lane numbers."""
    stack = [node]
    while stack:
        n = stack.pop()
        t = n.type
        if t in ("identifier", "field_expression", "number_literal", "call_expression", "subscript_expression",
                 "qualified_identifier", "cast_expression"):
            continue
        if t == "parenthesized_expression":
            stack.extend(n.named_children)
        elif t == "binary_expression" and n.child_by_field_name("operator").type in _SIMPLE_OPS:
            stack.extend([n.child_by_field_name("left"), n.child_by_field_name("right")])
        else:
            return False
    return True


def lane_arith_32(ctx, node, scope) -> bool:
    """`x & 31`, `x % 32`, `x / 32`, `x >> 5` with x a thread index (or blockDim for warps per block)."""
    if node.type != "binary_expression":
        return False
    op = node.child_by_field_name("operator")
    right = node.child_by_field_name("right")
    left = node.child_by_field_name("left")
    if op is None or right is None or left is None:
        return False
    value = int_literal(ctx.text(right))[0] if right.type == "number_literal" and int_literal(ctx.text(right)) \
        else warp_constant_value(ctx, right, scope)
    if value is None or (ctx.text(op), value) not in LANE_ARITH:
        return False
    if ctx.text(op) in ("/", ">>") and BLOCK_DIM.match(ctx.text(left)):
        return True  # warps per block
    if ctx.text(op) in ("/", ">>") and is_lane_number(ctx, left, scope):
        return False  # a lane is below 32 on NVIDIA (`lane / 32` is 0 there): this code was written for 64
    return is_simple_index(left) and mentions_thread_index(ctx, left, scope)


# Named constants that hold 32 for another reason than the warp: a tile of a transpose (`TILE_DIM`),
# threads of a block, a vector or a chunk. `tid % TILE_DIM` is not taken for a lane number.
NOT_WARP_CONSTANT = lazy_re(r"tile|block|blk|dim|row|col|chunk|vec|pack|item|elem|batch|head|bank|pad|"
                               r"smem|shared|cta|bytes|bits|^[MNK]$|^[BT][MNK]$", re.I)
_CONSTANT_TYPES = ("declaration", "field_declaration")


def _constant_expr_value(ctx, node, scope, depth=0):
    """The value of a small integer constant expression: literals, + - of them, and the names
    `warp_constant_value` resolves."""
    if node is None or depth > 6:
        return None
    t = node.type
    if t == "number_literal":
        lit = int_literal(ctx.text(node))
        return lit[0] if lit else None
    if t in ("parenthesized_expression", "initializer_list"):
        inner = node.named_children
        return _constant_expr_value(ctx, inner[0], scope, depth + 1) if len(inner) == 1 else None
    if t == "binary_expression":
        op = ctx.text(node.child_by_field_name("operator"))
        a = _constant_expr_value(ctx, node.child_by_field_name("left"), scope, depth + 1)
        b = _constant_expr_value(ctx, node.child_by_field_name("right"), scope, depth + 1)
        if a is None or b is None:
            return None
        return {"+": a + b, "-": a - b, "*": a * b}.get(op)
    if t in ("identifier", "qualified_identifier", "call_expression"):
        return _named_constant(ctx, node, scope, depth + 1)
    return None


def warp_constant_value(ctx, node, scope):
    """The value of a named compile-time constant used as a warp width: a macro (`#define NT 32`), a
    `const`/`constexpr` variable or static member (`static const int WS = 32;`, `Cfg::kThreads`), an
    enumerator, a call of a function of the file without arguments that returns one
    (`constexpr int warp_size() { return 32; }`), or `NAME - 1`. None for names WRP002 reports at
    their definition (WARP_SIZE_NAME) and names of tiles, blocks and vectors (NOT_WARP_CONSTANT)."""
    names = [ctx.text(n) for n in iter_nodes(node, {"identifier", "field_identifier"})]
    if not names and node.type == "parenthesized_expression":
        return _constant_expr_value(ctx, node, scope)  # `(32 - 1)`: literals alone
    if not names or any(WARP_SIZE_NAME.match(n.split("::")[-1]) or NOT_WARP_CONSTANT.search(n)
                        for n in names if n != "warpSize"):
        if not (node.type == "call_expression" and names and all(not NOT_WARP_CONSTANT.search(n) for n in names)):
            return None  # a call of `warp_size()`: no definition WRP002 reports
    return _constant_expr_value(ctx, node, scope)


def _named_constant(ctx, node, scope, depth):
    if ctx.unit is not ctx.units[0] and node.type == "call_expression":
        return None  # a macro body: the file's functions are in another unit
    if node.type == "call_expression":
        args = node.child_by_field_name("arguments")
        fn = node.child_by_field_name("function")
        if fn is None or args is None or args.named_children or fn.type not in ("identifier", "qualified_identifier"):
            return None
        bodies = _definitions(ctx).get(ctx.text(fn).split("::")[-1].strip(), [])
        values = {_returned_constant(ctx, b, depth) for b in bodies}
        return values.pop() if len(values) == 1 else None
    name = ctx.text(node).split("::")[-1].strip()
    if scope is not None and node.type == "identifier":
        local = _local_constants(ctx, scope).get(name)
        if local is not None:
            return _constant_expr_value(ctx, local, scope, depth) if local is not False else None
    bodies = set(_macro_definitions(ctx).get(name, ()))
    if bodies:
        if len(bodies) != 1 or None in bodies:
            return None  # defined one way for NVIDIA and another for AMD: no single value
        lit = int_literal(macro_value(bodies.pop()).strip("() "))
        return lit[0] if lit else None
    value = _file_named_constants(ctx).get(name)
    if value is None:
        return None
    unit, expr = value
    return _constant_expr_value(ctx, expr, None, depth) if unit is ctx.unit else None


def _returned_constant(ctx, fn, depth):
    """`{ return 32; }` (the only statement of a function without parameters) -> 32."""
    body = fn.child_by_field_name("body")
    decl = fn.child_by_field_name("declarator")
    params = decl.child_by_field_name("parameters") if decl is not None else None
    if body is None or params is None or params.named_children or len(body.named_children) != 1:
        return None
    ret = body.named_children[0]
    if ret.type != "return_statement" or not ret.named_children:
        return None
    return _constant_expr_value(ctx, ret.named_children[0], None, depth + 1)


def _is_constant_declaration(ctx, decl) -> bool:
    return any(c.type == "type_qualifier" and ctx.text(c) in ("const", "constexpr") for c in decl.children)


def _local_constants(ctx, scope) -> dict:
    """Constants of a function: name -> value node; False for a name also declared otherwise."""
    key = ("wrp_local_consts", id(ctx.unit), scope.id)
    found = ctx.cache.get(key)
    if found is None:
        found = {}
        for d in iter_nodes(scope, {"declaration", "parameter_declaration", "optional_parameter_declaration"}):
            constant = d.type == "declaration" and _is_constant_declaration(ctx, d)
            for c in d.children_by_field_name("declarator"):
                ident = c.child_by_field_name("declarator") if c.type == "init_declarator" else c
                if ident is None or ident.type != "identifier":
                    continue
                name = ctx.text(ident)
                value = c.child_by_field_name("value") if constant and c.type == "init_declarator" else None
                found[name] = value if value is not None and name not in found else False
        ctx.cache[key] = found
    return found


def _file_named_constants(ctx) -> dict:
    """Constants outside functions (namespace scope, static members, enumerators): name -> (unit,
    value node). A name given two values is dropped."""
    found = ctx.cache.get("wrp_named_consts")
    if found is None:
        found, seen = {}, {}
        unit = ctx.units[0]
        functions = FunctionSpans(unit.root)  # by byte range: walking up from each declaration costs its depth
        for d in iter_nodes(unit.root, {"declaration", "field_declaration", "enumerator"}):
            if functions.innermost(d.start_byte, d.end_byte) is not None:
                continue
            pairs = []
            if d.type == "enumerator":
                name, value = d.child_by_field_name("name"), d.child_by_field_name("value")
                if name is not None and value is not None:
                    pairs.append((unit.text(name), value))
            elif _is_constant_declaration(ctx, d):
                if d.type == "field_declaration":
                    name, value = d.child_by_field_name("declarator"), d.child_by_field_name("default_value")
                    if name is not None and value is not None and name.type == "field_identifier":
                        pairs.append((unit.text(name), value))
                for c in d.children_by_field_name("declarator"):
                    if c.type == "init_declarator":
                        ident, value = c.child_by_field_name("declarator"), c.child_by_field_name("value")
                        if ident is not None and ident.type == "identifier" and value is not None:
                            pairs.append((unit.text(ident), value))
            for name, value in pairs:
                text = " ".join(unit.text(value).split())
                if seen.setdefault(name, text) != text:
                    found[name] = None
                elif name not in found:
                    found[name] = (unit, value)
        found = {k: v for k, v in found.items() if v is not None}
        ctx.cache["wrp_named_consts"] = found
    return found


LANE_NAME = lazy_re(r"^_*lane_?(id|idx|index)?$", re.I)
LANE_CALL = lazy_re(r"^(__lane_id|__lane_id_x|__laneid)$")


def is_lane_number(ctx, node, scope) -> bool:
    """Is `node` a lane of the wave already: `__lane_id()`, or a name like `lane_idx` that is a
    parameter of the function or assigned only `__lane_id()` in it?"""
    if node.type == "call_expression":
        fn = node.child_by_field_name("function")
        return fn is not None and bool(LANE_CALL.match(ctx.text(fn)))
    if node.type != "identifier" or not LANE_NAME.match(ctx.text(node)):
        return False
    name = ctx.text(node)
    values, is_param = [], False
    for n in iter_nodes(scope, {"init_declarator", "assignment_expression", "parameter_declaration",
                                "optional_parameter_declaration"}):
        if n.type in ("parameter_declaration", "optional_parameter_declaration"):
            d = n.child_by_field_name("declarator")
            is_param = is_param or (d is not None and ctx.text(d) == name)
            continue
        target = n.child_by_field_name("declarator" if n.type == "init_declarator" else "left")
        if target is not None and ctx.text(target) == name:
            values.append(n.child_by_field_name("value" if n.type == "init_declarator" else "right"))
    if is_param and not values:
        return True
    return bool(values) and not is_param and \
        all(v is not None and v.type == "call_expression" and is_lane_number(ctx, v, scope) for v in values)


BLOCK_DIM = lazy_re(r"^(blockDim\.[xyz]|hipBlockDim_[xyz])$")

# The operators WRP001 looks at, with a literal on the right (`x & 31`, `x % 32`, `x / 32`, `x >> 5`).
LANE_ARITH_OPERATORS = frozenset(op for op, _ in LANE_ARITH)


def is_32_lane_index(ctx, node, scope) -> bool:
    """What WRP001 reports: 32-based lane or warp arithmetic in a function (or macro body) doing warp
    work, unless all of that work stays 32 lanes wide (32-wide tiles, or shuffles that do)."""
    return lane_arith_32(ctx, node, scope) and does_warp_work(ctx, scope) and \
        not keeps_32_tiles(ctx, scope) and not collectives_32_wide(ctx, scope)


def collectives_32_wide(ctx, scope) -> bool:
    """Every warp collective of the function, and of the file's functions it calls, stays inside a
    32-lane half of a wave: shuffles with a constant `width` of at most 32, XOR shuffles whose offset
    stays below 32 (a literal, or a loop from 16 down or up to below 32; `lane ^ o` keeps bit 5), and
    `__syncwarp`. Lanes numbered `& 31` then form two consistent 32-lane groups on a 64-lane wave.
    Any vote, ballot, mask query, other shuffle, tile, macro holding a collective, call of a warp
    helper the file does not define, or lane arithmetic with `warpSize` / `__lane_id()` beside the
    32-based one makes it False."""
    if ctx.unit.is_macro:
        return False
    return _stays_32_wide(ctx, scope, frozenset())


# Lane or warp numbers in whole waves: mixed with `& 31` numbering they put two groups on one slot.
_WAVE_NUMBERING = lazy_re(r"[/%]\s*warpSize\b|warpSize\s*-\s*1\b|\b__lane_id\s*\(")
# A callee the file does not define, named like a warp helper (`warp_reduce`, `shfl_bcast`): unknown.
# Intrinsics (`__syncthreads`, `__expf`) start with two underscores; collectives among them are known.
_WARPISH_NAME = lazy_re(r"warp|wave|shfl|shuffle|ballot|vote|lane|bcast|broadcast|reduce|scan|_any|_all|sync",
                           re.I)


def _stays_32_wide(ctx, fn, visiting: frozenset) -> bool:
    key = ("wrp_32wide", id(ctx.units[0]), fn.start_byte, fn.end_byte)
    if key in ctx.cache:
        return ctx.cache[key]
    own = _function_name(ctx, fn)
    if own in visiting:
        return False  # recursion: not shown to stay 32 wide
    result = _check_32_wide(ctx, fn, visiting | {own})
    ctx.cache[key] = result
    return result


def _check_32_wide(ctx, fn, visiting: frozenset) -> bool:
    own = _function_name(ctx, fn)
    text = strip_c_comments(ctx.text(fn))
    if _WAVE_NUMBERING.search(text):
        return False
    macros = _collective_macros(ctx)
    if macros and _mentions(_words(text), text, macros):
        return False  # a macro of the file holding a collective (`#define ANY_POS __any_sync(...)`)
    helpers = warp_functions(ctx)
    definitions = _definitions(ctx)
    accepted, called = 0, set()
    for call in iter_nodes(fn, {"call_expression"}):
        name_node = call.child_by_field_name("function")
        name = ctx.text(name_node) if name_node is not None else ""
        # `ns::sum<T>`, `obj.vote`, `p->vote` -> the callee's own name
        base = re.split(r"::|\.|->", re.sub(r"<.*", "", name, flags=re.S))[-1].strip()
        if WARP_COLLECTIVE.fullmatch(name) or WARP_COLLECTIVE.fullmatch(base):
            if base == "__activemask" and _is_sync_mask_argument(ctx, call):
                accepted += 1  # the lanes that take part, as a *_sync mask: it moves no data
                continue
            if not (_shuffle_32_wide(ctx, call, base) or _sycl_shuffle_32_wide(ctx, call, base)):
                return False
            accepted += 1
        elif base in helpers or (base not in definitions and not base.startswith("__") and _WARPISH_NAME.search(base)):
            if base != own:
                called.add(base)
    # Every mention of a collective must be one of the calls accepted (not a macro, a tile, a mask).
    if len(WARP_COLLECTIVE.findall(text)) != accepted:
        return False
    for name in sorted(called):
        bodies = definitions.get(name)
        if not bodies or not all(_stays_32_wide(ctx, body, visiting) for body in bodies):
            return False  # a macro helper, or one defined elsewhere: not known to stay 32 wide
    return accepted > 0 or bool(called)


def _collective_macros(ctx) -> frozenset:
    """Macros of the file (object- or function-like) whose body holds a warp collective."""
    found = ctx.cache.get("wrp_collective_macros")
    if found is None:
        unit = ctx.units[0]
        names = set()
        for d in iter_nodes(unit.root, {"preproc_def", "preproc_function_def"}):
            name, value = d.child_by_field_name("name"), d.child_by_field_name("value")
            if name is not None and value is not None and WARP_COLLECTIVE.search(unit.text(value)) and \
                    not _ACTIVE_MASK_BODY.fullmatch(unit.text(value).strip()):
                names.add(unit.text(name))
        found = ctx.cache["wrp_collective_macros"] = frozenset(names)
    return found


# `#define HIPLINT_FULL_WARP_MASK __activemask()` (WRP006's fix) or the project's own such macro:
# used as a *_sync mask it names the lanes that take part and moves no data between lanes.
_ACTIVE_MASK_BODY = lazy_re(r"\(*\s*__activemask\s*\(\s*\)\s*\)*")


def _is_sync_mask_argument(ctx, call) -> bool:
    args = call.parent
    if args is None or args.type != "argument_list" or not args.named_children or args.named_children[0].id != call.id:
        return False
    outer = args.parent
    fn = outer.child_by_field_name("function") if outer is not None and outer.type == "call_expression" else None
    return fn is not None and ctx.text(fn) in SYNC_WITH_MASK


def in_32_lane_groups(ctx, node) -> bool:
    """Is `node` in code that treats a wave as 32-lane groups throughout: a function numbering lanes
    in 32s whose collectives all stay 32 wide, or a helper called only from such functions (not from
    a macro, whose callers are not known)?"""
    scope = ctx.function_scope(node)
    if ctx.unit.is_macro or scope == ctx.unit.root:
        return False
    if function_is_32_based(ctx, scope):
        return collectives_32_wide(ctx, scope)
    name = _function_name(ctx, scope)
    if not name:
        return False
    call = re.compile(rf"\b{re.escape(name)}\s*[(<]")
    unit = ctx.units[0]
    for d in iter_nodes(unit.root, {"preproc_def", "preproc_function_def"}):
        value = d.child_by_field_name("value")
        if value is not None and call.search(unit.text(value)):
            return False
    callers = [fn for fns in _definitions(ctx).values() for fn in fns
               if fn.id != scope.id and call.search(ctx.text(fn))]
    return bool(callers) and all(function_is_32_based(ctx, fn) and collectives_32_wide(ctx, fn) for fn in callers)


def _definitions(ctx) -> dict:
    """Function definitions of the file (its main unit) by name."""
    defs = ctx.cache.get("wrp_definitions")
    if defs is None:
        defs = {}
        for fn in iter_nodes(ctx.units[0].root, {"function_definition"}):
            name = _function_name(ctx, fn)
            if name:
                defs.setdefault(name, []).append(fn)
        ctx.cache["wrp_definitions"] = defs
    return defs


def _shuffle_32_wide(ctx, call, name: str) -> bool:
    if name == "__syncwarp":
        return True  # a barrier over the whole wave is a barrier over each half too
    if name not in SHUFFLE_ARGS_WITHOUT_WIDTH:
        return False
    args_node = call.child_by_field_name("arguments")
    args = args_node.named_children if args_node is not None else []
    n = SHUFFLE_ARGS_WITHOUT_WIDTH[name]
    if len(args) > n:
        return _constant_at_most(ctx, ctx.text(args[n]), 32)
    if name.startswith("__shfl_xor") and len(args) == n:
        return _xor_offset_below_32(ctx, call, args[n - 1])
    if name.startswith("__shfl_up") and len(args) == n:
        return guarded_up_step(ctx, call, args[n - 1])
    return False


# SYCL sub-group shuffles: (group, value, offset); no width argument.
_SYCL_XOR, _SYCL_UP = "permute_group_by_xor", "shift_group_right"


def _sycl_shuffle_32_wide(ctx, call, name: str) -> bool:
    args_node = call.child_by_field_name("arguments")
    args = args_node.named_children if args_node is not None else []
    if len(args) != 3:
        return False
    if name == _SYCL_XOR:
        return _xor_offset_below_32(ctx, call, args[2])
    if name == _SYCL_UP:
        return guarded_up_step(ctx, call, args[2])
    return False


def guarded_up_step(ctx, call, offset) -> bool:
    """A scan step: an up-shuffle by an offset below 32 (`for (o = 1; o < 32; o <<= 1)`) whose result the
    loop takes only `if (lane >= o)`. With lanes numbered `& 31`, a lane of the upper half of a 64-lane
    wave then reads only from its own half: each half scans its own 32 values."""
    if offset.type != "identifier" or not _xor_offset_below_32(ctx, call, offset):
        return False
    loop = _enclosing_loop(ctx, call)
    body = loop.child_by_field_name("body") if loop is not None else None
    name = re.escape(ctx.text(offset))
    return body is not None and re.search(rf"\bif\s*\(\s*\w+\s*>=\s*{name}\s*\)", ctx.text(body)) is not None


def _constant_at_most(ctx, text: str, limit: int) -> bool:
    """`text` is an integer constant of at most `limit`: a literal, a short chain of macros to one (the
    file's, else one project header's), or such a constant halved (`WARP_SIZE / 2`, `WS >> 1`). A macro
    defined more than one way (32 for NVIDIA, 64 for AMD) is no constant."""
    value = _constant_value(ctx, text, 4)
    return value is not None and 0 < value <= limit


_HALVED = lazy_re(r"^(.+?)\s*(/|>>)\s*(\w+)$")


def _constant_value(ctx, text: str, depth: int) -> int | None:
    text = text.strip()
    while text.startswith("(") and text.endswith(")") and depth > 0:
        text, depth = text[1:-1].strip(), depth - 1
    lit = int_literal(text)
    if lit is not None:
        return lit[0]
    if depth <= 0:
        return None
    halved = _HALVED.match(text)
    if halved is not None:
        left = _constant_value(ctx, halved.group(1), depth - 1)
        right = _constant_value(ctx, halved.group(3), depth - 1)
        if left is None or right is None or right < 0 or (halved.group(2) == "/" and right == 0):
            return None
        return left // right if halved.group(2) == "/" else left >> right
    if not re.fullmatch(r"[A-Za-z_]\w*", text):
        return None
    values = set(_macro_definitions(ctx).get(text, ()))
    if not values:
        values = set(_header_macro_values(ctx, text))
    if len(values) != 1 or None in values:
        return None
    return _constant_value(ctx, values.pop(), depth - 1)


def _header_macro_values(ctx, name: str) -> list:
    """Every body the project headers the file includes give object-like macro `name` (as
    hiplint.headers follows them; a define only in an NVIDIA-only branch does not count)."""
    from hiplint.headers import amd_macros, project_headers

    found = amd_macros(ctx).get(name)
    if found is None or found.header is None or ctx.unit.is_macro:
        return []
    pattern = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+" + re.escape(name.encode()) + rb"(?:[ \t]+([^\n]*))?$", re.M)
    bodies = []
    for _, data in project_headers(ctx):
        for m in pattern.finditer(data):
            body = m.group(1).decode("utf-8", "replace") if m.group(1) is not None else ""
            bodies.append(macro_value(body) or None)
    return bodies


def _written_in(ctx, body, name: str) -> bool:
    if body is None:
        return False
    for n in iter_nodes(body, {"assignment_expression", "update_expression", "declaration"}):
        if n.type == "declaration":
            if any(ctx.text(d.child_by_field_name("declarator") or d) == name
                   for d in n.children_by_field_name("declarator")):
                return True  # shadowed: the loop's variable is no longer what the shuffle reads
            continue
        target = n.child_by_field_name("left") if n.type == "assignment_expression" else n.child_by_field_name("argument")
        if target is not None and ctx.text(target) == name:
            return True
    return False



_DOWN = lazy_re(r"^\s*(\w+)\s*(>>=\s*1|/=\s*2)\s*$|^\s*(\w+)\s*=\s*\3\s*(>>\s*1|/\s*2)\s*$")
_UP = lazy_re(r"^\s*(\w+)\s*(<<=\s*1|\*=\s*2)\s*$|^\s*(\w+)\s*=\s*\3\s*(<<\s*1|\*\s*2)\s*$")
_BELOW = lazy_re(r"^\s*\(?\s*(\w+)\s*(<|<=)\s*(\w+)\s*\)?\s*$")


def _xor_offset_below_32(ctx, call, offset) -> bool:
    text = ctx.text(offset).strip()
    if _constant_at_most(ctx, text, 31):
        return True
    if _shift_below_32(ctx, call, text):
        return True
    if offset.type != "identifier":
        return False
    loop = _enclosing_loop(ctx, call)
    while loop is not None:
        init = loop.child_by_field_name("initializer")
        update = loop.child_by_field_name("update")
        cond = loop.child_by_field_name("condition")
        start = re.match(rf"^(?:[\w:<>\s]+\s)?{re.escape(text)}\s*=\s*([^;,]+?)\s*;?$", ctx.text(init).strip()) \
            if init is not None else None
        if start is not None and update is not None:
            if _written_in(ctx, loop.child_by_field_name("body"), text):
                return False  # `o = 32;` inside the loop: the update alone does not bound it
            upd = ctx.text(update)
            down, up = _DOWN.match(upd), _UP.match(upd)
            if down and text in (down.group(1), down.group(3)):
                return _constant_at_most(ctx, start.group(1), 31)
            if up and text in (up.group(1), up.group(3)) and cond is not None:
                below = _BELOW.match(ctx.text(cond))
                if below and below.group(1) == text:
                    limit = 32 if below.group(2) == "<" else 31
                    return _constant_at_most(ctx, below.group(3), limit) and _constant_at_most(ctx, start.group(1), 31)
            return False
        loop = ctx.enclosing(loop, {"for_statement"})
    return False


_SHIFT_OF = lazy_re(r"^\(?\s*1[uU]?\s*<<\s*(\w+)\s*\)?$")
_STEP_DOWN = lazy_re(r"^\s*(?:--\s*(\w+)|(\w+)\s*--|(\w+)\s*-=\s*1)\s*$")
_STEP_UP = lazy_re(r"^\s*(?:\+\+\s*(\w+)|(\w+)\s*\+\+|(\w+)\s*\+=\s*1)\s*$")
_AT_LEAST_0 = lazy_re(r"^\s*\(?\s*(\w+)\s*(?:>=\s*0|>\s*-\s*1)\s*\)?\s*$")


def _shift_below_32(ctx, call, text: str) -> bool:
    """An offset `1 << k` (written in the call, or a `const int delta = 1 << k;` of the loop body) where
    the loop runs `k` over 0..4 at most, down (`k = 4; k >= 0; --k`) or up (`k = 0; k < 5; ++k`): a
    bit-matrix transpose or butterfly whose XOR offsets are 16, 8, 4, 2, 1."""
    loop = _enclosing_loop(ctx, call)
    if loop is None:
        return False
    shift = _SHIFT_OF.match(text)
    if shift is None and re.fullmatch(r"[A-Za-z_]\w*", text):
        body = loop.child_by_field_name("body")
        if body is None:
            return False
        values = [d.child_by_field_name("value") for d in iter_nodes(body, {"init_declarator"})
                  if ctx.text(d.child_by_field_name("declarator") or d).strip() == text]
        written = [n for n in iter_nodes(body, {"assignment_expression", "update_expression"})
                   if ctx.text(n.child_by_field_name("left") or n.child_by_field_name("argument") or n).strip() == text]
        if len(values) != 1 or values[0] is None or written:
            return False
        shift = _SHIFT_OF.match(ctx.text(values[0]).strip())
    if shift is None:
        return False
    k = shift.group(1)
    init = loop.child_by_field_name("initializer")
    update = loop.child_by_field_name("update")
    cond = loop.child_by_field_name("condition")
    if init is None or update is None or cond is None or _written_in(ctx, loop.child_by_field_name("body"), k):
        return False
    start = re.match(rf"^(?:[\w:<>\s]+\s)?{re.escape(k)}\s*=\s*([^;,]+?)\s*;?$", ctx.text(init).strip())
    if start is None:
        return False
    first = _constant_value(ctx, start.group(1), 4)
    upd, test = ctx.text(update), ctx.text(cond)
    down, up = _STEP_DOWN.match(upd), _STEP_UP.match(upd)
    if down and k in down.groups():
        floor = _AT_LEAST_0.match(test)
        return floor is not None and floor.group(1) == k and first is not None and 0 <= first <= 4
    if up and k in up.groups():
        below = _BELOW.match(test)
        if below is None or below.group(1) != k or first is None or first < 0:
            return False
        return _constant_at_most(ctx, below.group(3), 5 if below.group(2) == "<" else 4)
    return False


def _enclosing_loop(ctx, node):
    """The `for` around `node`; also one whose body is an `#if` chain (`for (...)` / `#if CUDART_VERSION >=
    9000` / `v += __shfl_xor_sync(...);` / `#else` / `v += __shfl_xor(...);` / `#endif`), which the grammar
    reads as a `for` with an empty body followed by the `#if`."""
    loop = ctx.enclosing(node, {"for_statement"})
    if loop is not None:
        return loop
    top = ctx.enclosing(node, {"preproc_if", "preproc_ifdef"})
    while top is not None and top.parent is not None and top.parent.type in (
            "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif"):
        top = ctx.enclosing(top, {"preproc_if", "preproc_ifdef"}) or top.parent
    before = top.prev_named_sibling if top is not None else None
    while before is not None and before.type == "comment":
        before = before.prev_named_sibling
    if before is not None and before.type == "for_statement":
        body = before.child_by_field_name("body")
        if body is None or not ctx.text(body).strip(" \t\r\n;"):
            return before
    return None


_TILE = lazy_re(r"\btiled_partition\s*(?:<\s*([^<>]*?)\s*>|\()")


def keeps_32_tiles(ctx, scope) -> bool:
    """Every warp collective of the function goes through `tiled_partition<32>` tiles (`tile.shfl_xor`):
    lanes and warps numbered in 32s then match the tiles, which HIP supports on 64-lane waves too.
    Not when the function also uses a raw collective (`__shfl_xor_sync` sees the whole wave), another
    tile size, or a helper of the file that does warp work."""
    if ctx.unit.is_macro:
        return False
    key = ("wrp_tiles32", id(ctx.unit), scope.start_byte, scope.end_byte)
    if key not in ctx.cache:
        text = ctx.text(scope)
        sizes = [m.group(1) for m in _TILE.finditer(text)]  # None for the run-time form tiled_partition(g, n)
        ok = bool(sizes) and all(_is_32_constant(ctx, size) for size in sizes) and \
            all(m.group(0) == "tiled_partition" for m in WARP_COLLECTIVE.finditer(text))
        if ok:
            own = _function_name(ctx, scope)
            helpers = warp_functions(ctx) - {own}
            ok = not (helpers and re.search(r"\b(" + "|".join(map(re.escape, sorted(helpers))) + r")\s*[(<]", text))
        ctx.cache[key] = ok
    return ctx.cache[key]


def _is_32_constant(ctx, text: str | None) -> bool:
    """`32`, or a macro of the file defined as 32 (`tiled_partition<WARP_SIZE>`)."""
    for _ in range(4):  # a short chain of macros at most
        if text is None:
            return False
        text = text.strip().strip("()").strip()
        if text == "32":
            return True
        text = file_macros(ctx).get(text)
    return False


def _function_name(ctx, fn) -> str | None:
    decl = fn.child_by_field_name("declarator")
    while decl is not None and decl.type not in ("identifier", "field_identifier", "qualified_identifier"):
        decl = decl.child_by_field_name("declarator")
    return ctx.text(decl).split("::")[-1] if decl is not None else None


def lane_index_32(ctx, scope):
    """The first 32-based lane or warp index in `scope` that WRP001 reports, or None.

    A fix that widens a lane mask to 64 bits is exact on NVIDIA but silently wrong on wave64 where
    such an index remains: the mask holds lanes 0-63 while `lane` runs 0-31."""
    key = ("wrp_lane32", id(ctx.unit), scope.id)
    if key in ctx.cache:
        return ctx.cache[key]
    found = None
    for node in iter_nodes(scope, {"binary_expression"}):
        op = node.child_by_field_name("operator")
        if op is not None and op.type in LANE_ARITH_OPERATORS and is_32_lane_index(ctx, node, scope):
            found = node
            break
    ctx.cache[key] = found
    return found


def lanes_in_32s_note(ctx, scope) -> str:
    """' (unsafe: ...)' for a fix title when `scope` numbers lanes in 32s (WRP001), else ''."""
    index = lane_index_32(ctx, scope)
    if index is None:
        return ""
    where = "macro" if ctx.unit.is_macro and scope == ctx.unit.root else "function"
    return f" (unsafe: this {where} numbers lanes in 32s, `{ctx.text(index)}`, WRP001)"


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


def top_level_ancestor(node, root=None):
    """The declaration at file level that holds `node` (the child of the translation unit). With the
    tree's `root`, found walking down once: walking up with `.parent` is quadratic in the depth."""
    path = path_to(root, node) if root is not None else None
    if path is not None:
        for i, n in enumerate(path[:-1]):
            if n.type == "translation_unit":
                return path[i + 1]
        return path[0]
    n = node
    while n.parent is not None and n.parent.type != "translation_unit":
        n = n.parent
    return n


def use_starts(ctx, name: str, defined) -> list[int]:
    """File offsets of the uses of constant or macro `name` after its definition (node `defined`): in its
    function for a local constant, else anywhere in the file (macro bodies included)."""
    after = ctx.file_range(defined)[1]
    function = ctx.enclosing_function(defined)
    places = [(ctx.unit, function)] if function is not None else [(unit, unit.root) for unit in ctx.units]
    starts = []
    for unit, root in places:
        for ident in iter_nodes(root, {"identifier"}):
            start = unit.file_range(ident)[0]
            if start >= after and unit.text(ident) == name and not _declares(ident):
                starts.append(start)
    return starts


def _declares(ident) -> bool:
    """Is `ident` the name an (init) declarator declares: another constant of the same name, not a use."""
    parent = ident.parent
    return parent is not None and parent.type == "init_declarator" and parent.child_by_field_name("declarator") == ident


def unused_on_amd(ctx, name: str, defined) -> bool:
    """Does no code the AMD build compiles use `name`? True for a local constant nothing reads (SuperLU's
    `const int warp_size = 32;`), and for a constant or macro every use of which in this file sits in a
    branch the AMD build skips (deepmd-kit's `FULL_MASK` used only under `#if GOOGLE_CUDA`). A constant
    at a header's file level with no use in the header may be used by its includers: not unused."""
    starts = use_starts(ctx, name, defined)
    if not starts:
        return ctx.enclosing_function(defined) is not None or not HEADER_PATH.search(ctx.path)
    if ctx.settings.report_nvidia_branches:
        return False
    return all(ctx.platform_kind(s) in ("nvidia", "never") for s in starts)


def relate_uses(ctx, finding, name: str, defined, message: str) -> None:
    """Add the uses of constant or macro `name` after its definition (node `defined`) to `finding` as
    related locations: in its function for a local constant, else anywhere in the file (macro bodies
    included). WRP002, WRP004."""
    after = ctx.file_range(defined)[1]
    function = ctx.enclosing_function(defined)
    places = [(ctx.unit, function)] if function is not None else [(unit, unit.root) for unit in ctx.units]
    for unit, root in places:
        for ident in iter_nodes(root, {"identifier"}):
            start, end = unit.file_range(ident)
            if start >= after and unit.text(ident) == name:
                loc = ctx.related_range(start, end, message)
                if loc is not None:
                    finding.add_related(loc)
