import re

from hiplint import CudaRule, Fix, Impact, Severity

from hiplint.model import Edit

from hiplint.cparse import iter_nodes
from hiplint.lazy import lazy_re

from ._lanes import (HEADER_PATH, INT32_TYPES, LANE_EXPR, LANE_MASK_CALLS, LANE_MASK_NAME, LANE_NAME, MASK_NAME,
                     SYNC_WITH_MASK, declared_types, int_literal, is_full_mask_32, is_full_mask_32_text, lanes_in_32s_note,
                     macro_value, mentions_thread_index, relate_uses, unused_on_amd)

# On AMD the lanes that execute the call, as WRP006's HIPLINT_FULL_WARP_MASK: a constant 64-lane
# mask traps in partly active waves (ROCm 6.2+ `__hip_check_mask`, builds without NDEBUG).
_MASK_DEFINE = """#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
#define {name} __activemask()
#else
#define {name} {value}
#endif"""


def _ballot_valued(ctx, node, scope) -> bool:
    """A call to a ballot-like intrinsic, or a variable initialised from one in this function."""
    t = node
    while t.type == "parenthesized_expression" and t.named_children:
        t = t.named_children[0]
    if t.type == "call_expression":
        fn = t.child_by_field_name("function")
        return fn is not None and ctx.text(fn) in LANE_MASK_CALLS
    if t.type == "identifier":
        from hiplint.cparse import iter_nodes
        name = ctx.text(t)
        for d in iter_nodes(scope, {"init_declarator", "assignment_expression"}):
            left = d.child_by_field_name("declarator") or d.child_by_field_name("left")
            right = d.child_by_field_name("value") or d.child_by_field_name("right")
            if left is not None and right is not None and ctx.text(left) == name and right.type == "call_expression":
                fn = right.child_by_field_name("function")
                if fn is not None and ctx.text(fn) in LANE_MASK_CALLS:
                    return True
    return False


