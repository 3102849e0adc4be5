import re

from hiplint import CudaRule, Impact, Severity
from hiplint.cparse import iter_nodes
from .._cuda import call_name
from ..warp._lanes import file_macros
from hiplint.lazy import lazy_re

BLOCK_BARRIERS = frozenset({"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or"})
CONDITIONAL = ("if_statement", "while_statement", "for_statement", "do_statement", "conditional_expression",
               "switch_statement")
# A warp index computed in 32s: threadIdx.x / 32, threadIdx.x >> 5 (also through a variable).
WARP_INDEX_32 = lazy_re(r"threadIdx\.[xyz]\s*(/\s*32\b|>>\s*5\b)")
# `threadIdx.x < 96`, `tid >= 32`: a boundary at a multiple of 32 that is not a multiple of 64.
THREAD_BOUND = lazy_re(r"\b(threadIdx\.[xyz]|tid|ltid|thread_?id|local_?tid)\s*(<=?|>=?|==|!=)\s*(\d+)\b"
                          r"|\b(\d+)\s*(<=?|>=?|==|!=)\s*(threadIdx\.[xyz]|tid|ltid|thread_?id|local_?tid)\b")


class BarrierInWarpUniformBranch(CudaRule):
    """`__syncthreads()` inside a branch that is uniform per 32 threads but not per 64.

    ## What it does
    Finds `__syncthreads()` (and `__syncthreads_count/and/or`, `this_thread_block().sync()`)
    inside an `if`, loop or `?:` whose condition splits a block on 32-thread boundaries: a warp
    index computed in 32s (`threadIdx.x / 32 == k`, `threadIdx.x >> 5`, or a `warp_id` variable
    holding one), or a thread index compared with a multiple of 32 that is not a multiple of 64
    (`threadIdx.x < 32`, `tid >= 96`). Conditions uniform per 64 threads (`threadIdx.x < 64`,
    `threadIdx.x / warpSize`) are not reported.

    ## Why it breaks on AMD
    A barrier must be reached by all threads of the block or by none. On NVIDIA the condition is
    uniform per warp, so whole warps skip the barrier, which worked in practice (though the CUDA
    guide calls a barrier in divergent code undefined). On a 64-lane wave (gfx90a, gfx942, gfx950)
    one wave holds both sides of the branch: it executes the barrier for one half and then
    reaches it again for the other half, so the block's barrier count no longer matches: a hang or
    silently unsynchronised shared memory. Only wave64 targets are affected; RDNA (gfx1100) runs
    32-lane waves.

    ## Example
    ```cuda
    __global__ void two_phase(float* s) {
        int warp = threadIdx.x / 32;
        if (warp == 0) {
            s[threadIdx.x] *= 2.f;
            __syncthreads();
        }
    }
    ```

    ## Use instead
    ```cuda
    __global__ void two_phase(float* s) {
        int warp = threadIdx.x / warpSize;
        if (warp == 0) s[threadIdx.x] *= 2.f;
        __syncthreads();                       // every thread of the block reaches it
    }
    ```

    ## References
    - HIP kernel language, "Synchronization functions" and "Independent thread scheduling": https://rocm.docs.amd.com/projects/HIP/en/latest/reference/kernel_language.html
    - CUDA C++ Programming Guide, `__syncthreads()` in conditional code: https://docs.nvidia.com/cuda/cuda-c-programming-guide/
    - AMD GPU specifications (wavefront size per architecture): https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html
    """

    code = "SYN002"
    name = "barrier-in-warp-uniform-branch"
    summary = "block barrier in a branch uniform per 32 threads: a 64-lane wave takes both sides"
    severity = Severity.ERROR
    impact = Impact.HANG
    wave_sizes = frozenset({64})
    checklist = "Move __syncthreads() out of branches split on 32-thread boundaries, or split on warpSize."
    query = f"""
    ((call_expression function: (identifier) @fn) @call (#any-of? @fn {' '.join(f'"{n}"' for n in sorted(BLOCK_BARRIERS))}))
    ((call_expression function: (field_expression field: (field_identifier) @method)) @call (#eq? @method "sync"))
    """

    def check(self, ctx, captures):
        call = captures["call"][0]
        if "fn" in captures:
            if call_name(ctx, call) not in BLOCK_BARRIERS:
                return
        else:
            if ctx.text(captures["method"][0]) != "sync":
                return
            obj = call.child_by_field_name("function").child_by_field_name("argument")
            if obj is None or "this_thread_block" not in ctx.text(obj) and not self._is_block_var(ctx, call, obj):
                return
        scope = ctx.function_scope(call)
        warp_vars = self._warp_vars(ctx, scope)
        n = call.parent
        while n is not None and n is not scope:
            if n.type in CONDITIONAL:
                cond = n.child_by_field_name("condition")
                if cond is not None and not (cond.start_byte <= call.start_byte < cond.end_byte):
                    why = self._splits_32(ctx, cond, warp_vars)
                    if why:
                        ctx.report(call, f"`{ctx.text(call)}` inside a branch on {why}: uniform per 32 threads, "
                                         f"not per 64-lane wave; the wave runs both sides and the barrier count breaks")
                        return
            n = n.parent

    @staticmethod
    def _is_block_var(ctx, call, obj) -> bool:
        if obj.type != "identifier":
            return False
        name = ctx.text(obj)
        scope = ctx.function_scope(call)
        pattern = re.compile(r"\bthread_block\s+" + re.escape(name) + r"\b|\b" + re.escape(name) + r"\s*=\s*[\w:]*this_thread_block\s*\(")
        return pattern.search(ctx.text(scope)) is not None

    @staticmethod
    def _warp_index(ctx) -> re.Pattern:
        """WARP_INDEX_32, plus `/ WARP_SIZE` and `>> LOG_WARP` for macros of the file defined as 32 / 5."""
        pattern = ctx.cache.get("syn_warp_index")
        if pattern is None:
            macros = file_macros(ctx)
            thirty_two = [n for n, v in macros.items() if v.strip("()") == "32"]
            five = [n for n, v in macros.items() if v.strip("()") == "5"]
            extra = [r"/\s*" + re.escape(n) + r"\b" for n in thirty_two] + [r">>\s*" + re.escape(n) + r"\b" for n in five]
            pattern = WARP_INDEX_32 if not extra else re.compile(
                r"threadIdx\.[xyz]\s*(/\s*32\b|>>\s*5\b|" + "|".join(extra) + ")")
            ctx.cache["syn_warp_index"] = pattern
        return pattern

    @classmethod
    def _warp_vars(cls, ctx, scope) -> set[str]:
        key = ("syn_warp_vars", id(ctx.unit), scope.id)
        names = ctx.cache.get(key)
        if names is None:
            names = set()
            for node in iter_nodes(scope, {"init_declarator", "assignment_expression"}):
                left = node.child_by_field_name("declarator" if node.type == "init_declarator" else "left")
                right = node.child_by_field_name("value" if node.type == "init_declarator" else "right")
                if left is not None and right is not None and left.type == "identifier" \
                        and cls._warp_index(ctx).search(ctx.text(right)):
                    names.add(ctx.text(left))
            ctx.cache[key] = names
        return names

    @classmethod
    def _splits_32(cls, ctx, cond, warp_vars) -> str:
        text = ctx.text(cond)
        m = cls._warp_index(ctx).search(text)
        if m:
            return f"`{m.group(0)}`"
        for ident in iter_nodes(cond, {"identifier"}):
            name = ctx.text(ident)
            if name in warp_vars:
                return f"the 32-based warp index `{name}`"
        for m in THREAD_BOUND.finditer(text):
            value = int(m.group(3) or m.group(4))
            if value % 32 == 0 and value % 64 != 0:
                return f"`{m.group(0)}`"
        return ""
