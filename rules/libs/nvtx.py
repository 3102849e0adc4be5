from hiplint import Impact, Severity

from ._whole import WholeLibraryRule


class NvtxToRoctx(WholeLibraryRule):
    """NVTX markers and ranges: ROCm's equivalent is roctx, with other names and fewer features.

    ## What it does
    Reports the first NVTX include (`nvToolsExt.h`, `nvtx3/...`) of a file, or in a file without
    one the first `nvtx*` / `NVTX3_*` name. Once per file. Names the file defines or declares itself
    (a project's NVTX stub for builds without it, a roctx shim that implements `nvtxMarkA`) are the
    project's, not NVTX's.

    ## Why it breaks on AMD
    NVTX is an NVIDIA header and library (`-lnvToolsExt`); hipify leaves it alone, so the HIP build
    fails to find the header or to link. ROCm provides roctx: `roctxRangePushA`, `roctxRangePop`,
    `roctxMarkA`, `roctxRangeStartA` / `roctxRangeStop`, in `roctracer/roctx.h` (library `roctx64`)
    or, with rocprofiler-sdk, `rocprofiler-sdk-roctx/roctx.h`. roctx has no domains, categories,
    colours or event attributes (`nvtxDomainCreateA`, `nvtxEventAttributes_t`, `nvtxRangePushEx`
    need a hand port or a wrapper). All targets, every ROCm version.

    ## Example
    ```cuda
    #include <nvtx3/nvToolsExt.h>
    void step() { nvtxRangePushA("step"); nvtxRangePop(); }
    ```

    ## Use instead
    ```cuda
    #if defined(__HIP_PLATFORM_AMD__)
    #include <roctracer/roctx.h>
    #define PROF_PUSH(name) roctxRangePushA(name)
    #define PROF_POP() roctxRangePop()
    #else
    #include <nvtx3/nvToolsExt.h>
    #define PROF_PUSH(name) nvtxRangePushA(name)
    #define PROF_POP() nvtxRangePop()
    #endif
    void step() { PROF_PUSH("step"); PROF_POP(); }
    ```

    ## References
    - roctx API (roctracer): https://rocm.docs.amd.com/projects/roctracer/en/latest/reference/roctx-spec.html
    - rocprofiler-sdk roctx: https://rocm.docs.amd.com/projects/rocprofiler-sdk/en/latest/how-to/using-rocprofv3.html
    - NVTX documentation: https://nvidia.github.io/NVTX/
    """

    code = "LIB007"
    name = "nvtx-to-roctx"
    summary = "NVTX has no HIP rename: use roctx"
    severity = Severity.INFO
    impact = Impact.COMPILE
    library = "nvtx"
    checklist = "Replace NVTX ranges and marks with roctx (roctxRangePushA/Pop, roctxMarkA) behind a small wrapper; drop domains and attributes or emulate them; link roctx64."