class LaneMask32Bit(CudaRule):
    """A lane mask built or compared as a 32-bit value.

    ## What it does
    Finds three forms: `1u << lane` / `1 << lane` with a lane or thread index; a ballot,
    `__activemask()` or `__match_*` result compared with a 32-bit full mask (`== 0xffffffff`);
    and a mask macro or constant defined as the 32-bit full mask (`#define FULL_MASK 0xffffffff`),
    reported at its definition, with its uses as related locations (not when every use is the first
    argument of a project macro with a definition that drops it, such as `#ifdef USE_ROCM` /
    `#define SHFL_DOWN_SYNC(mask, v, d) __shfl_down(v, d)`: no mask reaches AMD; `#ifndef FULL_MASK`
    around the definition tests the name and is no use; nor when the macro is
    never used in a source file, or used only in branches the AMD build skips). A lane numbered `threadIdx.x & 31` (or `% 32`) never reaches 32, so
    `1u << lane` is defined: it is reported only against a ballot or as a mask (the ballot's upper
    half is lost, and widening the lane, WRP001, makes the shift undefined), not when it selects a
    bit of a 32-bit data word.

    ## Why it breaks on AMD
    On 64-lane waves (gfx90a, gfx942) lane ids run to 63: `1u << lane` is undefined for lanes 32-63
    and a "full" 32-bit mask names only half the wave. HIP's ballot, `__activemask()` and match
    functions return 64-bit masks (`unsigned long long`), so `ballot == 0xffffffff` is never true
    when the upper half votes, and a 32-bit mask passed to a `*_sync` intrinsic does not even
    compile on ROCm (see WRP006). The HIP porting guide shows exactly this bug. Silent wrong
    results on wave64 targets, every ROCm version.

    ## Example
    ```cuda
    __global__ void k(int* out, const int* in) {
        int lane = threadIdx.x % warpSize;
        unsigned long long votes = __ballot_sync(__activemask(), in[threadIdx.x] > 0);
        out[threadIdx.x] = (votes & (1u << lane)) != 0;
    }
    ```

    ## Use instead
    ```cuda
    __global__ void k(int* out, const int* in) {
        int lane = threadIdx.x % warpSize;
        unsigned long long votes = __ballot_sync(__activemask(), in[threadIdx.x] > 0);
        out[threadIdx.x] = (votes & (1ull << lane)) != 0;
    }
    ```

    ## Fix
    `1u << lane` becomes `1ull << lane`: the same value for lanes 0-31 on NVIDIA, the right value
    for lanes 32-63 on AMD; safe where the shift feeds arithmetic or a comparison, unsafe where it
    initialises a variable or an argument whose type callers see. Unsafe too, with the same edit,
    when the function (or macro body) also has a 32-based lane or warp index that WRP001 reports
    (`threadIdx.x & 31`, `tid % 32`): the 64-bit mask it meets holds lanes 0-63 while `lane` runs
    0-31, so the fixed code compiles on wave64 and is silently wrong (the fix title says so).
    Where the widened value is stored back into 32 bits (`int below = (1 << lane) - 1;`), lanes 32-63
    stay wrong: the fix then also declares the variable `unsigned long long` (unsafe), and where no
    single edit can widen the destination (a 32-bit cast, an assignment to a variable declared
    elsewhere, a 32-bit return type) no fix is offered.
    A full-mask macro gets a platform-guarded definition: `__activemask()` on AMD, unchanged on
    NVIDIA. Since ROCm 6.2 the `*_sync` functions trap (builds without `NDEBUG`) unless the mask is
    exactly the lanes that execute the call, so a constant 64-lane mask would trap in partly active
    waves. Safe when every use of the macro in the file is the mask of a `*_sync` call (and the file
    is not a header, whose includers are not seen); unsafe otherwise, because other uses
    (comparisons, host code, `#if`) may need another value.
    Comparisons with a full mask are left to you: compare with `__activemask()` or use `__all_sync`.

    ## References
    - HIP porting guide, lane masks bit-shift: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    - HIP C++ language extensions, warp vote and ballot functions (64-bit masks): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html#warp-vote-and-ballot-functions
    """

    code = "WRP004"
    name = "lane-mask-32bit"
    summary = "32-bit lane mask; waves have 64 lanes on gfx90a/gfx942"
    severity = Severity.ERROR
    impact = Impact.SILENT
    wave_sizes = frozenset({64})
    fix_availability = "sometimes"
    checklist = "Build lane masks as 64-bit values (1ull << lane, ~0ull) and compare ballots with __activemask(), not 0xffffffff."
    query = """
    (binary_expression left: (number_literal) @one operator: "<<" right: (_) @shift) @shl
    (binary_expression left: (_) @a operator: ["==" "!="] right: (_) @b) @cmp
    (preproc_def name: (identifier) @name value: (preproc_arg) @value) @define
    """

    def check(self, ctx, captures):
        if "shl" in captures:
            self._shift(ctx, captures["shl"][0], captures["one"][0], captures["shift"][0])
        elif "cmp" in captures:
            self._compare(ctx, captures["cmp"][0], captures["a"][0], captures["b"][0])
        elif "define" in captures and not ctx.unit.is_macro:
            self._define(ctx, captures["define"][0], captures["name"][0], captures["value"][0])

    def _shift(self, ctx, shl, one, shift):
        lit = int_literal(ctx.text(one))
        if lit is None or lit[0] != 1 or "l" in lit[1]:
            return
        scope = ctx.function_scope(shl)
        if not mentions_thread_index(ctx, shift, scope):
            return
        # A thread-indexed bit is a lane mask only when it is about lanes: `1 << tid` into an
        # atomicOr bitmap is not. Lanes by name or expression, or used as a mask.
        in_mask = _in_mask_context(ctx, shl, scope)
        if not (_lane_like(ctx, shift) or in_mask):
            return
        if _strided_loop_index(ctx, shift, shl):
            return  # `for (i = lane; i < n; i += WARP_SIZE)`: an index that runs past the wave, not a lane
        below_32 = _below_32(ctx, shift, scope)
        if below_32 and not in_mask:
            return  # `lane = threadIdx.x & 31` selecting a bit of a data word: defined, and not a lane mask
        parent = shl.parent
        while parent is not None and parent.type == "parenthesized_expression":
            parent = parent.parent
        safe_context = parent is not None and parent.type in ("binary_expression", "unary_expression")
        new = ctx.text(one).rstrip("uUlL") + "ull"
        title, edit = f"Widen to `{new} << ...`", ctx.replace(one, new)
        note = lanes_in_32s_note(ctx, scope)
        narrowed = _narrowed_into(ctx, shl, scope)
        if narrowed is None:
            fix = Fix.safe(title, edit) if safe_context and not note else Fix.unsafe(title + note, edit)
        elif isinstance(narrowed, tuple):
            # `int lt = (1 << lane) - 1;`: widening the shift alone stores the 64-bit mask back into 32
            # bits (lanes 32-63 stay wrong, and the finding would vanish). Widen the variable with it.
            name, type_node = narrowed
            fix = Fix.unsafe(f"{title} and declare `{name}` unsigned long long (unsafe: its type changes"
                             f"{'; ' + note.strip(' ()') if note else ''})",
                             edit, ctx.replace(type_node, "unsigned long long"))
        else:
            fix = None  # narrowed where no single edit can widen it (a 32-bit cast, variable or return)
        if below_32:  # `ballot & ((1u << lane) - 1)` with `lane = threadIdx.x & 31`: right only while lanes run 0-31
            ctx.report(shl, f"`{ctx.text(shl)}` is a 32-bit lane mask for lanes numbered 0-31: a 64-lane wave's "
                            "ballot has lanes 32-63 too, and once the lane runs to 63 (WRP001) the shift is undefined",
                       fix=fix)
            return
        ctx.report(shl, f"`{ctx.text(shl)}` is a 32-bit lane mask: undefined for lanes 32-63 of a 64-lane wave", fix=fix)

    def _compare(self, ctx, cmp, a, b):
        scope = ctx.function_scope(cmp)
        for mask, other in ((a, b), (b, a)):
            if is_full_mask_32(ctx, mask) and _ballot_valued(ctx, other, scope):
                ctx.report(mask, f"ballot result compared with the 32-bit full mask `{ctx.text(mask)}`: "
                                 "HIP ballots are 64-bit, so this is false whenever lanes 32-63 take part",
                           checklist="Compare with __activemask() or use __all_sync(mask, predicate).")
                return

    def _define(self, ctx, define, name_node, value):
        name = ctx.text(name_node)
        body = macro_value(ctx.text(value))
        if not is_full_mask_32_text(body) or not (LANE_MASK_NAME.search(name) or _used_as_sync_mask(ctx, name)):
            return
        if unused_on_amd(ctx, name, name_node):
            return  # used only in branches the AMD build skips
        if _only_through_maskless_macros(ctx, name):
            return  # `SHFL_DOWN_SYNC(FULL_MASK, v, d)` where the project's AMD definition drops the mask
        block = _MASK_DEFINE.format(name=name, value=body)
        start = ctx.file_range(define)[0]
        end = ctx.file_range(value)[0] + len(ctx.text(value).split("//")[0].split("/*")[0].rstrip().encode())
        title = f"Define `{name}` as `__activemask()` on AMD, unchanged on NVIDIA"
        masks, others = _mask_macro_uses(ctx, name)
        if masks and not others and not HEADER_PATH.search(ctx.path):
            # Every use is the mask of a *_sync call in this file: there the active lanes are what a
            # CUDA full mask means, and a 32-bit mask does not compile on ROCm.
            fix = Fix.safe(title, Edit(start, end, block))
        else:
            why = (f"{others} other use(s) of `{name}` (comparisons, host code, `#if`) may need another value"
                   if others else "a header: files that include it may use it otherwise")
            fix = Fix.unsafe(f"{title} (unsafe: {why})", Edit(start, end, block))
        finding = ctx.report(name_node, f"`{name}` is the 32-bit full mask `{body}`: half of a 64-lane wave, "
                                        "and a compile error as a *_sync mask on ROCm", fix=fix)
        if finding is not None:
            relate_uses(ctx, finding, name, name_node, f"`{name}` used here")


