import re

from hiplint import FileRule, Impact, Severity

from . import _cmake

AMD_PACKAGE = re.compile(r"(?i)^(hip|roc|rocm$|amd)")
CUDA_PACKAGES = {"CUDA": "the CUDA toolkit through the FindCUDA module (deprecated since CMake 3.10)",
                 "CUDAToolkit": "the CUDA toolkit"}
FINDCUDA_COMMANDS = ("cuda_add_executable", "cuda_add_library", "cuda_compile", "cuda_wrap_srcs",
                     "cuda_include_directories", "cuda_add_cublas_to_target", "cuda_add_cufft_to_target")


class CMakeFindCuda(FileRule):
    """CMake looks for the CUDA toolkit (or uses FindCUDA macros) with no ROCm path.

    ## What it does
    Finds `find_package(CUDA ...)`, `find_package(CUDAToolkit ...)` and the FindCUDA commands
    (`cuda_add_executable`, `cuda_add_library`, `cuda_compile`, ...). Not reported inside an `if()`
    chain whose condition names HIP or ROCm, in a branch whose own test keeps it to the CUDA build
    (`if(GPU_RUNTIME STREQUAL "CUDA")`; a backend switch `if(FFTLIB_ENABLE_CUDA)` in a file that also
    tests `FFTLIB_ENABLE_ROCM`; a dependency's CUDA backend, `if(Kokkos_ENABLE_CUDA)`, `if(RAJA_ENABLE_CUDA)`), or in a file that also calls `find_package(hip)`, nor a probe without
    `REQUIRED` in a file that also finds an AMD package (`find_package(ROCM REQUIRED)` in the branch for
    an AMD build) or anywhere in a project that builds for AMD: on a ROCm machine the probe fails
    quietly and the AMD path runs. Nor a FindCUDA macro
    the project defines itself in a CMake module that stops without HIP (`find_package(hip REQUIRED)` at
    its top level: QUICK's `FindHipCUDA.cmake` defines `cuda_add_library` for its AMD build).
    One finding per file for CUDA packages and one for FindCUDA macros; the other places are
    listed with them as related locations.
    `hiplint migrate` ports it (docs/migrate.md): `find_package(hip)` plus one `find_package` per
    hip* library linked in that directory and below; `cuda_add_executable`/`cuda_add_library` without
    `OPTIONS` become `add_executable`/`add_library`; the other FindCUDA macros are listed for hand work.

    ## Why it breaks on AMD
    On a ROCm machine there is no CUDA toolkit: `find_package(CUDA REQUIRED)` stops the configure
    step, and without `REQUIRED` the GPU part of the project is silently left out. The HIP runtime
    and libraries are found with their own packages: `find_package(hip)` (imported targets
    `hip::host`, `hip::device`), `find_package(hipblas)` (`roc::hipblas`), `find_package(hipfft)`
    (`hip::hipfft`) and so on. The FindCUDA macros need nvcc; their replacement is CMake's HIP language
    with plain `add_executable`/`add_library` (ROCm's legacy `FindHIP.cmake` has look-alikes such as
    `hip_add_library` and `HIP_INCLUDE_DIRECTORIES`; ROCm's CMake guide recommends the HIP language). Applies to every ROCm version.

    ## Example
    ```cmake
    find_package(CUDAToolkit REQUIRED)
    cuda_add_library(ops ops.cu)
    ```

    ## Use instead
    ```cmake
    if(USE_ROCM)
      find_package(hip REQUIRED)
      find_package(hipblas REQUIRED)
    else()
      find_package(CUDAToolkit REQUIRED)
    endif()
    add_library(ops ops.cu)
    ```

    ## References
    - ROCm, "Using CMake" (find_package(hip), imported targets hip::host and hip::device): https://rocm.docs.amd.com/en/latest/conceptual/cmake-packages.html
    - CMake FindCUDA (deprecated): https://cmake.org/cmake/help/latest/module/FindCUDA.html
    - CMake FindCUDAToolkit: https://cmake.org/cmake/help/latest/module/FindCUDAToolkit.html
    """

    code = "BLD003"
    name = "cmake-find-cuda"
    summary = "CMake requires the CUDA toolkit; on ROCm find the HIP packages instead (find_package(hip), hipblas, ...)"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    languages = frozenset({"cmake"})
    checklist = "Find the ROCm packages on AMD builds: find_package(hip) and one find_package per library (hipblas, hipfft, ...)."

    def check_file(self, ctx):
        commands = _cmake.get(ctx)
        if any(c.name == "find_package" and c.args and c.args[0].text.lower() == "hip" for c in commands):
            return
        # A file that also finds an AMD package (`find_package(ROCM REQUIRED)` under HOROVOD_GPU=ROCM) and
        # probes for CUDA without REQUIRED: the probe fails quietly on a ROCm machine and the AMD path runs.
        # So does any probe without REQUIRED in a project that builds for AMD (IREE's `find_package(CUDAToolkit
        # 12)` that only sets a default): its AMD path is chosen elsewhere.
        finds_amd = any(c.name == "find_package" and c.args and AMD_PACKAGE.match(c.args[0].text) for c in commands) \
            or ctx.build_facts.project_builds_for_amd
        for cmd in commands:
            if cmd.aware:
                continue
            if cmd.name == "find_package" and cmd.args and cmd.args[0].text in CUDA_PACKAGES:
                if finds_amd and "REQUIRED" not in cmd.arg_texts()[1:]:
                    continue
                arg = cmd.args[0]
                ctx.report_range(arg.start, arg.end,
                                 f"`find_package({arg.text})` looks for {CUDA_PACKAGES[arg.text]}, which a ROCm "
                                 "machine does not have: find `hip` (hip::host, hip::device) and the hip* library "
                                 "packages on AMD builds", group="package")
            elif cmd.name in FINDCUDA_COMMANDS and not (ctx.fs_path and cmd.name in _cmake.hip_module_commands(ctx.fs_path)):
                ctx.report_range(cmd.start, cmd.start + len(cmd.name),
                                 f"`{cmd.name}` is a FindCUDA macro, which needs nvcc: use CMake's HIP language "
                                 "(`enable_language(HIP)`) with add_executable/add_library (ROCm's legacy FindHIP "
                                 "`hip_*` macros are its only look-alikes)", group="findcuda")
