import re

from hiplint import CudaRule, Fix, Impact, Severity
from hiplint.model import Edit
from hiplint.rules.libs._scan import Library, first_use, includes, is_last_unit, names, relate_uses, span

from ._values import table


# HIPIFY PR #1770 (November 2024, in ROCm 6.4's HIPIFY) stopped mapping `__nv_bfloat16` to the legacy
# `hip_bfloat16`; its synthetic tests expect `__hip_bfloat16`, as PyTorch's hipify maps it.
HIPIFY_MAPS_MODERN_BF16 = (6, 4)


class Bf16TypeMapping(CudaRule):
    """bf16 types: the legacy `hip_bfloat16` mixed with the CUDA-compatible `__hip_bfloat16` API.

    ## What it does
    - In HIP code that uses the legacy `hip_bfloat16` (or includes `hip/hip_bfloat16.h`) together with
      the CUDA-compatible bf16 API (`__float2bfloat16`, `__bfloat162float`, `__floats2bfloat162_rn`,
      `hip/hip_bf16.h`, ...), reports each `hip_bfloat16` and the legacy include. A file that only names
      both types (forward declarations, a trait per type, a `HIP_VERSION` switch between them) and calls
      no bf16 intrinsic supports both on purpose and is not reported.
    - In CUDA code, when the oldest ROCm to support (`rocm-version`) is below 6.4, reports the
      `cuda_bf16.h` include (info), a checklist note about the mapping, with the file's
      `__nv_bfloat16`/`__nv_bfloat162` names as related locations. From ROCm 6.4 on, hipify maps
      `__nv_bfloat16` to `__hip_bfloat16` (HIPIFY PR #1770), as PyTorch's hipify does, and CUDA code
      is not reported.

    ## Why it breaks on AMD
    HIP has two bf16 types. `hip_bfloat16` (`hip/hip_bfloat16.h`) is the older struct; `__hip_bfloat16`
    (`hip/hip_bf16.h`) "is meant to match cuda_bf16.h", with the same intrinsics. They are distinct
    types without conversions between them. hipify before ROCm 6.4 (hipify-perl and hipify-clang, from
    HIPIFY PR #1086) renames `__nv_bfloat16` to `hip_bfloat16` but the intrinsics to their
    `__hip_bfloat16` forms, so code ported with it mixes the two and fails to compile (or needs casts
    through `.data`); so does code written by hand against the legacy header. Every ROCm version with
    both headers.

    ## Example
    ```cuda
    #include <hip/hip_bf16.h>
    #include <hip/hip_bfloat16.h>
    __global__ void k(const float* x, hip_bfloat16* y) { y[threadIdx.x] = __float2bfloat16(x[threadIdx.x]); }
    ```

    ## Use instead
    ```cuda
    #include <hip/hip_bf16.h>
    __global__ void k(const float* x, __hip_bfloat16* y) { y[threadIdx.x] = __float2bfloat16(x[threadIdx.x]); }
    ```

    ## Fix
    Unsafe: `hip_bfloat16` becomes `__hip_bfloat16` and `hip/hip_bfloat16.h` becomes `hip/hip_bf16.h`.
    The types are layout-compatible (16 bits) but not API-compatible: code that uses the legacy
    struct's `.data` member, its float constructor or its rounding helpers needs review, so the fix is
    applied only with `--unsafe-fixes`. CUDA files get no fix (the note is about what hipify will do).

    ## References
    - ROCm/legacy-rocm-build#2534 ("hip_bf16.h is meant to match cuda_bf16.h"; the two types do not convert): https://github.com/ROCm/legacy-rocm-build/issues/2534
    - HIPIFY PR #1086 (`__nv_bfloat16` -> `hip_bfloat16`): https://github.com/ROCm/HIPIFY/pull/1086
    - HIPIFY PR #1770 (`hip_bfloat16` no longer the mapping; synthetic tests expect `__hip_bfloat16`): https://github.com/ROCm/HIPIFY/pull/1770
    - HIP bfloat16 reference (`hip_bf16.h`): https://rocm.docs.amd.com/projects/HIP/en/docs-6.3.3/reference/fp8_numbers.html
    """

    code = "MEM010"
    # The legacy type (or its header hip/hip_bfloat16.h), or the CUDA bf16 header.
    triggers = (table()["bf16"]["legacy_type"], *Library("cuda_bf16", "", tuple(table()["bf16"]["cuda_headers"])).triggers())
    name = "bf16-type-mapping"
    summary = "legacy hip_bfloat16 mixed with the CUDA-compatible __hip_bfloat16 API"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    fix_availability = "sometimes"
    checklist = "Use __hip_bfloat16 from hip/hip_bf16.h for every CUDA __nv_bfloat16 (not the legacy hip_bfloat16)."

    def check_unit(self, ctx):
        if not is_last_unit(ctx):
            return
        bf = table()["bf16"]
        modern = re.compile(bf["modern_names"])
        all_names = names(ctx)
        legacy_uses = [n for n in all_names if n.text == bf["legacy_type"] and n.kind != "namespace_identifier"]
        legacy_includes = [i for i in includes(ctx) if i.path == bf["legacy_header"]]
        mixes = any(modern.fullmatch(n.text) for n in all_names) or \
            any(i.path == bf["modern_header"] for i in includes(ctx))
        # A file that only names both types (`struct hip_bfloat16; struct __hip_bfloat16;`, traits for each,
        # `#if HIP_VERSION >= 60200000 ... __hip_bfloat16 #else hip_bfloat16`) supports both on purpose:
        # the mix that breaks is the legacy type beside the modern intrinsics or their header.
        uses_api = any(modern.fullmatch(n.text) and not n.text.startswith(bf["modern_type"]) for n in all_names) or \
            any(i.path == bf["modern_header"] for i in includes(ctx))
        if (legacy_uses or legacy_includes) and mixes and (uses_api or legacy_includes):
            for inc in legacy_includes:
                fix = Fix.unsafe(f"include <{bf['modern_header']}>",
                                 Edit(inc.path_start, inc.path_end, f"<{bf['modern_header']}>"))
                ctx.report_range(*span(inc), f"`{bf['legacy_header']}` declares the legacy hip_bfloat16; this "
                                                     f"file uses the cuda_bf16.h-compatible API from `{bf['modern_header']}`",
                                 fix=fix)
            for n in legacy_uses:
                fix = Fix.unsafe(f"use {bf['modern_type']}", Edit(n.start, n.end, bf["modern_type"]))
                ctx.report_range(n.start, n.end, f"`hip_bfloat16` is the legacy struct, distinct from `{bf['modern_type']}` "
                                                 f"that the bf16 intrinsics here take and return (no conversion between them)",
                                 fix=fix)
            return
        if ctx.settings.rocm_version >= HIPIFY_MAPS_MODERN_BF16:
            return  # that ROCm's hipify (and PyTorch's) maps `__nv_bfloat16` to `__hip_bfloat16` already
        # The CUDA-side note goes on the include only: bf16 names spread through every file of a project.
        lib = Library("cuda_bf16", "CUDA bf16", tuple(bf["cuda_headers"]))
        found = first_use(ctx, lib)
        if found is not None:
            where, item = found
            what = f"`#include <{item.path}>`"
            finding = ctx.report_range(*span(item),
                                       f"{what}: hipify maps `__nv_bfloat16` to the legacy `hip_bfloat16`; port it to "
                                       f"`__hip_bfloat16` (hip/hip_bf16.h), which matches cuda_bf16.h", severity=Severity.INFO)
            relate_uses(ctx, finding, Library("cuda_bf16_types", "CUDA bf16", (), bf["cuda_types"]),
                        "becomes the legacy `hip_bfloat16` under hipify")