_VALUE_OPERATORS = frozenset({"parenthesized_expression", "binary_expression", "unary_expression",
                              "conditional_expression"})


def _narrowed_into(ctx, shl, scope):
    """Where the value of `shl`'s expression goes, if that is 32 bits: (name, type node) for a local
    declaration of one variable that can be widened, True for a 32-bit cast, assignment or return;
    None when nothing narrows it."""
    top = shl
    while top.parent is not None and top.parent.type in _VALUE_OPERATORS:
        if top.parent.type == "binary_expression":
            op = top.parent.child_by_field_name("operator")
            if op is not None and op.type in ("==", "!=", "<", ">", "<=", ">=", "&&", "||"):
                return None  # a comparison or condition: the value becomes a truth value
        top = top.parent
    dest = top.parent
    if dest is None:
        return None
    if dest.type == "cast_expression":
        ty = dest.child_by_field_name("type")
        return True if ty is not None and " ".join(ctx.text(ty).split()) in INT32_TYPES else None
    if dest.type == "init_declarator" and dest.child_by_field_name("value") == top:
        decl = dest.parent
        ty = decl.child_by_field_name("type") if decl is not None and decl.type == "declaration" else None
        if ty is None or " ".join(ctx.text(ty).split()) not in INT32_TYPES:
            return None
        name = dest.child_by_field_name("declarator")
        if len(decl.children_by_field_name("declarator")) == 1 and name is not None and name.type == "identifier":
            return ctx.text(name), ty
        return True
    if dest.type == "assignment_expression" and dest.child_by_field_name("right") == top:
        left = dest.child_by_field_name("left")
        if left is not None and left.type == "identifier" and \
                declared_types(ctx, scope).get(ctx.text(left)) in INT32_TYPES:
            return True
        return None
    if dest.type == "return_statement":
        fn = ctx.enclosing_function(shl)
        ty = fn.child_by_field_name("type") if fn is not None else None
        return True if ty is not None and " ".join(ctx.text(ty).split()) in INT32_TYPES else None
    return None


