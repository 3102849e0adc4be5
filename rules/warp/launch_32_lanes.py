import re

from hiplint import CudaRule, Impact, Severity
from hiplint.cparse import iter_nodes, strip_c_comments
from hiplint.lazy import lazy_re

from ._lanes import _definitions, int_literal, mentions_thread_index, warp_constant_value

# A kernel's own use of `warpSize` as the extent of its lanes: a shuffle tree from warpSize / 2, a
# loop up to warpSize, a stride of warpSize, a shuffle whose width is warpSize.
_SPANS_WARPSIZE = lazy_re(r"\bwarpSize\s*(?:/\s*2\b|>>\s*1\b)|[+]=\s*warpSize\b|<=?\s*warpSize\b|"
                          r"\b__shfl\w*\s*\([^;]*,\s*warpSize\s*\)")
_WORD = re.compile(r"[A-Za-z_]\w*")


def _value(ctx, node, scope):
    """An integer literal, or a named constant WRP001 resolves (not WARP_SIZE names: WRP002's)."""
    if node is None:
        return None
    if node.type == "number_literal":
        lit = int_literal(ctx.text(node))
        return lit[0] if lit else None
    if node.type in ("identifier", "qualified_identifier", "call_expression", "parenthesized_expression"):
        return warp_constant_value(ctx, node, scope)
    return None


def _dim3_args(node):
    """The arguments of `dim3(x, y)`, `dim3 b(x, y)`, `dim3 b = dim3(x, y)`, `dim3 b{x, y}`, `{x, y}`."""
    if node is None:
        return None
    if node.type == "call_expression":
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if fn is not None and args is not None and fn.type == "identifier" and fn.text == b"dim3":
            return [a for a in args.named_children if a.type != "comment"]
        return None
    if node.type in ("argument_list", "initializer_list"):
        return [a for a in node.named_children if a.type != "comment"]
    return None


