from hiplint import CudaRule, Impact, Severity
from .._cuda import NamesRuleMixin

_MSG = ("`{}` does not exist in HIP; on AMD use `__builtin_amdgcn_sdot4` (gfx90a, gfx942, gfx950) "
        "or `__builtin_amdgcn_sudot4` (gfx11), or a portable scalar loop")


class Dp4a(NamesRuleMixin, CudaRule):
    """`__dp4a`, `__dp2a_lo`, `__dp2a_hi`: NVIDIA's packed integer dot products.

    ## What it does
    Finds calls of `__dp4a(a, b, c)`, `__dp2a_lo(...)` and `__dp2a_hi(...)`.

    ## Why it breaks on AMD
    HIP does not declare these intrinsics, so the code does not compile on any AMD target or ROCm
    version. AMD GPUs have their own dot-product instructions, exposed as Clang builtins whose
    availability depends on the target: `__builtin_amdgcn_sdot4` needs the `dot1-insts` feature
    (gfx906, gfx90a, gfx942, gfx950), RDNA3 (gfx11) has `__builtin_amdgcn_sudot4` instead. A
    per-architecture dispatch (ggml's `ggml_cuda_dp4a` is a public example) or a scalar fallback
    is needed.

    ## Example
    ```cuda
    __device__ int dot8(int a, int b, int acc) {
        return __dp4a(a, b, acc);
    }
    ```

    ## Use instead
    ```cuda
    __device__ int dot8(int a, int b, int acc) {
        const signed char* x = reinterpret_cast<const signed char*>(&a);
        const signed char* y = reinterpret_cast<const signed char*>(&b);
        for (int i = 0; i < 4; ++i) acc += x[i] * y[i];
        return acc;
    }
    ```

    ## Fix
    None: the builtin to use depends on the target architecture.

    ## References
    - HIPIFY, CUDA device API support table (`__dp4a`, `__dp2a_lo`, `__dp2a_hi` have no HIP equivalent): https://rocm.docs.amd.com/projects/HIPIFY/en/latest/reference/tables/CUDA_Device_API_supported_by_HIP.html
    - Clang `BuiltinsAMDGPU.def` (`__builtin_amdgcn_sdot4`: "dot1-insts"; `__builtin_amdgcn_sudot4`: "dot8-insts"): https://github.com/llvm/llvm-project/blob/main/clang/include/clang/Basic/BuiltinsAMDGPU.def
    - CUDA Math API, integer intrinsics `__dp4a`: https://docs.nvidia.com/cuda/cuda-math-api/
    """

    code = "NV003"
    nvidia_feature = True
    name = "dp4a-dp2a"
    summary = "`__dp4a` / `__dp2a_*` do not exist in HIP"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    checklist = "Replace `__dp4a`/`__dp2a_*` with AMD dot builtins chosen per architecture, or a scalar loop."
    NAMES = {n: _MSG.format(n) for n in ("__dp4a", "__dp2a_lo", "__dp2a_hi")}
    NAME_NODES = ("identifier",)