# Where a macro's name is no use of its value: its definitions, and tests of whether it is defined
# (`#ifndef FULL_MASK` / `#define FULL_MASK 0xffffffff` / `#endif`).
_DEFINITIONS = frozenset({"preproc_def", "preproc_function_def", "preproc_ifdef", "preproc_defined"})


_FUNCTION_MACRO = lazy_re(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)[ \t]*(.*)$", re.M)


def _maskless_macros(ctx) -> set[str]:
    """Function-like macros of the file and its project headers with a definition that drops its first
    parameter (pytorch_scatter's `#ifdef USE_ROCM` / `#define SHFL_DOWN_SYNC(mask, var, delta)
    __shfl_down(var, delta)`): the project's AMD spelling of a *_sync call, which takes no mask."""
    cached = ctx.cache.get("wrp_maskless_macros")
    if cached is not None:
        return cached
    from hiplint.headers import amd_macros
    amd_macros(ctx)  # reads the project headers the file includes (ctx.cache["project_headers"])
    texts = [ctx.source.text]
    for path in ctx.cache.get("project_headers", ()):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                texts.append(f.read(1 << 20))
        except OSError:
            pass
    out = set()
    for text in texts:
        for m in _FUNCTION_MACRO.finditer(text):
            params = [p.strip() for p in m.group(2).split(",") if p.strip()]
            if params and params[0] != "..." and not re.search(r"(?<!\w)" + re.escape(params[0]) + r"(?!\w)", m.group(3)):
                out.add(m.group(1))
    ctx.cache["wrp_maskless_macros"] = out
    return out


def _macro_uses(ctx, name: str):
    """Each use of macro `name` in the file and its macro bodies, as the name of the call it is the first
    argument of (None when it is not a call's first argument)."""
    for unit in ctx.units:
        for node in iter_nodes(unit.root, {"identifier"}):
            if unit.text(node) != name or (node.parent is not None and node.parent.type in _DEFINITIONS):
                continue
            args = node.parent
            call = args.parent if args is not None and args.type == "argument_list" else None
            fn = call.child_by_field_name("function") if call is not None and call.type == "call_expression" else None
            yield unit.text(fn) if fn is not None and args.named_children[0].id == node.id else None


def _only_through_maskless_macros(ctx, name: str) -> bool:
    """Is every use of mask macro `name` the first argument of a _maskless_macros() call?"""
    callers = list(_macro_uses(ctx, name))
    return bool(callers) and all(c is not None and c in _maskless_macros(ctx) for c in callers)


def _mask_macro_uses(ctx, name: str) -> tuple[int, int]:
    """Uses of macro `name` in the file and its macro bodies: (as the mask of a *_sync call, other)."""
    callers = list(_macro_uses(ctx, name))
    masks = sum(1 for c in callers if c in SYNC_WITH_MASK)
    return masks, len(callers) - masks


