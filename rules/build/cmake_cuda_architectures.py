import re

from hiplint import FileRule, Impact, Severity

from . import _cmake
from ._options import compiles_no_cuda

ARCH_VARIABLES = ("CMAKE_CUDA_ARCHITECTURES", "CUDA_ARCHITECTURES")
SETTERS = ("set", "list", "string", "set_property", "set_target_properties", "option")


# `COMMAND hipcc ...`, `COMMAND ${HIPCC}`, `COMMAND ${ROCM_PATH}/bin/hipcc`: a compile of HIP outside CMake's HIP language.
_RUNS_HIPCC = re.compile(r"(?:.*/)?hipcc|\$\{\w*HIPCC\w*\}(?:/.*)?")


class CMakeCudaArchitectures(FileRule):
    """CUDA architectures set in CMake with no HIP architectures beside them.

    ## What it does
    Finds where a CMake file sets `CMAKE_CUDA_ARCHITECTURES` or the `CUDA_ARCHITECTURES` target
    property (`set(...)`, `list(APPEND ...)`, `set_target_properties(... CUDA_ARCHITECTURES ...)`,
    `set_property(... PROPERTY CUDA_ARCHITECTURES ...)`). Not reported when the file also names
    `CMAKE_HIP_ARCHITECTURES`, `HIP_ARCHITECTURES`, `GPU_TARGETS` or `AMDGPU_TARGETS`, a project
    variable for them (`X_HIP_ARCHITECTURES`, `X_AMDGPU_TARGETS`) or clang's `--offload-arch` (the
    file sets AMD targets its own way), or inside an
    `if()` chain whose condition names HIP or ROCm, or in a file that compiles HIP with its own `hipcc`
    command (`add_custom_command(... COMMAND hipcc ...)`: CMake's HIP architectures never reach it;
    hipcc's `--offload-arch` does), or when the value is `OFF` (CMake then adds no
    architecture flags: a PTX-only or driver-selected target), nor in a file none of whose targets
    compiles a `.cu` source (host code calling cuBLAS, NVRTC samples whose kernels compile at run time).
    One finding per file for each variable to set; the other places are listed with it as
    related locations.
    `hiplint migrate` ports it (docs/migrate.md): the names become `CMAKE_HIP_ARCHITECTURES` /
    `HIP_ARCHITECTURES` and literal NVIDIA values become the configured targets (`--target`); a value from
    a variable is listed for hand work.

    ## Why it breaks on AMD
    The values are NVIDIA compute capabilities (`70;80;90`). The HIP language takes AMD target IDs
    from `CMAKE_HIP_ARCHITECTURES` / the `HIP_ARCHITECTURES` property (`gfx90a;gfx942`); without them
    CMake asks `rocm_agent_enumerator` for the GPUs of the build machine, so a build host without a GPU
    (or a different one) produces code objects for the wrong targets and kernels fail to launch with
    "no kernel image" style errors at run time. Applies to every ROCm version.

    ## Example
    ```cmake
    set(CMAKE_CUDA_ARCHITECTURES 80 90)
    add_library(kernels STATIC reduce.cu)
    set_target_properties(kernels PROPERTIES CUDA_ARCHITECTURES "80;90")
    ```

    ## Use instead
    ```cmake
    set(CMAKE_CUDA_ARCHITECTURES 80 90)
    set(CMAKE_HIP_ARCHITECTURES gfx90a gfx942)
    add_library(kernels STATIC reduce.cu)
    ```

    ## References
    - CMake `CMAKE_HIP_ARCHITECTURES` (default from `rocm_agent_enumerator`): https://cmake.org/cmake/help/latest/variable/CMAKE_HIP_ARCHITECTURES.html
    - CMake `HIP_ARCHITECTURES` target property: https://cmake.org/cmake/help/latest/prop_tgt/HIP_ARCHITECTURES.html
    - AMD GPU architecture names (gfx targets): https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html
    """

    code = "BLD002"
    name = "cmake-cuda-architectures"
    summary = "CUDA architectures are set but no HIP architectures: set CMAKE_HIP_ARCHITECTURES (gfx targets) as well"
    severity = Severity.WARNING
    impact = Impact.RUNTIME
    languages = frozenset({"cmake"})
    checklist = "Set CMAKE_HIP_ARCHITECTURES (or the HIP_ARCHITECTURES property) to the AMD targets you ship, e.g. gfx90a;gfx942."

    def check_file(self, ctx):
        commands = _cmake.get(ctx)
        if _cmake.sets_hip_architectures(commands):
            return
        if compiles_no_cuda(commands):
            return  # no target here compiles a .cu (cuBLAS from host code, NVRTC kernels): no device code to target
        if any(cmd.name in ("add_custom_command", "add_custom_target", "execute_process")
               and any(_RUNS_HIPCC.fullmatch(t.text) for t in cmd.tokens()) for cmd in commands):
            return  # the file compiles HIP with its own hipcc command: CMake's HIP architectures never reach it
        for cmd in commands:
            if cmd.aware or cmd.name not in SETTERS:
                continue
            tokens = cmd.tokens()
            for i, tok in enumerate(tokens):
                if tok.text in ARCH_VARIABLES:
                    value = tokens[i + 1].text.upper() if i + 1 < len(tokens) else ""
                    if value in ("OFF", "FALSE", "NO", "0"):
                        continue  # CMake adds no architecture flags at all: nothing NVIDIA-specific is named
                    hip = "CMAKE_HIP_ARCHITECTURES" if tok.text.startswith("CMAKE_") else "HIP_ARCHITECTURES"
                    ctx.report_range(tok.start, tok.end,
                                     f"`{tok.text}` names NVIDIA architectures only; set `{hip}` to AMD targets "
                                     "(e.g. gfx90a;gfx942) for the HIP build", group=hip)
