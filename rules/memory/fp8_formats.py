import re

from hiplint import CudaRule, Impact, Severity
from hiplint.rules.libs._scan import Library, first_use, is_last_unit, names, relate_uses, span

from hiplint.triggers import regex_literals

from ._guards import inside_condition
from ._values import table


def _fnuz_targets(settings):
    fnuz = set(table()["fp8"]["fnuz_only"])
    return [a for a in settings.targets if a in fnuz]


class Fp8FnuzVsOcp(CudaRule):
    """FP8 formats: CUDA's fp8 is OCP, gfx942 (MI300) only has FNUZ fp8 in device code.

    ## What it does
    When the configured targets include gfx940, gfx941 or gfx942, reports once per file:
    - CUDA fp8 (`#include <cuda_fp8.h>`, or the first `__nv_fp8_e4m3`, `__nv_fp8_e5m2`, `__nv_fp8x2_*`,
      `__nv_fp8x4_*`, `__NV_E4M3`, `__nv_cvt_*fp8*` in a file without the include);
    - HIP's OCP fp8 (`__hip_fp8_e4m3`, `__hip_fp8_e5m2`, `__hip_fp8x2_*`, `__HIP_E4M3`, `__HIP_E5M2`)
      used outside an `#if` that selects the architecture or the fp8 flavour.
    The finding stands for the file's CUDA fp8 as a whole (its fp8 names are listed with it as related
    locations): API001 then does not report each fp8 name
    that HIP lacks (it does when these targets are not configured and this rule is off).

    ## Why it breaks on AMD
    NVIDIA's `__nv_fp8_e4m3` / `e5m2` are the OCP formats. HIP has two families: OCP
    (`__hip_fp8_e4m3`), supported in device code on gfx950 and gfx12, and FNUZ
    (`__hip_fp8_e4m3_fnuz`), the only one gfx940-gfx942 support; the host has both. E4M3 FNUZ and OCP
    differ in exponent bias (8 vs 7), largest value (240 vs 448) and NaN/Inf/negative-zero encodings,
    so the same bits mean different numbers: quantization scales tuned for 448 overflow, and fp8
    bytes written by one side and read by the other come out off by a factor of two or as NaN. OCP
    conversions in gfx942 device code hit a "type is unsupported by current target device" assert,
    which `NDEBUG` builds compile out. Applies to gfx940-gfx942 targets; gfx950 and gfx12 run OCP.

    ## Example
    ```cuda
    #include <cuda_fp8.h>
    __global__ void quant(const float* x, __nv_fp8_e4m3* q, float scale) {
        q[threadIdx.x] = __nv_fp8_e4m3(x[threadIdx.x] * scale);
    }
    ```

    ## Use instead
    ```cuda
    #if defined(__HIP_PLATFORM_AMD__)
    #include <hip/hip_fp8.h>
    #if defined(__gfx942__)
    typedef __hip_fp8_e4m3_fnuz fp8_e4m3;   // max 240
    #else
    typedef __hip_fp8_e4m3 fp8_e4m3;        // OCP, max 448
    #endif
    #endif
    ```
    Dispatch the fp8 type per architecture, derive scales from the format's maximum, and convert
    (not reinterpret) when fp8 data crosses between formats (`torch.float8_e4m3fnuz` on MI300).

    ## References
    - HIP low precision floating point types (FP8 OCP vs FNUZ, supported devices): https://rocm.docs.amd.com/projects/HIP/en/docs-6.3.3/reference/fp8_numbers.html
    - HIP fp8 header `amd_hip_fp8.h` (`HIP_FP8_TYPE_OCP`, `HIP_FP8_TYPE_FNUZ`, device asserts): https://github.com/ROCm/clr
    - Composable Kernel float8 table (bias, max, NaN encodings of FNUZ and OCP): https://rocm.docs.amd.com/projects/composable_kernel/en/latest/
    - CUDA fp8 intrinsics (`cuda_fp8.h`, OCP E4M3/E5M2): https://docs.nvidia.com/cuda/cuda-math-api/cuda_math_api/group__CUDA__MATH__INTRINSIC__FP8.html
    """

    code = "MEM009"
    # check_unit reports a CUDA fp8 header or name, or a HIP OCP fp8 name (see memory.toml [fp8]).
    triggers = (*Library("cuda_fp8", "", tuple(table()["fp8"]["cuda_headers"]), table()["fp8"]["cuda_names"]).triggers(),
                *sorted(regex_literals(table()["fp8"]["hip_ocp_names"]) or ("",)))
    name = "fp8-fnuz-vs-ocp"
    summary = "fp8 format mismatch: CUDA fp8 is OCP, gfx940-gfx942 only support FNUZ"
    severity = Severity.ERROR
    impact = Impact.SILENT
    report_in_hip_branches = True  # HIP OCP types sit in HIP code; arch-guarded uses are filtered below
    covers = table()["fp8"]["cuda_names"]  # reported once per file here, not at every use by API001
    checklist = "Choose the fp8 format per architecture (FNUZ on gfx942, OCP on gfx950/gfx12), rescale quantization for the format's maximum, and convert fp8 data crossing between formats."

    def enabled_for(self, settings) -> bool:
        return super().enabled_for(settings) and bool(_fnuz_targets(settings))

    def check_unit(self, ctx):
        if not is_last_unit(ctx):
            return
        fp8 = table()["fp8"]
        targets = ", ".join(_fnuz_targets(ctx.settings))
        lib = Library("cuda_fp8", "CUDA fp8", tuple(fp8["cuda_headers"]), fp8["cuda_names"])
        found = first_use(ctx, lib)
        if found is not None:
            where, item = found
            what = f"`#include <{item.path}>`" if where == "include" else f"`{item.text}`"
            finding = ctx.report_range(*span(item),
                                       f"{what}: CUDA fp8 is OCP (E4M3 max 448, bias 7); {targets} device code supports "
                                       f"only FNUZ fp8 (max 240, bias 8): dispatch the type per architecture and rescale")
            relate_uses(ctx, finding, lib, "CUDA fp8 (OCP) used here")
        ocp = re.compile(fp8["hip_ocp_names"])
        for n in names(ctx):
            if n.kind == "namespace_identifier" or not ocp.fullmatch(n.text):
                continue
            if ctx.platform_kind(n.start) == "nvidia" or inside_condition(ctx, n.start, n.end, fp8["arch_guard"]):
                continue
            ctx.report_range(n.start, n.end, f"`{n.text}` is HIP's OCP fp8, unsupported in {targets} device code "
                                             f"(FNUZ only): use the `_fnuz` type there, chosen per architecture")
            break
