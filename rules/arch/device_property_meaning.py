from hiplint import CudaRule, Impact, Severity
from ._props import is_device_prop

# hipDeviceProp_t fields whose value on AMD differs in meaning from CUDA's, as hipGetDeviceProperties
# fills them (ROCm/clr hipamd/src/hip_device.cpp, 2024-10).
FIELD_MEANING = {
    "accessPolicyMaxWindowSize": "is 0 on AMD (no L2 access-policy windows): a window clamped to it is empty, a division by it traps",
    "persistingL2CacheMaxSize": "is the whole L2 size on AMD, which has no persisting set-aside",
    "reservedSharedMemPerBlock": "is 0 on AMD",
    "clusterLaunch": "is 0 on AMD (no thread-block clusters)",
    "singleToDoublePrecisionPerfRatio": "is 0 on AMD (not reported): a division by it traps",
    "maxBlocksPerMultiProcessor": "is maxThreadsPerCU / maxThreadsPerBlock on AMD (2 on CDNA), not the hardware "
                                  "block limit: occupancy arithmetic built on it is wrong; use hipOccupancy* APIs",
}


class DevicePropertyMeaning(CudaRule):
    """`cudaDeviceProp` fields that HIP fills with a different meaning or a placeholder.

    ## What it does
    Finds reads of `accessPolicyMaxWindowSize`, `persistingL2CacheMaxSize`,
    `reservedSharedMemPerBlock`, `clusterLaunch`, `singleToDoublePrecisionPerfRatio` and
    `maxBlocksPerMultiProcessor` on a `cudaDeviceProp` (or `hipDeviceProp_t`). Fields only printed
    for information (`computePreemptionSupported`) are left alone. `major`/`minor` are ARC002, `clockRate` for timing is NV006.

    ## Why it breaks on AMD
    `hipDeviceProp_t` has these fields so that code compiles, but `hipGetDeviceProperties` fills
    them with values that do not mean what CUDA code expects: the L2 access-policy window size,
    reserved shared memory, cluster launch and the single/double performance ratio are 0; `persistingL2CacheMaxSize` is the whole L2 (AMD has no persisting set-aside);
    `maxBlocksPerMultiProcessor` is derived as maximum threads per CU divided by the maximum
    block size (2 on CDNA), not a hardware limit. Nothing fails to compile; sizes become 0,
    divisions trap, occupancy estimates are wrong. Every AMD target (values read from ROCm/clr as of
    ROCm 6.3; check newer releases).

    ## Example
    ```cuda
    size_t window_bytes(int dev, size_t want) {
        cudaDeviceProp prop;
        cudaGetDeviceProperties(&prop, dev);
        return want < (size_t)prop.accessPolicyMaxWindowSize ? want : prop.accessPolicyMaxWindowSize;
    }
    ```

    ## Use instead
    ```cuda
    size_t window_bytes(int dev, size_t want) {
    #if defined(__HIP_PLATFORM_AMD__)
        return 0;   // no access-policy windows on AMD
    #else
        cudaDeviceProp prop;
        cudaGetDeviceProperties(&prop, dev);
        return want < (size_t)prop.accessPolicyMaxWindowSize ? want : prop.accessPolicyMaxWindowSize;
    #endif
    }
    ```

    ## References
    - ROCm/clr `hipamd/src/hip_device.cpp` (`ihipGetDeviceProperties`: `accessPolicyMaxWindowSize = 0`, `persistingL2CacheMaxSize = l2CacheSize`, `maxBlocksPerMultiProcessor = maxThreadsPerCU / maxWorkGroupSize`): https://github.com/ROCm/clr
    - HIP runtime API, `hipDeviceProp_t`: https://rocm.docs.amd.com/projects/HIP/en/latest/doxygen/html/structhip_device_prop__t.html
    - CUDA Runtime API, `cudaDeviceProp`: https://docs.nvidia.com/cuda/cuda-runtime-api/structcudaDeviceProp.html
    """

    code = "ARC005"
    name = "device-property-meaning"
    summary = "device property that AMD fills with a different meaning or a placeholder"
    severity = Severity.WARNING
    impact = Impact.SILENT
    checklist = "Review uses of device properties HIP fills with 0 or other meanings (access policy window, persisting L2, max blocks per CU)."
    query = ('((field_expression argument: (_) @obj field: (field_identifier) @field) @expr '
             '(#match? @field "^(' + "|".join(FIELD_MEANING) + ')$"))')

    def check(self, ctx, captures):
        expr, obj, field = captures["expr"][0], captures["obj"][0], captures["field"][0]
        if not is_device_prop(ctx, expr, obj):
            return
        # Writes (a struct being filled for a fake device) are not reads.
        parent = expr.parent
        if parent is not None and parent.type == "assignment_expression" and parent.child_by_field_name("left") == expr:
            return
        name = ctx.text(field)
        ctx.report(expr, f"`{ctx.text(expr)}` {FIELD_MEANING[name]}")
