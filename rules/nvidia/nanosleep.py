from hiplint import CudaRule, Impact, Severity
from .._cuda import NamesRuleMixin


class Nanosleep(NamesRuleMixin, CudaRule):
    """`__nanosleep()` and the `%globaltimer` register: NVIDIA-only sleeping and wall time.

    ## What it does
    Finds calls of `__nanosleep(ns)` and inline PTX that reads `%globaltimer` (`%globaltimer_lo`,
    `%globaltimer_hi`) or runs `nanosleep.u32`.

    ## Why it breaks on AMD
    HIP declares no `__nanosleep` and PTX does not assemble for AMD: both fail to compile on every
    AMD target and ROCm version. HIP's constant-rate device timer is `wall_clock64()`, whose
    frequency is the device attribute `hipDeviceAttributeWallClockRate` (kHz), not nanoseconds.
    AMD's sleep instruction is `s_sleep` (`__builtin_amdgcn_s_sleep(n)`, a constant from 0 to 127,
    about 64 clock cycles per unit), so a sleep in nanoseconds has no exact translation.

    ## Example
    ```cuda
    __device__ void backoff(int* flag) {
        while (atomicAdd(flag, 0) == 0) __nanosleep(100);
    }
    ```

    ## Use instead
    ```cuda
    __device__ void backoff(int* flag) {
    #if defined(__HIP_PLATFORM_AMD__)
        while (atomicAdd(flag, 0) == 0) __builtin_amdgcn_s_sleep(2);
    #else
        while (atomicAdd(flag, 0) == 0) __nanosleep(100);
    #endif
    }
    ```

    ## Fix
    None: the sleep length is in different units on AMD and the builtin does not exist in CUDA.

    ## References
    - HIP kernel language, "Timer functions" (`clock64`, `wall_clock64`, `hipDeviceAttributeWallClockRate`): https://rocm.docs.amd.com/projects/HIP/en/latest/reference/kernel_language.html
    - ROCm/clr `hipamd/include/hip/amd_detail/amd_device_functions.h` (`wall_clock64`; no `__nanosleep`)
    - LLVM AMDGPU builtins, `__builtin_amdgcn_s_sleep`: https://llvm.org/docs/AMDGPUUsage.html
    - CUDA C++ Programming Guide, `__nanosleep`: https://docs.nvidia.com/cuda/cuda-c-programming-guide/
    """

    code = "NV002"
    nvidia_feature = True
    name = "nanosleep-globaltimer"
    summary = "`__nanosleep` / `%globaltimer` do not exist on AMD GPUs"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    checklist = "Replace `__nanosleep` with `__builtin_amdgcn_s_sleep` and `%globaltimer` with `wall_clock64()` (rate: hipDeviceAttributeWallClockRate) behind a platform check."
    NAMES = {"__nanosleep": "`__nanosleep` does not exist in HIP; on AMD sleep with `__builtin_amdgcn_s_sleep(n)` (about 64 cycles per unit)"}
    NAME_NODES = ("identifier",)
    ASM_CATEGORY = "timer"
    ASM_MESSAGE = "PTX `%globaltimer` / `nanosleep` does not assemble for AMD; use `wall_clock64()` (rate in kHz from hipDeviceAttributeWallClockRate)"
