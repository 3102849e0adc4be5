import re

from hiplint import CudaRule, Impact, Severity
from hiplint.cparse import iter_nodes

from ._lanes import int_literal, mentions_thread_index, warp_constant_value

_CONDITIONS = {"if_statement", "conditional_expression", "while_statement", "do_statement", "for_statement"}


def _strip_parens(node):
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


def _size(ctx, node, scope):
    if node is None:
        return None
    if node.type == "number_literal":
        lit = int_literal(ctx.text(node))
        return lit[0] if lit else None
    return warp_constant_value(ctx, node, scope)  # not WARP_SIZE names: WRP002 reports those


def _is_warpsize(ctx, node) -> bool:
    node = _strip_parens(node)
    return node is not None and ctx.text(node) == "warpSize"


def _is_lane_value(ctx, node, scope) -> bool:
    """`threadIdx.x % warpSize`, `tid & (warpSize - 1)`, `__lane_id()`: a lane number up to warpSize - 1."""
    node = _strip_parens(node)
    if node is None:
        return False
    if node.type == "call_expression":
        return re.fullmatch(r"(::)?__lane_id\s*\(\s*\)", ctx.text(node)) is not None
    if node.type != "binary_expression":
        return False
    op = ctx.text(node.child_by_field_name("operator"))
    right = _strip_parens(node.child_by_field_name("right"))
    if right is None:
        return False
    if op == "%" and ctx.text(right) == "warpSize":
        pass
    elif op == "&" and re.fullmatch(r"warpSize\s*-\s*1", ctx.text(right)):
        pass
    else:
        return False
    return mentions_thread_index(ctx, node.child_by_field_name("left"), scope)


