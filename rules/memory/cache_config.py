from hiplint import CudaRule, Impact, Severity

from ._values import call_args

# Calls that configure the L1/shared split or shared-memory banks: name -> what AMD does with them.
IGNORED_CALLS = {
    "cudaFuncSetCacheConfig": "accepted and ignored (AMD has no reconfigurable L1/LDS split)",
    "hipFuncSetCacheConfig": "accepted and ignored (AMD has no reconfigurable L1/LDS split)",
    "cudaDeviceSetCacheConfig": "not supported on AMD: recent HIP returns hipErrorNotSupported, so an error check around it "
                                "aborts, and from ROCm 7.0 the next `hipGetLastError()` check returns it too, even where "
                                "this call is not checked",
    "hipDeviceSetCacheConfig": "not supported on AMD: recent HIP returns hipErrorNotSupported, so an error check around it "
                               "aborts, and from ROCm 7.0 the next `hipGetLastError()` check returns it too, even where "
                               "this call is not checked",
    "cudaDeviceSetSharedMemConfig": "ignored: AMD LDS has no selectable bank width (deprecated in CUDA 12.3)",
    "hipDeviceSetSharedMemConfig": "ignored: AMD LDS has no selectable bank width",
    "cudaFuncSetSharedMemConfig": "ignored: AMD LDS has no selectable bank width (deprecated in CUDA 12.3)",
    "hipFuncSetSharedMemConfig": "ignored: AMD LDS has no selectable bank width",
}
CARVEOUT = frozenset({"cudaFuncAttributePreferredSharedMemoryCarveout", "hipFuncAttributePreferredSharedMemoryCarveout",
                      "CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT"})
SET_ATTRIBUTE = frozenset({"cudaFuncSetAttribute", "hipFuncSetAttribute", "cuFuncSetAttribute"})


class CacheConfigIgnored(CudaRule):
    """Cache and shared-memory configuration calls that do nothing (or fail) on AMD.

    ## What it does
    Finds `cudaFuncSetCacheConfig`, `cudaDeviceSetCacheConfig`, `cudaDeviceSetSharedMemConfig`,
    `cudaFuncSetSharedMemConfig`, `cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, ...)`
    and their `hip*` spellings.

    ## Why it breaks on AMD
    On NVIDIA these trade L1 cache against shared memory or pick 8-byte banks, and tuned kernels
    rely on the choice for occupancy and bandwidth. AMD GPUs have a separate, fixed-size LDS: HIP
    documents that AMD devices do not support a reconfigurable cache, `hipFuncSetCacheConfig` is a
    hint that is ignored, and in recent HIP releases `hipDeviceSetCacheConfig` returns
    `hipErrorNotSupported` (a `CHECK(...)` wrapper around it then aborts the program; from ROCm 7.0
    `hipGetLastError` returns the last error of the thread as CUDA's does, so an unchecked call's
    error surfaces at the next `hipGetLastError()` check, typically after a kernel launch). The
    performance the setting bought on NVIDIA has to come from tiling instead. Every ROCm version;
    the error return depends on the HIP release.

    ## Example
    ```cuda
    __global__ void stencil(float* x);
    void setup() { cudaFuncSetCacheConfig(stencil, cudaFuncCachePreferShared); }
    ```

    ## Use instead
    ```cuda
    __global__ void stencil(float* x);
    void setup() {
    #if !defined(__HIP_PLATFORM_AMD__)
        cudaFuncSetCacheConfig(stencil, cudaFuncCachePreferShared);
    #endif
    }
    ```

    ## References
    - HIP runtime API, `hipDeviceSetCacheConfig` ("AMD devices do not support reconfigurable cache ... will return hipErrorNotSupported") and `hipFuncSetCacheConfig` (hint ignored): https://rocm.docs.amd.com/projects/HIP/en/latest/doxygen/html/group___device.html
    - HIP API 7.0 changes, "Update hipGetLastError" (returns the last error, not the last call's result): https://rocm.docs.amd.com/projects/HIP/en/latest/hip-7-changes.html
    - hipfort reference of the same APIs (notes copied from the HIP headers): https://rocm.docs.amd.com/projects/hipfort/en/latest/doxygen/html/interfacehipfort_1_1hipdevicesetcacheconfig.html
    - CUDA runtime API, `cudaFuncSetCacheConfig` and shared memory carveout: https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__EXECUTION.html
    """

    code = "MEM002"
    name = "cache-config-ignored"
    summary = "cache/shared-memory configuration is ignored on AMD"
    severity = Severity.INFO
    impact = Impact.PERFORMANCE
    checklist = "Drop or guard cache-config and carveout calls for AMD (never treat their failure as fatal) and recover the performance by tiling."
    query = """
    ((call_expression function: (identifier) @fn) @call
     (#match? @fn "^(cuda|hip|cu)(Func|Device)Set(CacheConfig|SharedMemConfig|Attribute)$"))
    """

    def check(self, ctx, captures):
        call = captures["call"][0]
        fn = ctx.text(captures["fn"][0])
        if fn in IGNORED_CALLS:
            sev = Severity.WARNING if "DeviceSetCacheConfig" in fn else None
            ctx.report(call, f"`{fn}`: {IGNORED_CALLS[fn]}", severity=sev)
        elif fn in SET_ATTRIBUTE:
            args = call_args(call)
            if len(args) > 1 and ctx.text(args[1]).split("::")[-1] in CARVEOUT:
                ctx.report(call, f"`{fn}(..., PreferredSharedMemoryCarveout, ...)`: AMD's LDS is a fixed size; the carveout "
                                 f"preference has no effect")
