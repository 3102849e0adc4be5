"""What `hiplint migrate` writes for the CUDA pieces of a CMake file or Makefile (the knowledge).

The engine that applies these tables is `hiplint/buildport.py`; the nvcc options and their HIP
counterparts are in `_nvcc.py` (`NvccOption.port`). Target and package names are those the ROCm 7.2
packages export (`lib/cmake/<package>/<package>-targets.cmake`); the CMake names are CMake's own
HIP language variables and properties (CMake 3.21 and newer).
"""
from __future__ import annotations

# CMake's HIP language needs CMake 3.21; a lower `cmake_minimum_required` is raised to it.
HIP_LANGUAGE_MIN_CMAKE = (3, 21)

# CMake variables and target properties of the CUDA language -> the HIP language's, same meaning.
CMAKE_NAMES = {
    "CMAKE_CUDA_ARCHITECTURES": "CMAKE_HIP_ARCHITECTURES",
    "CUDA_ARCHITECTURES": "HIP_ARCHITECTURES",
    "CMAKE_CUDA_STANDARD": "CMAKE_HIP_STANDARD",
    "CMAKE_CUDA_STANDARD_REQUIRED": "CMAKE_HIP_STANDARD_REQUIRED",
    "CMAKE_CUDA_EXTENSIONS": "CMAKE_HIP_EXTENSIONS",
    "CUDA_STANDARD": "HIP_STANDARD",
    "CUDA_STANDARD_REQUIRED": "HIP_STANDARD_REQUIRED",
    "CUDA_EXTENSIONS": "HIP_EXTENSIONS",
    "CMAKE_CUDA_FLAGS": "CMAKE_HIP_FLAGS",
    "CMAKE_CUDA_FLAGS_DEBUG": "CMAKE_HIP_FLAGS_DEBUG",
    "CMAKE_CUDA_FLAGS_RELEASE": "CMAKE_HIP_FLAGS_RELEASE",
    "CMAKE_CUDA_FLAGS_RELWITHDEBINFO": "CMAKE_HIP_FLAGS_RELWITHDEBINFO",
    "CMAKE_CUDA_FLAGS_MINSIZEREL": "CMAKE_HIP_FLAGS_MINSIZEREL",
    "CMAKE_CUDA_FLAGS_INIT": "CMAKE_HIP_FLAGS_INIT",
    "CMAKE_CUDA_VISIBILITY_PRESET": "CMAKE_HIP_VISIBILITY_PRESET",
    "CUDA_VISIBILITY_PRESET": "HIP_VISIBILITY_PRESET",
    "CMAKE_CUDA_COMPILER_LAUNCHER": "CMAKE_HIP_COMPILER_LAUNCHER",
    "CUDA_COMPILER_LAUNCHER": "HIP_COMPILER_LAUNCHER",
    "CMAKE_CUDA_COMPILER_LOADED": "CMAKE_HIP_COMPILER_LOADED",
}
# Generator-expression and compile-feature spellings (substrings of one argument).
CMAKE_GENEX = {
    "$<COMPILE_LANGUAGE:CUDA>": "$<COMPILE_LANGUAGE:HIP>",
    "$<LINK_LANGUAGE:CUDA>": "$<LINK_LANGUAGE:HIP>",
}
# `cuda_std_17` -> `hip_std_17` (CMake's meta compile features).
CUDA_STD_FEATURE = r"\bcuda_std_(\d+)\b"
# Properties whose value names a language: `LANGUAGE CUDA` -> `LANGUAGE HIP`.
LANGUAGE_PROPERTIES = ("LANGUAGE", "LINKER_LANGUAGE")

# CUDA toolkit library (lower case, `_static` removed) -> (Makefile `-l` name, CMake package, CMake target).
# An empty Makefile name drops the library. Libraries not here are left for hand work (BLD004 lists them).
LIBRARIES = {
    "cudart": ("amdhip64", "hip", "hip::host"),
    "cuda": ("amdhip64", "hip", "hip::host"),
    "cuda_driver": ("amdhip64", "hip", "hip::host"),
    "cublas": ("hipblas", "hipblas", "roc::hipblas"),
    "cublaslt": ("hipblaslt", "hipblaslt", "roc::hipblaslt"),
    "curand": ("hiprand", "hiprand", "hip::hiprand"),
    "cusolver": ("hipsolver", "hipsolver", "roc::hipsolver"),
    "cusparse": ("hipsparse", "hipsparse", "roc::hipsparse"),
    "cufft": ("hipfft", "hipfft", "hip::hipfft"),
    "nvrtc": ("hiprtc", "hiprtc", "hiprtc::hiprtc"),
    "culibos": ("", "", ""),  # an NVIDIA static-link helper: nothing to link on ROCm
}

# Include directories of the CUDA toolkit: empty on ROCm, where the HIP language adds ROCm's own. The
# argument is dropped from include-directory commands.
CMAKE_DROPPED_INCLUDES = ("${CUDAToolkit_INCLUDE_DIRS}", "${CUDA_INCLUDE_DIRS}", "${CUDAToolkit_INCLUDE_DIR}")
INCLUDE_COMMANDS = ("include_directories", "target_include_directories", "cuda_include_directories")

# FindCUDA commands with a plain CMake counterpart once the HIP language compiles the sources
# (only when the call has no OPTIONS: nvcc options given per call have no place there).
FINDCUDA_COMMANDS = {
    "cuda_add_executable": "add_executable",
    "cuda_add_library": "add_library",
    "cuda_include_directories": "include_directories",
}

