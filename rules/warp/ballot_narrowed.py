from hiplint import CudaRule, Fix, Impact, Severity
from hiplint.cparse import iter_nodes

from ._lanes import INT32_TYPES, LANE_MASK_CALLS, SYNC_WITH_MASK, declared_types, lanes_in_32s_note, type_text

# 32-bit bit intrinsics and their 64-bit forms. popc and ffs give the same result on a zero-extended
# 32-bit value (exact on NVIDIA); clz and brev do not (they count or reverse 64 bits).
WIDEN_EXACT = {"__popc": "__popcll", "__ffs": "__ffsll"}
WIDEN_INEXACT = {"__clz": "__clzll", "__brev": "__brevll", "__fns32": "__fns64"}
BIT32 = {**WIDEN_EXACT, **WIDEN_INEXACT}


def _callee(ctx, call):
    fn = call.child_by_field_name("function")
    return ctx.text(fn) if fn is not None else ""


class BallotNarrowed(CudaRule):
    """A ballot, active mask or match result narrowed to 32 bits.

    ## What it does
    Finds `__ballot_sync`, `__ballot`, `__activemask`, `__match_any_sync` and `__match_all_sync`
    results stored in a 32-bit variable (`unsigned`, `int`, `uint32_t`) or returned by a function
    declared to return one (`__device__ unsigned vote(bool p) { return __ballot_sync(...); }`), and
    such results (or `auto` variables holding them) passed to 32-bit bit intrinsics: `__popc`,
    `__ffs`, `__clz`, `__brev`. A narrowed variable is reported at its declaration; the places that
    read it with a 32-bit intrinsic (or in ways the fix cannot widen) are listed with it as related
    locations.

    ## Why it breaks on AMD
    In HIP these functions return `unsigned long long` (64 bits) on every target; on 64-lane waves
    (gfx90a, gfx942) the upper 32 bits are lanes 32-63. Narrowing drops them without a warning:
    vote counts, leader election (`__ffs(mask) - 1`) and "any lane" tests silently ignore half the
    wave. On wave32 targets (gfx1100) the upper half is zero and nothing is lost.

    ## Example
    ```cuda
    __global__ void count(const int* in, int* out) {
        unsigned votes = __ballot_sync(__activemask(), in[threadIdx.x] > 0);
        if (threadIdx.x == 0) out[blockIdx.x] = __popc(votes);
    }
    ```

    ## Use instead
    ```cuda
    __global__ void count(const int* in, int* out) {
        unsigned long long votes = __ballot_sync(__activemask(), in[threadIdx.x] > 0);
        if (threadIdx.x == 0) out[blockIdx.x] = __popcll(votes);
    }
    ```

    ## Fix
    The variable becomes `unsigned long long` (not `uint64_t`, which is `unsigned long` on Linux
    and makes `__ffsll` ambiguous in HIP) and its `__popc`/`__ffs` uses become `__popcll`/`__ffsll`;
    on NVIDIA the values are unchanged. A direct `__popc(__ballot_sync(...))` becomes `__popcll(...)`.
    Safe when every use of the variable in the function is one hiplint understands (bit intrinsics,
    masks, bitwise operators, comparisons, conditions) and the function numbers no lanes in 32s.
    Unsafe, with the same edit, when `__clz`/`__brev` are involved (their 64-bit forms count 64
    bits), when a use is not understood, or when the function (or macro body) also has a 32-based
    lane or warp index that WRP001 reports (`threadIdx.x & 31`, `tid % 32`, `tid / 32`): there the
    widened mask holds lanes 0-63 while `lane` runs 0-31, so the fixed code compiles on wave64 and
    is silently wrong. The fix title says so; number the lanes with `warpSize` first.

    ## References
    - HIP C++ language extensions, warp vote and ballot functions ("64-bit return value"): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html#warp-vote-and-ballot-functions
    - HIP porting guide, warp size and lane masks: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    """

    code = "WRP005"
    name = "ballot-narrowed-to-32-bits"
    summary = "64-bit ballot/mask result narrowed to 32 bits; lanes 32-63 are lost on wave64"
    severity = Severity.ERROR
    impact = Impact.SILENT
    wave_sizes = frozenset({64})
    fix_availability = "sometimes"
    checklist = "Keep ballot and active-mask results in unsigned long long and use __popcll/__ffsll on them."
    _calls = " ".join(f'"{c}"' for c in sorted(LANE_MASK_CALLS))
    query = f"""
    ((declaration
      type: (_) @type
      declarator: (init_declarator declarator: (identifier) @var value: (call_expression function: (identifier) @fn))) @decl
      (#any-of? @fn {_calls}))
    ((call_expression function: (identifier) @bitfn arguments: (argument_list . (_) @arg .)) @bitcall
      (#any-of? @bitfn "__popc" "__ffs" "__clz" "__brev" "__fns32"))
    ((return_statement (call_expression function: (identifier) @retfn)) @ret
      (#any-of? @retfn {_calls}))
    """

    def check(self, ctx, captures):
        if "decl" in captures:
            self._declaration(ctx, captures)
        elif "ret" in captures:
            self._returned(ctx, captures["ret"][0], ctx.text(captures["retfn"][0]))
        else:
            self._bit_call(ctx, captures["bitcall"][0], captures["bitfn"][0], captures["arg"][0])

    def _declaration(self, ctx, c):
        fn = ctx.text(c["fn"][0])
        if fn not in LANE_MASK_CALLS:
            return
        type_node = c["type"][0]
        ty = " ".join(ctx.text(type_node).split())
        if ty not in INT32_TYPES:
            return
        var = ctx.text(c["var"][0])
        scope = ctx.function_scope(c["decl"][0])
        edits = [ctx.replace(type_node, "unsigned long long")]
        safe = True
        reads = []  # related locations: where the narrowed mask is read by a 32-bit intrinsic or otherwise
        for ident in iter_nodes(scope, {"identifier"}):
            if ctx.text(ident) != var or ident == c["var"][0]:
                continue
            kind, call = self._use_kind(ctx, ident)
            if kind == "bit":
                name = _callee(ctx, call)
                edits.append(ctx.replace(call.child_by_field_name("function"), BIT32[name]))
                safe = safe and name in WIDEN_EXACT
                reads.append((call, f"`{ctx.text(call)}` reads only 32 bits of `{var}`"))
            elif kind != "ok":
                safe = False
                reads.append((ident, f"`{var}` used here"))
        title = f"Declare `{var}` as unsigned long long" + (" and use the 64-bit bit intrinsics" if len(edits) > 1 else "")
        note = lanes_in_32s_note(ctx, scope)
        if note:
            # Widening keeps lanes 32-63's bits, but code that numbers lanes in 32s reads bit `lane & 31`:
            # the upper 32-lane group of a 64-lane wave still reads the lower group's votes.
            note = note[:-1] + (f"; it does not fix the upper 32-lane group of a 64-lane wave, which still reads "
                                f"the lower group's bits: shift by the group (`{var} >> (threadIdx.x & 32)`) or "
                                "rewrite for 64 lanes)")
        fix = Fix.safe(title, *edits) if safe and not note else Fix.unsafe(title + note, *edits)
        finding = ctx.report(type_node, f"`{var}` holds the 64-bit result of `{fn}` in a 32-bit `{ty}`: lanes 32-63 "
                                        "are dropped on wave64", fix=fix)
        for node, message in reads:
            ctx.relate(finding, node, message)

    def _returned(self, ctx, ret, fn: str):
        func = ctx.enclosing(ret, {"function_definition", "lambda_expression"})
        if func is None or func.type != "function_definition":
            return  # a lambda's return type is deduced: 64 bits
        type_node = func.child_by_field_name("type")
        ty = " ".join(ctx.text(type_node).split()) if type_node is not None else ""
        if ty not in INT32_TYPES:
            return
        decl = func.child_by_field_name("declarator")
        while decl is not None and decl.type not in ("identifier", "field_identifier", "qualified_identifier"):
            decl = decl.child_by_field_name("declarator")
        name = ctx.text(decl) if decl is not None else "this function"
        # Widening the return type is exact here, but a caller may narrow it again: unsafe.
        fix = Fix.unsafe(f"Return `unsigned long long` from `{name}` (check its callers keep 64 bits)",
                         ctx.replace(type_node, "unsigned long long"))
        ctx.report(type_node, f"`{name}` returns the 64-bit result of `{fn}` as a 32-bit `{ty}`: lanes 32-63 "
                              "are dropped on wave64", fix=fix)

    def _use_kind(self, ctx, ident):
        """('bit', call) for a 32-bit bit intrinsic argument, 'ok' for uses that are exact when widened."""
        call = _bit_call_around(ctx, ident)
        if call is not None:
            return "bit", call
        parent = ident.parent
        if parent.type == "argument_list":
            call = parent.parent
            name = _callee(ctx, call)
            if name in BIT32 and parent.named_child_count == 1:
                return "bit", call
            if name in SYNC_WITH_MASK and parent.named_children[0] == ident:
                return "ok", None
            if name in ("__popcll", "__ffsll"):
                return "ok", None
            return "other", None
        if parent.type == "binary_expression":
            op = ctx.text(parent.child_by_field_name("operator"))
            if op in ("&", "|", "^", ">>", "==", "!=", "&&", "||", "<", ">", "<=", ">="):
                return "ok", None
            if op == "-" and parent.parent is not None and parent.parent.type in ("binary_expression", "parenthesized_expression"):
                return "ok", None  # m & (m - 1)
            return "other", None
        if parent.type == "assignment_expression":
            op = parent.child_by_field_name("operator")
            if parent.child_by_field_name("left") == ident and op is not None and ctx.text(op) in ("&=", "|=", "^=", ">>="):
                return "ok", None
            return "other", None
        if parent.type in ("unary_expression",) and ctx.text(parent.child_by_field_name("operator")) == "!":
            return "ok", None
        if parent.type in ("condition_clause", "parenthesized_expression") and parent.parent is not None and \
                parent.parent.type in ("if_statement", "while_statement", "do_statement"):
            return "ok", None
        if parent.type == "condition_clause":
            return "ok", None
        return "other", None

    def _bit_call(self, ctx, call, fn_node, arg):
        name = ctx.text(fn_node)
        what = None
        scope = ctx.function_scope(call)
        for inner in _mask_operands(arg):
            what = self._ballot_operand(ctx, inner, scope)
            if what:
                break
        if what is None:
            return
        new = BIT32[name]
        edit = ctx.replace(fn_node, new)
        note = lanes_in_32s_note(ctx, scope)
        if name in WIDEN_EXACT and not note:
            fix = Fix.safe(f"Use `{new}`", edit)
        else:
            fix = Fix.unsafe(f"Use `{new}`" + ("" if name in WIDEN_EXACT else " (counts 64 bits)") + note, edit)
        ctx.report(call, f"`{name}` takes 32 bits; {what} is a 64-bit lane mask in HIP: lanes 32-63 are dropped on wave64", fix=fix)

    def _ballot_operand(self, ctx, inner, scope):
        if inner.type == "call_expression" and _callee(ctx, inner) in LANE_MASK_CALLS:
            return f"`{_callee(ctx, inner)}`"
        if inner.type == "identifier":
            ty = declared_types(ctx, scope).get(ctx.text(inner), "")
            if ty in ("auto", "unsigned long long", "uint64_t", "unsigned long", "lane_mask_t") and self._holds_ballot(ctx, scope, ctx.text(inner)):
                return f"`{ctx.text(inner)}`"
        return None

    def _holds_ballot(self, ctx, scope, var):
        for d in iter_nodes(scope, {"init_declarator"}):
            left, right = d.child_by_field_name("declarator"), d.child_by_field_name("value")
            if left is not None and right is not None and ctx.text(left) == var and right.type == "call_expression":
                if _callee(ctx, right) in LANE_MASK_CALLS:
                    return True
        return False


_MASK_OPS = ("&", "|", "^", ">>", "-")


def _mask_operands(node):
    """The leaves of a bitwise expression: `votes & ((1ull << lane) - 1)` -> votes, 1ull, lane, 1."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "parenthesized_expression":
            stack.extend(n.named_children)
        elif n.type == "binary_expression" and n.child_by_field_name("operator").type in _MASK_OPS:
            stack.extend([n.child_by_field_name("left"), n.child_by_field_name("right")])
        else:
            yield n


def _bit_call_around(ctx, ident):
    """The 32-bit bit intrinsic whose argument contains `ident` through bitwise operators, if any."""
    n = ident
    while n.parent is not None and (n.parent.type == "parenthesized_expression" or
                                    (n.parent.type == "binary_expression" and
                                     n.parent.child_by_field_name("operator").type in _MASK_OPS)):
        n = n.parent
    parent = n.parent
    if parent is not None and parent.type == "argument_list" and parent.named_child_count == 1:
        call = parent.parent
        if _callee(ctx, call) in BIT32:
            return call
    return None