class Launch32LanesForWarpSizeKernel(CudaRule):
    """A launch that sizes its blocks in 32-thread warps for a kernel that works in `warpSize` lanes.

    ## What it does
    Finds kernel launches (`<<<grid, block>>>`) in the file of the kernel they launch where the block
    hard-codes 32 threads per warp while the kernel's lanes span `warpSize`:

    - a block 32 threads wide with more rows (`dim3 block(32, 4)`, `dim3(32, rows)`, `{32, 8}`), or a
      one-dimensional block of exactly 32 threads, for a kernel whose collectives or loops span
      `warpSize` lanes: a shuffle tree from `warpSize / 2`, a loop bounded by `warpSize`, a stride of
      `warpSize`, a shuffle of width `warpSize` (in the kernel or in a function of the file it calls);
    - a one-dimensional block of `rows * 32` threads for a kernel that numbers its warps by dividing a
      thread index by `warpSize` (`row = threadIdx.x / warpSize`).

    The 32 may be a literal or a named constant WRP001 resolves (`static const int WS = 32`);
    `WARP_SIZE`-like names are WRP002's. The kernel must be defined in the same file. Launches in
    branches only the NVIDIA build compiles, and kernels whose lanes stay in 32-lane groups
    (`threadIdx.x % warpSize` on a 32-wide block is just `threadIdx.x`), are not reported.

    ## Why it breaks on AMD
    On wave64 targets (gfx90a, gfx942, gfx950) `warpSize` is 64. A 32-wide block with several rows
    puts two rows (`threadIdx.y`, `threadIdx.y + 1`) in each wave, and a reduction over `warpSize`
    lanes adds them together; a stride of `warpSize` over a row skips half its columns. A block of
    32 threads fills half a wave, and a shuffle tree from lane offset 32 reads lanes that run no
    thread. A block of `rows * 32` threads holds `rows / 2` waves, so half the rows are never
    computed. None of this fails to compile or raises an error: the results are wrong. On wave32
    targets (RDNA, gfx1100) the launch and the kernel agree. This holds for every ROCm version:
    `warpSize` is the hardware wave size.

    ## Example
    ```cuda
    __global__ void row_sums(const float* m, float* out, int cols) {
        int row = blockIdx.x * blockDim.y + threadIdx.y;
        float v = 0.f;
        for (int c = threadIdx.x; c < cols; c += warpSize) v += m[row * cols + c];
        for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);
        if (threadIdx.x == 0) out[row] = v;
    }
    void launch(const float* m, float* out, int rows, int cols) {
        dim3 block(32, 4);
        row_sums<<<(rows + 3) / 4, block>>>(m, out, cols);
    }
    ```

    ## Use instead
    ```cuda
    __global__ void row_sums(const float* m, float* out, int cols) {
        int row = blockIdx.x * blockDim.y + threadIdx.y;
        float v = 0.f;
        for (int c = threadIdx.x; c < cols; c += warpSize) v += m[row * cols + c];
        for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);
        if (threadIdx.x == 0) out[row] = v;
    }
    void launch(const float* m, float* out, int rows, int cols, int warp_size) {
        dim3 block(warp_size, 4);  // hipDeviceGetAttribute(&warp_size, hipDeviceAttributeWarpSize, dev)
        row_sums<<<(rows + 3) / 4, block>>>(m, out, cols);
    }
    ```
    Size the block from the device's warp size (`hipDeviceAttributeWarpSize`, `prop.warpSize`), or
    keep the kernel's lanes 32 wide (`__shfl_down(v, o, 32)` from offset 16).

    ## Fix
    None: the host must query the warp size of the device it launches on.

    ## References
    - HIP C++ language extensions, warpSize (64 on CDNA, 32 on RDNA): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html#warpsize
    - HIP porting guide, warp size: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    - AMD GPU hardware specifications (wavefront size per architecture): https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html
    """

    code = "WRP010"
    name = "launch-32-lanes-for-warpsize-kernel"
    summary = "launch sizes blocks in 32-thread warps for a kernel whose lanes span warpSize"
    severity = Severity.WARNING
    impact = Impact.SILENT
    wave_sizes = frozenset({64})
    in_macros = False
    checklist = "Size the blocks of kernels that use warpSize from the device's warp size (hipDeviceAttributeWarpSize), not 32."
    triggers = ("warpSize",)
    query = """((call_expression (kernel_call_syntax) @config) @call (#match? @config "^<<<"))"""

    def check(self, ctx, captures):
        if ctx.unit is not ctx.units[0] or "warpSize" not in ctx.source.text:
            return
        call = captures["call"][0]
        config = captures["config"][0]
        exprs = [c for c in config.named_children if c.type != "comment"]
        if len(exprs) < 2:
            return
        fn = call.child_by_field_name("function")
        if fn is not None and fn.type == "template_function":
            fn = fn.child_by_field_name("name")
        if fn is None or fn.type != "identifier":
            return
        kernels = [k for k in _definitions(ctx).get(ctx.text(fn), []) if "__global__" in ctx.text(k)[:400]]
        if len(kernels) != 1:
            return  # not defined here, or overloaded
        kernel = kernels[0]
        scope = ctx.function_scope(call)
        block = exprs[1]
        shape = self._block_shape(ctx, block, scope)
        if shape is None:
            return
        kind, shown = shape
        name = ctx.text(fn)
        if kind in ("rows", "one"):
            if not self._spans_warpsize(ctx, kernel):
                return
            if kind == "rows":
                msg = (f"`{name}` is launched with blocks 32 threads wide ({shown}) but its lanes span `warpSize`: "
                       f"on gfx90a/gfx942 a 64-lane wave holds two rows (threadIdx.y) and its warpSize-wide "
                       f"reductions and strides mix them")
            else:
                msg = (f"`{name}` is launched with 32-thread blocks ({shown}) but its lanes span `warpSize`: on "
                       f"gfx90a/gfx942 the block fills half of a 64-lane wave and its loops and shuffles over "
                       f"warpSize lanes reach lanes 32-63, which run no thread")
        else:
            if not self._warp_index_by_warpsize(ctx, kernel):
                return
            msg = (f"`{name}` numbers its warps by `warpSize` but is launched with 32 threads per warp ({shown}): "
                   f"on gfx90a/gfx942 a block of n * 32 threads holds n / 2 waves, so half the warps' work is "
                   f"never done")
        ctx.report(block, msg + "; size the block from the device's warp size (hipDeviceAttributeWarpSize)")

    def _block_shape(self, ctx, block, scope):
        """('rows', text) for a 32-wide block with rows, ('one', text) for a block of 32 threads,
        ('multiple', text) for `n * 32` threads; None otherwise."""
        args = _dim3_args(block)
        shown = ctx.text(block)
        if args is None and block.type == "identifier" and scope is not None:
            name = ctx.text(block)
            decls = []
            for d in iter_nodes(scope, {"init_declarator"}):
                ident = d.child_by_field_name("declarator")
                if ident is not None and ident.type == "identifier" and ctx.text(ident) == name:
                    decls.append(d)
            if len(decls) != 1 or decls[0].start_byte > block.start_byte:
                return None
            decl = decls[0].parent
            if decl is None or "dim3" not in ctx.text(decl.child_by_field_name("type") or decl):
                return None
            body = ctx.text(scope)
            if re.search(rf"\b{re.escape(name)}\s*(\.\s*[xyz]\s*)?(=[^=]|[-+*/]=)", strip_c_comments(body)):
                return None  # changed after its declaration
            value = decls[0].child_by_field_name("value")
            if value is None:
                value = next((c for c in decls[0].named_children if c.type in ("argument_list", "initializer_list")), None)
            args = _dim3_args(value)
            if args is None and value is not None:
                block = value
            shown = f"`{' '.join(ctx.text(decl).split()).rstrip(';')}`"
        else:
            shown = f"`{' '.join(shown.split())}`"
        if args is not None:
            if not args or _value(ctx, args[0], scope) != 32:
                return None
            rest = [_value(ctx, a, scope) for a in args[1:]]
            if all(v == 1 for v in rest):
                return ("one", shown)
            return ("rows", shown)
        if _value(ctx, block, scope) == 32:
            return ("one", shown)
        if block.type == "binary_expression" and ctx.text(block.child_by_field_name("operator")) == "*":
            left, right = block.child_by_field_name("left"), block.child_by_field_name("right")
            if _value(ctx, left, scope) == 32 or _value(ctx, right, scope) == 32:
                return ("multiple", shown)
        return None

    def _kernel_and_callees(self, ctx, kernel, depth=3):
        """The kernel and the functions of the file it calls (to `depth` levels)."""
        defs = _definitions(ctx)
        seen, frontier, out = set(), [kernel], []
        for _ in range(depth + 1):
            nxt = []
            for fn in frontier:
                if id(fn) in seen:
                    continue
                seen.add(id(fn))
                out.append(fn)
                body = fn.child_by_field_name("body")
                if body is None:
                    continue
                for c in iter_nodes(body, {"call_expression"}):
                    f = c.child_by_field_name("function")
                    if f is not None and f.type == "template_function":
                        f = f.child_by_field_name("name")
                    if f is not None and f.type == "identifier":
                        nxt.extend(defs.get(ctx.text(f), []))
            frontier = nxt
        return out

    def _spans_warpsize(self, ctx, kernel) -> bool:
        for fn in self._kernel_and_callees(ctx, kernel):
            if _SPANS_WARPSIZE.search(strip_c_comments(ctx.text(fn))):
                return True
        return False

    def _warp_index_by_warpsize(self, ctx, kernel) -> bool:
        body = kernel.child_by_field_name("body")
        if body is None:
            return False
        for node in iter_nodes(body, {"binary_expression"}):
            op = node.child_by_field_name("operator")
            right = node.child_by_field_name("right")
            if op is None or right is None or ctx.text(op) != "/" or ctx.text(right) != "warpSize":
                continue
            if mentions_thread_index(ctx, node.child_by_field_name("left"), kernel):
                return True
        return False