# Left for hand work in CMake: name -> what to do (listed in the migration checklist).
CMAKE_MANUAL = {
    "CUDA_SEPARABLE_COMPILATION": "HIP has no separable-compilation property: compile with `-fgpu-rdc` "
                                  "(target_compile_options) and link with `--hip-link -fgpu-rdc` "
                                  "(target_link_options), or drop it if no kernel calls a `__device__` "
                                  "function of another file",
    "CMAKE_CUDA_SEPARABLE_COMPILATION": "HIP has no separable-compilation setting: use `-fgpu-rdc` to compile "
                                        "and `--hip-link -fgpu-rdc` to link, or drop it",
    "CUDA_RESOLVE_DEVICE_SYMBOLS": "drop it (no device link step without `-fgpu-rdc`), or link with "
                                   "`--hip-link -fgpu-rdc`",
    "CUDA_RUNTIME_LIBRARY": "drop it: the HIP language links the HIP runtime (amdhip64) itself",
    "CMAKE_CUDA_RUNTIME_LIBRARY": "drop it: the HIP language links the HIP runtime (amdhip64) itself",
    "CUDA_PTX_COMPILATION": "there is no PTX on AMD: build a code object (`--cuda-device-only`) or drop it",
    "CMAKE_CUDA_COMPILER": "the HIP language finds ROCm's clang itself (set `CMAKE_HIP_COMPILER` to choose one)",
    "CMAKE_CUDA_HOST_COMPILER": "drop it: clang compiles host and device code",
    "CMAKE_CUDA_COMPILER_ID": "the HIP compiler's id is `Clang`: test `CMAKE_HIP_COMPILER_ID` if needed",
    "CMAKE_CUDA_COMPILER_VERSION": "test `CMAKE_HIP_COMPILER_VERSION` (clang's version) or `hip_VERSION`",
    "CUDA_NVCC_FLAGS": "FindCUDA's nvcc options: move them to `target_compile_options` or `CMAKE_HIP_FLAGS` "
                       "(a string, not a list)",
    "CUDA_INCLUDE_DIRS": "FindCUDA's include directories: the HIP language adds ROCm's itself; drop it",
    "CUDA_TOOLKIT_ROOT_DIR": "use `ROCM_PATH` (or `hip_DIR`) for ROCm's location",
    "CUDA_FOUND": "test `hip_FOUND` (from `find_package(hip)`)",
    "CUDA_VERSION": "test `hip_VERSION` (from `find_package(hip)`)",
    "COMPILE_LANG_AND_ID:CUDA": "a CUDA compiler test: `$<COMPILE_LANG_AND_ID:HIP,Clang>` for the HIP compiler",
}
# Any other CMake variable of these shapes is CUDA's too and is listed with a general note.
CMAKE_CUDA_NAME = r"\bCMAKE_CUDA_\w+|\bCUDAToolkit_\w+"

# find_package() of CUDA libraries outside the toolkit -> the ROCm package to find instead.
CUDA_PACKAGES = {
    "cudnn": "MIOpen: `find_package(miopen)`, a different API",
    "nccl": "RCCL: `find_package(rccl)`",
    "nvtx": "rocTX (`roctx64`)",
    "nvtx3": "rocTX (`roctx64`)",
    "cub": "hipCUB: `find_package(hipcub)`",
    "thrust": "rocThrust: `find_package(rocthrust)`",
    "cutlass": "no HIP port; see composable_kernel",
    "tensorrt": "MIGraphX: `find_package(migraphx)`, a different API",
    "cutensor": "hipTensor: `find_package(hiptensor)`",
    "nvshmem": "rocSHMEM: `find_package(rocshmem)`, a different API",
}

# A project's own find module for an NVIDIA component (listed: ROCm has no such package).
CUDA_FIND_MODULE = r"(?i)^Find(CUDA\w*|CUDNN|NCCL|NVTX\w*|NVSCI|NVVM|NVML|NVRTC|TensorRT|CUTLASS|cuTENSOR|NVSHMEM|NVJPEG|NPP|Thrust|CUB)\.cmake$"

# Makefile variables that hold the CUDA toolkit's location -> ROCm's.
MAKE_PATH_VARIABLES = ("CUDA_PATH", "CUDA_HOME", "CUDA_ROOT", "CUDA_DIR", "CUDA_INSTALL_PATH",
                       "CUDA_TOOLKIT_ROOT_DIR", "CUDA_TOOLKIT_PATH", "CUDADIR", "CUDA_INSTALL_DIR")
ROCM_PATH_VARIABLE = "ROCM_PATH"
ROCM_DEFAULT_PATH = "/opt/rocm"
# Literal CUDA install paths (`/usr/local/cuda`, `/usr/local/cuda-12.4`).
CUDA_INSTALL_PATH = r"/usr/local/cuda(?:-[0-9][0-9.]*)?(?![\w.-])"
# Directories under the toolkit -> under ROCm. Others are kept and listed.
TOOLKIT_SUBDIRS = {"/include": "/include", "/lib64": "/lib", "/lib": "/lib", "/bin/nvcc": "/bin/hipcc", "/bin": "/bin"}
HIP_COMPILER = "hipcc"

# Build files hiplint does not port (setup.py, Meson, Bazel, autotools): the first of these patterns the
# file matches gives the checklist item, at its first line.
UNPORTED_ADVICE = (
    (r"\bCUDAExtension\b", "PyTorch `CUDAExtension`: a ROCm build of PyTorch compiles it with hipcc as it is "
                           "(it hipifies the sources); keep nvcc-only options out of `extra_compile_args['nvcc']` "
                           "(PY003 lists them)"),
    (r"(?<![\w])nvcc(?![\w])", "runs nvcc: compile the GPU sources with hipcc (or `clang++ -x hip`), one "
                              "`--offload-arch` per AMD target, and clang's options instead of nvcc's"),
    (r"(?i)(?<![\w])cuda", "names CUDA: point it at HIP by hand (hipcc, `--offload-arch`, the hip* libraries)"),
)
