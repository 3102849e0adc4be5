from hiplint import Fix, Impact, Severity
from hiplint.model import Edit

from ._scan import load_table
from ._whole import WholeLibraryRule

PLATFORM_MACRO = "__HIP_PLATFORM_AMD__"


class NcclToRccl(WholeLibraryRule):
    """NCCL is used: on AMD the library is RCCL, with the same API under another header.

    ## What it does
    Reports the first `#include <nccl.h>` of a file, once per file, and offers to put the RCCL header
    behind the platform macro. `nccl*` calls are not reported: RCCL keeps their names.

    ## Why it breaks on AMD
    hipify has no NCCL entries and leaves `nccl.h` in place, so the HIP build does not find it (or
    picks up a CUDA installation's). RCCL implements the NCCL API with the same `nccl*` names and
    types; its header is `rccl/rccl.h` and its library `librccl` (`-lrccl`, CMake `find_package(rccl)`).
    RCCL tracks NCCL releases with a lag: check that the NCCL calls you use (for example newer
    `ncclCommSplit`, `ncclMemAlloc`, user buffer registration) exist in the installed RCCL. All
    targets, every ROCm version.

    ## Example
    ```cuda
    #include <nccl.h>
    void all_reduce(float* buf, size_t n, ncclComm_t comm, cudaStream_t s) {
        ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s);
    }
    ```

    ## Use instead
    ```cuda
    #if defined(__HIP_PLATFORM_AMD__)
    #include <rccl/rccl.h>
    #else
    #include <nccl.h>
    #endif
    ```

    ## Fix
    Safe: the include becomes `#if defined(__HIP_PLATFORM_AMD__)` / `#include <rccl/rccl.h>` /
    `#else` / the original include / `#endif`. The NVIDIA build is unchanged and the `nccl*` calls
    stay as they are (RCCL keeps the names). HIP compilers define `__HIP_PLATFORM_AMD__`; host-only
    translation units get it from the `hip::host` CMake target. Link `rccl` instead of `nccl` in the
    build files (a build rule, not this fix).

    ## References
    - RCCL documentation: https://rocm.docs.amd.com/projects/rccl/en/latest/
    - RCCL API (NCCL-compatible names): https://rocm.docs.amd.com/projects/rccl/en/latest/api-reference/api-library.html
    - A real port using `#include <rccl/rccl.h>`: ggml-org/ggml, src/ggml-cuda/vendors/hip.h
    """

    code = "LIB006"
    name = "nccl-to-rccl"
    summary = "NCCL header: use RCCL's rccl/rccl.h on AMD"
    severity = Severity.WARNING
    impact = Impact.COMPILE
    fix_availability = "sometimes"
    library = "nccl"
    checklist = "Include rccl/rccl.h on AMD, link librccl, and check that every NCCL call used exists in the installed RCCL version."

    def message(self, where, text):
        return f"`#include <{text}>`: on AMD include RCCL's `rccl/rccl.h` (same nccl* API) and link librccl"

    def fix_for(self, ctx, where, inc):
        if where != "include":
            return None
        line_start = ctx.source.data.rfind(b"\n", 0, inc.start) + 1
        if ctx.source.data[line_start:inc.start].strip():
            return None  # the directive does not start its line: leave it to a person
        header = load_table("libraries.toml")["libraries"]["nccl"]["amd_header"]
        original = ctx.source.data[inc.start:inc.end].decode("utf-8", "replace")
        text = f"#if defined({PLATFORM_MACRO})\n#include <{header}>\n#else\n{original}\n#endif"
        return Fix.safe(f"include <{header}> on AMD", Edit(inc.start, inc.end, text))
