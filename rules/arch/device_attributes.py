from hiplint import CudaRule, Impact, Severity
from .._cuda import NamesRuleMixin

_ATTR = "`{}` has no HIP device attribute (HIPIFY: unsupported); treat the feature as absent on AMD"
_NAMES = {n: _ATTR.format(n) for n in (
    "cudaDevAttrCanFlushRemoteWrites", "cudaDevAttrDeferredMappingCudaArraySupported",
    "cudaDevAttrGPUDirectRDMAFlushWritesOptions", "cudaDevAttrGPUDirectRDMASupported",
    "cudaDevAttrGPUDirectRDMAWritesOrdering", "cudaDevAttrHostNumaId", "cudaDevAttrHostRegisterReadOnlySupported",
    "cudaDevAttrIpcEventSupport", "cudaDevAttrMaxTimelineSemaphoreInteropSupported",
    "cudaDevAttrMemSyncDomainCount", "cudaDevAttrMemoryPoolSupportedHandleTypes", "cudaDevAttrMpsEnabled",
    "cudaDevAttrNumaConfig", "cudaDevAttrNumaId", "cudaDevAttrReservedSharedMemoryPerBlock",
    "cudaDevAttrSparseCudaArraySupported", "cudaDevAttrTimelineSemaphoreInteropSupported",
    "cudaDevAttrMaxSurface1DLayeredLayers", "cudaDevAttrMaxSurface2DLayeredLayers",
    "cudaDevAttrMaxSurfaceCubemapLayeredLayers", "cudaDevAttrMaxTexture1DLayeredLayers",
    "cudaDevAttrMaxTexture2DLayeredLayers", "cudaDevAttrMaxTextureCubemapLayeredLayers",
    "cudaLimitMaxL2FetchGranularity",
)}


class UnsupportedDeviceAttribute(NamesRuleMixin, CudaRule):
    """Device attributes and limits that HIP does not have.

    ## What it does
    Finds `cudaDevAttr*` enumerators and `cudaLimit*` values with no HIP counterpart:
    `cudaDevAttrReservedSharedMemoryPerBlock`, `cudaDevAttrGPUDirectRDMASupported`,
    `cudaDevAttrMemSyncDomainCount`, `cudaDevAttrNumaConfig`, `cudaDevAttrMpsEnabled`,
    `cudaLimitMaxL2FetchGranularity` and others. Cluster, L2-persistence and device-runtime
    attributes are reported by NV005, SYN007 and SYN004.

    ## Why it breaks on AMD
    HIPIFY has no name to turn them into, so a port does not compile until the query is removed
    or put behind a platform check. Code that branches on their value must decide what AMD GPUs
    do instead (most describe features that AMD GPUs expose differently or not at all).

    ## Example
    ```cuda
    int reserved_smem(int dev) {
        int v = 0;
        cudaDeviceGetAttribute(&v, cudaDevAttrReservedSharedMemoryPerBlock, dev);
        return v;
    }
    ```

    ## Use instead
    ```cuda
    int reserved_smem(int dev) {
    #if defined(__HIP_PLATFORM_AMD__)
        return 0;
    #else
        int v = 0;
        cudaDeviceGetAttribute(&v, cudaDevAttrReservedSharedMemoryPerBlock, dev);
        return v;
    #endif
    }
    ```

    ## References
    - HIPIFY, CUDA runtime API support table, "Data types" (`cudaDeviceAttr`, `cudaLimit`): https://rocm.docs.amd.com/projects/HIPIFY/en/latest/reference/tables/CUDA_Runtime_API_functions_supported_by_HIP.html
    - HIP runtime API, `hipDeviceAttribute_t`: https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api/global_defines_enums_structs_files/global_enum_and_defines.html
    """

    code = "ARC003"
    name = "unsupported-device-attribute"
    summary = "device attribute or limit without a HIP equivalent"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    checklist = "Remove or platform-guard queries of CUDA device attributes/limits that HIP lacks."
    NAMES = _NAMES
    NAME_NODES = ("identifier",)
