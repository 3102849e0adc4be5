from hiplint import CudaRule, Impact, Severity
from hiplint.cparse import iter_nodes

from ._lanes import (HEADER_PATH, WARP_SIZE_DEFINITIONS, WARP_SIZE_NAME, collectives_32_wide, does_warp_work,
                     literal_value, relate_uses, unused_on_amd, use_starts)


def _uses_keep_32_wide(ctx, name: str, defined) -> bool:
    """Is every use of the constant in a function whose collectives all stay in 32 lanes (shuffles given
    the constant as their width, XOR offsets below 32: collectives_32_wide)? Only for a source file: a
    header's includers may use it otherwise."""
    if ctx.unit.is_macro or ctx.enclosing_function(defined) is not None:
        return False
    after = ctx.file_range(defined)[1]
    uses = [ident for ident in iter_nodes(ctx.unit.root, {"identifier"})
            if ctx.text(ident) == name and ctx.file_range(ident)[0] >= after]
    if not uses or len(uses) != len(use_starts(ctx, name, defined)):
        return False  # unused, or used in a macro body too (where its uses are unknown)
    for ident in uses:
        fn = ctx.enclosing_function(ident)
        if fn is None or not does_warp_work(ctx, fn) or not collectives_32_wide(ctx, fn):
            return False  # a warps-per-block count in a helper is read elsewhere: not settled here
    return True


class WarpSizeConstant32(CudaRule):
    """A warp-size macro or constant defined as 32.

    ## What it does
    Finds `#define WARP_SIZE 32`, `constexpr int kWarpSize = 32;`, `enum { WARP_SZ = 32 }` and
    similar definitions whose name says "warp size" (or "threads per warp"). The definition is
    reported once, where it is written; its uses are not reported again but listed with it as
    related locations. A definition that no code the AMD build compiles reads is left alone: a local
    constant never used, a definition in a source file never used there, one used only in branches the
    AMD build skips (`#if GOOGLE_CUDA`). A header's definition with no use in the header may be used by
    its includers and is reported. Nor, in a source file, a constant every use of which sits in a
    function whose warp collectives all stay within 32 lanes (each shuffle given the constant as its
    width, XOR offsets below 32: see WRP001): each half of a 64-lane wave then does what a 32-lane warp
    does. A use in a function with no warp work (`threads / kWarpSize` warps per block) still counts: its
    result is read elsewhere.

    ## Why it breaks on AMD
    AMD CDNA GPUs (gfx90a, gfx942, gfx950) execute 64-lane wavefronts. Every index, mask and
    shared-memory array computed from this constant describes half a wave there, and code that
    mixes it with `warpSize` or full-wave ballots computes wrong results without any error. RDNA
    GPUs (gfx1100) run 32-lane waves, so one constant cannot be right for both; HIP's
    documentation asks code not to assume either size. Applies to wave64 targets, every ROCm version.

    ## Example
    ```cuda
    #define WARP_SIZE 32
    __global__ void lanes(int* out) { out[threadIdx.x] = threadIdx.x % WARP_SIZE; }
    ```

    ## Use instead
    ```cuda
    #if defined(__HIP_PLATFORM_AMD__)
    #define WARP_SIZE warpSize
    #else
    #define WARP_SIZE 32
    #endif
    ```
    In device code use `warpSize`; on the host query `hipDeviceAttributeWarpSize`. Where a
    compile-time constant is needed (array sizes, template arguments), dispatch on the host to a
    `template <int WarpSize>` kernel: `warpSize` is not `constexpr` from ROCm 7.0 (see WRP009).

    ## Fix
    None automatic: the uses decide whether a run-time `warpSize` can replace a compile-time 32.

    ## References
    - HIP C++ language extensions, warpSize: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html#warpsize
    - HIP porting guide: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    - CUDA C++ Programming Guide, warpSize built-in variable: https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#warpsize
    """

    code = "WRP002"
    name = "warp-size-constant-32"
    summary = "warp size defined as 32; AMD CDNA waves have 64 lanes"
    severity = Severity.WARNING
    impact = Impact.SILENT
    wave_sizes = frozenset({64})
    in_macros = False
    checklist = "Replace the constant by warpSize in device code (hipDeviceAttributeWarpSize on the host), or select it per platform and target."
    query = WARP_SIZE_DEFINITIONS

    def check(self, ctx, captures):
        name = ctx.text(captures["name"][0])
        if name == "warpSize" or not WARP_SIZE_NAME.match(name):
            return
        value = captures["value"][0]
        if literal_value(ctx.text(value)) != 32:
            return
        node = captures["def"][0]
        if unused_on_amd(ctx, name, captures["name"][0]):
            return  # nothing the AMD build compiles reads it
        if not HEADER_PATH.search(ctx.path) and _uses_keep_32_wide(ctx, name, captures["name"][0]):
            return  # every use sits in a function that does no warp work or keeps its collectives 32 wide
        finding = ctx.report(captures["name"][0] if node.type == "preproc_def" else node,
                             f"`{name}` is defined as 32; a wave holds 64 lanes on gfx90a/gfx942: every use assumes half a wave")
        if finding is not None:
            relate_uses(ctx, finding, name, captures["name"][0], f"`{name}` used here")

