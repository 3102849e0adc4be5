from hiplint import CudaRule, Impact, Severity
from ._lanes import is_32_lane_index, warp_constant_value


class HardcodedWarpSize(CudaRule):
    """Lane or warp index arithmetic that assumes a 32-lane warp.

    ## What it does
    Finds `threadIdx.x & 31`, `tid % 32`, `tid / 32`, `tid >> 5` and the same on thread indices
    (`tid = threadIdx.x`, `blockIdx.x * blockDim.x + threadIdx.x`, `__lane_id()`; not on a quotient
    such as `token = threadIdx.x / kThreadsPerToken`, which numbers groups of threads), and
    `blockDim.x / 32` (warps per block), also where the 32 (31, 5) is a named constant of the file:
    `static const int WS = 32;`, `constexpr int kThreads = 32;`, `#define NT 32` (one definition),
    an enumerator, a `static constexpr` member, a local `constexpr`, `NT - 1`, `(32 - 1)`, or a call of a function
    without parameters whose body is `return 32;` (`warp_size()`). Names like `WARP_SIZE` are left
    to WRP002, which reports their definition; names of tiles, blocks and vectors (`TILE_DIM`,
    `kBlockRows`) are not taken for a warp width. All this in functions that do warp-level work: shuffles, votes,
    ballots, `__syncwarp`, tiles, or calls to functions of the file that do (or to macros of the
    file or of an included project header whose body holds one). Elsewhere `tid / 32`
    only splits data among threads and is correct for any wave size. A function whose collectives
    all go through `tiled_partition<32>` tiles (or a macro of 32; `tile.shfl_xor`) is left alone too: its lanes
    numbered in 32s match the tiles, which HIP provides on 64-lane waves as well. So is a function
    whose collectives, and those of the file's functions it calls, all stay inside 32 lanes: shuffles
    with a constant `width` of at most 32, and XOR shuffles with offsets below 32 (a literal, a loop
    from 16 down or up to below 32, or `1 << k` with the loop running `k` over 0..4 at most; a constant may be a macro of the file or of a project header it
    includes, and may be halved: `WARP_SIZE / 2` with `#define WARP_SIZE 32` in `common.h`). `lane ^ o` then keeps bit 5, so each half of a 64-lane wave
    computes what a 32-lane warp computes (HIP's `__shfl_xor` stays in the half for such offsets).
    `__activemask()` as the mask of such a shuffle moves no data and is accepted. So is a scan step: an
    up-shuffle by an offset below 32 whose result the loop takes only `if (lane >= offset)`, which never
    reads across the half. SYCL's sub-group shuffles count as collectives (`permute_group_by_xor` as an XOR
    shuffle, `shift_group_right` as an up-shuffle; a sub-group is a 64-lane wave on CDNA too). A
    vote, ballot, `__activemask` used as a value, another shuffle down, up or by lane without a width, or offsets up to
    `warpSize` see the whole wave, and the function is reported; so is one whose collectives cannot
    all be seen (a macro holding one, a method, a warp helper defined in another file, a width
    macro defined differently for AMD) or that also numbers lanes or warps with `warpSize`. A lane divided by
    32 (`lane_idx / 32` with `lane_idx` a parameter or `__lane_id()`) is left alone: it is 0 on
    NVIDIA, so that code was written for 64-lane waves; `lane & 31` is still reported.

    ## Why it breaks on AMD
    NVIDIA warps have 32 lanes. AMD CDNA GPUs (MI200 `gfx90a`, MI300X `gfx942`, MI350 `gfx950`) run
    64-lane wavefronts; RDNA GPUs (`gfx1100`) run 32. On wave64 this arithmetic splits each
    hardware wave into two 32-lane "virtual warps". That is only correct if every warp collective in
    the function stays 32 wide as well: shuffles with an explicit `width` of 32, no ballots or
    lane masks that see the whole wave. Mixing the two is the classic silent wrong result of a half
    port (a reduction over `warpSize` lanes with lane ids computed `& 31` counts a wave twice).
    HIP's documentation says not to assume a warp size of 32 or 64. Applies to wave64 targets on
    every ROCm version; harmless on wave32 targets.

    ## Example
    ```cuda
    __global__ void k(int* out, float v) {
        int lane = threadIdx.x & 31;
        int warp = threadIdx.x / 32;
        unsigned long long positive = __ballot_sync(__activemask(), v > 0.f);
        if (lane == 0) out[warp] = __popcll(positive);
    }
    ```

    ## Use instead
    ```cuda
    __global__ void k(int* out, float v) {
        int lane = threadIdx.x % warpSize;
        int warp = threadIdx.x / warpSize;
        unsigned long long positive = __ballot_sync(__activemask(), v > 0.f);
        if (lane == 0) out[warp] = __popcll(positive);
    }
    ```
    Or keep the function 32 wide on purpose: give every shuffle `width = 32` and avoid whole-wave
    ballots, then suppress this rule for the function with a reason.

    ## Fix
    None automatic: the right width is a decision for the whole function (see
    `docs/fixes.md`). `WRP008` adds `width = 32` to shuffles where the code is 32-based. In a
    function with such an index, the mask-widening fixes of `WRP004` and `WRP005` are unsafe.

    ## References
    - HIP C++ language extensions, warpSize: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html#warpsize
    - HIP porting guide, "Warp size" and lane masks: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    - AMD GPU specifications (wavefront size per architecture): https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html
    """

    code = "WRP001"
    name = "hardcoded-warp-size"
    summary = "lane/warp arithmetic assumes 32-lane warps; AMD CDNA waves have 64 lanes"
    severity = Severity.WARNING
    impact = Impact.SILENT
    wave_sizes = frozenset({64})
    checklist = "Use warpSize (or a template parameter set from hipDeviceAttributeWarpSize) for lane and warp indices, or keep the whole function 32 wide (width=32 on every shuffle)."
    query = """
    (binary_expression
      operator: ["&" "%" "/" ">>"]
      right: [(number_literal) (identifier) (qualified_identifier) (call_expression)
              (parenthesized_expression)] @lit) @expr
    """

    def check(self, ctx, captures):
        for expr in captures.get("expr", ()):
            scope = ctx.function_scope(expr)
            if not is_32_lane_index(ctx, expr, scope):
                continue  # `tid / 32` splitting data among threads (no warp work) is not about warps
            op = ctx.text(expr.child_by_field_name("operator"))
            left = ctx.text(expr.child_by_field_name("left"))
            right = expr.child_by_field_name("right")
            named = "" if right.type == "number_literal" else \
                f" (`{ctx.text(right)}` is {warp_constant_value(ctx, right, scope)})"
            kind = "warp index" if op in ("/", ">>") else "lane index"
            if "blockDim" in left and op in ("/", ">>"):
                kind = "warps per block"
            ctx.report(expr, f"{kind} `{ctx.text(expr)}`{named} assumes 32-lane warps; on wave64 (gfx90a, gfx942) "
                             f"a wave holds 64 lanes: use warpSize, or keep every collective 32 wide")
