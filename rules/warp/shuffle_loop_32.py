import re

from hiplint import CudaRule, Impact, Severity
from hiplint.cparse import iter_nodes

from ._lanes import SHUFFLES, SHUFFLE_ARGS_WITHOUT_WIDTH, in_32_lane_groups, int_literal, warp_constant_value
from hiplint.lazy import lazy_re

_HALVING = lazy_re(r"(/=\s*2\b|>>=\s*1\b|=\s*\w+\s*/\s*2\b|=\s*\w+\s*>>\s*1\b)")
_DOUBLING = lazy_re(r"(\*=\s*2\b|<<=\s*1\b|=\s*\w+\s*\*\s*2\b|=\s*\w+\s*<<\s*1\b)")
_STARTS_16 = lazy_re(r"=\s*(16|0x10)\s*;?\s*$")
_BELOW_32 = lazy_re(r"<\s*32\b|<=\s*16\b")


_SHUFFLE_IN_BODY = lazy_re(r"\b__shfl(_xor|_down|_up)?(_sync)?\s*\(")


def _shuffle_macros(ctx) -> set[str]:
    """Function-like macros of the file whose body is a shuffle: their calls count as shuffles."""
    names = ctx.cache.get("wrp_shuffle_macros")
    if names is None:
        names = set()
        unit = ctx.units[0]
        for d in iter_nodes(unit.root, {"preproc_function_def"}):
            name, value = d.child_by_field_name("name"), d.child_by_field_name("value")
            if name is not None and value is not None and _SHUFFLE_IN_BODY.search(unit.text(value)):
                names.add(unit.text(name))
        ctx.cache["wrp_shuffle_macros"] = names
    return names


def _shuffles_in(ctx, node):
    macros = _shuffle_macros(ctx)
    for call in iter_nodes(node, {"call_expression"}):
        fn = call.child_by_field_name("function")
        if fn is not None and (ctx.text(fn) in SHUFFLES or ctx.text(fn) in macros):
            yield call


def _has_width(ctx, call) -> bool:
    args = call.child_by_field_name("arguments")
    name = ctx.text(call.child_by_field_name("function"))
    if name not in SHUFFLE_ARGS_WITHOUT_WIDTH:
        return False  # a macro wrapping a shuffle: its own call shows no width
    return args is not None and args.named_child_count > SHUFFLE_ARGS_WITHOUT_WIDTH[name]


