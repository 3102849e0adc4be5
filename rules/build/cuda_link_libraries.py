import re

from hiplint import FileRule, Impact, Severity

from . import _cmake, _make
from hiplint.lazy import lazy_re

# CUDA library -> (HIP/ROCm library to link, CMake package and target where ROCm documents one).
# curand and cusolver are left to the RND and SLV families.
LIBRARY_MAP = {
    "cudart": ("amdhip64", "find_package(hip): hip::host / hip::device"),
    "cuda": ("amdhip64 (the driver API is part of the HIP runtime)", "find_package(hip): hip::host"),
    "cuda_driver": ("amdhip64 (the driver API is part of the HIP runtime)", "find_package(hip): hip::host"),
    "cublas": ("hipblas", "find_package(hipblas): roc::hipblas"),
    "cublaslt": ("hipblaslt", "find_package(hipblaslt)"),
    "cufft": ("hipfft", "find_package(hipfft): hip::hipfft"),
    "cusparse": ("hipsparse", "find_package(hipsparse): roc::hipsparse"),
    "nvrtc": ("hiprtc (a separate library from ROCm 7.0; part of amdhip64 before)", "find_package(hiprtc)"),
    "nvtoolsext": ("roctx64 (rocTracer)", "roctx64"),
    "nvtx3": ("roctx64 (rocTracer)", "roctx64"),
    "cudnn": ("MIOpen", "find_package(miopen)"),
    "nccl": ("rccl", "find_package(rccl)"),
    "cudadevrt": ("nothing: HIP has no device-side kernel launch (dynamic parallelism)", ""),
    "culibos": ("nothing (an NVIDIA static-link helper)", ""),
    "cupti": ("rocprofiler-sdk / roctracer (a different API)", ""),
    "nvidia-ml": ("amd_smi (the AMD SMI library; a different API)", ""),
    "nvshmem": ("rocshmem (rocSHMEM, a different API: LIB012) plus a ROCm-aware MPI", "find_package(rocshmem)"),
    "nvshmem_host": ("rocshmem (rocSHMEM, a different API: LIB012) plus a ROCm-aware MPI", "find_package(rocshmem)"),
    "nvshmem_device": ("rocshmem (rocSHMEM links one library, with -fgpu-rdc)", "find_package(rocshmem)"),
}
OWNED_ELSEWHERE = lazy_re(r"^(curand|cusolver)", re.I)
# Anything else that is plainly a CUDA toolkit library.
OTHER_CUDA_LIB = lazy_re(r"^(cufftw|cusparselt|cutensor|cufile|npp[a-z]*|nvjpeg|nvjitlink|cudla)$", re.I)

DASH_L = lazy_re(r"^-l(?P<lib>[A-Za-z0-9_-]+)$")
LIB_FILE = lazy_re(r"(?:^|/)lib(?P<lib>[A-Za-z0-9_]+?)(?:_static)?\.(?:so(?:\.[0-9.]+)?|a)$")
CMAKE_TARGET = lazy_re(r"^CUDA::(?P<lib>[A-Za-z0-9_]+)$")
FINDCUDA_VAR = lazy_re(r"^\$\{CUDA_(?P<lib>[A-Za-z0-9]+)_LIBRAR(?:Y|IES)\}$|^\$\{CUDA_LIBRARIES\}$")
LINK_COMMANDS = ("target_link_libraries", "link_libraries")


def _base(lib: str) -> str:
    low = lib.lower()
    return low[:-len("_static")] if low.endswith("_static") else low


def _is_cuda_library(lib: str) -> bool:
    base = _base(lib)
    return base in LIBRARY_MAP or bool(OTHER_CUDA_LIB.match(base))


def _message(shown: str, lib: str) -> str:
    base = _base(lib)
    if base in LIBRARY_MAP:
        hip, cmake = LIBRARY_MAP[base]
        where = f" ({cmake})" if cmake else ""
        return f"`{shown}` links the CUDA library {lib}; on ROCm link {hip}{where}"
    return f"`{shown}` links the CUDA library {lib}, which ROCm does not have: find its HIP/ROCm counterpart (HIPIFY's tables list them)"


# Generator expressions that name a target only where it exists: empty on a machine without CUDA.
_IF_TARGET_EXISTS = re.compile(r"\bTARGET_NAME_IF_EXISTS\b|\bTARGET_EXISTS\b")


