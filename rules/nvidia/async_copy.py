from hiplint import CudaRule, Impact, Severity
from .._cuda import NamesRuleMixin

# Generic-to-shared address conversion exists only to feed PTX operands (cp.async, ldmatrix,
# mbarrier): in a file whose PTX is reported, API001 does not report each conversion again.
PTX_ADDRESS_HELPERS = r"__cvta_generic_to_shared"

_PIPE = "`{}` (CUDA asynchronous copy pipeline) has no HIP equivalent; stage through registers into shared memory and `__syncthreads()`"
_TMA = "`{}` (Tensor Memory Accelerator) has no HIP equivalent; AMD GPUs have no TMA unit"
_NAMES = {n: _PIPE.format(n) for n in (
    "__pipeline_memcpy_async", "__pipeline_commit", "__pipeline_wait_prior", "__pipeline_arrive_on",
    "cuda::memcpy_async", "cuda::pipeline", "cuda::make_pipeline", "cuda::pipeline_shared_state",
    "cuda::pipeline_role", "cuda::pipeline_consumer_wait_prior", "cuda::pipeline_producer_commit",
    "cuda::device::memcpy_async_tx", "cuda::aligned_size_t",
)}
_NAMES.update({n: _TMA.format(n) for n in (
    "CUtensorMap", "cuTensorMapEncodeTiled", "cuTensorMapEncodeIm2col", "cuTensorMapReplaceAddress",
    "cuda::device::experimental::cp_async_bulk_tensor_2d_global_to_shared",
)})
# `<cuda/pipeline>` is libcu++'s: LIB011 reports it (with what libhipcxx lacks), not this rule as well.
_HEADERS = {h: f"<{h}> (asynchronous copies) has no HIP counterpart" for h in (
    "cuda_pipeline.h", "cuda_pipeline_primitives.h", "cuda_awbarrier.h", "cuda_awbarrier_primitives.h",
)}


class AsyncCopyTmaMbarrier(NamesRuleMixin, CudaRule):
    """Asynchronous global-to-shared copies, TMA and mbarriers: `cp.async`, `__pipeline_memcpy_async`,
    `cuda::memcpy_async`, `cuda::pipeline`, `CUtensorMap`.

    ## What it does
    Finds the CUDA pipeline primitives (`__pipeline_memcpy_async`, `__pipeline_commit`,
    `__pipeline_wait_prior`), libcu++ `cuda::memcpy_async` and `cuda::pipeline`, the TMA
    descriptor API (`CUtensorMap`, `cuTensorMapEncodeTiled`), their headers (`<cuda_pipeline.h>`;
    libcu++'s `<cuda/pipeline>` is LIB011's), and inline PTX with `cp.async`, `cp.async.bulk`, `mbarrier.*`,
    `tensormap.*` or `griddepcontrol.*`. Cooperative groups' `cg::memcpy_async` is SYN006. A file's
    pipeline is rewritten as one: each name is one finding per file, and so is the file's inline asm,
    their other uses related locations. In a
    file where it reports, `__cvta_generic_to_shared` (the shared-memory address for the PTX
    operands) is not reported again by API001: it goes when the PTX goes.

    ## Why it breaks on AMD
    These rely on the Ampere/Hopper asynchronous copy engines and transaction barriers. HIP provides
    none of them (HIPIFY lists no equivalent), so the code does not compile for any AMD target.
    CDNA GPUs can load global memory straight into LDS with `__builtin_amdgcn_global_load_lds`, but
    with other sizes and rules; the portable port is a synchronous load into shared memory with
    double buffering and `__syncthreads()`.

    ## Example
    ```cuda
    #include <cuda_pipeline.h>
    __global__ void stage(const float4* g, int n) {
        __shared__ float4 s[256];
        __pipeline_memcpy_async(&s[threadIdx.x], &g[threadIdx.x], sizeof(float4));
        __pipeline_commit();
        __pipeline_wait_prior(0);
    }
    ```

    ## Use instead
    ```cuda
    __global__ void stage(const float4* g, int n) {
        __shared__ float4 s[256];
        s[threadIdx.x] = g[threadIdx.x];
        __syncthreads();
    }
    ```

    ## References
    - HIPIFY, CUDA device and driver API support tables (no HIP equivalent for the pipeline primitives and `cuTensorMapEncode*`): https://rocm.docs.amd.com/projects/HIPIFY/en/latest/reference/tables/CUDA_Driver_API_functions_supported_by_HIP.html
    - CUDA C++ Programming Guide, "Asynchronous Data Copies" and "Tensor Memory Access": https://docs.nvidia.com/cuda/cuda-c-programming-guide/
    - PTX ISA, `cp.async`, `mbarrier`: https://docs.nvidia.com/cuda/parallel-thread-execution/
    """

    code = "NV004"
    nvidia_feature = True
    name = "async-copy-tma-mbarrier"
    summary = "asynchronous copies, TMA and mbarriers have no HIP equivalent"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    checklist = "Replace async copies/TMA/mbarrier pipelines with synchronous loads into shared memory (double buffered) and __syncthreads()."
    covers = PTX_ADDRESS_HELPERS
    NAMES = _NAMES
    HEADERS = _HEADERS
    GROUP_PER_FILE = True  # the file's pipeline is rewritten as one: each name once, its other uses related
    ASM_CATEGORY = "async-copy"
    ASM_MESSAGE = "PTX asynchronous copy / mbarrier / TMA does not exist on AMD GPUs; load into shared memory synchronously and `__syncthreads()`"
