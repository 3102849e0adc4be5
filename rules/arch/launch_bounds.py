import re

from hiplint import CudaRule, Impact, Severity
from hiplint.headers import amd_macros
from .._cuda import written_for_amd
from hiplint.lazy import lazy_re

DEFAULT_MIN = ("1", "1u", "1U")
# A second argument named for AMD's meaning (rocPRIM's ROCPRIM_DEFAULT_MIN_WARPS_PER_EU, kMinWavesPerEU):
# its author already counts waves per execution unit.
AMD_MEANING = lazy_re(r"(warps?|waves?|wavefronts?)per(eu|executionunits?|simd)")
# A name word for AMD in the argument: an AMD tuning table or trait (`kAmdTuning[...]`, `HipTuning::min_blocks`,
# `tuning<gfx942>::occupancy`).
AMD_WORD = lazy_re(r"(?i)(?:^|[^a-z])(amd|hip|rocm|gfx[0-9a-f]*|cdna\d*|rdna\d*)(?:$|[^a-z])|(?-i:(?<![a-z])(?:Amd|Hip|Rocm)(?=[A-Z_])|(?<=[a-z])(?:Amd|Hip|Rocm)(?=[A-Z_]|$))")
_IDENT = lazy_re(r"[A-Za-z_]\w*")


def _per_vendor(ctx, expr: str) -> bool:
    """A name in `expr` is a macro the project defines for AMD apart from NVIDIA (`#ifdef X_USE_HIP /
    #define MIN_BLOCKS 1 / #else / #define MIN_BLOCKS 4`), or names AMD (a tuning table): the value
    was chosen for AMD's meaning."""
    if AMD_WORD.search(expr):
        return True
    macros = amd_macros(ctx)
    return any(macros[n].hip_only for n in _IDENT.findall(expr) if n in macros)


# Execution units (SIMDs) per compute unit as LLVM's AMDGPU backend counts them for waves-per-EU:
# four on gfx9 (gfx90a, gfx942) and on gfx10+ in the default WGP mode (two CUs of two SIMD32 each).
EUS_PER_CU = 4
_TARGETS = {64: "gfx90a, gfx942", 32: "gfx1100"}


def _operand(expr: str) -> str:
    """`expr` as a factor of a product: `F ? 2 : 4` needs parentheses, `Kernel::kThreads` does not."""
    return expr if re.fullmatch(r"[\w.:<>]+(\([^()]*\))?", expr) else f"({expr})"