class ShuffleLoop32(CudaRule):
    """A shuffle reduction or scan whose offsets cover exactly 32 lanes.

    ## What it does
    Finds loops that shuffle with offsets starting at 16 and halving (`for (o = 16; o > 0; o /= 2)`),
    or doubling while below 32 (`for (o = 1; o < 32; o *= 2)`), also where 16 or 32 is a named
    warp-width constant of the file as WRP001 resolves it (`for (o = WS / 2; ...)` with
    `static const int WS = 32;`, `o < warp_size()`; `WARP_SIZE`-like names are WRP002's), and unrolled shuffles with a literal
    offset of 16, when the shuffles have no explicit `width` (also inside an outer loop over rows or
    items: `for (int r = 0; r < ROWS; ++r) { v[r] += __shfl_xor_sync(m, v[r], 16); ... }`; not inside a
    loop that halves or doubles an offset, which is reported as a loop). A shuffle in an NVIDIA-only branch
    (the `#else` of `#ifdef __HIP_PLATFORM_AMD__`) does not count: the AMD branch's shuffle does.
    Not reported where the code treats the wave as 32-lane groups throughout: the function (or every
    function of the file that calls it) numbers its lanes in 32s (`threadIdx.x & 31`) and all its
    collectives stay within 32 lanes (see WRP001); each half of the wave then reduces its own group.
    Nor inside `if (tid < 32)` (a thread index, not a lane, below 32): only the block's first 32 threads
    run the tree, lanes 0-31 of the first wave on wave64 as on wave32, so it combines all of them (the
    last stage of a block reduction that first folded its values into 32).

    ## Why it breaks on AMD
    On a 64-lane wave (gfx90a, gfx942) such a tree combines only the lanes of each 32-lane half:
    lane 0 ends with the sum of lanes 0-31 and lane 32 with the sum of 32-63. Code that then takes
    lane 0 of each *wave* (`threadIdx.x % warpSize == 0`) loses half the data; code that takes
    lane 0 of each 32-lane group stays correct but does twice the work per wave. A tree over
    `warpSize` lanes starts at `warpSize / 2`. Applies to wave64 targets, every ROCm version.

    ## Example
    ```cuda
    __device__ float warp_sum(float v) {
        for (int offset = 16; offset > 0; offset /= 2)
            v += __shfl_down_sync(0xffffffff, v, offset);
        return v;
    }
    ```

    ## Use instead
    ```cuda
    __device__ float warp_sum(float v) {
        for (int offset = warpSize / 2; offset > 0; offset /= 2)
            v += __shfl_down(v, offset);
        return v;
    }
    ```
    or keep the tree 32 wide on purpose with an explicit `width` of 32 on every shuffle.

    ## Fix
    None automatic: widening the tree is only right if every lane and warp index in the caller is
    widened too (a half-widened reduction compiles and double-counts).

    ## References
    - HIP C++ language extensions, warp shuffle functions and `width`: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html#warp-shuffle-functions
    - CUDA C++ Programming Guide, warp shuffle functions: https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#warp-shuffle-functions
    """

    code = "WRP003"
    name = "shuffle-loop-assumes-32-lanes"
    summary = "shuffle tree covers 32 lanes; a wave64 wave has 64"
    severity = Severity.WARNING
    impact = Impact.SILENT
    wave_sizes = frozenset({64})
    checklist = "Start shuffle trees at warpSize/2 (and widen every lane index with them), or give every shuffle an explicit width of 32."
    # Every loop it reports holds a shuffle or a macro of the file wrapping one: the file says `__shfl`.
    triggers = ("__shfl",)
    query = """
    (for_statement) @loop
    ((call_expression function: (identifier) @fn arguments: (argument_list)) @call
      (#any-of? @fn "__shfl_xor_sync" "__shfl_down_sync" "__shfl_xor" "__shfl_down"))
    """

    def check(self, ctx, captures):
        if "loop" in captures:
            self._loop(ctx, captures["loop"][0])
        elif "call" in captures:
            self._unrolled(ctx, captures["call"][0])

    def _loop(self, ctx, loop):
        kind = _tree_kind(ctx, loop)
        if kind is None:
            return
        init, cond, init_t = loop.child_by_field_name("initializer"), loop.child_by_field_name("condition"), \
            ctx.text(loop.child_by_field_name("initializer"))
        starts_16, below_32 = kind == "starts_16", kind == "below_32"
        var = re.match(r"^(?:\w[\w\s:<>]*\s+)?(\w+)\s*=", init_t.strip())
        var_name = var.group(1) if var else None
        body = loop.child_by_field_name("body")
        if body is None:
            return
        # A shuffle in an NVIDIA-only branch beside a HIP one (`#else` of `__HIP_PLATFORM_AMD__`) is
        # not what AMD runs: the HIP branch's own shuffle decides.
        shuffles = [c for c in _shuffles_in(ctx, body) if not _has_width(ctx, c)
                    and ctx.platform_kind(ctx.file_range(c)[0]) != "nvidia"]
        if var_name:
            shuffles = [c for c in shuffles if re.search(rf"\b{re.escape(var_name)}\b", ctx.text(c.child_by_field_name("arguments")))]
        if shuffles and not in_32_lane_groups(ctx, loop) and not _under_first_32_threads(ctx, loop):
            what = "starts at 16" if starts_16 else "stops below 32"
            ctx.report(init if starts_16 else cond,
                       f"shuffle loop {what}: it combines 32 lanes, half of a 64-lane wave on gfx90a/gfx942")

    def _unrolled(self, ctx, call):
        if _has_width(ctx, call) or any(_is_tree_loop(ctx, loop) for loop in _enclosing_loops(ctx, call)):
            return  # inside a shuffle loop of its own: `_loop` reports the loop
        args = call.child_by_field_name("arguments").named_children
        name = ctx.text(call.child_by_field_name("function"))
        offset = args[-1] if args else None
        if offset is None or offset.type != "number_literal":
            return
        lit = int_literal(ctx.text(offset))
        if lit is not None and lit[0] == 16 and not _has_step_32(ctx, call) and not in_32_lane_groups(ctx, call) \
                and not _under_first_32_threads(ctx, call):
            ctx.report(offset, f"`{name}` with offset 16 is the widest step of a 32-lane tree; a 64-lane wave "
                               "needs a step with offset 32 as well")


# `tid < 32`, `threadIdx.x <= 31`, as a whole condition or one `&&` conjunct of it.
_FIRST_32 = lazy_re(r"(?:^|&&)\s*\(?\s*(?:[A-Za-z_][\w.]*)\s*(?:<\s*32|<=\s*31)\s*\)?\s*(?:&&|$)")