class Shared32ForWarpSizeLanes(CudaRule):
    """A `__shared__` array of 32 elements indexed by a lane number that runs to `warpSize`.

    ## What it does
    Finds subscripts of a function's `__shared__` array declared with 32 elements (a literal or a
    named constant WRP001 resolves; `WARP_SIZE`-like names are WRP002's) whose index counts up to
    `warpSize - 1`:

    - the variable of a loop bounded by `warpSize` (`for (int i = threadIdx.x; i < warpSize; i += blockDim.x) hist[i] = 0;`);
    - a lane number, `threadIdx.x % warpSize`, `tid & (warpSize - 1)`, `__lane_id()`, or a variable
      initialised to one and never assigned again, where no condition around the access (an `if`,
      a `?:`, a loop, an earlier `if (...) return;`) tests that lane number or the thread index.

    A guarded read such as `v = (threadIdx.x < blockDim.x / warpSize) ? partial[lane] : 0;` (the
    usual second step of a block reduction) is not reported: the guard keeps the index below the
    number of warps.

    ## Why it breaks on AMD
    On wave64 targets (gfx90a, gfx942, gfx950) `warpSize` is 64, so the index reaches 63 and lanes
    32 to 63 read and write past the end of the array: into the next `__shared__` variable of the
    kernel, or past the workgroup's LDS allocation, where AMD hardware drops writes and reads
    return 0. Either way no error is raised and the result is wrong. The array was sized for
    NVIDIA's 32-lane warps; on wave32 targets (RDNA, gfx1100) it fits. Every ROCm version: `warpSize` is the hardware
    wave size.

    ## Example
    ```cuda
    __global__ void lane_hist(const int* in, int* out) {
        __shared__ int hist[32];
        for (int i = threadIdx.x; i < warpSize; i += blockDim.x) hist[i] = 0;
        __syncthreads();
        atomicAdd(&hist[in[blockIdx.x * blockDim.x + threadIdx.x] & 31], 1);
        __syncthreads();
        if (threadIdx.x == 0) out[blockIdx.x] = hist[0];
    }
    ```

    ## Use instead
    ```cuda
    __global__ void lane_hist(const int* in, int* out) {
        __shared__ int hist[64];  // the widest wave: 64 lanes on CDNA
        for (int i = threadIdx.x; i < warpSize; i += blockDim.x) hist[i] = 0;
        __syncthreads();
        atomicAdd(&hist[in[blockIdx.x * blockDim.x + threadIdx.x] & 31], 1);
        __syncthreads();
        if (threadIdx.x == 0) out[blockIdx.x] = hist[0];
    }
    ```
    Size per-lane arrays for 64 lanes (or a template parameter the host picks from the device's
    warp size); `warpSize` itself is not a compile-time constant on ROCm 7 (WRP009).

    ## Fix
    None: doubling the array changes the kernel's shared-memory use, which the author should see.

    ## References
    - HIP C++ language extensions, warpSize (64 on CDNA, 32 on RDNA): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html#warpsize
    - AMD GPU hardware specifications (wavefront size per architecture): https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html
    - AMD Instinct MI300 ISA, LDS out-of-range accesses (writes dropped, reads return 0): https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/instruction-set-architectures/amd-instinct-mi300-cdna3-instruction-set-architecture.pdf
    """

    code = "WRP011"
    name = "shared-32-indexed-by-warpsize-lane"
    summary = "__shared__ array of 32 elements indexed by a lane number up to warpSize - 1"
    severity = Severity.WARNING
    impact = Impact.SILENT
    wave_sizes = frozenset({64})
    in_macros = False
    checklist = "Size per-lane __shared__ arrays for 64 lanes where they are indexed by warpSize-wide lane numbers."
    query = """((function_definition body: (compound_statement) @body) @fn (#match? @body "__shared__"))"""

    def check(self, ctx, captures):
        fn = captures["fn"][0]
        body = captures["body"][0]
        text = ctx.text(body)
        if "warpSize" not in text and "__lane_id" not in text:
            return
        arrays = self._arrays_of_32(ctx, body, fn)
        if not arrays:
            return
        lanes = self._lane_variables(ctx, body, fn)
        for sub in iter_nodes(body, {"subscript_expression"}):
            arr = sub.child_by_field_name("argument")
            if arr is None or arr.type != "identifier" or ctx.text(arr) not in arrays:
                continue
            index = _strip_parens(self._index(sub))
            if index is None:
                continue
            why = None
            if index.type == "identifier" and ctx.text(index) in lanes:
                why = f"`{ctx.text(index)}` is a lane number up to warpSize - 1"
                guard = ctx.text(index)
            elif _is_lane_value(ctx, index, fn):
                why = f"`{' '.join(ctx.text(index).split())}` runs to warpSize - 1"
                guard = None
            elif index.type == "identifier":
                loop = self._warpsize_loop(ctx, sub, ctx.text(index), body)
                if loop is not None:
                    why = f"`{ctx.text(index)}` counts to warpSize - 1 in the loop `{ctx.text(loop.child_by_field_name('condition'))}`"
                    ctx.report(sub, f"`{ctx.text(arr)}` is sized 32 but {why}: on gfx90a/gfx942 (64-lane waves) "
                                    f"indices 32-63 fall past its end; size it for 64 lanes")
                continue
            if why is None or self._guarded(ctx, sub, body, lanes | ({guard} if guard else set())):
                continue
            ctx.report(sub, f"`{ctx.text(arr)}` is sized 32 but {why}: on gfx90a/gfx942 (64-lane waves) "
                            f"lanes 32-63 fall past its end; size it for 64 lanes")

    @staticmethod
    def _index(sub):
        idx = sub.child_by_field_name("index")
        if idx is not None:
            return idx
        # Older grammars: `[ index ]` as a subscript_argument_list.
        for c in sub.named_children[1:]:
            if c.type == "subscript_argument_list":
                return c.named_children[0] if len(c.named_children) == 1 else None
            return c
        return None

    def _arrays_of_32(self, ctx, body, fn) -> set[str]:
        names = set()
        for decl in iter_nodes(body, {"declaration"}):
            words = [ctx.text(c) for c in decl.children if c.type in ("type_qualifier", "storage_class_specifier")]
            if "__shared__" not in words or "extern" in words:
                continue
            for d in decl.children_by_field_name("declarator"):
                if d.type == "init_declarator":
                    d = d.child_by_field_name("declarator")
                if d is None or d.type != "array_declarator":
                    continue
                inner = d.child_by_field_name("declarator")
                while inner is not None and inner.type == "array_declarator":
                    d, inner = inner, inner.child_by_field_name("declarator")
                # `d` is now the outermost dimension: name[first]...
                if inner is not None and inner.type == "identifier" and _size(ctx, d.child_by_field_name("size"), fn) == 32:
                    names.add(ctx.text(inner))
        return names

    def _lane_variables(self, ctx, body, fn) -> set[str]:
        """Variables initialised to a lane number and never assigned again."""
        inits, assigned = {}, set()
        for node in iter_nodes(body, {"init_declarator", "assignment_expression", "update_expression"}):
            if node.type == "init_declarator":
                ident, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
                if ident is not None and ident.type == "identifier":
                    name = ctx.text(ident)
                    inits[name] = None if name in inits else value
            else:
                target = node.child_by_field_name("left") if node.type == "assignment_expression" else node.child_by_field_name("argument")
                if target is not None and target.type == "identifier":
                    assigned.add(ctx.text(target))
        return {n for n, v in inits.items() if v is not None and n not in assigned and _is_lane_value(ctx, v, fn)}

    def _warpsize_loop(self, ctx, sub, name, body):
        """The `for` around `sub` whose condition is `name < warpSize` and whose body does not assign `name`."""
        node = sub.parent
        while node is not None and node != body:
            if node.type == "for_statement":
                cond = _strip_parens(node.child_by_field_name("condition"))
                if cond is not None and cond.type == "binary_expression" and \
                        ctx.text(cond.child_by_field_name("operator")) == "<" and \
                        ctx.text(cond.child_by_field_name("left")) == name and _is_warpsize(ctx, cond.child_by_field_name("right")):
                    loop_body = node.child_by_field_name("body")
                    if loop_body is not None and not re.search(rf"\b{re.escape(name)}\s*([-+*/]?=[^=]|\+\+|--)|(\+\+|--)\s*{re.escape(name)}\b",
                                                               ctx.text(loop_body)):
                        return node
                    return None
            node = node.parent
        return None

    def _guarded(self, ctx, sub, body, lanes) -> bool:
        """Does a condition around `sub`, or an earlier `if (...) return;`, test a lane or thread index?"""
        words = {"threadIdx", "__lane_id"} | lanes

        def mentions(node):
            return node is not None and any(ctx.text(n) in words for n in iter_nodes(node, {"identifier", "field_expression"})) \
                or (node is not None and "threadIdx" in ctx.text(node))

        node, child = sub.parent, sub
        while node is not None and node != body.parent:
            if node.type in _CONDITIONS:
                cond = node.child_by_field_name("condition")
                if cond is not None and cond != child and mentions(cond):
                    return True
            if node.type == "binary_expression" and ctx.text(node.child_by_field_name("operator")) in ("&&", "||"):
                left = node.child_by_field_name("left")
                if left is not None and left != child and mentions(left):
                    return True
            node, child = node.parent, node
        for stmt in iter_nodes(body, {"if_statement"}):
            if stmt.end_byte > sub.start_byte:
                continue
            cons = stmt.child_by_field_name("consequence")
            if cons is not None and re.search(r"\b(return|break|continue)\b", ctx.text(cons)) and \
                    mentions(stmt.child_by_field_name("condition")):
                return True
        return False