class LaunchBoundsMinBlocks(CudaRule):
    """`__launch_bounds__(maxThreads, minBlocks)`: the second argument means something else on AMD.

    ## What it does
    Finds `__launch_bounds__` with a second argument (and a third, the CUDA 12 maximum cluster
    size), and reports that argument. A second argument of `1` is not reported: it constrains
    nothing on either vendor (HIP's minimum waves per EU defaults to 1). Nor is one whose name
    already says waves (or warps) per execution unit, such as `MIN_WAVES_PER_EU`: that is AMD's meaning,
    nor one from a macro the project defines apart for AMD (`#ifdef X_USE_HIP` / `#define MIN_BLOCKS 1` /
    `#else` / `#define MIN_BLOCKS 4`) or from an AMD tuning table (a name with AMD, HIP, ROCm or a gfx
    target in it), nor any in a file written for AMD (it calls `__builtin_amdgcn_*` builtins outside platform
    branches, so nvcc could not compile it): its author means AMD's waves per EU. Nor one whose
    value, with the block size, hiplint can compute and that means the same occupancy on every
    selected target (256 threads on wave64 targets: `__launch_bounds__(256, 2048 / 256)` is 8 waves per
    EU either way); with other targets selected too, the message names only those that differ. In a
    project that already builds for AMD, a computed value that only asks for fewer waves than that
    (the compiler may use more registers; nothing spills) is left to the project's tuning: only a value
    that asks for more, which caps registers and spills, is reported there. A named minimum used by
    several kernels of a file (`LAUNCH_MIN_BLOCKS`) is reported once, at its first use, the other
    kernels listed as related locations: the change belongs in its definition.

    ## Why it breaks on AMD
    HIP defines `__launch_bounds__(T, B)` as `amdgpu_flat_work_group_size(1, T)` plus
    `amdgpu_waves_per_eu(B)`: B becomes a minimum number of waves per execution unit (SIMD), not
    a minimum number of resident blocks per multiprocessor. The value written for NVIDIA is
    usually far too small or too large for that meaning, so the compiler limits registers
    differently: spills or lower occupancy. The same occupancy in waves per EU is blocks times
    waves per block over the EUs of a CU: LLVM's AMDGPU backend counts four EUs (SIMDs) per CU on
    gfx9 and per workgroup processor on gfx10+ in its default WGP mode (`getEUsPerCU`). So B blocks
    of T threads are `(B * T) / 256` waves per EU on wave64 targets (gfx90a, gfx942) and
    `(B * T) / 128` on wave32 ones (gfx1100). The HIP guide's `(B * T) / 32` asks for eight times as
    many on wave64 targets, which caps the registers per lane (64 on gfx942 for 8 waves) and
    spills. The message gives the conversion for the targets selected. HIPIFY does not rewrite
    it. The three-argument form has no HIP definition and does not compile. All AMD targets and
    ROCm versions.

    ## Example
    ```cuda
    __global__ void __launch_bounds__(256, 4) gemm_tile(float* c) { c[threadIdx.x] = 0.f; }
    ```

    ## Use instead
    ```cuda
    #if defined(__HIP_PLATFORM_AMD__)
    #define GEMM_BOUNDS __launch_bounds__(256)
    #else
    #define GEMM_BOUNDS __launch_bounds__(256, 4)
    #endif
    __global__ void GEMM_BOUNDS gemm_tile(float* c) { c[threadIdx.x] = 0.f; }
    ```

    ## References
    - HIP kernel language, "`__launch_bounds__`" and "Porting from CUDA `__launch_bounds`": https://rocm.docs.amd.com/projects/HIP/en/latest/reference/kernel_language.html
    - ROCm/clr `hipamd/include/hip/amd_detail/amd_hip_runtime.h` (`launch_bounds_impl1`: `amdgpu_waves_per_eu`)
    - Clang attribute reference, `amdgpu_waves_per_eu`: https://clang.llvm.org/docs/AttributeReference.html
    - LLVM `llvm/lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp` (`getEUsPerCU`: four SIMDs per CU before gfx10, per WGP in WGP mode): https://github.com/llvm/llvm-project/blob/main/llvm/lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp
    """

    code = "ARC004"
    name = "launch-bounds-min-blocks"
    summary = "`__launch_bounds__` second argument is min waves per EU on AMD, not min blocks per SM"
    severity = Severity.WARNING
    impact = Impact.PERFORMANCE
    checklist = "Convert __launch_bounds__ min-blocks to waves per EU ((B*T)/256 on wave64, (B*T)/128 on wave32) or drop it on AMD."
    query = "(launch_bounds) @lb"

    def check(self, ctx, captures):
        lb = captures["lb"][0]
        # The grammar takes `(256, 1, 1)` as 256, ERROR `1,`, 1: the ERROR's own expression is the argument.
        args = [(c.named_children[0] if c.type == "ERROR" and c.named_child_count == 1 else c)
                for c in lb.named_children if c.type != "comment"]
        if len(args) >= 3:
            ctx.report(args[2], "`__launch_bounds__` with three arguments (max cluster size) does not compile with HIP",
                       severity=Severity.ERROR)
        if len(args) >= 2:
            # One line of text for the message: a macro body's continuation lines and indentation collapsed.
            t, b = (" ".join(ctx.text(a).replace("\\\n", " ").strip().rstrip(",").split()) for a in args[:2])
            if b.strip() in DEFAULT_MIN:
                return  # 1 asks for nothing on either vendor: HIP's default is 1 wave per EU
            if AMD_MEANING.search(b.lower().replace("_", "")) or written_for_amd(ctx):
                return  # the author counts waves per EU: by the name, or by writing the file for AMD
            if _per_vendor(ctx, b):
                return  # a per-vendor macro or an AMD tuning table: set for AMD on purpose
            from ..memory._values import const_value
            threads, blocks = const_value(ctx, args[0]), const_value(ctx, args[1])
            sizes = sorted(ctx.settings.wave_sizes, reverse=True)
            # Where hiplint can compute both, a target whose waves per EU equal the blocks written needs
            # nothing (`__launch_bounds__(256, 2048 / 256)` on wave64: 8 either way).
            same = [w for w in sizes if threads and blocks and blocks * threads == blocks * w * EUS_PER_CU]
            if len(same) == len(sizes):
                return
            if threads and blocks and ctx.build_facts.builds_for_amd and all(
                    blocks * w * EUS_PER_CU <= blocks * threads for w in sizes if w not in same):
                # Under-asking only (fewer waves per EU than NVIDIA's occupancy on some targets): the compiler
                # may use more registers there, but nothing spills; a project that builds for AMD owns that tuning.
                return
            product = f"{_operand(b)} * {_operand(t)}"
            # Waves per EU = blocks * waves per block / EUs per CU. LLVM counts 4 EUs (SIMDs) per CU on
            # CDNA and per WGP on RDNA in its default WGP mode (AMDGPUBaseInfo.cpp getEUsPerCU).
            conversions = [f"({product}) / {w * EUS_PER_CU} on wave{w} targets ({_TARGETS[w]})"
                           for w in sizes if w not in same]
            already = "".join(f" (on wave{w} targets ({_TARGETS[w]}) the value already means that)" for w in same)
            # A named minimum (`LAUNCH_MIN_BLOCKS`) is one task however many kernels use it: its definition
            # changes. One finding per name and file, the other kernels related.
            ctx.report(args[1], f"`{b}` is read as a minimum of waves per execution unit on AMD "
                                f"(amdgpu_waves_per_eu), not blocks per multiprocessor; the same occupancy is "
                                + " and ".join(conversions) + already,
                       group=b if re.fullmatch(r"[A-Za-z_]\w*", b) else None)
