from __future__ import annotations

from hiplint.lazy import libcst as cst
from hiplint.lazy import lazy_re

from hiplint import FileRule, Impact, Severity
from hiplint import pyparse

from ._vendor import handles_rocm

WARPS_NAMES = ("num_warps",)
# Another kernel language's module (a `num_warps` of its own): imported, and Triton named nowhere in the file.
_OTHER_KERNEL_DSL = lazy_re(rb"(?m)^\s*(?:import|from)\s+(?:hidet|tilelang|cutlass|cuda\.tile|numba|warp|taichi|"
                            rb"thunderkittens|tvm)\b")


def _is_warps(node) -> bool:
    name = pyparse.dotted(node)
    if name is None and isinstance(node, cst.Subscript):
        # meta["num_warps"], config.kwargs["num_warps"]
        sl = node.slice[0].slice if len(node.slice) == 1 else None
        return isinstance(sl, cst.Index) and pyparse.string_value(sl.value) in WARPS_NAMES
    return bool(name) and name.rsplit(".", 1)[-1] in WARPS_NAMES


def _is_32(node) -> bool:
    return isinstance(node, cst.Integer) and node.evaluated_value == 32


class TritonWarpThreads(FileRule):
    """Triton `num_warps` turned into threads with 32 lanes per warp.

    ## What it does
    Finds `num_warps * 32` and `32 * num_warps` (also `config.num_warps`, `meta["num_warps"]`) in
    Python code: thread counts, per-thread work splits and shared-memory budgets derived from
    Triton's `num_warps` with NVIDIA's warp width. Not reported inside a condition that names HIP/ROCm
    (`if is_hip():`, `torch.version.hip`) or `torch.version.cuda`, nor in a module of another kernel
    language (it imports hidet, TileLang, the CuTe DSL, Numba, Warp, Taichi, TVM and names no Triton):
    its `num_warps` is that language's own.

    ## Why it breaks on AMD
    Triton's AMD backend compiles a "warp" to a hardware wavefront: 64 lanes on CDNA GPUs (MI200
    gfx90a, MI300 gfx942, MI350 gfx950), 32 on RDNA. `num_warps=4` is 256 threads on MI300X, not 128,
    so a size computed as `num_warps * 32` is half the real thread count: blocks that assume one
    element per thread leave half the work undone or index out of range, and register/LDS budgets are
    wrong. Triton reports the width as `triton.runtime.driver.active.get_current_target().warp_size`.
    Applies to wave64 targets on every ROCm version with Triton's AMD backend.

    ## Example
    ```python
    def launch(kernel, x, num_warps=4):
        threads = num_warps * 32
        grid = (x.numel() // threads,)
        kernel[grid](x, num_warps=num_warps)
    ```

    ## Use instead
    ```python
    import triton

    def launch(kernel, x, num_warps=4):
        warp_size = triton.runtime.driver.active.get_current_target().warp_size
        threads = num_warps * warp_size
        grid = (x.numel() // threads,)
        kernel[grid](x, num_warps=num_warps)
    ```

    ## References
    - triton.Config (`num_warps` x 32 threads on NVIDIA): https://triton-lang.org/main/python-api/generated/triton.Config.html
    - ROCm, Optimizing Triton kernels (wavefronts, `waves_per_eu`, `num_warps` on AMD): https://rocm.docs.amd.com/en/docs-6.1.0/how-to/llm-fine-tuning-optimization/optimizing-triton-kernel.html
    - AMD GPU specifications (wavefront size per architecture): https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html
    """

    code = "PY007"
    name = "triton-warp-threads"
    summary = "Triton num_warps times 32: on CDNA a Triton warp is a 64-lane wavefront"
    severity = Severity.WARNING
    impact = Impact.SILENT
    wave_sizes = frozenset({64})
    languages = frozenset({"python"})
    triggers = ("num_warps",)
    checklist = "Multiply Triton's num_warps by the target's warp size (get_current_target().warp_size), not 32."

    def check_file(self, ctx):
        data = ctx.source.data
        if b"triton" not in data and _OTHER_KERNEL_DSL.search(data):
            return  # hidet's `num_warps` (its own script language, CUDA tutorials), TileLang's, ...: not Triton's
        py = pyparse.get(ctx)
        if py is None:
            return
        for op in py.nodes(cst.BinaryOperation):
            if not isinstance(op.operator, cst.Multiply):
                continue
            if not ((_is_warps(op.left) and _is_32(op.right)) or (_is_32(op.left) and _is_warps(op.right))):
                continue
            if handles_rocm(py, op):
                continue
            start, end = py.span(op)
            ctx.report_range(start, end,
                             f"`{py.code(op)}` counts 32 lanes per Triton warp; on CDNA (gfx90a, gfx942, gfx950) a "
                             "warp is a 64-lane wavefront: use get_current_target().warp_size")
