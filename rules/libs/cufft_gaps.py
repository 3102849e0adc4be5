import re

from hiplint import CudaRule, Impact, Severity

from ._scan import load_table


class CufftCallbacksAndXt(CudaRule):
    """cuFFT callbacks, multi-GPU Xt functions and compatibility modes: missing or different in hipFFT/rocFFT.

    ## What it does
    Reports calls of `cufftXtSetCallback` / `cufftXtClearCallback` / `cufftXtSetCallbackSharedSize`
    (and the `hipfftXt*` names hipify gives them), of the multi-GPU and descriptor API
    (`cufftXtSetGPUs`, `cufftXtMalloc`, `cufftXtMemcpy`, `cufftXtExecDescriptor*`, ...), and uses of
    `cufftSetCompatibilityMode` / `CUFFT_COMPATIBILITY_*`.

    ## Why it breaks on AMD
    hipFFT/rocFFT callbacks work differently: rocFFT load/store callbacks are experimental, the
    callback functions must be compiled as relocatable device code (`-fgpu-rdc`) and linked into the
    program, shared memory for callbacks is not supported (`shared_mem_bytes` must be 0), and planar
    data layouts are not supported. The cuFFTXt multi-GPU descriptor API has no hipFFT equivalent in
    AMD's HIPIFY table for ROCm 6.3 (hipify warns); hipFFT added `hipfftXtSetGPUs`, `hipfftXtMalloc`,
    `hipfftXtMemcpy` and `hipfftXtExecDescriptor*` later (hipFFT 1.0.18, ROCm 6.4), marked experimental:
    the rule reports each call as missing for `rocm-version` below 6.4, and from 6.4 the first call
    of a file as experimental (info).
    Compatibility modes were removed from cuFFT and never existed in hipFFT. All targets.

    ## Example
    ```cuda
    #include <cufftXt.h>
    void attach(cufftHandle plan, void** cb) {
        cufftXtSetCallback(plan, cb, CUFFT_CB_LD_COMPLEX, nullptr);
    }
    ```

    ## Use instead
    ```cuda
    #include <cufft.h>
    __global__ void scale(cufftComplex* x, int n, float s);
    void run(cufftHandle plan, cufftComplex* x, int n) {
        scale<<<(n + 255) / 256, 256>>>(x, n, 1.0f / n);
        cufftExecC2C(plan, x, x, CUFFT_FORWARD);
    }
    ```
    A separate pre- or post-processing kernel instead of a callback; one plan per GPU instead of Xt descriptors.

    ## References
    - rocFFT, load and store callbacks (experimental, -fgpu-rdc, no shared memory, no planar formats): https://rocm.docs.amd.com/projects/rocFFT/en/latest/how-to/load-store-callbacks.html
    - HIPIFY, cuFFT API supported by HIP: https://rocm.docs.amd.com/projects/HIPIFY/en/latest/reference/tables/CUFFT_API_supported_by_HIP.html
    - hipFFT documentation: https://rocm.docs.amd.com/projects/hipFFT/en/latest/
    - hipFFT changelog (1.0.17 for ROCm 6.3, 1.0.18 with the Xt multi-GPU and MPI APIs): https://github.com/ROCm/hipFFT/blob/develop/CHANGELOG.md
    - hipFFT Xt API list (hipfort): https://rocm.docs.amd.com/projects/hipfort/en/develop/doxygen/html/md_input_2supported__api__hipfftxt.html
    """

    code = "LIB004"
    name = "cufft-callbacks-and-xt"
    summary = "cuFFT callback or Xt multi-GPU API without a direct hipFFT equivalent"
    severity = Severity.WARNING
    impact = Impact.COMPILE
    checklist = "Replace cuFFT callbacks with separate kernels (or port them to rocFFT callbacks built with -fgpu-rdc and no shared memory); replace cufftXt multi-GPU plans with per-GPU plans."
    query = """
    ((call_expression function: (identifier) @fn) @call (#match? @fn "^(cu|hip)fft"))
    ((identifier) @id (#match? @id "^CUFFT_COMPATIBILITY_"))
    """

    def check(self, ctx, captures):
        table = load_table("libraries.toml")["cufft"]
        if "id" in captures:
            node = captures["id"][0]
            ctx.report(node, f"`{ctx.text(node)}`: cuFFT compatibility modes do not exist in hipFFT; remove the setting")
            return
        call = captures["call"][0]
        fn = ctx.text(captures["fn"][0])
        if fn in table["callbacks"]:
            # One task per file: the file's other callback calls are related locations.
            ctx.report(call, f"`{fn}`: rocFFT callbacks are experimental, need -fgpu-rdc device code and "
                             f"shared_mem_bytes == 0, and do not support planar layouts; prefer a separate kernel",
                       group="callbacks")
        elif fn in table["multi_gpu"]:
            if ctx.rocm_version < tuple(table["multi_gpu_since"]):
                ctx.report(call, f"`{fn}`: the cuFFTXt multi-GPU/descriptor API has no hipFFT equivalent before "
                                 f"ROCm {table['multi_gpu_since'][0]}.{table['multi_gpu_since'][1]}; use one plan per GPU")
            elif "lib004_multi_gpu_noted" in ctx.cache:  # an info note once per file: later calls are related
                ctx.relate(ctx.cache["lib004_multi_gpu_noted"], call, f"`{fn}`: the Xt API here too")
            else:
                ctx.cache["lib004_multi_gpu_noted"] = ctx.report(
                    call, f"`{fn}`: hipFFT's multi-GPU Xt API is experimental (the rocFFT backend needs distinct "
                          f"device IDs); test it or use one plan per GPU", severity=Severity.INFO)
        elif re.fullmatch(table["compat"], fn):
            ctx.report(call, f"`{fn}`: cuFFT compatibility modes do not exist in hipFFT; remove the call")
