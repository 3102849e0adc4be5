from hiplint import CudaRule, Impact, Severity
from .._cuda import call_name, device_function, file_defined_names

DEVICE_RUNTIME_CALLS = frozenset({
    "cudaDeviceSynchronize", "cudaLaunchDevice", "cudaGetParameterBuffer", "cudaGetParameterBufferV2",
    "cudaLaunchDeviceV2", "cudaGraphLaunch", "cudaStreamCreateWithFlags", "cudaMalloc", "cudaFree",
    "cudaMemcpyAsync", "cudaMemsetAsync", "cudaEventRecord", "cudaStreamDestroy",
})
# Names that only exist for the device runtime, anywhere in the file.
DEVICE_RUNTIME_NAMES = frozenset({
    "cudaStreamTailLaunch", "cudaStreamFireAndForget", "cudaLimitDevRuntimeSyncDepth",
    "cudaLimitDevRuntimePendingLaunchCount",
})


class DynamicParallelism(CudaRule):
    """Dynamic parallelism: kernel launches and CUDA runtime calls inside device code.

    ## What it does
    Finds `kernel<<<...>>>(...)` launches and calls of the CUDA device runtime
    (`cudaDeviceSynchronize`, `cudaLaunchDevice`, `cudaGetParameterBuffer`, `cudaGraphLaunch`,
    `cudaMalloc`, `cudaStreamCreateWithFlags`, ...) inside `__global__` or `__device__` functions,
    and the device-runtime names `cudaStreamTailLaunch`, `cudaStreamFireAndForget`,
    `cudaLimitDevRuntimeSyncDepth`, `cudaLimitDevRuntimePendingLaunchCount` anywhere.
    `__host__ __device__` functions are not reported (their runtime calls usually run on the host).

    ## Why it breaks on AMD
    "Unlike CUDA, HIP does not support dynamic parallelism": a kernel cannot launch kernels, and
    the HIP headers define `__HIP_ARCH_HAS_DYNAMIC_PARALLEL__` as 0. HIPIFY turns the inner
    `<<<>>>` into `hipLaunchKernelGGL`, which still fails to compile in device code. Every AMD
    target and ROCm version.

    ## Example
    ```cuda
    __global__ void child(int* d) { d[threadIdx.x] = 1; }
    __global__ void parent(int* d) {
        if (threadIdx.x == 0) child<<<1, 64>>>(d);
        cudaDeviceSynchronize();
    }
    ```

    ## Use instead
    ```cuda
    __global__ void child(int* d) { d[threadIdx.x] = 1; }
    void run(int* d, cudaStream_t s) {
        child<<<1, 64, 0, s>>>(d);   // launch from the host (or capture the sequence in a graph)
    }
    ```

    ## References
    - HIP C++ language extensions, `__global__` ("HIP does not support dynamic parallelism"): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html
    - ROCm/clr `hipamd/include/hip/amd_detail/amd_hip_runtime.h`: `#define __HIP_ARCH_HAS_DYNAMIC_PARALLEL__ (0)`
    - HIPIFY, CUDA runtime API table (`cudaLimitDevRuntimeSyncDepth` unsupported): https://rocm.docs.amd.com/projects/HIPIFY/en/latest/reference/tables/CUDA_Runtime_API_functions_supported_by_HIP.html
    """

    code = "SYN004"
    name = "dynamic-parallelism"
    summary = "dynamic parallelism (launches and runtime calls from device code) is not supported by HIP"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    checklist = "Move device-side launches to the host (a launch loop or a hipGraph), or turn the child work into a loop in the parent kernel."
    query = f"""
    ((call_expression (kernel_call_syntax) @config) @launch (#match? @config "^<<<"))
    ((call_expression function: (identifier) @fn) @call (#any-of? @fn {' '.join(f'"{n}"' for n in sorted(DEVICE_RUNTIME_CALLS))}))
    ((identifier) @name (#match? @name "^(cudaStreamTailLaunch|cudaStreamFireAndForget|cudaLimitDevRuntimeSyncDepth|cudaLimitDevRuntimePendingLaunchCount)$"))
    """

    def check(self, ctx, captures):
        for launch in captures.get("launch", ()):
            if device_function(ctx, launch) is not None:
                name = call_name(ctx, launch) or "a kernel"
                ctx.report(launch, f"launching `{name}` from device code (dynamic parallelism) is not supported by HIP")
        for call in captures.get("call", ()):
            if "launch" in captures:
                continue
            name = call_name(ctx, call)
            if name in DEVICE_RUNTIME_CALLS and name not in file_defined_names(ctx) \
                    and device_function(ctx, call) is not None:
                ctx.report(call, f"`{name}` in device code needs the CUDA device runtime (dynamic parallelism), "
                                 f"which HIP does not support")
        for node in captures.get("name", ()):
            if node.parent is not None and node.parent.type in ("preproc_def", "preproc_function_def"):
                continue  # a macro that maps the name (to a HIP one, usually) is not a use
            ctx.report(node, f"`{ctx.text(node)}` belongs to the CUDA device runtime (dynamic parallelism), "
                             f"which HIP does not support")