def _below_32(ctx, node, scope, depth: int = 0) -> bool:
    """Is the value at most 31 by construction: `x & 31` (or a smaller mask), `x % 32`, or a local
    variable only ever assigned such a value?"""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    if node.type == "binary_expression":
        op, right = node.child_by_field_name("operator"), node.child_by_field_name("right")
        lit = int_literal(ctx.text(right)) if right is not None and right.type == "number_literal" else None
        return lit is not None and ((op.type == "&" and lit[0] <= 31) or (op.type == "%" and 0 < lit[0] <= 32))
    if node.type != "identifier" or depth > 0:
        return False
    name, values = ctx.text(node), []
    for n in iter_nodes(scope, {"init_declarator", "assignment_expression", "parameter_declaration",
                                "update_expression"}):
        if n.type == "parameter_declaration":
            d = n.child_by_field_name("declarator")
            if d is not None and ctx.text(d) == name:
                return False  # a parameter: any value
            continue
        if n.type == "update_expression":
            arg = n.child_by_field_name("argument")
            if arg is not None and ctx.text(arg) == name:
                return False
            continue
        target = n.child_by_field_name("declarator" if n.type == "init_declarator" else "left")
        if target is None or ctx.text(target) != name:
            continue
        if n.type == "assignment_expression" and n.child_by_field_name("operator").type != "=":
            return False  # `lane += ...`
        values.append(n.child_by_field_name("value" if n.type == "init_declarator" else "right"))
    return bool(values) and all(v is not None and _below_32(ctx, v, scope, depth + 1) for v in values)


def _lane_like(ctx, node) -> bool:
    if LANE_EXPR.search(ctx.text(node)):
        return True
    return any(LANE_NAME.search(ctx.text(i)) for i in iter_nodes(node, {"identifier"}))


def _in_mask_context(ctx, node, scope) -> bool:
    """Is this value combined with a ballot, passed as a *_sync mask, or stored in a `...mask` variable?"""
    n = node
    while n.parent is not None and (n.parent.type == "parenthesized_expression" or
                                    (n.parent.type == "binary_expression" and
                                     n.parent.child_by_field_name("operator").type in ("-", "&", "|", "^", "~"))):
        parent = n.parent
        if parent.type == "binary_expression":
            other = parent.child_by_field_name("right") if parent.child_by_field_name("left") == n else parent.child_by_field_name("left")
            if other is not None and _ballot_valued(ctx, other, scope):
                return True
        n = parent
    parent = n.parent
    if parent is None:
        return False
    if parent.type == "argument_list":
        call = parent.parent
        fn = call.child_by_field_name("function")
        return fn is not None and ctx.text(fn) in SYNC_WITH_MASK and parent.named_children[0] == n
    if parent.type in ("init_declarator", "assignment_expression"):
        target = parent.child_by_field_name("declarator") or parent.child_by_field_name("left")
        return target is not None and bool(MASK_NAME.search(ctx.text(target)))
    return False


def _used_as_sync_mask(ctx, name: str) -> bool:
    uses = ctx.cache.get("wrp_sync_mask_args")
    if uses is None:
        uses = set()
        for unit in ctx.units:
            for call in iter_nodes(unit.root, {"call_expression"}):
                fn = call.child_by_field_name("function")
                args = call.child_by_field_name("arguments")
                if fn is not None and unit.text(fn) in SYNC_WITH_MASK and args is not None and args.named_child_count:
                    uses.add(unit.text(args.named_children[0]).strip())
        ctx.cache["wrp_sync_mask_args"] = uses
    return name in uses


def _strided_loop_index(ctx, shift, at) -> bool:
    """Is `shift` the variable of an enclosing `for` loop that steps it by a stride (`i += WARP_SIZE`,
    `i = i + n`)? MGARD's `for (bitplane = lane; bitplane < planes; bitplane += WARP_SIZE)` builds a
    mask of the value's low bit planes from it (`(1 << bitplane) - 1`), not a mask of lanes."""
    if shift.type != "identifier":
        return False
    name = ctx.text(shift)
    loop = ctx.enclosing(at, {"for_statement"})
    while loop is not None:
        update = loop.child_by_field_name("update")
        text = ctx.text(update) if update is not None else ""
        if re.fullmatch(rf"\s*{re.escape(name)}\s*(\+=\s*\S.*|=\s*{re.escape(name)}\s*\+\s*\S.*)", text, re.S):
            return True
        loop = ctx.enclosing(loop, {"for_statement"})
    return False
