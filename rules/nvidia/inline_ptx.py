import os
import re

from hiplint import CudaRule, Impact, Severity
from hiplint.includers import c_only_header
from hiplint.lazy import lazy_re
from .._cuda import asm_template, is_ptx, ptx_category
from .async_copy import PTX_ADDRESS_HELPERS
from .register_storage import C_EXTENSIONS

# PTX -> what HIP offers instead (HIP headers: amd_device_functions.h, amd_warp_functions.h).
PTX_HINTS = (
    (lazy_re(r"%laneid"), "`__lane_id()`"),
    (lazy_re(r"%smid"), "`__smid()`"),
    (lazy_re(r"%clock64|%clock\b"), "`clock64()` (counts at `clockInstructionRate`, see NV006)"),
    (lazy_re(r"%warpid"), "`threadIdx` arithmetic with `warpSize` (`%warpid` is not stable on NVIDIA either)"),
    (lazy_re(r"%lanemask_(lt|le|gt|ge|eq)"), "`__lanemask_lt()` and friends (64-bit masks on wave64)"),
    (lazy_re(r"\bprmt\b"), "`__byte_perm()`"),
    (lazy_re(r"\b(ex2|lg2|rcp|rsqrt|sqrt|sin|cos|tanh)\."),
     "the math functions (`exp2f`, `log2f`, `__frcp_rn`, `__drcp_rn`, `rsqrtf`, `sqrtf`, `__sinf`, `__cosf`, `tanhf`)"),
    (lazy_re(r"\bbfe\."), "`__bitextract_u32()` / `__bitextract_u64()`"),
    (lazy_re(r"\bbfi\."), "`__bitinsert_u32()` / `__bitinsert_u64()`"),
    (lazy_re(r"\bshf\.(l|r)"), "`__funnelshift_l()` / `__funnelshift_r()`"),
    (lazy_re(r"\bbrev\."), "`__brev()`"),
    (lazy_re(r"\bpopc\."), "`__popc()`"),
    (lazy_re(r"\bclz\."), "`__clz()`"),
    (lazy_re(r"\blop3\."), "a C expression of `&`, `|`, `^`, `~`"),
    # An ordered load or store (a lock's acquire and release): a plain one would drop the ordering.
    (lazy_re(r"\bld(?:\.\w+)*\.(?:acquire|relaxed|volatile)\b"),
     "`__hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT)` (or `__ATOMIC_RELAXED`: keep the ordering)"),
    (lazy_re(r"\bst(?:\.\w+)*\.(?:release|relaxed|volatile)\b"),
     "`__hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT)` (or `__ATOMIC_RELAXED`: keep the ordering)"),
    (lazy_re(r"\bld\.global(?!(?:\.\w+)*\.(?:acquire|relaxed|volatile)\b)"), "a plain load or `__ldg()`"),
    (lazy_re(r"\bst\.global(?!(?:\.\w+)*\.(?:release|relaxed|volatile)\b)"),
     "a plain store or `__builtin_nontemporal_store()`"),
    (lazy_re(r"\bmembar\.gl|\bfence\.[a-z.]*gpu"), "`__threadfence()`"),
    (lazy_re(r"\bmembar\.cta|\bfence\.[a-z.]*cta"), "`__threadfence_block()`"),
    (lazy_re(r"\bmembar\.sys|\bfence\.[a-z.]*sys"), "`__threadfence_system()`"),
    (lazy_re(r"\bvote\.[a-z.]*ballot"), "`__ballot()` (64-bit on wave64)"),
    (lazy_re(r"\bvote\.[a-z.]*(any|all)"), "`__any()` / `__all()`"),
    (lazy_re(r"\bshfl\."), "`__shfl*()` with an explicit width"),
    (lazy_re(r"\bbar\.warp\.sync"), "`__syncwarp()`"),
    (lazy_re(r"\b(atom|red)\."), "the `atomic*()` functions"),
    (lazy_re(r"\b(ldmatrix|mma|wmma)\."), "rocWMMA or the MFMA/WMMA builtins (LIB rules)"),
    # `cvta.to.shared` (a generic address to a shared-window one, for another PTX operand): HIP code passes
    # the `__shared__` pointer itself.
    (lazy_re(r"\bcvta\."), "the `__shared__` pointer itself (no address-space conversion in HIP code)"),
    (lazy_re(r"\bcvt\.[\w.]*?\b(?:f16|f32|f64|bf16|tf32|e4m3|e5m2)(?:x2)?\b"),
     "a C cast or the `__float2*_r*` conversion functions"),
    (lazy_re(r"\bcvt\.(?:sat\.)?[sub](?:8|16|32|64)\.[sub](?:8|16|32|64)\b"), "a C cast"),
    (lazy_re(r"\bdp4a\.|\bdp2a\."), "`__builtin_amdgcn_sdot4` (see NV003)"),
)
MAX_HINTS = 3