def _under_first_32_threads(ctx, node) -> bool:
    """Is `node` in the `if` branch of `if (tid < 32)`? Then exactly 32 threads of the block take part,
    the first wave's lanes 0-31 on wave64 and wave32 alike, and a 32-lane tree combines all of them
    (the last step of a block reduction, after the block folded its values into 32)."""
    child, parent = node, ctx.enclosing(node, {"if_statement"})
    while parent is not None:
        consequence = parent.child_by_field_name("consequence")
        cond = parent.child_by_field_name("condition")
        if consequence is not None and cond is not None and \
                consequence.start_byte <= node.start_byte and node.end_byte <= consequence.end_byte:
            text = ctx.text(cond).strip()
            while text.startswith("(") and text.endswith(")"):
                text = text[1:-1].strip()
            if _FIRST_32.search(text) and "warp" not in text.lower() and "lane" not in text.lower():
                return True
        child, parent = parent, ctx.enclosing(parent, {"if_statement"})
    return False


def _tree_kind(ctx, loop):
    """'starts_16' (`for (o = 16; ...; o /= 2)`), 'below_32' (`for (o = 1; o < 32; o *= 2)`) or None."""
    init = loop.child_by_field_name("initializer")
    cond = loop.child_by_field_name("condition")
    update = loop.child_by_field_name("update")
    if init is None or cond is None or update is None:
        return None
    init_t, cond_t, upd_t = ctx.text(init), ctx.text(cond), ctx.text(update)
    if _HALVING.search(upd_t) and (_STARTS_16.search(init_t) or _named_start(ctx, loop, init) == 16):
        return "starts_16"
    if _DOUBLING.search(upd_t) and (_BELOW_32.search(cond_t) or _named_bound(ctx, loop, cond)):
        return "below_32"
    return None


def _named_start(ctx, loop, init):
    """The start of `for (int o = WS / 2; ...)` with WS a named warp-width constant of the file
    (`static const int WS = 32;`, `warp_size()` returning 32; not WARP_SIZE-like names, which WRP002
    reports), or None."""
    value = None
    for n in iter_nodes(init, {"init_declarator", "assignment_expression"}):
        value = n.child_by_field_name("value" if n.type == "init_declarator" else "right")
        break
    if value is None:
        return None
    scope = ctx.function_scope(loop)
    if value.type == "binary_expression":
        op, right = ctx.text(value.child_by_field_name("operator")), value.child_by_field_name("right")
        divisor = int_literal(ctx.text(right)) if right is not None and right.type == "number_literal" else None
        if divisor is not None and (op, divisor[0]) in (("/", 2), (">>", 1)):
            width = warp_constant_value(ctx, value.child_by_field_name("left"), scope)
            return width // 2 if width is not None else None
        return None
    return warp_constant_value(ctx, value, scope) if value.type != "number_literal" else None


def _named_bound(ctx, loop, cond) -> bool:
    """`o < WS` with WS a named warp-width constant of 32 (as for `_named_start`)."""
    while cond.type == "parenthesized_expression" and cond.named_children:
        cond = cond.named_children[0]
    if cond.type != "binary_expression" or ctx.text(cond.child_by_field_name("operator")) != "<":
        return False
    right = cond.child_by_field_name("right")
    return right is not None and right.type != "number_literal" and \
        warp_constant_value(ctx, right, ctx.function_scope(loop)) == 32


def _is_tree_loop(ctx, loop) -> bool:
    """A loop over halving or doubling offsets (any start): a shuffle in it is a step of its tree."""
    update = loop.child_by_field_name("update")
    if update is None:
        return False
    upd_t = ctx.text(update)
    return bool(_HALVING.search(upd_t) or _DOUBLING.search(upd_t))


def _enclosing_loops(ctx, node):
    loop = ctx.enclosing(node, {"for_statement"})
    while loop is not None:
        yield loop
        loop = ctx.enclosing(loop, {"for_statement"})


def _has_step_32(ctx, call) -> bool:
    """Does the function also shuffle with a literal offset of 32 (`v += __shfl_xor(v, 32);` before
    the 16 step)? Then the unrolled tree spans 64 lanes."""
    for other in iter_nodes(ctx.function_scope(call), {"call_expression"}):
        fn = other.child_by_field_name("function")
        args = other.child_by_field_name("arguments")
        name = ctx.text(fn) if fn is not None else ""
        if other == call or args is None or name not in SHUFFLES:
            continue
        n = SHUFFLE_ARGS_WITHOUT_WIDTH.get(name, 0)
        offset = args.named_children[n - 1] if 0 < n <= len(args.named_children) else None
        if offset is not None and offset.type == "number_literal" and (int_literal(ctx.text(offset)) or (None,))[0] == 32:
            return True
    return False