class CudaLinkLibraries(FileRule):
    """Links against CUDA toolkit libraries.

    ## What it does
    Finds CUDA libraries on link lines: `-lcudart`, `-lcublas`, `-lcufft`, `-lnvrtc`, NVSHMEM's
    `-lnvshmem_host`, ... in
    Makefiles and CMake, `CUDA::cudart`-style imported targets, FindCUDA variables
    (`${CUDA_LIBRARIES}`, `${CUDA_CUBLAS_LIBRARIES}`), bare names in `target_link_libraries`, and
    `libcudart.so` / `libcublas_static.a` paths. cuRAND and cuSOLVER are reported by the RND and SLV
    rules. Lines inside a Makefile conditional or CMake `if()` chain that names HIP or ROCm, or in a
    branch kept to the CUDA build (see BLD003), are not reported, nor `if()` conditions themselves
    (`if(TARGET CUDA::cufft)` tests for the library; it links nothing). Neither is a target named in
    `$<TARGET_NAME_IF_EXISTS:CUDA::cuda_driver>` or `$<$<TARGET_EXISTS:CUDA::cudart>:...>`: without the CUDA
    toolkit those expand to nothing, and the ROCm build links what it names beside them.
    Nor `unset(...)`, which links nothing, nor a list named for what is left out
    (`set(auditwheel_exclude_list "libcublas.so.12" ...)`), nor a CMake module that stops without HIP (`find_package(hip
    REQUIRED)` at its top level: QUICK's `FindHipCUDA.cmake` sets `CUDA_cublas_LIBRARY` to `roc::rocblas`):
    only an AMD build runs it, and its CUDA names are that build's own mapping.
    One finding per CUDA library and file; the library's other link places are listed with it as
    related locations.
    `hiplint migrate` ports the libraries `rules/build/_port.py` maps (`CUDA::cublas` ->
    `roc::hipblas`, `-lcublas` -> `-lhipblas`, cuRAND, cuSOLVER, cuSPARSE, cuFFT, NVRTC, the runtime);
    the others stay, and this rule lists them in the migration checklist.

    ## Why it breaks on AMD
    These libraries do not exist on a ROCm system; the link fails. Each has a HIP or ROCm
    counterpart with its own name: the runtime is `amdhip64` (CMake `hip::host`/`hip::device`),
    cuBLAS is hipBLAS (`roc::hipblas`), cuFFT is hipFFT (`hip::hipfft`), cuSPARSE is hipSPARSE
    (`roc::hipsparse`), NVRTC is hipRTC (its own library from ROCm 7.0), NVTX is rocTX, cuDNN is
    MIOpen, NCCL is RCCL. There is no `cudadevrt`: HIP has no device-side kernel launch.

    ## Example
    ```cmake
    add_executable(solver main.cu)
    target_link_libraries(solver PRIVATE CUDA::cudart CUDA::cublas)
    ```

    ## Use instead
    ```cmake
    add_executable(solver main.cu)
    if(USE_HIP)
      target_link_libraries(solver PRIVATE hip::host roc::hipblas)
    else()
      target_link_libraries(solver PRIVATE CUDA::cudart CUDA::cublas)
    endif()
    ```

    ## References
    - ROCm, "Using CMake" (package and target names): https://rocm.docs.amd.com/en/latest/conceptual/cmake-packages.html
    - HIPIFY supported APIs (CUDA library to HIP library tables): https://rocm.docs.amd.com/projects/HIPIFY/en/latest/reference/supported_apis.html
    - HIP 7.0 changelog (hipRTC split out of amdhip64): https://rocm.docs.amd.com/projects/HIP/en/latest/reference/changelog.html
    """

    code = "BLD004"
    name = "cuda-link-libraries"
    summary = "links a CUDA library that ROCm does not have; link its HIP/ROCm counterpart"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    languages = frozenset({"cmake", "make"})
    checklist = "Replace CUDA libraries on link lines with their ROCm counterparts (amdhip64, hipblas, hipfft, hipsparse, hiprtc, MIOpen, rccl)."

    def check_file(self, ctx):
        if ctx.language == "cmake":
            for cmd in _cmake.get(ctx):
                if cmd.aware or cmd.name in ("if", "elseif") or cmd.exclusion_list:
                    continue  # a condition (`if(TARGET CUDA::cufft)`) tests for the library, an exclude list
                    # (`set(auditwheel_exclude_list "libcublas.so.12")`) leaves it out: neither links it
                for tok in cmd.tokens():
                    if _cmake.genex_for_nvidia(tok.genex, ctx.source.data):
                        continue  # `$<$<BOOL:${X_WITH_CUDA}>:CUDA::cublas>` beside the X_WITH_HIP one
                    if _IF_TARGET_EXISTS.search(tok.genex):
                        continue  # `$<TARGET_NAME_IF_EXISTS:CUDA::cuda_driver>`: nothing where CUDA is absent
                    self._check_token(ctx, tok.text, tok.start, tok.end, bare=cmd.name in LINK_COMMANDS)
        else:
            for line in _make.get(ctx):
                if line.aware:
                    continue
                for text, start, end in line.command_tokens():
                    self._check_token(ctx, text, start, end, bare=False)

    def _check_token(self, ctx, text, start, end, bare):
        lib = None
        for pattern in (DASH_L, LIB_FILE, CMAKE_TARGET, FINDCUDA_VAR):
            m = pattern.search(text)
            if m:
                lib = m.groupdict().get("lib") or "cudart"
                break
        if lib is None and bare and _base(text) in LIBRARY_MAP:
            lib = text
        if lib is None or OWNED_ELSEWHERE.match(lib):
            return
        # -l and lib*.so tokens must name a CUDA library; CUDA:: targets always are.
        if not text.startswith("CUDA::") and not _is_cuda_library(lib):
            return
        ctx.report_range(start, end, _message(text, lib), group=_base(lib))  # one per library of the file