class InlinePtx(CudaRule):
    """Inline assembly whose template is PTX.

    ## What it does
    Finds `asm(...)` and `asm volatile(...)` statements (and the same inside macros) whose template
    is PTX: special registers such as `%laneid`, `%smid`, `%clock64`, declarations such as `.reg`,
    and instruction mnemonics such as `mov.u32`, `ld.global`, `cvt.`, `shfl.sync`, `prmt`, `lop3`,
    `vote.ballot`, and the fast-math instructions (`ex2.approx.f32`, `rcp.rn.f64`, `rsqrt`, `tanh`).
    A mnemonic that other assemblers share (`mov`, `add`, `fence`) counts only with a PTX qualifier
    (a type such as `.u32` or `.f16x2`, a state space, a scope or an ordering), so CPU and
    accelerator assembly with dotted mnemonics (RISC-V `fence.i`, `mov.m.x m0, x0, 0xFF`) is not
    reported. The message names the HIP function that does the same job where there is one. The same
    PTX repeated in a file is one finding, the repeats its related locations.
    Templates about barriers (SYN003), traps (NV007), asynchronous copies (NV004), Hopper-only
    features (NV005) and `%globaltimer` (NV002) are reported by those rules instead, once. In a
    file where it reports, `__cvta_generic_to_shared` (the shared-memory address for `ldmatrix` and
    other PTX operands) is not reported again by API001: it goes when the PTX goes.

    ## Why it breaks on AMD
    PTX is NVIDIA's virtual ISA. HIP-Clang compiles inline assembly for the AMD GPU's own ISA
    (GCN/CDNA/RDNA), so a PTX template fails to assemble on every AMD target and every ROCm
    version. HIPIFY leaves `asm` untouched.

    ## Example
    ```cuda
    __device__ unsigned lane_id() {
        unsigned r;
        asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
        return r;
    }
    ```

    ## Use instead
    ```cuda
    __device__ unsigned lane_id() {
    #if defined(__HIP_PLATFORM_AMD__)
        return __lane_id();
    #else
        unsigned r;
        asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
        return r;
    #endif
    }
    ```
    Code in an `#if` branch that only NVIDIA compiles, beside a HIP branch, is not reported
    (unless `report-nvidia-branches = true`).

    ## Fix
    None. No rewrite is valid on both vendors: `__lane_id()` and the other HIP functions do not
    exist in CUDA, and the PTX does not assemble for AMD. Put the HIP form in a platform branch.

    ## References
    - HIP kernel language, "In-line assembly": https://rocm.docs.amd.com/projects/HIP/en/latest/reference/kernel_language.html
    - HIP device functions `__lane_id`, `__smid`, `__byte_perm`, `__bitextract_u32`, `__funnelshift_l`: ROCm/clr `hipamd/include/hip/amd_detail/amd_device_functions.h`, `amd_warp_functions.h`
    - HIP math functions (`exp2f`, `__frcp_rn`, `__drcp_rn`): HIP math API reference, https://rocm.docs.amd.com/projects/HIP/en/latest/reference/math_api.html
    - PTX ISA (special registers, instructions): https://docs.nvidia.com/cuda/parallel-thread-execution/
    """

    code = "NV001"
    nvidia_feature = True
    name = "inline-ptx"
    summary = "inline PTX assembly does not assemble for AMD GPUs"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    checklist = "Replace inline PTX with HIP device functions or builtins behind `#if defined(__HIP_PLATFORM_AMD__)`."
    covers = PTX_ADDRESS_HELPERS
    query = "(gnu_asm_expression) @asm"

    def check(self, ctx, captures):
        if os.path.splitext(ctx.path)[1].lower() in C_EXTENSIONS or (ctx.fs_path and c_only_header(ctx.fs_path)):
            return  # compiled as C for the host: its assembly is the CPU's, whatever it looks like
        for asm in captures.get("asm", ()):
            template = asm_template(ctx, asm)
            if not is_ptx(template) or ptx_category(template) != "general":
                continue
            flat = template.replace("\\n", "\n").replace("\\t", "\t")
            hints = []
            for pattern, hint in PTX_HINTS:
                if pattern.search(flat) and hint not in hints:
                    hints.append(hint)
            msg = "inline PTX does not assemble for AMD GPUs"
            if hints:
                msg += "; HIP offers " + ", ".join(hints[:MAX_HINTS])
            # The same PTX again in the file is the same rewrite: one finding, the repeats related locations.
            # Different PTX is a rewrite of its own, and a finding of its own.
            ctx.report(asm, msg, group=" ".join(flat.split()))
