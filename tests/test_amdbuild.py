"""The project's own AMD build (hiplint.amdbuild): sources it compiles as HIP, its definitions, and the
build files only the NVIDIA build reads."""
import json
import os
import shutil
from pathlib import Path

from conftest import run_cli

from hiplint import amdbuild

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "dualtarget"
KERNEL = "__global__ void k(float* x) { x[threadIdx.x] = __shfl_xor_sync(0xffffffff, x[threadIdx.x], 1); }\n"


def scan(where: Path, *args) -> list:
    proc = run_cli("scan", *args, "--no-cache", "--output-format", "json", cwd=where)
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return sorted((f["path"], f["line"], f["code"]) for f in json.loads(proc.stdout))


def test_the_dual_target_project_as_a_user_scans_it():
    # The NVIDIA-only CMakeLists.txt, the names compat_hip.h maps, the per-vendor launch bounds and the
    # branch written for AMD are quiet; the new kernel's wave64 bugs, the header's own mask and launch
    # bounds that ask for more waves than NVIDIA's occupancy (spills) are not.
    assert scan(ROOT, "fixtures/dualtarget") == [
        ("fixtures/dualtarget/backend-cuda/compat_hip.h", 13, "WRP004"),
        ("fixtures/dualtarget/backend-cuda/reduce.cu", 33, "ARC004"),
        ("fixtures/dualtarget/backend-cuda/topk_new.cu", 5, "WRP001"),
        ("fixtures/dualtarget/backend-cuda/topk_new.cu", 6, "WRP005"),
        ("fixtures/dualtarget/backend-cuda/topk_new.cu", 6, "WRP006"),
    ]


def test_show_build_says_what_was_learned(tmp_path):
    shutil.copytree(FIXTURE, tmp_path / "proj")
    (tmp_path / "proj" / ".git").mkdir()
    proc = run_cli("scan", "--show-build", cwd=tmp_path / "proj")
    assert proc.returncode == 0, proc.stderr.decode()
    text = proc.stdout.decode()
    assert text.splitlines()[0] == f"# AMD build read from {tmp_path / 'proj'}"
    body = "\n".join(line for line in text.splitlines()[1:])
    assert body == """# hip-clang compiles the CUDA sources as they are: `#ifdef __CUDACC__` branches are NVIDIA code
amd-build-files = [
  'backend-hip/CMakeLists.txt',
]
compiled-as-hip = [
  'backend-cuda/gemm.cu',
  'backend-cuda/reduce.cu',
  'backend-cuda/topk_new.cu',
]
headers-beside-them = [
  'backend-cuda/*.h, *.cuh, ...',
]
amd-definitions = [
  'PROJ_GPU_TUNED',
  'PROJ_USE_HIP',
]
nvidia-only-definitions = [
  'PROJ_USE_CUDA',
]
backend-values = []
nvidia-only-build-files = [
  'backend-cuda/CMakeLists.txt',
]
nvidia-only-sources = []
nvidia-only-directories = [
  'backend-cuda',
]
nvidia-only-blocks = [
  'CMakeLists.txt:9',
]
unbuilt-directories = []
nvidia-only-switches = [
  'PROJ_CUDA',
  'PROJ_USE_CUDA',
]"""


def test_without_a_build_nothing_is_learned(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "k.cu").write_text(KERNEL)
    build = amdbuild.read(str(tmp_path))
    assert not build.known and amdbuild.facts_for(str(tmp_path / "k.cu")) == amdbuild.NOTHING
    proc = run_cli("scan", "--show-build", cwd=tmp_path)
    assert "no AMD build found" in proc.stdout.decode()
    # A CUDA-only CMake project: its build file is reported as before.
    (tmp_path / "CMakeLists.txt").write_text("project(p LANGUAGES CXX CUDA)\nadd_library(p k.cu)\n")
    assert ("CMakeLists.txt", 1, "BLD001") in scan(tmp_path, "--isolated")
    assert ("k.cu", 1, "WRP006") in scan(tmp_path, "--isolated")


def _twin_tree(root: Path) -> None:
    (root / ".git").mkdir()
    (root / "cuda").mkdir()
    (root / "hip").mkdir()
    (root / "cuda" / "k.cu").write_text(KERNEL)
    (root / "hip" / "k.hip").write_text('#include "../cuda/k.cu"\n')


def test_a_source_the_amd_build_compiles_is_reported_in_a_cuda_backend_with_a_twin(tmp_path):
    _twin_tree(tmp_path)
    assert scan(tmp_path, "--isolated", "--select", "WRP") == []  # the twin: NVIDIA code
    (tmp_path / "hip" / "CMakeLists.txt").write_text(
        'enable_language(HIP)\nfile(GLOB SRC "${CMAKE_CURRENT_SOURCE_DIR}/../cuda/*.cu")\n'
        "set_source_files_properties(${SRC} PROPERTIES LANGUAGE HIP)\nadd_library(k_hip ${SRC})\n")
    # The AMD build compiles cuda/k.cu itself: its bugs are real (and the cache knows the build changed).
    assert scan(tmp_path, "--isolated", "--select", "WRP") == [("cuda/k.cu", 1, "WRP006")]
    proc = run_cli("scan", "--isolated", "--select", "WRP", "--output-format", "json", cwd=tmp_path)
    assert [f["path"] for f in json.loads(proc.stdout)] == ["cuda/k.cu"]
    (tmp_path / "hip" / "CMakeLists.txt").unlink()
    proc = run_cli("scan", "--isolated", "--select", "WRP", "--output-format", "json", cwd=tmp_path)
    assert json.loads(proc.stdout) == []


def test_definitions_of_each_build_settle_the_branches(tmp_path):
    # No HIP word in either switch: only the build files say which build sets which.
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_text(
        "#ifdef VENDOR_A\n"
        "__global__ void __launch_bounds__(256, 4) k(float* x) { x[threadIdx.x] = 0.f; }\n"
        "#else\n"
        "__global__ void __launch_bounds__(256, 2) k(float* x) { x[threadIdx.x] = 0.f; }\n"
        "#endif\n"
        "#ifdef VENDOR_B\n"
        "__global__ void __launch_bounds__(128, 2) g(float* x) { x[threadIdx.x] = 0.f; }\n"
        "#endif\n")
    assert scan(tmp_path, "--isolated", "--select", "ARC004") == [("src/k.cu", 2, "ARC004"), ("src/k.cu", 4, "ARC004"),
                                                                 ("src/k.cu", 7, "ARC004")]
    (tmp_path / "CMakeLists.txt").write_text(
        "project(p LANGUAGES CXX)\noption(P_USE_HIP OFF)\n"
        "if(P_USE_HIP)\n  enable_language(HIP)\n  set_source_files_properties(src/k.cu PROPERTIES LANGUAGE HIP)\n"
        "  add_library(p src/k.cu)\n  target_compile_definitions(p PRIVATE VENDOR_B)\n"
        "else()\n  enable_language(CUDA)\n  add_library(p src/k.cu)\n  target_compile_definitions(p PRIVATE VENDOR_A)\n"
        "endif()\n")
    facts = amdbuild.read(str(tmp_path)).facts_for(str(tmp_path / "src" / "k.cu"))
    assert facts.amd_compiled and facts.amd_defines == {"VENDOR_B"} and facts.nvidia_defines == {"VENDOR_A"}
    # VENDOR_A's branch is NVIDIA's, its #else and VENDOR_B's are AMD's, chosen for AMD's meaning.
    assert scan(tmp_path, "--isolated", "--select", "ARC004") == []


def test_cuda_blocks_of_a_project_with_a_hip_path_are_the_nvidia_build(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(
        "project(p LANGUAGES CXX)\noption(P_USE_CUDA OFF)\noption(P_USE_HIP OFF)\nadd_subdirectory(lib)\n")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "k.cu").write_text(KERNEL)
    (tmp_path / "lib" / "CMakeLists.txt").write_text(
        "add_library(lib k.cu)\n"
        "if(P_USE_CUDA)\n  target_link_libraries(lib PRIVATE CUDA::cublas)\nendif()\n"
        "if(P_USE_HIP)\n  enable_language(HIP)\n  set_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\nendif()\n"
        "target_link_libraries(lib PRIVATE CUDA::cufft)\n")
    # The twin switch is named in the file above, not here: the P_USE_CUDA block is still NVIDIA's.
    # The link outside both blocks is read by the AMD build too.
    found = [f for f in scan(tmp_path, "--isolated", "--select", "BLD") if f[0] == "lib/CMakeLists.txt"]
    assert found == [("lib/CMakeLists.txt", 9, "BLD004")]


def test_a_block_without_the_cuda_build_is_not_the_amd_build(tmp_path):
    # `if(NOT P_USE_CUDA)` and the else() of `if(P_USE_CUDA)` are taken by a CPU-only build too (Ginkgo's
    # device hooks): not sources of the AMD build. `if(NOT P_USE_HIP)` is never read by the AMD build.
    for name in ("cuda_stub.cpp", "cpu.cpp", "k.cu"):
        (tmp_path / name).write_text("int f();\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "option(P_USE_CUDA OFF)\noption(P_USE_HIP OFF)\n"
        "if(NOT P_USE_CUDA)\n  add_library(stub cuda_stub.cpp)\nendif()\n"
        "if(P_USE_CUDA)\n  add_library(gpu k.cu)\nelse()\n  add_library(cpu cpu.cpp)\nendif()\n"
        "if(P_USE_HIP)\n  enable_language(HIP)\n  set_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\n"
        "  add_library(gpu_hip k.cu)\nendif()\n"
        "if(NOT P_USE_HIP)\n  target_link_libraries(gpu PRIVATE CUDA::cudart)\nendif()\n")
    build = amdbuild.read(str(tmp_path))
    assert build.amd_sources == {str(tmp_path / "k.cu")}
    cmake = str(tmp_path / "CMakeLists.txt")
    assert [amdbuild._lines(cmake, s, e) for s, e in build.nvidia_ranges[cmake]] == ["7", "17"]


def test_toolchain_set_up_is_no_choice_between_the_builds(tmp_path):
    # hypre's HYPRE_SetupHIPToolkit.cmake: `NOT DEFINED CMAKE_HIP_*` and the else() of a search for ROCm
    # are the AMD build's own set-up, not blocks for the NVIDIA build.
    (tmp_path / "CMakeLists.txt").write_text(
        "project(p LANGUAGES CXX)\noption(P_USE_HIP OFF)\nif(P_USE_HIP)\n  enable_language(HIP)\n"
        "  set_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\n  add_library(p k.cu)\nendif()\n"
        "if(NOT DEFINED CMAKE_HIP_STANDARD)\n  set(CMAKE_HIP_STANDARD 17)\nendif()\n"
        "if(DEFINED ENV{ROCM_PATH})\n  set(HIP_PATH $ENV{ROCM_PATH})\nelse()\n  set(HIP_PATH /opt/rocm)\nendif()\n"
        "if(NOT P_USE_HIP)\n  set(X 1)\nendif()\n")
    (tmp_path / "k.cu").write_text("int f();\n")
    build = amdbuild.read(str(tmp_path))
    cmake = str(tmp_path / "CMakeLists.txt")
    assert [amdbuild._lines(cmake, s, e) for s, e in build.nvidia_ranges[cmake]] == ["17"]


def test_a_function_called_only_for_the_nvidia_build_is_nvidia_code(tmp_path):
    # Ginkgo's benchmark/CMakeLists.txt: `function(ginkgo_benchmark_cusparse_linops ...)` links
    # CUDA::cusparse and is called only in `if(GINKGO_BUILD_CUDA)`.
    (tmp_path / ".git").mkdir()
    (tmp_path / "k.cu").write_text("int f();\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "option(P_BUILD_CUDA OFF)\noption(P_BUILD_HIP OFF)\n"
        "function(cuda_linops name)\n  add_library(${name} k.cu)\n"
        "  target_link_libraries(${name} PRIVATE CUDA::cusparse)\n  inner_cuda(${name})\nendfunction()\n"
        "function(inner_cuda name)\n  target_link_libraries(${name} PRIVATE CUDA::cublas)\nendfunction()\n"
        "function(shared_helper name)\n  target_link_libraries(${name} PRIVATE CUDA::cufft)\nendfunction()\n"
        "if(P_BUILD_CUDA)\n  cuda_linops(d)\n  shared_helper(d)\nendif()\n"
        "if(P_BUILD_HIP)\n  enable_language(HIP)\n  set_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\n"
        "  add_library(h k.cu)\n  shared_helper(h)\nendif()\n")
    found = scan(tmp_path, "--isolated", "--select", "BLD")
    assert found == [("CMakeLists.txt", 12, "BLD004")]  # the helper both builds call


def test_a_compat_header_included_with_angle_brackets_from_the_projects_include_dir(tmp_path):
    # LightGBM: `#include <LightGBM/cuda/cuda_rocm_interop.h>` maps __shfl_down_sync for ROCm; the
    # include directory comes from the build (include_directories), which hiplint reads.
    (tmp_path / ".git").mkdir()
    (tmp_path / "include" / "proj").mkdir(parents=True)
    (tmp_path / "include" / "proj" / "interop.h").write_text(
        "#pragma once\n#if defined(USE_ROCM)\n#define __shfl_down_sync(mask, val, offset) __shfl_down(val, offset)\n#endif\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_text(
        "#include <proj/interop.h>\n__global__ void k(float* x) {\n  const unsigned mask = 0xffffffff;\n"
        "  x[threadIdx.x] = __shfl_down_sync(mask, x[threadIdx.x], 1);\n}\n")
    assert [c for _, _, c in scan(tmp_path, "--isolated", "--select", "WRP006")] == ["WRP006"]
    (tmp_path / "CMakeLists.txt").write_text(
        "project(p LANGUAGES CXX)\ninclude_directories(${PROJECT_SOURCE_DIR}/include)\nif(USE_ROCM)\n"
        "  enable_language(HIP)\n  set_source_files_properties(src/k.cu PROPERTIES LANGUAGE HIP)\n"
        "  add_library(p src/k.cu)\nendif()\n")
    assert scan(tmp_path, "--isolated", "--select", "WRP006") == []


SWITCHES = ROOT / "fixtures" / "dualtarget_switches"


def test_a_project_that_switches_backends_per_vendor():
    # One switch per vendor (SIMX_CUDA / SIMX_HIP; SIMX_USE_CUDA / SIMX_USE_HIP in the sources), the AMD
    # build through hipcc as the C++ compiler: the NVIDIA block, the module it includes, CUDA-language
    # options, `#if defined(SIMX_USE_CUDA) && ...`, the selector macro's NVIDIA argument, toolkit tests
    # guarded by `defined(CUDA_VERSION)`, a branch every clang takes after an nvcc one, a header
    # declaring both bf16 types, the `cuda/` directory beside per-backend files (`fetch_CUDA.hpp` /
    # `fetch_HIP.hpp`), a switch that a header found by its angle-bracket path defines for Intel only, a
    # Hopper-only check, device/host splits whose sides do the same work (math wrappers beside `using
    # std::exp;`, checks alone) and nvcc options in a build file the AMD build does not read are quiet; the
    # kernel added outside every switch is reported, and so is the CUDA spelling of a managed allocation
    # in shared code (the HIP backend's own `hipMallocManaged` is the project's choice for AMD).
    assert [f for f in scan(ROOT, "fixtures/dualtarget_switches") if ".fixed." not in f[0]] == [
        ("fixtures/dualtarget_switches/backends/hip/managed_pool.hpp", 16, "MEM005"),
        ("fixtures/dualtarget_switches/src/count.cpp", 6, "WRP005"),
        ("fixtures/dualtarget_switches/src/count.cpp", 6, "WRP006"),
        ("fixtures/dualtarget_switches/src/count.cpp", 7, "WRP001"),
        ("fixtures/dualtarget_switches/src/math_split.cpp", 25, "ARC001"),
        ("fixtures/dualtarget_switches/src/math_split.cpp", 33, "ARC001"),
        ("fixtures/dualtarget_switches/src/toolkit_paths.cpp", 26, "ARC001"),
        ("fixtures/dualtarget_switches/src/toolkit_paths.cpp", 34, "ARC001"),
        ("fixtures/dualtarget_switches/tools/gpu_info.py", 4, "PY004"),
    ]
    build = amdbuild.read(str(SWITCHES))
    assert build.nvidia_switches == {"SIMX_CUDA", "SIMX_USE_CUDA", "SIMX_NVSHMEM", "SIMX_ENABLE_CUDA", "SIMX_WITH_CUDA"}  # NVSHMEM: an NVIDIA-only library
    assert str(SWITCHES / "cmake" / "SimxSetupCUDA.cmake") in build.nvidia_build_files  # include(SimxSetupCUDA)
    assert build.known  # `if(SIMX_HIP) find_package(hip) / target_link_libraries(... hip::device)`


def test_backend_switches_need_both_vendors_named():
    words = frozenset({"AMREX_USE_CUDA", "AMREX_USE_HIP", "AMREX_CUDA", "AMREX_HIP", "GKO_COMPILING_CUDA",
                       "GKO_COMPILING_HIP", "USE_CUDA", "CUDA", "HIP", "CMAKE_CUDA_FLAGS", "CMAKE_HIP_FLAGS",
                       "CUDA_PATH", "HIP_PATH", "WITH_CUDNN", "X_USE_NVTX", "X_USE_ROCTX", "SOLV_USING_CUDA",
                       "SOLV_USING_HIP", "MD_GPU_CUDA", "MD_GPU_HIP", "WITH_CUPTI", "WITH_ROCTRACER"})
    # WITH_CUPTI beside WITH_ROCTRACER: NVIDIA's profiling interface and the AMD library in its place.
    assert amdbuild.nvidia_switches(words) == {"AMREX_USE_CUDA", "AMREX_CUDA", "GKO_COMPILING_CUDA", "X_USE_NVTX",
                                               "SOLV_USING_CUDA", "MD_GPU_CUDA", "WITH_CUPTI"}


def test_variants_of_the_cuda_switch():
    # `RAJA_ENABLE_CLANG_CUDA` holds every word of `RAJA_ENABLE_CUDA`, whose HIP twin the project names: a
    # kind of CUDA build. `RAJA_ENABLE_CUDA_ARCH` holds a value, `RAJA_ENABLE_HIP_CUDA` names HIP, `RAJA_CUDA_SOURCES`
    # is no switch.
    words = frozenset({"RAJA_ENABLE_CUDA", "RAJA_ENABLE_HIP", "RAJA_ENABLE_CLANG_CUDA", "RAJA_ENABLE_CUDA_ARCH",
                       "RAJA_ENABLE_HIP_CUDA", "CMAKE_CUDA_FLAGS", "OTHER_CUDA", "RAJA_CUDA_SOURCES"})
    assert amdbuild.cuda_variant_switches(words, amdbuild.nvidia_switches(words)) == {"RAJA_ENABLE_CLANG_CUDA"}


def test_switches_for_nvidia_only_libraries():
    # In a project that builds for AMD, a switch for a library AMD has no counterpart of under the same
    # API is off in the AMD build, unless the project names the AMD library that takes its place.
    words = frozenset({"MD_NVSHMEM", "X_USE_CUDNN", "WITH_TENSORRT", "NVSHMEM_HOME", "CUDNN_LIBRARY", "X_USE_HIP"})
    assert amdbuild.nvidia_library_switches(words) == {"MD_NVSHMEM", "X_USE_CUDNN", "WITH_TENSORRT"}
    assert amdbuild.nvidia_library_switches(words | {"X_USE_MIOPEN"}) == {"MD_NVSHMEM", "WITH_TENSORRT"}
    assert amdbuild.nvidia_library_switches(words | {"CHECK_CUTLASS"}) >= {"MD_NVSHMEM"}
    # NVIDIA's profiling and management libraries have no AMD library under their API at all: timemory's
    # CUPTI switches stay NVIDIA's beside its roctracer one, a switch naming two such libraries too.
    tools = frozenset({"T_USE_CUPTI", "T_USE_CUPTI_NVPERF", "T_USE_NVML", "T_USE_ROCTRACER", "T_USE_HIP"})
    assert amdbuild.nvidia_library_switches(tools) == {"T_USE_CUPTI", "T_USE_CUPTI_NVPERF", "T_USE_NVML"}


def test_a_backend_chosen_by_number():
    assert amdbuild.valued_switches({"FFT_BACKEND", "FFT_BACKEND=2"}, {"FFT_BACKEND", "FFT_BACKEND=1"}) == \
        {"FFT_BACKEND": (2, 1)}
    assert amdbuild.valued_switches({"LEVEL=2"}, {"LEVEL=2"}) == {}  # the same value: no choice of vendor
    build = amdbuild.read(str(SWITCHES))
    assert build.valued == {"SIMX_FFT_BACKEND": (2, 1)}
    # `if(SIMX_BUILD_CUSPARSE)`: a switch named for a CUDA library with no HIP twin; the directory it adds
    # is the NVIDIA build's whatever function builds its targets.
    assert "SIMX_BUILD_CUSPARSE" in build.library_switches
    assert build.nvidia_subdirs == {str(SWITCHES / "solver_cusolver")}
    assert "SIMX_NVSHMEM" in build.nvidia_switches


def test_a_marker_file_makes_a_directory_its_own_project(tmp_path):
    # hiplint's fixtures are one sample project per directory; a monorepo's sub-project can be one too.
    for family in (ROOT / "fixtures").iterdir():
        if family.is_dir() and not family.name.endswith(".expected"):
            assert (family / amdbuild.PROJECT_MARKER).exists(), f"{family.name} needs {amdbuild.PROJECT_MARKER}"
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "gpu"
    sub.mkdir()
    (sub / amdbuild.PROJECT_MARKER).write_text("")
    (sub / "CMakeLists.txt").write_text("if(P_USE_HIP)\n  find_package(hip)\n  target_link_libraries(p hip::device)\n"
                                        "endif()\nif(P_USE_CUDA)\n  enable_language(CUDA)\nendif()\n")
    (tmp_path / "k.cu").write_text(KERNEL)
    assert amdbuild.root_of(str(sub / "x.cu")) == str(sub)
    assert amdbuild.root_of(str(tmp_path / "k.cu")) == str(tmp_path)
    outer = amdbuild.read(str(tmp_path))
    assert not outer.known and not outer.nvidia_switches  # the sub-project's build is its own
    assert amdbuild.read(str(sub)).nvidia_switches == {"P_USE_CUDA"}


def test_a_variable_used_only_by_the_nvidia_build_is_the_nvidia_builds(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(
        "set(GPU_LIBS CUDA::cudart CUDA::cublas)\n"      # used in the NVIDIA block only
        "set(COMMON_LIBS CUDA::cudart)\n"                # used by both builds
        "add_library(p k.cu)\n"
        "target_link_libraries(p ${COMMON_LIBS})\n"
        "if(P_USE_HIP)\n  find_package(hip)\n  target_link_libraries(p hip::device)\n"
        "else()\n  target_link_libraries(p ${GPU_LIBS})\nendif()\n")
    (tmp_path / "k.cu").write_text(KERNEL)
    build = amdbuild.read(str(tmp_path))
    text = (tmp_path / "CMakeLists.txt").read_bytes()
    spans = build.nvidia_ranges[str(tmp_path / "CMakeLists.txt")]
    covered = {text[:s].count(b"\n") + 1 for s, _ in spans}
    assert 1 in covered and 2 not in covered


def test_a_python_build_for_rocm_makes_the_project_dual_target(tmp_path):
    # CuPy-like: cupy_backends/cuda/ beside cupy_backends/hip/, a setup.py with a HIP switch. The CUDA
    # backend's file without a HIP counterpart is the CUDA backend's; without the switch it is a port in progress.
    (tmp_path / ".git").mkdir()
    (tmp_path / "backends" / "cuda").mkdir(parents=True)
    (tmp_path / "backends" / "hip").mkdir()
    (tmp_path / "backends" / "cuda" / "only_cuda.cu").write_text(KERNEL)
    (tmp_path / "backends" / "hip" / "stream.h").write_text("#pragma once\n")
    (tmp_path / "setup.py").write_text("import os\nuse_hip = os.environ.get('PROJ_INSTALL_USE_HIP') == '1'\n")
    assert scan(tmp_path) == []
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='proj')\n")
    amdbuild._BY_ROOT.clear()
    assert [code for _, _, code in scan(tmp_path)] == ["WRP006"]


def test_code_a_dual_target_project_keeps_from_amd_is_quiet_there_only(tmp_path):
    # In the project, a toolkit test whose other branch the AMD build takes, the code it skips, a branch for
    # HIP over nvcc and an include behind a definition only the NVIDIA build's CMake module makes are
    # quiet; only the toolkit test whose AMD branch is `#error` is reported. The same file outside any
    # project reports the rest (the HIP-over-nvcc branch stays quiet anywhere).
    src = SWITCHES / "src"
    assert scan(ROOT, "fixtures/dualtarget_switches/src/toolkit_paths.cpp") == [
        ("fixtures/dualtarget_switches/src/toolkit_paths.cpp", 26, "ARC001"),
        ("fixtures/dualtarget_switches/src/toolkit_paths.cpp", 34, "ARC001")]
    for name in ("toolkit_paths.cpp", "gpu.h"):
        (tmp_path / name).write_bytes((src / name).read_bytes())
    assert scan(tmp_path, "toolkit_paths.cpp") == [
        # `CUDART_VERSION >= 13000` and what it holds are quiet anywhere: AMD and CUDA 12 skip it (ARC001).
        ("toolkit_paths.cpp", 7, "LIB007"), ("toolkit_paths.cpp", 26, "ARC001"), ("toolkit_paths.cpp", 34, "ARC001")]
    build = amdbuild.read(str(SWITCHES))
    assert "SIMX_NVTX_RANGES" in build.nvidia_defines  # target_compile_definitions in SimxSetupCUDA.cmake


def test_autotools_switches_per_vendor():
    # `AM_CONDITIONAL([HAVE_CUDA])` beside `HAVE_ROCM`: one transport per vendor. The CUDA directory beside
    # `rocm/` and the `#if HAVE_CUDA` code are NVIDIA's; the kernel added outside both is reported.
    tree = ROOT / "fixtures" / "build" / "autotools_backends"
    build = amdbuild.read(str(tree))
    assert "HAVE_CUDA" in build.nvidia_switches
    # src/gda/Makefile.am uses CUDA's flags outside any CUDA block and names nothing of AMD's; src/common's
    # CUDA line sits in `if HAVE_CUDA`.
    assert build.autotools_nvidia_dirs == {str(tree / "src" / "gda"), str(tree / "src" / "cuda")}
    assert build.autotools_nvidia_files == {str(tree / "src" / "common" / "cuda_probe.c"),  # in `if HAVE_CUDA`
                                            str(tree / "src" / "cuda" / "copy.c")}
    assert scan(ROOT, "fixtures/build/autotools_backends") == [
        ("fixtures/build/autotools_backends/src/common/pack.cu", 3, "NV002")]
    assert [c for _, _, c in scan(ROOT, "fixtures/build/autotools_backends", "--report-nvidia-branches")] == \
        ["MEM005", "MEM005", "NV002", "ARC001", "MEM005", "NV002"]


def test_a_header_only_nvidia_code_includes():
    from hiplint.includers import nvidia_only_header

    # ptx_loads.cuh: included only from backends/cuda/ (a directory with a HIP twin); gpu.h: from sources
    # the AMD build compiles.
    assert nvidia_only_header(str(SWITCHES / "src" / "ptx_loads.cuh"))
    assert not nvidia_only_header(str(SWITCHES / "src" / "gpu.h"))


def test_a_makefile_that_builds_every_backend_it_finds(tmp_path):
    # `ifneq ($(CUDA_LIB_DIR),)` beside `ifneq ($(HIP_LIB_DIR),)`, nvcc options in NVCCFLAGS that only the
    # nvcc rule reads, compilers run through `$(call quiet,HIPCC)`: quiet. The same Makefile without its
    # HIP lines reports them.
    tree = ROOT / "fixtures" / "build" / "found_backends"
    assert scan(ROOT, "fixtures/build/found_backends") == []
    (tmp_path / ".git").mkdir()
    text = (tree / "Makefile").read_text()
    (tmp_path / "Makefile").write_text("\n".join(line for line in text.splitlines()
                                                 if "HIP" not in line and "hip" not in line) + "\n")
    assert sorted({c for _, _, c in scan(tmp_path)}) == ["BLD004", "BLD005", "BLD007"]


def test_a_cmake_build_that_compiles_hip_with_its_own_hipcc_command(tmp_path):
    # `if(CUDAToolkit_FOUND)` beside `elseif(HIP_FOUND)` picks the toolkit found; the HIP side runs hipcc
    # itself, so CMake's HIP architectures would never reach it. Without the HIP side, all are reported.
    tree = ROOT / "fixtures" / "build" / "hipcc_command"
    assert scan(ROOT, "fixtures/build/hipcc_command") == []
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "axpy.cu").write_bytes((tree / "src" / "axpy.cu").read_bytes())
    lines = (tree / "CMakeLists.txt").read_text().splitlines()
    (tmp_path / "CMakeLists.txt").write_text("\n".join(
        line for line in lines if "HIP" not in line and "hip" not in line and "DEPENDS" not in line
        and "axpy_hip" not in line) + "\n")
    assert sorted(c for _, _, c in scan(tmp_path)) == ["BLD001", "BLD002", "BLD003", "BLD004"]


def test_vendor_choices_in_generator_expressions_and_found_toolkits():
    from hiplint.rules.build._cmake import genex_for_nvidia

    data = b"$<$<BOOL:${X_WITH_CUDA}>:CUDA::cublas> $<$<BOOL:${X_WITH_HIP}>:roc::rocblas>"
    assert genex_for_nvidia("$<BOOL:${X_WITH_CUDA}>", data)
    assert not genex_for_nvidia("$<BOOL:${X_WITH_CUDA}>", b"$<$<BOOL:${X_WITH_CUDA}>:CUDA::cublas>")  # no HIP twin
    assert not genex_for_nvidia("$<NOT:$<BOOL:${X_WITH_CUDA}>>", data)
    words = frozenset({"CUDATOOLKIT_FOUND", "HIPBLAS_FOUND"})
    assert amdbuild._branch_scope(["CUDAToolkit_FOUND"], b"", words) == "cuda"
    assert amdbuild._branch_scope(["CUDAToolkit_FOUND"], b"", frozenset({"CUDATOOLKIT_FOUND"})) is None
    assert amdbuild._branch_scope(["NOT", "CUDAToolkit_FOUND"], b"", words) is None
    # A project with an AMD switch: what the CUDA toolkit's block adds is missing where ROCm alone is.
    assert amdbuild._branch_scope(["CUDAToolkit_FOUND"], b"", frozenset({"CUDATOOLKIT_FOUND", "X_BUILD_HIP"})) == "cuda"
    assert amdbuild._branch_scope(["ENABLE_HIP", "AND", "HIP_PLATFORM", "STREQUAL", "nvcc"], b"", words) == "cuda"


def test_options_a_makefile_filters_out_are_not_passed(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "Makefile").write_text("FLAGS := -O3\nTIDY := $(filter-out -ccbin=mpicxx,$(FLAGS))\nNV := -ccbin=mpicxx\n"
                                       "%.o: %.cu\n\tnvcc $(NV) -c $<\n")
    assert [(line, code) for _, line, code in scan(tmp_path, "--select", "BLD005")] == [(3, "BLD005")]


def test_a_copy_without_git_is_one_project_from_its_configure_ac_or_cmake_project(tmp_path):
    # A release tarball or vendored copy has no `.git`: the top is where configure.ac (or a CMakeLists.txt
    # calling project()) is, however deep the file sits below it.
    top = tmp_path / "auto"
    deep = top / "lib" / "core" / "lattice" / "gpu" / "detail"
    deep.mkdir(parents=True)
    (top / "configure.ac").write_text("AC_INIT([p],[1])\n")
    (top / "lib" / "Makefile.am").write_text("SUBDIRS = core\n")
    (deep / "k.h").write_text("#define N 1\n")
    assert amdbuild.root_of(str(deep / "k.h")) == str(top)
    cm = tmp_path / "cm"
    sub = cm / "src" / "a" / "b" / "c" / "d"
    sub.mkdir(parents=True)
    (cm / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.21)\nproject(p LANGUAGES CXX)\n")
    (cm / "src" / "CMakeLists.txt").write_text("add_subdirectory(a)\n")
    assert amdbuild.root_of(str(sub / "k.cu")) == str(cm)
    # Without such a file the old rule stands: the highest build file up to NO_GIT_LEVELS above.
    plain = tmp_path / "plain" / "x"
    plain.mkdir(parents=True)
    (plain / "Makefile").write_text("all:\n")
    assert amdbuild.root_of(str(plain / "k.cu")) == str(plain)


MANAGED = "void f(float** p) { cudaMallocManaged((void**)p, 64); }\n"


def _with_vendored(tmp_path: Path, dual: bool) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(
        "project(p LANGUAGES CXX)\n" + ("option(P_USE_CUDA OFF)\noption(P_USE_HIP OFF)\n" if dual else "") +
        "add_library(p p.cpp)\ntarget_include_directories(p PUBLIC third_party/multi/include)\n")
    (tmp_path / "p.cpp").write_text("int g();\n")
    lib = tmp_path / "third_party" / "multi"
    (lib / "include").mkdir(parents=True)
    (lib / "LICENSE").write_text("MIT\n")
    # The vendored library's own build, with a HIP path of its own: never configured by the project.
    (lib / "CMakeLists.txt").write_text("project(multi LANGUAGES CXX HIP)\nadd_library(multi_hip test/t.cu)\n"
                                        "set_source_files_properties(test/t.cu PROPERTIES LANGUAGE HIP)\n")
    (lib / "test").mkdir()
    (lib / "test" / "t.cu").write_text(MANAGED)
    (lib / "include" / "managed.h").write_text(MANAGED)
    return tmp_path


def test_a_vendored_project_is_not_the_dual_target_projects_code(tmp_path):
    # QMCPACK's external_codes/boost_multi: another project's tests, CUDA adaptors and CMake files, which
    # the project's AMD build only uses as an include directory. Quiet there; --report-nvidia-branches
    # shows them; --show-build names them.
    root = _with_vendored(tmp_path, dual=True)
    build = amdbuild.read(str(root))
    assert build.vendored_dirs == {str(root / "third_party" / "multi")}
    assert str(root / "third_party" / "multi" / "CMakeLists.txt") not in build.amd_build_files
    assert [f for f in scan(root, "--isolated") if f[0].startswith("third_party")] == []
    assert ("third_party/multi/include/managed.h", 1, "MEM005") in scan(root, "--isolated", "--report-nvidia-branches")
    assert "vendored-projects = [\n  'third_party/multi',\n]" in run_cli("scan", "--show-build", cwd=root).stdout.decode()


def test_a_vendored_projects_hip_build_does_not_make_the_project_dual_target(tmp_path):
    # A project that never built for AMD keeps every finding, the vendored library's too: its AMD build
    # (the library's own CMakeLists.txt) is not the project's.
    root = _with_vendored(tmp_path, dual=False)
    build = amdbuild.read(str(root))
    assert not build.known and not build.nvidia_switches
    assert ("third_party/multi/include/managed.h", 1, "MEM005") in scan(root, "--isolated")


def test_a_submodule_under_third_party_belongs_to_the_outer_repository(tmp_path):
    root = _with_vendored(tmp_path, dual=True)
    (root / "third_party" / "multi" / ".git").write_text("gitdir: ../../.git/modules/multi\n")
    assert amdbuild.root_of(str(root / "third_party" / "multi" / "include" / "managed.h")) == str(root)
    assert [f for f in scan(root, "--isolated") if f[0].startswith("third_party")] == []
    # A repository of its own elsewhere (not under a vendor directory) stays its own.
    (root / "tools" / "gpu").mkdir(parents=True)
    (root / "tools" / "gpu" / ".git").write_text("gitdir: x\n")
    assert amdbuild.root_of(str(root / "tools" / "gpu" / "k.cu")) == str(root / "tools" / "gpu")


def test_sources_added_in_an_nvidia_block_are_not_the_amd_targets(tmp_path):
    # QMCPACK's AFQMC: `if(ENABLE_CUDA) set(SRCS ${SRCS} cuda/x.cpp)`, then `elseif(BUILD_X_HIP)` builds a
    # target from ${SRCS}: the AMD build's list never had the CUDA files.
    (tmp_path / ".git").mkdir()
    for name in ("common.cpp", "cuda/x.cpp", "hip/x.hip.cpp"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("int f();\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "option(P_USE_CUDA OFF)\noption(P_USE_HIP OFF)\nset(SRCS common.cpp)\n"
        "if(P_USE_CUDA)\n  set(SRCS ${SRCS} cuda/x.cpp)\n  list(APPEND SRCS cuda/x.cpp)\nendif()\n"
        "if(P_USE_CUDA)\n  add_library(t ${SRCS})\nelseif(P_USE_HIP)\n"
        "  set_source_files_properties(hip/x.hip.cpp PROPERTIES LANGUAGE HIP)\n  add_library(th hip/x.hip.cpp)\n"
        "  add_library(t ${SRCS})\n  target_link_libraries(t PUBLIC th hip::host)\nelse()\n  add_library(t ${SRCS})\nendif()\n")
    build = amdbuild.read(str(tmp_path))
    assert str(tmp_path / "common.cpp") in build.amd_sources
    assert str(tmp_path / "cuda" / "x.cpp") not in build.amd_sources
    assert str(tmp_path / "cuda" / "x.cpp") in build.nvidia_sources


def test_backend_directories_chosen_by_a_variable(tmp_path):
    # stdgpu's layout: one backend directory per build, added as `add_subdirectory(${BACKEND_DIR})`, each
    # adding its sources to the one library target. The HIP build compiles `hip/`, never `cuda/`.
    (tmp_path / ".git").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(
        'project(lib CXX)\nset(LIB_BACKEND "LIB_BACKEND_CUDA" CACHE STRING "CUDA, OPENMP or HIP")\n'
        'string(REGEX REPLACE "^LIB_BACKEND_" "" LIB_BACKEND_DIR ${LIB_BACKEND})\nadd_subdirectory(src)\n')
    src = tmp_path / "src"
    for d in ("cuda", "hip", "openmp"):
        (src / d).mkdir(parents=True)
        (src / d / "device.cpp").write_text(KERNEL)
    (src / "CMakeLists.txt").write_text("add_library(lib common.cpp)\nadd_subdirectory(${LIB_BACKEND_DIR})\n")
    (src / "common.cpp").write_text("int common;\n")
    (src / "cuda" / "CMakeLists.txt").write_text(
        "find_package(CUDAToolkit REQUIRED)\ntarget_sources(lib PRIVATE device.cpp)\n"
        "target_link_libraries(lib PUBLIC CUDA::cudart)\n")
    (src / "hip" / "CMakeLists.txt").write_text(
        "find_package(hip REQUIRED)\ntarget_sources(lib PRIVATE device.cpp)\n"
        "set_source_files_properties(device.cpp PROPERTIES LANGUAGE HIP)\n"
        "target_link_libraries(lib PUBLIC hip::host)\n")
    (src / "openmp" / "CMakeLists.txt").write_text("target_sources(lib PRIVATE device.cpp)\n")
    build = amdbuild.read(str(tmp_path))
    assert str(src / "hip" / "device.cpp") in build.amd_sources
    assert str(src / "cuda" / "device.cpp") not in build.amd_sources
    assert str(src / "cuda" / "device.cpp") in build.nvidia_sources
    assert str(src / "cuda" / "CMakeLists.txt") in build.nvidia_build_files


def test_a_backend_chosen_by_a_cmake_number(tmp_path):
    # VkFFT's layout: `set(FFT_BACKEND 0 CACHE STRING "0 - Vulkan, 1 - CUDA, 2 - HIP")`, one block per value,
    # the number passed on as a definition. The CUDA value's blocks and `#if (FFT_BACKEND==1)` are the
    # NVIDIA build's; the code under the other value's `#if` is still read.
    (tmp_path / ".git").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(
        'project(fft CXX)\nset(FFT_BACKEND 0 CACHE STRING "0 - Vulkan, 1 - CUDA, 2 - HIP")\n'
        "add_executable(fft main.cpp)\nadd_definitions(-DFFT_BACKEND=${FFT_BACKEND})\n"
        "if(${FFT_BACKEND} EQUAL 0)\n  find_package(Vulkan REQUIRED)\n"
        "elseif(${FFT_BACKEND} EQUAL 1)\n  find_package(CUDA 9.0 REQUIRED)\n  enable_language(CUDA)\n"
        "  set_property(TARGET fft PROPERTY CUDA_ARCHITECTURES 70 80)\n"
        "  target_link_libraries(fft PUBLIC ${CUDA_LIBRARIES} cuda)\n"
        "elseif(${FFT_BACKEND} EQUAL 2)\n  find_package(hip)\n  target_link_libraries(fft PUBLIC hip::host)\n"
        "endif()\n")
    (tmp_path / "main.cpp").write_text(
        "#if (FFT_BACKEND==1)\n#include <nvrtc.h>\n"
        "size_t ptx_size(nvrtcProgram p) { size_t n; nvrtcGetPTXSize(p, &n); return n; }\n"
        "#elif (FFT_BACKEND==2)\n#include <hip/hiprtc.h>\n"
        "size_t code_size(hiprtcProgram p) { size_t n; hiprtcGetCodeSize(p, &n); return n; }\n"
        "#endif\n" + KERNEL)
    assert amdbuild.numbered_backends([(tmp_path / "CMakeLists.txt").read_bytes()]) == {"FFT_BACKEND": (2, frozenset({1}))}
    assert amdbuild.read(str(tmp_path)).valued == {"FFT_BACKEND": (2, 1)}
    # Only the shared kernel's 32-bit mask to a *_sync shuffle.
    assert {code for _, _, code in scan(tmp_path)} == {"WRP006"}
    quiet = {code for _, _, code in scan(tmp_path, "--report-nvidia-branches")}
    assert {"BLD001", "LIB008"} <= quiet


def test_another_vendors_block_beside_the_amd_switch(tmp_path):
    # ktransformers' layout: CUDA, SYCL, ROCm and MUSA back ends, one per build. The SYCL block links
    # cudart for a host callback bridge; the AMD build never reads it. A SYCL block in a project with no
    # AMD switch is still read.
    (tmp_path / ".git").mkdir()
    cmake = ('project(kt CXX)\noption(KT_USE_SYCL "SYCL" OFF)\noption(KT_USE_ROCM "ROCm" OFF)\n'
             "add_library(kt SHARED kt.cpp)\n"
             "if(KT_USE_ROCM)\n  find_package(hip REQUIRED)\n  target_link_libraries(kt PRIVATE hip::host)\nendif()\n"
             "if(KT_USE_SYCL)\n  find_package(CUDAToolkit REQUIRED)\n  target_link_libraries(kt PRIVATE CUDA::cudart)\nendif()\n")
    (tmp_path / "CMakeLists.txt").write_text(cmake)
    (tmp_path / "kt.cpp").write_text("int kt;\n")
    assert scan(tmp_path) == []
    # Mooncake's `if(USE_HYGON)` beside `USE_HIP`: Hygon's DCU toolkit ships CUDA-named libraries.
    (tmp_path / "CMakeLists.txt").write_text(cmake.replace("KT_USE_SYCL", "KT_USE_HYGON").replace("KT_USE_ROCM", "KT_USE_HIP"))
    assert scan(tmp_path) == []
    (tmp_path / "CMakeLists.txt").write_text(cmake.replace("KT_USE_ROCM", "KT_USE_OPENMP").replace(
        "  find_package(hip REQUIRED)\n  target_link_libraries(kt PRIVATE hip::host)\n", ""))
    assert {code for _, _, code in scan(tmp_path)} == {"BLD003", "BLD004"}


def test_a_switch_named_for_the_nvidia_gpu_beside_the_amd_gpu_one(tmp_path):
    # SV-Sim: `USE_NVGPU` beside `USE_AMDGPU`; what the NVGPU block sets up is the NVIDIA build's.
    (tmp_path / ".git").mkdir()
    cmake = ('project(sv CXX)\noption(USE_NVGPU "NVIDIA" ON)\noption(USE_AMDGPU "AMD" OFF)\n'
             "if(USE_NVGPU)\n  find_package(CUDA REQUIRED)\n  set(CUDA_NVCC_FLAGS -arch=sm_80)\nendif()\n"
             "if(USE_AMDGPU)\n  enable_language(HIP)\n  add_library(sv sv.hip)\nendif()\n")
    (tmp_path / "CMakeLists.txt").write_text(cmake)
    (tmp_path / "sv.hip").write_text("int sv;\n")
    assert scan(tmp_path) == []
    (tmp_path / "CMakeLists.txt").write_text(cmake.replace("USE_AMDGPU", "USE_OPENMP").replace(
        "  enable_language(HIP)\n  add_library(sv sv.hip)\n", ""))
    assert "BLD003" in {code for _, _, code in scan(tmp_path)}


def test_a_ci_job_that_configures_the_project_for_amd(tmp_path):
    # PennyLane-Lightning's layout: a cuQuantum back end in CUDA, and a Kokkos one that its ROCm wheel
    # job builds with `-DKokkos_ENABLE_HIP=ON`; no build file names HIP. The CUDA back end's build files
    # are the NVIDIA build's. Without the job (or with the line commented out) they are reported.
    (tmp_path / ".git").mkdir()
    (tmp_path / "CMakeLists.txt").write_text('project(sim CXX)\nset(SIM_BACKEND "cpu" CACHE STRING "")\n'
                                             "add_subdirectory(${SIM_BACKEND})\n")
    (tmp_path / "gpu").mkdir()
    (tmp_path / "gpu" / "CMakeLists.txt").write_text(
        "project(sim_gpu LANGUAGES CXX CUDA)\nfind_package(CUDAToolkit REQUIRED)\n"
        "add_library(sim_gpu state.cu)\ntarget_link_libraries(sim_gpu PUBLIC CUDA::cublas)\n")
    (tmp_path / "gpu" / "state.cu").write_text("int state;\n")
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    job = ("jobs:\n  rocm-wheel:\n    steps:\n      - run: |\n"
           "          cmake -B build -DSIM_BACKEND=kokkos -DKokkos_ENABLE_HIP=ON -DKokkos_ARCH_AMD_GFX90A=ON\n")
    (workflows / "wheel_rocm.yml").write_text(job)
    assert scan(tmp_path) == []
    show = run_cli("scan", "--show-build", cwd=tmp_path)
    assert b"a CI job configures the project for AMD (.github/workflows/wheel_rocm.yml)" in show.stdout
    (workflows / "wheel_rocm.yml").write_text(job.replace("          cmake", "          # cmake"))
    assert {code for _, _, code in scan(tmp_path)} >= {"BLD001", "BLD003", "BLD004"}


def test_a_removed_platform_name_the_build_defines(tmp_path):
    # `#ifdef __HIP_PLATFORM_HCC__` is dead on ROCm 6.0 and later (API007) unless the project defines the
    # name itself: in a Python build's define_macros (CuPy), or with -D in CMake.
    (tmp_path / ".git").mkdir()
    (tmp_path / "k.cu").write_text("#ifdef __HIP_PLATFORM_HCC__\n#define LANES warpSize\n#else\n#define LANES 32\n#endif\n"
                                   "__global__ void k(int* o) { o[threadIdx.x] = LANES; }\n")
    assert [code for _, _, code in scan(tmp_path, "--select", "API007")] == ["API007"]
    (tmp_path / "setup.py").write_text("macros = []\nif use_hip:\n    macros.append(('__HIP_PLATFORM_HCC__', '1'))\n")
    assert amdbuild.read(str(tmp_path)).removed_names_defined == {"__HIP_PLATFORM_HCC__"}
    assert scan(tmp_path, "--select", "API007") == []
    (tmp_path / "setup.py").unlink()
    (tmp_path / "CMakeLists.txt").write_text("if(USE_HIP)\n  add_definitions(-D__HIP_PLATFORM_HCC__)\nendif()\n")
    assert scan(tmp_path, "--select", "API007") == []


def test_code_named_for_one_nvidia_architecture(tmp_path):
    # In a project that builds for AMD, `sm100_*` files and `hopper/` directories are Hopper/Blackwell code
    # the AMD build does not compile (FBGEMM's cutlass_blackwell_fmha/); in a project never ported they
    # are reported like any other.
    (tmp_path / ".git").mkdir()
    (tmp_path / "hopper").mkdir()
    (tmp_path / "hopper" / "sm90_gemm.cuh").write_text(KERNEL)
    (tmp_path / "common.cuh").write_text(KERNEL)
    assert {p for p, _, _ in scan(tmp_path)} == {"hopper/sm90_gemm.cuh", "common.cuh"}
    (tmp_path / "CMakeLists.txt").write_text("if(P_USE_HIP)\n  find_package(hip)\n  add_library(p common.cu)\n"
                                             "  set_source_files_properties(common.cu PROPERTIES LANGUAGE HIP)\n"
                                             "  target_link_libraries(p hip::device)\nendif()\n")
    (tmp_path / "common.cu").write_text('#include "common.cuh"\n')
    assert {p for p, _, _ in scan(tmp_path)} == {"common.cuh"}
    assert "hopper/sm90_gemm.cuh" in {p for p, _, _ in scan(tmp_path, "--report-nvidia-branches")}


def test_vendor_keywords_of_a_project_function(tmp_path):
    # FBGEMM's `gpu_cpp_library(... CUDA_SPECIFIC_SRCS ${cuda_files} HIP_SPECIFIC_SRCS ${hip_files})`: the
    # files after a keyword naming CUDA are the NVIDIA build's alone.
    (tmp_path / ".git").mkdir()
    (tmp_path / "cutlass_ext").mkdir()
    (tmp_path / "cutlass_ext" / "gemm.cu").write_text(KERNEL)
    (tmp_path / "ck_ext").mkdir()
    (tmp_path / "ck_ext" / "gemm.hip").write_text("int gemm;\n")
    (tmp_path / "common.cu").write_text(KERNEL)
    (tmp_path / "CMakeLists.txt").write_text(
        "if(USE_ROCM)\n  find_package(hip)\n  target_link_libraries(gen hip::device)\nendif()\n"
        "file(GLOB cuda_files cutlass_ext/*.cu)\nfile(GLOB hip_files ck_ext/*.hip)\n"
        "gpu_cpp_library(PREFIX gen GPU_SRCS common.cu CUDA_SPECIFIC_SRCS ${cuda_files} HIP_SPECIFIC_SRCS ${hip_files})\n")
    build = amdbuild.read(str(tmp_path))
    assert str(tmp_path / "cutlass_ext" / "gemm.cu") in build.nvidia_sources
    assert str(tmp_path / "common.cu") not in build.nvidia_sources
    assert {p for p, _, _ in scan(tmp_path)} == {"common.cu"}


def test_a_variable_set_only_for_the_nvidia_build_is_an_nvidia_macro(tmp_path):
    # Aluminum: `set(AL_HAS_NVPROF ON)` inside the CUDA block, `#cmakedefine AL_HAS_NVPROF` in the configured
    # header: `#ifdef AL_HAS_NVPROF` is code the AMD build never compiles (it has its own roctx path).
    (tmp_path / ".git").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(
        "project(al CXX)\nadd_library(al prof.cpp)\n"
        "if(AL_ENABLE_ROCM)\n  find_package(hip)\n  target_link_libraries(al hip::host)\n  set(AL_HAS_ROCTX ON)\n"
        "elseif(AL_ENABLE_CUDA)\n  enable_language(CUDA)\n  if(AL_ENABLE_NVPROF)\n    set(AL_HAS_NVPROF ON)\n  endif()\n"
        "endif()\nconfigure_file(config.hpp.in config.hpp)\n")
    (tmp_path / "config.hpp.in").write_text("#cmakedefine AL_HAS_NVPROF\n#cmakedefine AL_HAS_ROCTX\n")
    (tmp_path / "prof.cpp").write_text('#include "config.hpp"\n#ifdef AL_HAS_NVPROF\n' + KERNEL + '#endif\n')
    assert "AL_HAS_NVPROF" in amdbuild.read(str(tmp_path)).nvidia_defines
    assert scan(tmp_path) == []
    assert scan(tmp_path, "--report-nvidia-branches") != []


def test_what_the_amd_build_removes_or_refuses(tmp_path):
    # CTranslate2: `elseif(WITH_HIP)` removes the AWQ sources from the list and stops on WITH_FLASH_ATTN; hiop:
    # `cmake_dependent_option(X_USE_RESOLVE ... "X_USE_CUDA" OFF)` is offered with the CUDA build only.
    (tmp_path / ".git").mkdir()
    (tmp_path / "awq").mkdir()
    for name in ("gemm_gpu.cu", "common.cu"):
        (tmp_path / ("awq/" + name if name == "gemm_gpu.cu" else name)).write_text(KERNEL)
    (tmp_path / "attn.cu").write_text("#ifdef CT_WITH_FLASH\n" + KERNEL + "#endif\n")
    (tmp_path / "lu.cpp").write_text("#ifdef X_USE_RESOLVE\n" + KERNEL + "#endif\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "project(ct CXX)\noption(WITH_CUDA OFF)\noption(WITH_HIP OFF)\noption(WITH_FLASH_ATTN OFF)\n"
        "cmake_dependent_option(X_USE_RESOLVE \"LU\" ON \"X_USE_CUDA\" OFF)\n"
        "if(X_USE_RESOLVE)\n  add_definitions(-DX_USE_RESOLVE)\nendif()\n"
        "set(CUDA_SOURCES common.cu awq/gemm_gpu.cu attn.cu lu.cpp)\n"
        "if(WITH_FLASH_ATTN)\n  add_definitions(-DCT_WITH_FLASH)\nendif()\n"
        "if(WITH_CUDA)\n  enable_language(CUDA)\n  add_library(ct ${CUDA_SOURCES})\n"
        "elseif(WITH_HIP)\n  find_package(hip REQUIRED)\n"
        "  list(REMOVE_ITEM CUDA_SOURCES awq/gemm_gpu.cu)\n"
        "  if(WITH_FLASH_ATTN)\n    message(FATAL_ERROR \"WITH_HIP=ON incompatible with WITH_FLASH_ATTN=ON\")\n  endif()\n"
        "  set_source_files_properties(${CUDA_SOURCES} PROPERTIES LANGUAGE HIP)\n"
        "  add_library(ct ${CUDA_SOURCES})\n  target_link_libraries(ct hip::host)\nendif()\n")
    build = amdbuild.read(str(tmp_path))
    assert str(tmp_path / "awq" / "gemm_gpu.cu") in build.nvidia_sources
    assert str(tmp_path / "common.cu") in build.amd_sources
    assert {"CT_WITH_FLASH", "X_USE_RESOLVE"} <= build.nvidia_defines
    assert {p for p, _, _ in scan(tmp_path)} == {"common.cu"}


def test_per_vendor_library_backends(tmp_path):
    # Kokkos Remote Spaces: `KRS_ENABLE_NVSHMEMSPACE` beside `KRS_ENABLE_ROCSHMEMSPACE`, one backend directory
    # each. The NVSHMEM option's `#ifdef`, its CMake block and its directory are the NVIDIA build's.
    (tmp_path / ".git").mkdir()
    for d in ("nvshmemspace", "rocshmemspace"):
        (tmp_path / "src" / d).mkdir(parents=True)
    (tmp_path / "src" / "nvshmemspace" / "Space.cpp").write_text("#include <nvshmem.h>\nint x;\n")
    (tmp_path / "src" / "rocshmemspace" / "Space.cpp").write_text("int y;\n")
    (tmp_path / "main.cpp").write_text("#ifdef KRS_ENABLE_NVSHMEMSPACE\n#include <nvshmem.h>\n#endif\nint main() {}\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "project(krs CXX)\noption(KRS_ENABLE_NVSHMEMSPACE OFF)\noption(KRS_ENABLE_ROCSHMEMSPACE OFF)\n"
        "if(KRS_ENABLE_NVSHMEMSPACE)\n  find_package(NVSHMEM REQUIRED)\nendif()\n"
        "if(KRS_ENABLE_ROCSHMEMSPACE)\n  find_package(ROCSHMEM REQUIRED)\nendif()\n")
    assert "KRS_ENABLE_NVSHMEMSPACE" in amdbuild.read(str(tmp_path)).nvidia_switches
    assert scan(tmp_path) == []
    assert "src/nvshmemspace/Space.cpp" in {p for p, _, _ in scan(tmp_path, "--report-nvidia-branches")}


_SETUP_PER_VENDOR = """import glob
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension, IS_HIP_EXTENSION

IS_ROCM = IS_HIP_EXTENSION
ext = []
if not IS_ROCM:
    ext.append(CUDAExtension("k_cuda", sources=["csrc/k/api.cpp", "csrc/common/util.cu"] + glob.glob("csrc/k/src/*.cu")))
else:
    ext.append(CUDAExtension("k_ck", sources=["csrc/k_ck/api.cpp", "csrc/common/util.cu"]))
setup(name="proj", ext_modules=ext)
"""
_CAPABILITY_GATE = "import torch\n\ndef f(device):\n    major, minor = torch.cuda.get_device_capability(device)\n" \
    "    return major == 9 and minor == 0\n"


def _per_vendor_python_project(tmp_path, setup_text):
    (tmp_path / ".git").mkdir()
    (tmp_path / "setup.py").write_text(setup_text)
    for rel in ("csrc/k/src/kernel.cu", "csrc/k/src/kernel.h", "csrc/k/api.cpp", "csrc/k_ck/api.cpp", "csrc/common/util.cu"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(KERNEL)
    (tmp_path / "pkg" / "cute").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "cute" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "cute" / "kern.py").write_text("import cutlass\nimport cutlass.cute as cute\n\n" + _CAPABILITY_GATE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_kern.py").write_text("from pkg.cute.kern import f\n" + _CAPABILITY_GATE)
    (tmp_path / "pkg" / "gates.py").write_text(_CAPABILITY_GATE)


def test_a_python_build_that_lists_sources_per_vendor(tmp_path):
    """flash-attention-like: setup.py builds csrc/k/ only when not IS_ROCM and csrc/k_ck/ for ROCm. The
    CUDA-only sources and the headers beside them are the NVIDIA build's; a source both branches name,
    the ROCm branch's and code outside both are checked. So are Python modules, except those written
    in the CuTe DSL and the tests that import them (the NVIDIA backend's)."""
    _per_vendor_python_project(tmp_path, _SETUP_PER_VENDOR)
    build = amdbuild.read(str(tmp_path))
    assert {Path(p).relative_to(tmp_path).as_posix() for p in build.python_nvidia_files} == \
        {"csrc/k/api.cpp", "csrc/k/src/kernel.cu"}
    assert {Path(p).relative_to(tmp_path).as_posix() for p in build.python_nvidia_dirs} == {"csrc/k", "csrc/k/src"}
    assert scan(tmp_path) == [("csrc/common/util.cu", 1, "WRP006"), ("csrc/k_ck/api.cpp", 1, "WRP006"),
                              ("pkg/gates.py", 5, "PY002")]
    loud = scan(tmp_path, "--report-nvidia-branches")
    assert ("csrc/k/src/kernel.h", 1, "WRP006") in loud and ("pkg/cute/kern.py", 1, "PY006") in loud
    assert ("tests/test_kern.py", 6, "PY002") in loud


def test_per_vendor_python_sources_need_the_rocm_switch(tmp_path):
    # The same lists without a ROCm branch (a CUDA-only package): every source and module is checked.
    _per_vendor_python_project(tmp_path, _SETUP_PER_VENDOR.replace("IS_ROCM = IS_HIP_EXTENSION", "IS_ROCM = False")
                               .replace("IS_HIP_EXTENSION", "CUDA_HOME"))
    amdbuild._BY_ROOT.clear()
    found = scan(tmp_path)
    assert ("csrc/k/src/kernel.cu", 1, "WRP006") in found and ("pkg/cute/kern.py", 1, "PY006") in found
    assert ("tests/test_kern.py", 6, "PY002") in found


def test_a_source_the_rocm_branch_names_as_its_hipified_copy_is_amd_code(tmp_path):
    # `if IS_ROCM: sources=["csrc/ops/scan.hip"]`: hipify makes that file from csrc/ops/scan.cu at build
    # time, so the .cu is compiled for AMD too, although only the CUDA branch names it.
    setup = _SETUP_PER_VENDOR.replace('["csrc/k_ck/api.cpp", "csrc/common/util.cu"]',
                                      '["csrc/k_ck/api.cpp", "csrc/common/util.cu", "csrc/ops/scan.hip"]') \
        .replace('["csrc/k/api.cpp", "csrc/common/util.cu"]', '["csrc/k/api.cpp", "csrc/common/util.cu", "csrc/ops/scan.cu"]')
    _per_vendor_python_project(tmp_path, setup)
    (tmp_path / "csrc" / "ops").mkdir()
    (tmp_path / "csrc" / "ops" / "scan.cu").write_text(KERNEL)
    build = amdbuild.read(str(tmp_path))
    assert str(tmp_path / "csrc" / "ops" / "scan.cu") not in build.python_nvidia_files
    assert str(tmp_path / "csrc" / "k" / "api.cpp") in build.python_nvidia_files
    assert ("csrc/ops/scan.cu", 1, "WRP006") in scan(tmp_path)


def test_sources_an_nvidia_block_appends_to_a_shared_list(tmp_path):
    # deepmd-kit's op/pt: `if(USE_CUDA_TOOLKIT AND ...) list(APPEND OP_SRC x.cu) endif()` then
    # `add_library(op ${OP_SRC})` outside the block: x.cu is the NVIDIA build's alone, shared.cc both's.
    (tmp_path / ".git").mkdir()
    for name in ("shared.cc", "x.cu", "y.cu"):
        (tmp_path / name).write_text("int f();\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "option(P_USE_CUDA_TOOLKIT OFF)\noption(P_USE_ROCM_TOOLKIT OFF)\n"
        "set(OP_SRC shared.cc)\n"
        "if(P_USE_CUDA_TOOLKIT AND P_TORCH_HAS_CUDA)\n  enable_language(CUDA)\n  list(APPEND OP_SRC x.cu)\nendif()\n"
        "add_library(op ${OP_SRC})\n"
        "if(P_USE_ROCM_TOOLKIT)\n  enable_language(HIP)\n  set_source_files_properties(y.cu PROPERTIES LANGUAGE HIP)\n"
        "  add_library(gpu y.cu)\nendif()\n")
    build = amdbuild.read(str(tmp_path))
    assert str(tmp_path / "x.cu") in build.nvidia_sources
    assert str(tmp_path / "shared.cc") not in build.nvidia_sources
    assert build.amd_sources == {str(tmp_path / "y.cu")}


def test_a_vendor_word_run_on_into_lib(tmp_path):
    # SuperLU_DIST's `TPL_ENABLE_CUDALIB` beside `TPL_ENABLE_HIPLIB`; one target per build, and the
    # common sources given to it after both blocks (`target_sources(t PRIVATE ${sources})`).
    assert amdbuild.names_cuda("TPL_ENABLE_CUDALIB") and amdbuild.names_amd("TPL_ENABLE_HIPLIB")
    assert "TPL_ENABLE_HIPLIB" in amdbuild._twins("TPL_ENABLE_CUDALIB")
    assert not amdbuild.names_cuda("CUDALIBRE_X")
    (tmp_path / ".git").mkdir()
    (tmp_path / "hip").mkdir()
    for name in ("common.c", "batch.cu", "hip/k.hip.cpp"):
        (tmp_path / name).write_text("int f();\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "option(TPL_ENABLE_CUDALIB OFF)\noption(TPL_ENABLE_HIPLIB OFF)\n"
        "set(sources common.c)\n"
        "if(TPL_ENABLE_CUDALIB)\n  list(APPEND sources batch.cu)\nendif()\n"
        "if(TPL_ENABLE_HIPLIB)\n  enable_language(HIP)\n  set(hipsources hip/k.hip.cpp)\n"
        "  set_source_files_properties(${hipsources} PROPERTIES LANGUAGE HIP)\n  add_library(t ${hipsources})\n"
        "else()\n  add_library(t \"\")\nendif()\n"
        "target_sources(t PRIVATE ${sources})\n")
    build = amdbuild.read(str(tmp_path))
    assert build.nvidia_sources == {str(tmp_path / "batch.cu")}
    assert str(tmp_path / "common.c") in build.amd_sources


def test_definitions_only_nvcc_is_given(tmp_path):
    # qiskit-aer: `set(CUDA_NVCC_FLAGS "${CUDA_NVCC_FLAGS} -DAER_THRUST_CUDA")` in the CUDA branch.
    (tmp_path / ".git").mkdir()
    (tmp_path / "k.cu").write_text("int f();\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "if(BACKEND STREQUAL \"ROCM\")\n  enable_language(HIP)\n  add_definitions(-DP_THRUST_ROCM)\n"
        "  set_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\n  add_library(p k.cu)\n"
        "else()\n  set(CUDA_NVCC_FLAGS \"${CUDA_NVCC_FLAGS} -DP_THRUST_GPU -DP_THRUST_CUDA -use_fast_math\")\nendif()\n")
    build = amdbuild.read(str(tmp_path))
    facts = build.facts_for(str(tmp_path / "k.cu"))
    assert amdbuild.NVIDIA_BUILD_MARK + "P_THRUST_CUDA" in facts.macros()


def test_python_build_switch_spellings():
    # AutoGPTQ: `ROCM_VERSION = os.environ.get("ROCM_VERSION")` / `if not ROCM_VERSION and COMPILE_MARLIN:`.
    import ast
    polarity = lambda text: amdbuild._py_amd_polarity(ast.parse(text).body[0].test)
    assert polarity("if not ROCM_VERSION and COMPILE_MARLIN: pass") is False
    assert polarity("if ROCM_VERSION: pass") is True
    assert polarity("if torch.version.hip: pass") is True
    assert polarity("if CUDA_VERSION: pass") is None
    assert polarity("if torch.version.cuda and CUDA_HOME is not None: pass") is False
    # A name read through its first assignment (AutoAWQ: `if CUDA_VERSION:` builds the PTX-only extensions).
    module = ast.parse('CUDA_VERSION = os.getenv("CUDA_VERSION", None) or torch.version.cuda\n'
                       'use_rocm = torch.version.hip and ROCM_HOME is not None\n'
                       'use_gpu = torch.cuda.is_available()\n')
    assigned = {a.targets[0].id: a.value for a in module.body}
    test = lambda text: amdbuild._py_amd_polarity(ast.parse(text).body[0].test, assigned)
    assert test("if CUDA_VERSION: pass") is False
    assert test("if use_rocm: pass") is True
    assert test("if use_gpu: pass") is None


def test_a_cute_dsl_module_behind_a_top_level_gate():
    # deepmd-kit's kernels/cute: `if CUTE_AVAILABLE:` / `try:` at module level around the DSL import is
    # the NVIDIA backend; an import inside a function is a lazy path of a shared module.
    from hiplint.context import _guarded_dsl_import
    assert _guarded_dsl_import(b"import torch\nif CUTE_AVAILABLE:\n    import cutlass.cute as cute\n")
    assert _guarded_dsl_import(b"try:\n    import x\n    # the DSL\n    from cutlass import cute\nexcept ImportError:\n    pass\n")
    assert not _guarded_dsl_import(b"def quantize(x):\n    import cutlass\n    return x\n")
    assert not _guarded_dsl_import(b"class K:\n    def run(self):\n        if ok:\n            import cutlass\n")


def test_a_pytorch_extension_hipified_at_build_time_reads_cudacc_as_hipcc(tmp_path):
    # pytorch3d: setup.py builds CUDAExtension on ROCm too; BuildExtension hipifies the sources first and
    # its mapping turns `__CUDACC__` into `__HIPCC__`, so `#ifdef __CUDACC__` takes the GPU branch on AMD.
    (tmp_path / ".git").mkdir()
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "global.h").write_text(
        "#ifdef __CUDACC__\n#define HD __host__ __device__\n#else\n#define HD\n#endif\nHD inline int one() { return 1; }\n")
    (tmp_path / "csrc" / "k.cu").write_text('#include "global.h"\n__global__ void k(int* o) { o[0] = one(); }\n')
    assert [f[2] for f in scan(tmp_path, "--isolated", "--select", "ARC006")] == ["ARC006"]
    (tmp_path / "setup.py").write_text(
        "import torch\nfrom torch.utils.cpp_extension import CUDAExtension, BuildExtension, ROCM_HOME\n"
        "is_rocm = torch.version.hip is not None\n"
        "ext = CUDAExtension('p._C', ['csrc/k.cu'])\n")
    assert scan(tmp_path, "--isolated", "--select", "ARC006") == []
    assert amdbuild.read(str(tmp_path)).torch_extension


def test_cudacc_branches_are_nvidia_code_where_hip_clang_compiles_the_source(tmp_path):
    # CARE, DiHydrogen: the AMD build compiles the .cu sources with hip-clang, which never defines
    # `__CUDACC__`: what sits under `#ifdef __CUDACC__` is NVIDIA code (ARC006 reports the test itself
    # when the branch holds GPU code). A build that runs hipify first reads it as `__HIPCC__`.
    (tmp_path / ".git").mkdir()
    (tmp_path / "k.cu").write_text(
        "__device__ float mix(float v) {\n#ifdef __CUDACC__\n    v += __shfl_xor_sync(0xffffffff, v, 1) + threadIdx.x;\n#endif\n"
        "    return v;\n}\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "option(P_USE_HIP OFF)\noption(P_USE_CUDA OFF)\nif(P_USE_HIP)\n  enable_language(HIP)\n"
        "  set_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\n  add_library(p k.cu)\nendif()\n")
    codes = [f[2] for f in scan(tmp_path, "--isolated", "--select", "ARC006,WRP006")]
    assert codes == ["ARC006"]
    (tmp_path / "CMakeLists.txt").write_text(
        "option(P_USE_HIP OFF)\nif(P_USE_HIP)\n  execute_process(COMMAND hipify-perl -inplace k.cu)\n"
        "  enable_language(HIP)\n  set_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\n  add_library(p k.cu)\nendif()\n")
    codes = [f[2] for f in scan(tmp_path, "--isolated", "--select", "ARC006,WRP006")]
    assert "WRP006" in codes and "ARC006" not in codes


def test_a_source_no_build_compiles_is_not_reported(tmp_path):
    # SuperLU_DIST's `sSchCompUdt-cuda.c`: named by no build file, matched by no glob, included by no
    # file, beside sources the build lists one by one.
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.cu").write_text(KERNEL)
    (tmp_path / "old.cu").write_text(KERNEL)
    (tmp_path / "CMakeLists.txt").write_text(
        "option(P_USE_HIP OFF)\nif(P_USE_HIP)\n  enable_language(HIP)\n"
        "  set_source_files_properties(a.cu PROPERTIES LANGUAGE HIP)\n  add_library(p a.cu)\nendif()\n")
    assert sorted(f[0] for f in scan(tmp_path, "--isolated", "--select", "WRP006")) == ["a.cu"]
    assert amdbuild.read(str(tmp_path)).unbuilt(str(tmp_path / "old.cu"))
    assert ("old.cu", 1, "WRP006") in scan(tmp_path, "--isolated", "--select", "WRP006", "--report-nvidia-branches")
    # Named in a script, matched by a glob, or included by a compiled source: compiled after all.
    for extra in ({"build.sh": "hipcc -c old.cu\n"}, {"more.mk": "SRCS := $(wildcard *.cu)\n"}):
        for name, text in extra.items():
            (tmp_path / name).write_text(text)
        assert "old.cu" in [f[0] for f in scan(tmp_path, "--isolated", "--select", "WRP006")], extra
        for name in extra:
            (tmp_path / name).unlink()
    (tmp_path / "a.cu").write_text('#include "old.cu"\n' + KERNEL)
    assert "old.cu" in [f[0] for f in scan(tmp_path, "--isolated", "--select", "WRP006")]
    # Included only by another source no build compiles: compiled by none either.
    (tmp_path / "a.cu").write_text(KERNEL)
    (tmp_path / "b.cu").write_text('#include "old.cu"\n')
    assert "old.cu" not in [f[0] for f in scan(tmp_path, "--isolated", "--select", "WRP006")]


def _hip_list_project(tmp_path: Path, sources: str) -> None:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "CMakeLists.txt").write_text(
        "option(P_USE_HIP OFF)\nset(SRC " + sources + ")\nif(P_USE_HIP)\n  enable_language(HIP)\n"
        "  set_source_files_properties(${SRC} PROPERTIES LANGUAGE HIP)\n  add_library(p ${SRC})\nendif()\n")


def test_a_directory_the_source_lists_leave_out_is_unbuilt(tmp_path):
    # aphrodite's `kernels/quantization/autoquant/`: its sibling directories' sources are listed one by one,
    # none of its own, and no build file names it: its sources, the headers only they include, a
    # subdirectory of it, and an implementation include nothing includes are compiled by no build.
    _hip_list_project(tmp_path, "kernels/awq/gemm.cu")
    for d in ("kernels/awq", "kernels/autoquant/sub", "kernels/detail"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "kernels/awq/gemm.cu").write_text(KERNEL)
    (tmp_path / "kernels/autoquant/gemm_s4.cu").write_text('#include "common.h"\n' + KERNEL)
    (tmp_path / "kernels/autoquant/common.h").write_text(KERNEL)
    (tmp_path / "kernels/autoquant/sub/more.cu").write_text(KERNEL)
    (tmp_path / "kernels/detail/old_scan.inl").write_text(KERNEL)
    # A copy of a listed source under the same name elsewhere (`kernels/backup/gemm.cu`): the list's path
    # names the other one.
    (tmp_path / "kernels/backup").mkdir()
    (tmp_path / "kernels/backup/gemm.cu").write_text(KERNEL)
    assert [f[0] for f in scan(tmp_path, "--isolated", "--select", "WRP006")] == ["kernels/awq/gemm.cu"]
    # A formatting script's `-name '*.cu'` and a linter's exclude list build nothing either.
    (tmp_path / "format.sh").write_text("find kernels/ -name '*.cu' | xargs clang-format -i\n")
    (tmp_path / "pyproject.toml").write_text('[tool.ruff]\nexclude = ["kernels/autoquant/gen.py"]\n')
    assert [f[0] for f in scan(tmp_path, "--isolated", "--select", "WRP006")] == ["kernels/awq/gemm.cu"]
    # A build script naming the directory, or a glob that reaches it: compiled after all.
    for extra in ({"build.sh": "hipcc -c kernels/autoquant/*.cu\n"}, {"setup.py": 'SRC = ["autoquant"]\n'},
                  {"build_information.sh": "hipcc -c kernels/autoquant/gemm_s4.cu\n"}):
        for name, text in extra.items():
            (tmp_path / name).write_text(text)
        assert "kernels/autoquant/gemm_s4.cu" in [f[0] for f in scan(tmp_path, "--isolated", "--select", "WRP006")], extra
        for name in extra:
            (tmp_path / name).unlink()


def test_a_glob_with_a_directory_matches_only_there(tmp_path):
    # `file(GLOB G "kernels/generated/*.cu")` compiles the generated kernels, not every `.cu` of the tree.
    _hip_list_project(tmp_path, "kernels/a.cu ${G}")
    (tmp_path / "CMakeLists.txt").write_text('file(GLOB G "kernels/generated/*.cu")\n'
                                             + (tmp_path / "CMakeLists.txt").read_text())
    (tmp_path / "kernels/generated").mkdir(parents=True)
    for name in ("kernels/a.cu", "kernels/old.cu", "kernels/generated/g.cu"):
        (tmp_path / name).write_text(KERNEL)
    build = amdbuild.read(str(tmp_path))
    assert build.unbuilt(str(tmp_path / "kernels/old.cu"))
    assert not build.unbuilt(str(tmp_path / "kernels/generated/g.cu"))


def test_an_included_cmake_file_adds_directories_relative_to_its_includer(tmp_path):
    # cuSZ: `include(cmake/cuda.cmake)` in the CUDA branch, and that file's `add_subdirectory(codec/fzg)`
    # names the top directory's `codec/fzg` (CMake runs an included file in its includer's directory).
    (tmp_path / ".git").mkdir()
    (tmp_path / "cmake").mkdir()
    (tmp_path / "codec/fzg").mkdir(parents=True)
    (tmp_path / "CMakeLists.txt").write_text(
        'project(p)\nset(P_BACKEND "CUDA")\nif(P_BACKEND STREQUAL "CUDA")\n  include(cmake/cuda.cmake)\n'
        'elseif(P_BACKEND STREQUAL "HIP")\n  include(cmake/hip.cmake)\nendif()\n')
    (tmp_path / "cmake/cuda.cmake").write_text("enable_language(CUDA)\nadd_subdirectory(codec/fzg)\n")
    (tmp_path / "cmake/hip.cmake").write_text("enable_language(HIP)\nadd_library(p_hip a.hip)\n")
    (tmp_path / "a.hip").write_text("int a;\n")
    (tmp_path / "codec/fzg/CMakeLists.txt").write_text("add_library(fzg k.cu)\n")
    (tmp_path / "codec/fzg/k.cu").write_text(KERNEL)
    out = run_cli("scan", "--show-build", cwd=tmp_path).stdout.decode()
    assert "nvidia-only-directories = [\n  'codec/fzg',\n]" in out, out
    assert scan(tmp_path, "--isolated", "--select", "WRP006") == []


def test_a_standalone_nvcc_makefile_beside_the_cmake_build_is_nvidia_code(tmp_path):
    # DPLASMA's `tools/gemmpeak`: a CUDA benchmark with its own nvcc Makefile, which the CMake build (the
    # one with the AMD path) never adds. A Makefile that knows hipcc too is an AMD build of its own.
    _hip_list_project(tmp_path, "src/a.cu")
    (tmp_path / "CMakeLists.txt").write_text("project(p)\n" + (tmp_path / "CMakeLists.txt").read_text())
    (tmp_path / "src").mkdir()
    (tmp_path / "src/a.cu").write_text(KERNEL)
    (tmp_path / "tools/peak").mkdir(parents=True)
    (tmp_path / "tools/peak/peak.cu").write_text(KERNEL)
    (tmp_path / "tools/peak/Makefile").write_text("peak: peak.cu\n\t$(NVCC) -o peak peak.cu -lcublas\nNVCC ?= nvcc\n")
    assert [f[0] for f in scan(tmp_path, "--isolated", "--select", "WRP006")] == ["src/a.cu"]
    (tmp_path / "tools/peak/Makefile").write_text("peak: peak.cu\n\t$(NVCC) -o peak peak.cu\nhip: peak.cu\n\thipcc -o peak peak.cu\n")
    assert [f[0] for f in scan(tmp_path, "--isolated", "--select", "WRP006")] == ["src/a.cu", "tools/peak/peak.cu"]


def test_a_meson_build_keeps_what_its_nvidia_blocks_list_to_nvidia(tmp_path):
    # lc0: Meson compiles the CUDA backend with nvcc custom targets inside `if ... cu_dart.found()`, and
    # builds for AMD through another backend (`-Dsycl=amd`, hipBLAS). Those sources, the headers only they
    # include (a `#include "io.h"` of the SYCL twin finds its own `sycl/io.h`) and the definitions those
    # blocks set are the NVIDIA build's.
    (tmp_path / ".git").mkdir()
    for d in ("src/cuda", "src/sycl"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "meson.build").write_text(
        "project('p', 'cpp')\nfiles = ['src/common.cc']\n"
        "if get_option('cudnn') and cu_dart.found() and nvcc_ok  # the CUDA backend\n"
        "  files += 'src/cuda/network.cc'\n  conf.set('USE_P_CUDART', true)\n"
        "  files += custom_target('cuda code',\n    input : 'src/cuda/kernels.cu',\n"
        "    command : [nvcc, nvcc_arguments]\n  )\n"
        "elif get_option('sycl') == 'amd'\n  deps += cc.find_library('hipblas')\n  files += 'src/sycl/network.cc'\n"
        "endif\n")
    (tmp_path / "src/cuda/kernels.cu").write_text(KERNEL)
    (tmp_path / "src/cuda/io.h").write_text(KERNEL)
    (tmp_path / "src/cuda/network.cc").write_text('#include "io.h"\n')
    (tmp_path / "src/sycl/io.h").write_text("int io;\n")
    (tmp_path / "src/sycl/network.cc").write_text('#include "io.h"\n')
    (tmp_path / "src/common.cc").write_text("#ifdef USE_P_CUDART\n" + KERNEL + "#endif\n")
    assert scan(tmp_path, "--isolated", "--select", "WRP006") == []
    out = run_cli("scan", "--show-build", cwd=tmp_path).stdout.decode()
    assert "'src/cuda/kernels.cu'" in out and "'USE_P_CUDART'" in out, out
    # With no AMD path in the Meson files, nothing is taken for NVIDIA's.
    (tmp_path / "meson.build").write_text((tmp_path / "meson.build").read_text().replace(
        "elif get_option('sycl') == 'amd'\n  deps += cc.find_library('hipblas')\n", "else\n"))
    assert [f[0] for f in scan(tmp_path, "--isolated", "--select", "WRP006")] == [
        "src/common.cc", "src/cuda/io.h", "src/cuda/kernels.cu"]


def test_backend_macros_of_one_backend_libraries(tmp_path):
    # PelePhysics: `#ifdef AMREX_USE_CUDA` (cuSOLVER calls) / `#else` (an Abort stub for HIP). AMReX builds
    # for one GPU backend at a time: in a project that builds for AMD, that branch is the NVIDIA build's.
    src = "#ifdef AMREX_USE_CUDA\n" + KERNEL + "#else\nvoid k_stub();\n#endif\n"
    (tmp_path / ".git").mkdir()
    (tmp_path / "k.cpp").write_text(src)
    assert [f[2] for f in scan(tmp_path, "--isolated", "--select", "WRP006")] == ["WRP006"]
    (tmp_path / "GNUmakefile").write_text("USE_HIP = TRUE\nk.o: k.cpp\n\thipcc -c k.cpp\n")
    assert scan(tmp_path, "--isolated", "--select", "WRP006") == []


BACKENDS = ROOT / "fixtures" / "dualtarget_backends"


def test_a_project_with_one_directory_per_vendor_backend():
    # VTK-m's and Taichi's layout: `cont/cuda/` beside `cont/kokkos/`, whose sources the AMD build compiles
    # as HIP, and `exec/cuda/` beside `exec/kokkos/` (named as the AMD back end's directory) are NVIDIA's;
    # `ARCH_cuda` beside `ARCH_amdgpu` in a per-back-end runtime is off in the AMD build, as is the
    # `FLOW_WITH_CUDA` switch beside `FLOW_WITH_AMDGPU`. The kernel added to the shared code is reported.
    assert [f for f in scan(ROOT, "fixtures/dualtarget_backends") if ".fixed." not in f[0]] == [
        ("fixtures/dualtarget_backends/cont/shared/count.cxx", 6, "WRP005"),
        ("fixtures/dualtarget_backends/cont/shared/count.cxx", 6, "WRP006"),
        ("fixtures/dualtarget_backends/cont/shared/count.cxx", 7, "WRP001"),
        ("fixtures/dualtarget_backends/cont/shared/count.cxx", 7, "WRP001"),
    ]
    build = amdbuild.read(str(BACKENDS))
    assert "FLOW_WITH_CUDA" in build.nvidia_switches
    for nvidia in ("cont/cuda/allocator.cu", "exec/cuda/operators.h"):
        assert build.facts_for(str(BACKENDS / nvidia)).nvidia_source, nvidia
    for shared in ("cont/shared/count.cxx", "cont/kokkos/allocator.cxx", "exec/kokkos/operators.h"):
        assert not build.facts_for(str(BACKENDS / shared)).nvidia_source, shared



def test_a_cuda_directory_without_an_amd_compiled_sibling_is_reported(tmp_path):
    # The same project before it builds for AMD (no Kokkos adapter, no HIP anywhere): the CUDA adapter
    # is what a port must change.
    shutil.copytree(BACKENDS, tmp_path / "p", ignore=shutil.ignore_patterns("kokkos", "*.fixed.*"))
    (tmp_path / "p" / "cont" / "CMakeLists.txt").write_text("flow_module(flow_cont shared/count.cxx)\nadd_subdirectory(cuda)\n")
    found = {(p, c) for p, _, c in scan(tmp_path / "p")}
    assert ("cont/cuda/allocator.cu", "MEM005") in found and ("exec/cuda/operators.h", "WRP006") in found


def test_a_directory_added_only_under_the_cuda_switch_without_a_hip_language(tmp_path):
    # kokkos-tools: no HIP target (the AMD build is plain CXX linking roctx), but the build names both
    # backends' switches, so what it adds only under the CUDA one is NVIDIA's; shared code is reported.
    (tmp_path / ".git").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(
        "project(t LANGUAGES CXX)\noption(T_ENABLE_CUDA \"\" OFF)\noption(T_ENABLE_HIP \"\" OFF)\n"
        "add_subdirectory(common)\nif(T_ENABLE_CUDA)\n  add_subdirectory(nvtx)\nendif()\n"
        "if(T_ENABLE_HIP)\n  add_subdirectory(roctx)\nendif()\n")
    for d in ("common", "nvtx", "roctx"):
        (tmp_path / d).mkdir()
        # A project function builds each target (kokkos-tools' kp_add_library): no AMD target to read.
        (tmp_path / d / "CMakeLists.txt").write_text(f"t_add_library({d} {d}.cpp)\n")
    (tmp_path / "nvtx" / "nvtx.cpp").write_text("#include <nvToolsExt.h>\nvoid push() { nvtxRangePushA(\"x\"); }\n")
    (tmp_path / "roctx" / "roctx.cpp").write_text("#include <roctx.h>\nvoid push() { roctxRangePushA(\"x\"); }\n")
    (tmp_path / "common" / "common.cpp").write_text("#include <nvToolsExt.h>\nvoid mark() { nvtxMarkA(\"x\"); }\n")
    build = amdbuild.read(str(tmp_path))
    assert not build.known and build.nvidia_subdirs == {str(tmp_path / "nvtx")}
    assert {p for p, _, _ in scan(tmp_path)} == {"common/common.cpp"}


def test_a_project_header_named_like_a_library_header_is_the_projects(tmp_path):
    # mscclpp: `<mscclpp/ext/nccl/nccl.h>` is its own NCCL-style interface, in its include directory and
    # built for ROCm; the library's `<nccl.h>` is still NCCL's.
    (tmp_path / ".git").mkdir()
    (tmp_path / "include" / "proj" / "ext" / "nccl").mkdir(parents=True)
    (tmp_path / "include" / "proj" / "ext" / "nccl" / "nccl.h").write_text("#pragma once\nint projAllReduce();\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "own.cu").write_text("#include <proj/ext/nccl/nccl.h>\nint f() { return projAllReduce(); }\n")
    (tmp_path / "src" / "vendor.cu").write_text("#include <nccl.h>\nint g() { return 0; }\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "project(p LANGUAGES CXX HIP)\ninclude_directories(${PROJECT_SOURCE_DIR}/include)\n"
        "set_source_files_properties(src/own.cu src/vendor.cu PROPERTIES LANGUAGE HIP)\n"
        "add_library(p src/own.cu src/vendor.cu)\n")
    assert [p for p, _, c in scan(tmp_path, "--select", "LIB006")] == ["src/vendor.cu"]


def test_a_makefile_kept_per_vendor_is_read_as_the_amd_build(tmp_path):
    # GPUMD's layout: `src/makefile` runs nvcc, `src/makefile.hip` runs hipcc over the same sources.
    # `makefile.hip` is a Makefile (not a HIP source), and it makes the project dual-target.
    from hiplint.languages import is_makefile_name, language_of

    assert language_of("src/makefile.hip") == "make" and language_of("Makefile.cuda") == "make"
    assert not is_makefile_name("Makefile.am") and not is_makefile_name("Makefile.expected")
    assert language_of("kernel.hip") == "cuda"
    (tmp_path / ".git").mkdir()
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text("__global__ void k(float* x) { x[threadIdx.x] = 1.f; }\n")
    (src / "makefile").write_text("CC = nvcc\nCFLAGS = -O3 -arch=sm_60\nLIBS = -lcublas\n"
                                  "k: k.cu\n\t$(CC) $(CFLAGS) k.cu -o k $(LIBS)\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "project(p LANGUAGES CXX CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 80)\nadd_executable(k src/k.cu)\n")
    (src / "makefile.hip").write_text("CC = hipcc\nCFLAGS = -O3 --offload-arch=gfx90a -DUSE_HIP\n"
                                      "LIBS = -lhipblas\nSOURCES = $(wildcard *.cu)\n"
                                      "k: $(SOURCES)\n\t$(CC) $(CFLAGS) $(SOURCES) -o k $(LIBS)\n")
    assert scan(tmp_path, "--select", "BLD") == []
    assert str(src / "k.cu") in amdbuild.read(str(tmp_path)).amd_sources
    (src / "makefile.hip").unlink()
    amdbuild._BY_ROOT.clear()
    assert {c for _, _, c in scan(tmp_path, "--select", "BLD")} >= {"BLD001", "BLD006", "BLD007"}


def test_cuda_probes_and_macros_of_the_nvidia_branch_beside_a_rocm_branch(tmp_path):
    # Horovod's CMake: `check_language(CUDA)` then `if(CMAKE_CUDA_COMPILER) enable_language(CUDA)`, an
    # optional `find_package(CUDAToolkit)`, a macro called only in the CUDA branch of a chain whose other
    # branch is ROCm's, and a definition made only when NVIDIA's NVTX was found.
    (tmp_path / ".git").mkdir()
    (tmp_path / "ops.cc").write_text("#if HAVE_NVTX\n#include <nvToolsExt.h>\n#endif\nint f() { return 0; }\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "project(p CXX)\ninclude(CheckLanguage)\ncheck_language(CUDA)\n"
        "if(NOT CMAKE_CUDA_COMPILER)\n  find_package(CUDAToolkit)\nendif()\n"
        "if(CMAKE_CUDA_COMPILER)\n  enable_language(CUDA)\nendif()\n"
        "macro(ADD_CUDA)\n  find_package(CUDAToolkit REQUIRED)\n  add_definitions(-DHAVE_CUDA=1)\nendmacro()\n"
        "if(NOT DEFINED P_GPU OR P_GPU STREQUAL \"CUDA\")\n  add_cuda()\n"
        "elseif(P_GPU STREQUAL \"ROCM\")\n  find_package(ROCM REQUIRED)\n  add_definitions(-DHAVE_ROCM=1)\n"
        "  enable_language(HIP)\n  set_source_files_properties(ops.cc PROPERTIES LANGUAGE HIP)\nendif()\n"
        "find_package(NVTX)\nif(NVTX_FOUND)\n  add_definitions(-DHAVE_NVTX=1)\nendif()\n"
        "add_library(p ops.cc)\n")
    assert scan(tmp_path) == []
    assert "HAVE_NVTX" in amdbuild.read(str(tmp_path)).nvidia_defines
    # Without the ROCm branch the same file is a CUDA-only build: the toolkit and the language are reported.
    text = (tmp_path / "CMakeLists.txt").read_text()
    (tmp_path / "CMakeLists.txt").write_text(
        text.replace('elseif(P_GPU STREQUAL "ROCM")\n  find_package(ROCM REQUIRED)\n  add_definitions(-DHAVE_ROCM=1)\n'
                     '  enable_language(HIP)\n  set_source_files_properties(ops.cc PROPERTIES LANGUAGE HIP)\n', ""))
    amdbuild._BY_ROOT.clear()
    assert {code for _, _, code in scan(tmp_path)} >= {"BLD001", "BLD003"}


def test_initial_cache_presets_that_pick_the_backend(tmp_path):
    # Quokka: AMReX picks the GPU backend; per-machine presets for `cmake -C` set AMReX_GPU_BACKEND to CUDA
    # on NVIDIA machines and to HIP on AMD ones. The project builds for AMD; the CUDA presets are NVIDIA's.
    (tmp_path / ".git").mkdir()
    (tmp_path / "cmake").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(
        "project(q CXX)\nif(AMReX_GPU_BACKEND MATCHES \"CUDA\")\n  enable_language(CUDA)\n"
        "  set(CMAKE_CUDA_ARCHITECTURES 70 80 CACHE STRING \"\")\nendif()\nadd_executable(q main.cpp)\n")
    (tmp_path / "main.cpp").write_text("int main() { return 0; }\n")
    (tmp_path / "cmake" / "summit.cmake").write_text(
        'set(CMAKE_CUDA_COMPILER "nvcc" CACHE PATH "")\nset(AMReX_GPU_BACKEND CUDA CACHE STRING "")\n'
        'set(CMAKE_CUDA_ARCHITECTURES 70 CACHE STRING "")\n')
    (tmp_path / "cmake" / "crusher.cmake").write_text(
        'set(CMAKE_CXX_COMPILER "hipcc" CACHE PATH "")\nset(AMReX_GPU_BACKEND HIP CACHE STRING "")\n'
        'set(AMReX_AMD_ARCH gfx90a CACHE STRING "")\n')
    assert scan(tmp_path) == []
    assert amdbuild.read(str(tmp_path)).preset_nvidia_files == {str(tmp_path / "cmake" / "summit.cmake")}
    # A CUDA preset that only tests for HIP in a condition (GEOS's `lassen-base.cmake`: `if(${DEV} STREQUAL
    # "HIP" OR ${DEV} STREQUAL "CUDA")`) still picks nothing of AMD's: it is the NVIDIA machine's.
    (tmp_path / "cmake" / "lassen.cmake").write_text(
        'set(AMReX_GPU_BACKEND "CUDA" CACHE STRING "" FORCE)\nif(${AMReX_GPU_BACKEND} STREQUAL "HIP" OR '
        '${AMReX_GPU_BACKEND} STREQUAL "CUDA")\n  set(Q_GPU ON CACHE BOOL "")\nendif()\n'
        'set(Q_LIBS ${CUDA_TOOLKIT_ROOT_DIR}/lib64/libcublas.so CACHE PATH "")\n')
    amdbuild._BY_ROOT.clear()
    assert scan(tmp_path) == []
    assert str(tmp_path / "cmake" / "lassen.cmake") in amdbuild.read(str(tmp_path)).preset_nvidia_files
    (tmp_path / "cmake" / "lassen.cmake").unlink()
    amdbuild._BY_ROOT.clear()
    # Without an AMD preset nothing says the project builds for AMD: the CUDA preset is reported.
    (tmp_path / "cmake" / "crusher.cmake").unlink()
    amdbuild._BY_ROOT.clear()
    assert ("cmake/summit.cmake", 3, "BLD002") in scan(tmp_path)


def test_modules_included_from_the_top_glob_from_the_top_through_a_wrapper(tmp_path):
    # TVM: `cmake/modules/CUDA.cmake`, included from the top CMakeLists.txt, globs `src/contrib/cublas/*.cc`
    # (relative to the top) through the project's `tvm_file_glob(GLOB ...)` under `if(USE_CUDA AND
    # USE_CUBLAS)`; `if(USE_VLLM)` enables CUDA for its kernels. The ROCm module builds other sources.
    (tmp_path / ".git").mkdir()
    for d in ("cmake/modules", "cmake/utils", "src/contrib/cublas", "src/contrib/vllm", "src/rocm"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "CMakeLists.txt").write_text(
        "project(t CXX)\noption(USE_CUDA OFF)\noption(USE_ROCM OFF)\ninclude(cmake/utils/Utils.cmake)\n"
        "include(cmake/modules/CUDA.cmake)\ninclude(cmake/modules/ROCM.cmake)\ninclude(cmake/modules/vllm.cmake)\n")
    (tmp_path / "cmake/utils/Utils.cmake").write_text(
        "macro(tvm_file_glob glob variable)\n  file(${glob} ${variable} CONFIGURE_DEPENDS ${ARGN})\nendmacro()\n")
    (tmp_path / "cmake/modules/CUDA.cmake").write_text(
        "if(USE_CUDA AND USE_CUBLAS)\n  tvm_file_glob(GLOB CUBLAS_SRCS src/contrib/cublas/*.cc)\n"
        "  add_library(cublas_objs OBJECT ${CUBLAS_SRCS})\nendif()\n")
    (tmp_path / "cmake/modules/ROCM.cmake").write_text(
        "if(USE_ROCM)\n  enable_language(HIP)\n  tvm_file_glob(GLOB ROCM_SRCS src/rocm/*.cc)\n"
        "  set_source_files_properties(${ROCM_SRCS} PROPERTIES LANGUAGE HIP)\n  add_library(rocm_objs OBJECT ${ROCM_SRCS})\n"
        "endif()\n")
    (tmp_path / "cmake/modules/vllm.cmake").write_text(
        "if(USE_VLLM)\n  enable_language(CUDA)\n  tvm_file_glob(GLOB VLLM_SRCS src/contrib/vllm/*.cu)\n"
        "  add_library(vllm_objs OBJECT ${VLLM_SRCS})\nendif()\n")
    (tmp_path / "src/contrib/cublas/gemm.cc").write_text(
        "#include <cublas_v2.h>\nint v(cublasHandle_t h) { int x; cublasGetVersion(h, &x); return x; }\n")
    (tmp_path / "src/contrib/vllm/attn.cu").write_text(
        "#define WARP_SIZE 32\n__global__ void k(float* o) { o[0] = __shfl_sync(0xffffffff, o[1], 0); }\n")
    (tmp_path / "src/rocm/device.cc").write_text("#include <hip/hip_runtime.h>\nint n() { return 0; }\n")
    build = amdbuild.read(str(tmp_path))
    assert {os.path.relpath(p, tmp_path) for p in build.nvidia_sources} == {
        "src/contrib/cublas/gemm.cc", "src/contrib/vllm/attn.cu"}
    assert str(tmp_path / "src/rocm/device.cc") in build.amd_sources
    assert scan(tmp_path) == []


def test_a_makefile_branch_for_macos_is_not_the_rocm_build(tmp_path):
    # darknet: `ifeq ($(OS),Darwin)` links from /usr/local/cuda/lib on macOS, `else` on Linux. ROCm runs
    # on Linux alone: only the Linux line is the port's.
    (tmp_path / ".git").mkdir()
    (tmp_path / "Makefile").write_text(
        "OS := $(shell uname)\nifeq ($(OS),Darwin)\nLDFLAGS+= -L/usr/local/cuda/lib -lcudart -lcublas\n"
        "else\nLDFLAGS+= -L/usr/local/cuda/lib64 -lcudart -lcublas\nendif\n"
        "app: main.o\n\t$(CC) main.o -o app $(LDFLAGS)\n")
    found = scan(tmp_path, "--select", "BLD004")
    assert found and {line for _, line, _ in found} == {5}


WAVE64_TREE = "__device__ float s(float v) {\n    for (int o = 16; o > 0; o /= 2) v += __shfl_down(v, o);\n    return v;\n}\n"


def test_the_targets_the_build_lists_are_the_targets_when_asked(tmp_path):
    # The project's HIP build lists RDNA GPUs only. By default the targets stay hiplint's own (a build's
    # list is often a fallback for a user's choice); `targets = "build"` or `--target build` takes the
    # build's list, and a 32-lane shuffle tree is then right on every target: the wave64 finding goes.
    (tmp_path / ".git").mkdir()
    (tmp_path / "k.cu").write_text(WAVE64_TREE)
    (tmp_path / "CMakeLists.txt").write_text(
        "project(p LANGUAGES CXX HIP)\n"
        'set(APP_HIP_ARCH "" CACHE STRING "architectures, e.g. gfx942")\n'
        "set(CMAKE_HIP_ARCHITECTURES gfx1100 gfx1101 CACHE STRING \"AMD GPUs\")\n"
        "add_executable(p k.cu)\nset_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\n")
    assert [c for _, _, c in scan(tmp_path, "--select", "WRP003")] == ["WRP003"]
    shown = run_cli("scan", "--show-settings", "--target", "build", cwd=tmp_path).stdout.decode()
    assert 'targets                = ["gfx1100", "gfx1101"]  # from CMakeLists.txt:3' in shown
    assert "wave-sizes             = [32]" in shown
    assert [c for _, _, c in scan(tmp_path, "--select", "WRP003", "--target", "build")] == []
    (tmp_path / "pyproject.toml").write_text('[tool.hiplint]\ntargets = "build"\n')
    assert [c for _, _, c in scan(tmp_path, "--select", "WRP003")] == []
    assert [c for _, _, c in scan(tmp_path, "--select", "WRP003", "--target", "gfx942")] == ["WRP003"]
    # A build that lists none keeps the default targets, and says so.
    (tmp_path / "CMakeLists.txt").write_text("project(p LANGUAGES CXX HIP)\nadd_executable(p k.cu)\n")
    shown = run_cli("scan", "--show-settings", cwd=tmp_path).stdout.decode()
    assert 'targets                = ["gfx90a", "gfx942", "gfx1100"]  # default: the build lists no AMD architectures' in shown


def test_gfx_names_outside_a_target_list_are_no_targets(tmp_path):
    # A flag picked for one architecture, a comment and a cache variable's help text name gfx GPUs
    # without making them the build's targets; clang's --offload-arch does.
    (tmp_path / "CMakeLists.txt").write_text(
        "project(p LANGUAGES CXX HIP)\n"
        "# tested on gfx90a\n"
        'if(ARCH MATCHES "gfx942")\n  add_compile_options(-munsafe-fp-atomics)\nendif()\n'
        'set(X_HIP_ARCH "" CACHE STRING "e.g. gfx906,gfx908")\n')
    assert amdbuild.declared_targets(str(tmp_path)) == ((), "")
    (tmp_path / "Makefile").write_text("HIPFLAGS += --offload-arch=gfx942\nGPU_TARGETS ?= gfx90a:xnack+\n")
    assert amdbuild.declared_targets(str(tmp_path)) == (("gfx90a", "gfx942"), "Makefile:1")


def test_a_directory_no_cmake_file_reaches_is_unbuilt(tmp_path):
    # GauXC's `attic/`: old CMakeLists.txt files nothing adds. Its sources and the headers only they
    # include are quiet; a header of the same name that the live tree includes is its own file.
    (tmp_path / ".git").mkdir()
    (tmp_path / "CMakeLists.txt").write_text("project(p LANGUAGES CXX HIP)\nadd_subdirectory(src)\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "CMakeLists.txt").write_text("add_library(k k.hip)\n")
    (tmp_path / "src" / "k.hip").write_text('#include "ext.hpp"\n')
    (tmp_path / "src" / "ext.hpp").write_text("// the live helper\n")
    old = tmp_path / "attic" / "integrator"
    old.mkdir(parents=True)
    (old / "CMakeLists.txt").write_text("add_library(old k.cu)\n")
    (old / "k.cu").write_text('#include "ext.hpp"\n' + KERNEL)
    (old / "ext.hpp").write_text(KERNEL.replace("void k(", "void e("))
    build = amdbuild.read(str(tmp_path))
    assert build.unreached_dirs == {str(tmp_path / "attic")}
    assert scan(tmp_path, "--select", "WRP006") == []
    assert "unbuilt-directories = [\n  'attic',\n]" in run_cli("scan", "--show-build", cwd=tmp_path).stdout.decode()
    # Named by a build file that is read (`add_subdirectory(attic/integrator)`): built after all.
    (tmp_path / "CMakeLists.txt").write_text("project(p LANGUAGES CXX HIP)\nadd_subdirectory(src)\n"
                                             "add_subdirectory(attic/integrator)\n")
    assert amdbuild.read(str(tmp_path)).unreached_dirs == set()
    assert len(scan(tmp_path, "--select", "WRP006")) == 2
    # A Python build (or a Makefile, a script) that names the directory builds it; so may Meson.
    (tmp_path / "CMakeLists.txt").write_text("project(p LANGUAGES CXX HIP)\nadd_subdirectory(src)\n")
    (tmp_path / "setup.py").write_text("sources = ['attic/integrator/k.cu']\n")
    assert amdbuild.read(str(tmp_path)).unreached_dirs == set()
    (tmp_path / "setup.py").unlink()
    (tmp_path / "meson.build").write_text("project('p', 'cpp')\n")
    assert amdbuild.read(str(tmp_path)).unreached_dirs == set()
    (tmp_path / "meson.build").unlink()
    assert amdbuild.read(str(tmp_path)).unreached_dirs == {str(tmp_path / "attic")}
    # A subproject built on its own (its own project()) is not dead code.
    (old / "CMakeLists.txt").write_text("project(old LANGUAGES CXX CUDA)\nadd_library(old k.cu)\n")
    assert amdbuild.read(str(tmp_path)).unreached_dirs == set()
    # An add_subdirectory hiplint cannot resolve may reach anything: nothing is taken for unbuilt.
    (tmp_path / "CMakeLists.txt").write_text("project(p LANGUAGES CXX HIP)\nadd_subdirectory(src)\n"
                                             "add_subdirectory(${EXTRA_DIR})\n")
    assert amdbuild.read(str(tmp_path)).unreached_dirs == set()


def test_a_backend_picked_by_a_variables_value(tmp_path):
    # HiPACE++'s layout: `if(X_COMPUTE STREQUAL CUDA)` adds the cuFFT wrapper, `elseif(... HIP)` the rocFFT
    # one, `else()` the FFTW one; the AMD build goes through a dependency (AMReX), no HIP target of its own.
    (tmp_path / ".git").mkdir()
    for name in ("main.cpp", "fft_hip.cpp", "fft_cpu.cpp"):
        (tmp_path / name).write_text("int f();\n")
    (tmp_path / "fft_cuda.cpp").write_text(KERNEL)
    chain = ('if(P_COMPUTE STREQUAL CUDA)\n  target_sources(p PRIVATE fft_cuda.cpp)\n'
             'elseif(P_COMPUTE STREQUAL HIP)\n  target_sources(p PRIVATE fft_hip.cpp)\n'
             'else()\n  target_sources(p PRIVATE fft_cpu.cpp)\nendif()\n')
    (tmp_path / "CMakeLists.txt").write_text('project(p CXX)\nset(P_COMPUTE OMP CACHE STRING "NOACC CUDA HIP OMP")\n'
                                             'add_executable(p main.cpp)\n' + chain)
    build = amdbuild.read(str(tmp_path))
    assert build.backend_choice and build.nvidia_sources == {str(tmp_path / "fft_cuda.cpp")}
    assert scan(tmp_path) == []
    # With a HIP target of its own the chain reads the same, and its else() is the CPU build, not NVIDIA's.
    (tmp_path / "CMakeLists.txt").write_text('project(p LANGUAGES CXX HIP)\nadd_executable(p main.cpp)\n'
                                             'set_source_files_properties(fft_hip.cpp PROPERTIES LANGUAGE HIP)\n' + chain)
    amdbuild._BY_ROOT.clear()
    build = amdbuild.read(str(tmp_path))
    assert str(tmp_path / "fft_cuda.cpp") in build.nvidia_sources
    assert str(tmp_path / "fft_cpu.cpp") not in build.nvidia_sources
    # A variable tested for CUDA alone picks nothing for AMD: the project is not taken for dual-target.
    (tmp_path / "fft_hip.cpp").unlink()  # (a file twin by name otherwise)
    (tmp_path / "CMakeLists.txt").write_text('project(p CXX)\nadd_executable(p main.cpp)\n'
                                             'if(P_COMPUTE STREQUAL CUDA)\n  target_sources(p PRIVATE fft_cuda.cpp)\nendif()\n')
    amdbuild._BY_ROOT.clear()
    assert not amdbuild.read(str(tmp_path)).backend_choice
    assert [code for _, _, code in scan(tmp_path)] == ["WRP006"]


def test_an_extension_whose_own_setup_needs_nvcc(tmp_path):
    # flash-attention's layout: the top setup.py builds for ROCm (through hipify); `csrc/layer_norm/` has a
    # setup.py of its own that runs nvcc and passes -gencode, and names nothing of ROCm's: NVIDIA-only.
    (tmp_path / ".git").mkdir()
    (tmp_path / "setup.py").write_text("from torch.utils.cpp_extension import CUDAExtension, IS_HIP_EXTENSION\n")
    norm, ported = tmp_path / "csrc" / "layer_norm", tmp_path / "csrc" / "rotary"
    norm.mkdir(parents=True)
    ported.mkdir(parents=True)
    (norm / "setup.py").write_text(
        "import subprocess\nfrom torch.utils.cpp_extension import CUDA_HOME\n"
        "out = subprocess.check_output([CUDA_HOME + '/bin/nvcc', '-V'])\n"
        "flags = ['-gencode', 'arch=compute_80,code=sm_80']\n")
    (norm / "ln_kernel.cu").write_text(KERNEL)
    (ported / "setup.py").write_text("import torch\nflags = ['-gencode', 'arch=compute_80,code=sm_80']\n"
                                     "if torch.version.hip:\n    flags = []\n")
    (ported / "rotary.cu").write_text(KERNEL)
    files, dirs = amdbuild.nvcc_only_subpackages(str(tmp_path), set())
    assert dirs == {str(norm)} and str(norm / "ln_kernel.cu") in files
    # The extension's own setup.py still says it needs nvcc (PY008): one pointer, not its kernels.
    assert scan(tmp_path) == [("csrc/layer_norm/setup.py", 3, "PY008"), ("csrc/rotary/rotary.cu", 1, "WRP006")]
    # In a project whose own build does not go to ROCm, nothing is taken for NVIDIA's.
    (tmp_path / "setup.py").write_text("from torch.utils.cpp_extension import CUDAExtension\n")
    assert [p for p, _, _ in scan(tmp_path) if p.endswith(".cu")] == ["csrc/layer_norm/ln_kernel.cu",
                                                                        "csrc/rotary/rotary.cu"]


def test_switches_shipped_off_are_listed_and_their_code_not_reported(tmp_path):
    # SPECFEM's `//#define USE_TEXTURES_FIELDS`: an optional feature offered in a comment and set by no
    # build file. A switch a build file or script names, or a file defines, is not off.
    (tmp_path / ".git").mkdir()
    (tmp_path / "config.h").write_text("//#define USE_TEX\n// #define USE_SMEM 1\n//#define USE_ON\n//#define USE_VALUE 8\n")
    (tmp_path / "other.h").write_text("#define USE_ON\n")
    (tmp_path / "build.sh").write_text("nvcc -DUSE_SMEM -c k.cu\n")
    (tmp_path / "k.cu").write_text(
        '__device__ float s(float v) {\n#ifdef USE_TEX\n  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(__activemask(), v, o);\n'
        "#endif\n#ifdef USE_SMEM\n  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(__activemask(), v, o);\n#endif\n"
        "  return v;\n}\n")
    out = run_cli("scan", "--show-build", cwd=tmp_path).stdout.decode()
    assert "switches-shipped-off = [\n  'USE_TEX',\n]" in out
    assert [(f[1], f[2]) for f in scan(tmp_path, "--isolated", "--select", "WRP003")] == [(6, "WRP003")]
    assert (3, "WRP003") in [(f[1], f[2]) for f in scan(tmp_path, "--isolated", "--select", "WRP003",
                                                            "--report-nvidia-branches")]


def test_a_subpackage_whose_own_cmake_compiles_cuda_only(tmp_path):
    # Liger-Kernel: the top setup.py installs a ROCm variant (it probes `rocm-smi`, `platform == "rocm"`);
    # `cute_kernels/` is a Python package of its own whose CMake build is `LANGUAGES CXX CUDA` and names
    # no ROCm: NVIDIA-only. A sibling whose CMake also enables HIP stays reported.
    (tmp_path / ".git").mkdir()
    (tmp_path / "setup.py").write_text(
        'import subprocess\n\ndef platform():\n    try:\n        subprocess.run(["rocm-smi"], check=True)\n'
        '        return "rocm"\n    except FileNotFoundError:\n        return "cuda"\n\n'
        'extras = ["torch-rocm"] if platform() == "rocm" else ["torch"]\n')
    assert amdbuild.python_builds_for_amd(str(tmp_path))
    cute, both = tmp_path / "cute_kernels", tmp_path / "dual_kernels"
    for d, langs in ((cute, "CXX CUDA"), (both, "CXX CUDA HIP")):
        (d / "csrc").mkdir(parents=True)
        (d / "pyproject.toml").write_text("[build-system]\nrequires = ['scikit-build-core']\n")
        (d / "CMakeLists.txt").write_text(f"# no ROCm here\nproject(k LANGUAGES {langs})\nadd_library(k csrc/k.cu)\n")
        (d / "csrc" / "k.cu").write_text(KERNEL)
    files, dirs = amdbuild.nvcc_only_subpackages(str(tmp_path), set())
    assert dirs == {str(cute)} and files == {str(cute / "csrc" / "k.cu")}
    assert [p for p, _, code in scan(tmp_path) if code == "WRP006"] == ["dual_kernels/csrc/k.cu"]


def test_a_switch_every_gpu_build_sets_is_defined_on_amd(tmp_path):
    # waLBerla: `set(W_GPU_SUPPORT TRUE)` under `if(W_BUILD_WITH_HIP OR W_BUILD_WITH_CUDA)`, written out by
    # `#cmakedefine` in a configured `*.in.h` header: the `#else` of `#if defined(W_GPU_SUPPORT)` is the
    # CPU-only build's stub code, which hip-clang never compiles.
    (tmp_path / ".git").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(
        "project(w CXX)\noption(W_BUILD_WITH_CUDA OFF)\noption(W_BUILD_WITH_HIP OFF)\n"
        "if(W_BUILD_WITH_HIP)\n  enable_language(HIP)\n  find_package(hip)\nendif()\n"
        "if(W_BUILD_WITH_HIP OR W_BUILD_WITH_CUDA)\n  set(W_GPU_SUPPORT TRUE CACHE BOOL \"\")\n"
        "else()\n  set(W_GPU_SUPPORT FALSE CACHE BOOL \"\")\nendif()\n"
        "configure_file(defs.in.h defs.h)\nadd_library(w wrapper.cpp)\n")
    (tmp_path / "defs.in.h").write_text("#cmakedefine W_BUILD_WITH_HIP\n#cmakedefine W_GPU_SUPPORT\n")
    (tmp_path / "wrapper.h").write_text(
        '#include "defs.h"\n#if defined(W_GPU_SUPPORT)\n#include "gpu_runtime.h"\n#else\n'
        "#ifndef __CUDACC__\n#define __device__\n#define __host__\n#endif\n#endif\n")
    (tmp_path / "wrapper.cpp").write_text('#include "wrapper.h"\n')
    build = amdbuild.read(str(tmp_path))
    assert build.gpu_defines == {"W_GPU_SUPPORT"}
    assert scan(tmp_path) == []
    # Set under a condition one vendor's build alone meets, it says nothing of the other build.
    (tmp_path / "CMakeLists.txt").write_text(
        (tmp_path / "CMakeLists.txt").read_text().replace("if(W_BUILD_WITH_HIP OR W_BUILD_WITH_CUDA)",
                                                          "if(W_BUILD_WITH_CUDA OR W_USE_MPI)"))
    assert amdbuild.read(str(tmp_path)).gpu_defines == frozenset()
    assert [c for _, _, c in scan(tmp_path)] == ["ARC006"]


def test_project_names_for_the_compiler_macros(tmp_path):
    # Eigen: `#define EIGEN_CUDACC __CUDACC__` and `#define EIGEN_HIPCC __HIPCC__` in one header, tested in
    # another that does not include it (its includer does, first). hip-clang defines __HIPCC__, never
    # __CUDACC__: the EIGEN_CUDACC branch and the #else of the EIGEN_HIPCC one are nvcc's alone.
    (tmp_path / ".git").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(
        "project(p CXX)\nif(P_USE_HIP)\n  enable_language(HIP)\n  add_library(p k.cu)\n"
        "  set_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\nendif()\n")
    (tmp_path / "macros.h").write_text(
        "#if defined(__CUDACC__)\n#define P_CUDACC __CUDACC__\n#endif\n"
        "#if defined(__HIPCC__)\n#define P_HIPCC __HIPCC__\n#endif\n")
    (tmp_path / "half.h").write_text(
        "#if defined(P_CUDACC)\n__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n#endif\n"
        "#if defined(P_HIPCC)\n__device__ float g(float v) { return __shfl_xor(v, 1); }\n#else\n"
        "__device__ float g(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n#endif\n")
    (tmp_path / "k.cu").write_text('#include "macros.h"\n#include "half.h"\n')
    assert scan(tmp_path) == []
    # A second definition that is no alias (`#define P_CUDACC 1` for a host build) makes it a switch again.
    (tmp_path / "host.h").write_text("#define P_CUDACC 1\n")
    assert [c for _, _, c in scan(tmp_path)] == ["WRP006"]


def test_programs_a_makefile_project_keeps_to_nvidia(tmp_path):
    # gpu-benches: `gpu-stream/Makefile` builds `cuda-stream` with nvcc and `hip-stream` from a hipify-perl
    # copy with hipcc; its LDFLAGS (CUDA libraries) are read by the nvcc recipe alone. `cuda-memcpy/Makefile`
    # runs nvcc only: a program the project keeps to NVIDIA. A header both include stays shared.
    (tmp_path / ".git").mkdir()
    for d in ("gpu-stream", "cuda-memcpy"):
        (tmp_path / d).mkdir()
    (tmp_path / "timer.h").write_text("__device__ inline float swap(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n")
    (tmp_path / "gpu-stream" / "Makefile").write_text(
        "NVCC := nvcc\nLDFLAGS := -lcuda -lnvidia-ml\n"
        "cuda-stream: main.cu Makefile\n\t$(NVCC) -O3 -o $@ $< $(LDFLAGS)\n"
        "main.hip: main.cu\n\thipify-perl main.cu > main.hip\n"
        "hip-stream: main.hip Makefile\n\thipcc -O3 -o $@ $<\n")
    (tmp_path / "gpu-stream" / "main.cu").write_text('#include "../timer.h"\n' + KERNEL)
    (tmp_path / "cuda-memcpy" / "Makefile").write_text(
        "NVCC := nvcc\nLDFLAGS := -lcupti -lcuda\ncuda-memcpy: main.cu ../timer.h\n\t$(NVCC) -o $@ $< $(LDFLAGS)\n")
    (tmp_path / "cuda-memcpy" / "main.cu").write_text('#include "../timer.h"\n' + KERNEL)
    build = amdbuild.read(str(tmp_path))
    assert str(tmp_path / "cuda-memcpy" / "main.cu") in build.nvidia_sources
    assert str(tmp_path / "timer.h") not in build.nvidia_sources
    found = scan(tmp_path)
    assert {p for p, _, _ in found} == {"gpu-stream/main.cu", "timer.h"}, found
    assert "BLD004" not in {c for _, _, c in found}


def test_a_switch_defined_only_under_a_switch_shipped_off_is_off(tmp_path):
    # QUICK: `//#define USE_TEXTURE` offered in a comment, then `#ifdef USE_TEXTURE` / `#define
    # USE_TEXTURE_XCOEFF` / `#endif`: the sub-switch is defined only where the off one is on. One defined
    # outside that guard too (`#else` branch) stays a plain switch.
    (tmp_path / ".git").mkdir()
    (tmp_path / "k.cu").write_text(
        "//#define USE_TEXTURE\n#ifdef USE_TEXTURE\n#define USE_TEXTURE_XCOEFF\n#define USE_BOTH\n#else\n#define USE_BOTH\n"
        "#endif\n__device__ float s(float v) {\n#ifdef USE_TEXTURE_XCOEFF\n"
        "  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(__activemask(), v, o);\n#endif\n"
        "#ifdef USE_BOTH\n  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(__activemask(), v, o);\n#endif\n"
        "  return v;\n}\n")
    out = run_cli("scan", "--show-build", cwd=tmp_path).stdout.decode()
    assert "switches-shipped-off = [\n  'USE_TEXTURE',\n  'USE_TEXTURE_XCOEFF',\n]" in out
    assert [(f[1], f[2]) for f in scan(tmp_path, "--isolated", "--select", "WRP003")] == [(13, "WRP003")]


def test_benchmarks_that_find_cuda_or_hip_themselves(tmp_path):
    # SuperBench's micro-benchmarks: each directory is a CMake project of its own that looks for CUDA
    # quietly and else for HIP (`find_package(hip QUIET)` / `if(hip_FOUND)`, sources hipified at configure
    # time). The AMD build is that `hip_FOUND` branch; what only a found CUDA toolkit builds (an `AND`ed
    # version check, or the rest of a file after `if(NOT CUDAToolkit_FOUND) return()`) is NVIDIA's.
    (tmp_path / ".git").mkdir()
    for d in ("copy", "lt_gemm", "stream"):
        (tmp_path / d).mkdir()
    (tmp_path / "copy/CMakeLists.txt").write_text(
        "project(copy LANGUAGES CXX)\nfind_package(CUDAToolkit QUIET)\nif(CUDAToolkit_FOUND)\n"
        "  add_executable(copy copy.cu)\n  target_link_libraries(copy CUDA::cudart)\nelse()\n"
        "  find_package(hip QUIET)\n  if(hip_FOUND)\n"
        "    execute_process(COMMAND hipify-perl -o copy.cpp copy.cu)\n"
        "    add_executable(copy copy.cpp)\n    target_link_libraries(copy hip::device)\n  endif()\nendif()\n")
    (tmp_path / "copy/copy.cu").write_text("__global__ void k(float* x) { x[threadIdx.x] = 1.f; }\n")
    (tmp_path / "lt_gemm/CMakeLists.txt").write_text(
        "project(lt LANGUAGES CXX)\nfind_package(CUDAToolkit QUIET)\n"
        "if(CUDAToolkit_FOUND AND NOT CUDAToolkit_VERSION VERSION_LESS 11.8)\n"
        "  add_executable(lt lt.cu)\n  target_link_libraries(lt CUDA::cublasLt CUDA::cudart)\nendif()\n")
    (tmp_path / "lt_gemm/lt.cu").write_text(KERNEL)
    (tmp_path / "stream/CMakeLists.txt").write_text(
        "project(stream LANGUAGES CXX)\nfind_package(CUDAToolkit QUIET)\nif(NOT CUDAToolkit_FOUND)\n"
        "  message(WARNING \"needs an NVIDIA GPU\")\n  return()\nendif()\nenable_language(CUDA)\n"
        "add_executable(stream stream.cu)\ntarget_link_libraries(stream CUDA::cudart)\n")
    (tmp_path / "stream/stream.cu").write_text(KERNEL)
    build = amdbuild.read(str(tmp_path))
    assert build.known and str(tmp_path / "copy/CMakeLists.txt") in build.amd_build_files
    assert scan(tmp_path, "--isolated") == []
    # Without the HIP branch nothing says the project builds for AMD: the CUDA-only projects are reported.
    (tmp_path / "copy/CMakeLists.txt").write_text(
        "project(copy LANGUAGES CXX)\nfind_package(CUDAToolkit REQUIRED)\nadd_executable(copy copy.cu)\n")
    amdbuild._BY_ROOT.clear()
    found = {(path, code) for path, _, code in scan(tmp_path, "--isolated")}
    assert {("lt_gemm/lt.cu", "WRP006"), ("stream/stream.cu", "WRP006"), ("stream/CMakeLists.txt", "BLD001")} <= found


def test_headers_no_compile_sees_are_not_reported(tmp_path):
    # BladeDISC's custom kernels: beside the sources, a chain of headers that no source includes (a top-k
    # header nothing includes, and the warp helpers only it includes), named by no build file. No compile
    # sees them. A header of a directory without sources (a public API header its users include), one a
    # build file installs, and one a source includes stay reported.
    (tmp_path / ".git").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(
        "option(P_USE_HIP OFF)\nif(P_USE_HIP)\n  enable_language(HIP)\n"
        "  set_source_files_properties(src/sort.cu PROPERTIES LANGUAGE HIP)\n  add_library(p src/sort.cu)\nendif()\n"
        "install(FILES src/installed.cuh DESTINATION include)\n")
    for d in ("src", "include/p"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "src/sort.cu").write_text('#include "used.cuh"\n' + KERNEL)
    (tmp_path / "src/used.cuh").write_text(KERNEL)
    (tmp_path / "src/topk.cuh").write_text('#include "warp.cuh"\n' + KERNEL)
    (tmp_path / "src/warp.cuh").write_text(KERNEL)
    (tmp_path / "src/installed.cuh").write_text(KERNEL)
    (tmp_path / "include/p/public.cuh").write_text(KERNEL)
    kept = ["include/p/public.cuh", "src/installed.cuh", "src/sort.cu", "src/used.cuh"]
    assert sorted({f[0] for f in scan(tmp_path, "--isolated", "--select", "WRP006")}) == kept
    assert {"src/topk.cuh", "src/warp.cuh"} <= {f[0] for f in scan(
        tmp_path, "--isolated", "--select", "WRP006", "--report-nvidia-branches")}
    # A glob of a build file in the directory, or an installed directory above it, reaches them.
    for build_file, text in (("src/BUILD", 'cc_library(name = "h", hdrs = glob(["*.cuh"]))\n'),
                             ("src/CMakeLists.txt", "install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/ DESTINATION include)\n")):
        (tmp_path / build_file).write_text(text)
        assert {"src/topk.cuh", "src/warp.cuh"} <= {f[0] for f in scan(tmp_path, "--isolated", "--select", "WRP006")}
        (tmp_path / build_file).unlink()
    # A source that includes the chain's top: compiled after all.
    (tmp_path / "src/sort.cu").write_text('#include "used.cuh"\n#include "topk.cuh"\n' + KERNEL)
    assert {"src/topk.cuh", "src/warp.cuh"} <= {f[0] for f in scan(tmp_path, "--isolated", "--select", "WRP006")}


def test_an_included_cmake_file_names_paths_from_its_includers_directory(tmp_path):
    # exachem: `src/CMakeLists.txt` includes `src/cc/ccsd_t/ccsd_t.cmake`, which writes its sources relative
    # to the includer's directory (`set(DIR cc/ccsd_t)`, CMake's CMAKE_CURRENT_SOURCE_DIR): `if(P_HAS_CUDA)`
    # lists the CUDA kernel file, `elseif(P_HAS_HIP)` the portable one with `LANGUAGE HIP`. The kernel file
    # `#include`s another `.cu` of device functions, which only it reads.
    (tmp_path / ".git").mkdir()
    d = tmp_path / "src/cc/ccsd_t"
    d.mkdir(parents=True)
    (tmp_path / "CMakeLists.txt").write_text("option(P_HAS_CUDA OFF)\noption(P_HAS_HIP OFF)\nadd_subdirectory(src)\n")
    (tmp_path / "src/CMakeLists.txt").write_text(
        "include(${CMAKE_CURRENT_SOURCE_DIR}/cc/ccsd_t/ccsd_t.cmake)\nadd_library(cc ${T_SRCS})\n")
    (d / "ccsd_t.cmake").write_text(
        "set(T_DIR cc/ccsd_t)\nif(P_HAS_CUDA)\n  set(T_SRCS ${T_DIR}/fused_gpu.cu ${T_DIR}/portable.cpp)\n"
        "elseif(P_HAS_HIP)\n  set(T_SRCS ${T_DIR}/portable.cpp)\n"
        "  set_source_files_properties(${T_DIR}/portable.cpp PROPERTIES LANGUAGE HIP)\nendif()\n")
    (d / "fused_gpu.cu").write_text('#include "device_functions.cu"\n' + KERNEL)
    (d / "device_functions.cu").write_text(KERNEL)
    (d / "portable.cpp").write_text(KERNEL)
    build = amdbuild.read(str(tmp_path))
    assert build.amd_sources == {str(d / "portable.cpp")}
    assert str(d / "fused_gpu.cu") in build.nvidia_sources
    assert sorted({f[0] for f in scan(tmp_path, "--isolated", "--select", "WRP006")}) == ["src/cc/ccsd_t/portable.cpp"]


def test_a_bare_source_name_names_the_build_files_own_directory(tmp_path):
    # Astaroth's samples: `hipcc main.cu` in one sample's script, `add_executable(f main.f90)` in another's
    # CMake file; a third sample's `main.cu`, which nothing builds, is not named by either.
    _hip_list_project(tmp_path, "samples/a/a.cu")
    for d in ("samples/a", "samples/hipped", "samples/fortran", "samples/orphan"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "samples/a/a.cu").write_text(KERNEL)
    (tmp_path / "samples/a/CMakeLists.txt").write_text("add_library(a a.cu)\n")
    (tmp_path / "samples/hipped/build.sh").write_text("hipcc main.cu -o sample\n")
    (tmp_path / "samples/hipped/main.cu").write_text(KERNEL)
    (tmp_path / "samples/fortran/CMakeLists.txt").write_text("add_executable(f main.f90)\n")
    (tmp_path / "samples/orphan/main.cu").write_text(KERNEL)
    build = amdbuild.read(str(tmp_path))
    assert build.unbuilt(str(tmp_path / "samples/orphan/main.cu"))
    assert not build.unbuilt(str(tmp_path / "samples/hipped/main.cu"))
    assert "samples/orphan/main.cu" not in [f[0] for f in scan(tmp_path, "--isolated", "--select", "WRP006")]


def test_a_build_script_that_runs_only_nvcc_keeps_its_sources_to_nvidia(tmp_path):
    # A cuDNN sample built by `nvcc main.cu -lcudnn` beside its MIOpen twin built by hipcc, in a project whose
    # CMake build compiles for AMD: the cuDNN sample is NVIDIA code. A script above an AMD build file, or
    # one whose directory the AMD build names, is not.
    _hip_list_project(tmp_path, "src/a.cu")
    for d in ("src", "samples/heat_one", "samples/heat_two"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "src/a.cu").write_text(KERNEL)
    (tmp_path / "samples/heat_one/build.sh").write_text("#!/bin/bash\nnvcc main.cu -lcudnn\n")
    (tmp_path / "samples/heat_one/main.cu").write_text(KERNEL)
    (tmp_path / "samples/heat_two/build.sh").write_text("#!/bin/bash\nhipcc main.cu -lMIOpen\n")
    (tmp_path / "samples/heat_two/main.cu").write_text(KERNEL)
    found = [f[0] for f in scan(tmp_path, "--isolated", "--select", "WRP006")]
    assert "samples/heat_one/main.cu" not in found and "samples/heat_two/main.cu" in found and "src/a.cu" in found
    (tmp_path / "CMakeLists.txt").write_text((tmp_path / "CMakeLists.txt").read_text()
                                             + "add_subdirectory(samples/heat_one)\n")
    assert "samples/heat_one/main.cu" in [f[0] for f in scan(tmp_path, "--isolated", "--select", "WRP006")]


def test_a_name_for_a_found_cuda_toolkit_is_the_nvidia_builds_switch(tmp_path):
    # OPS: `set(CUDA_MPI ${CUDAToolkit_FOUND})` / `if(CUDA_MPI)` builds the MPI+CUDA app beside the
    # project's HIP targets: the block is the NVIDIA build's, its CUDA libraries are not reported.
    (tmp_path / ".git").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(
        "find_package(CUDAToolkit QUIET)\nfind_package(hip QUIET)\n"
        "set(APP_MPI_CUDA ${CUDAToolkit_FOUND})\n"
        "add_executable(app_hip k.cu)\nset_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\n"
        "target_link_libraries(app_hip hip::device)\n"
        "if(APP_MPI_CUDA)\n  add_executable(app_mpi_cuda k.cu)\n"
        "  target_link_libraries(app_mpi_cuda CUDA::cudart_static CUDA::curand)\nendif()\n")
    (tmp_path / "k.cu").write_text(KERNEL)
    assert not [f for f in scan(tmp_path, "--isolated") if f[0] == "CMakeLists.txt"]


def test_a_tpls_directory_holds_vendored_projects(tmp_path):
    # `tpls/eigen` (ExaTN): "third-party libraries", as `third_party/` is.
    root = _with_vendored(tmp_path, dual=True)
    (root / "third_party").rename(root / "tpls")
    (root / "CMakeLists.txt").write_text((root / "CMakeLists.txt").read_text().replace("third_party", "tpls"))
    assert amdbuild.read(str(root)).vendored_dirs == {str(root / "tpls" / "multi")}
    assert [f for f in scan(root, "--isolated") if f[0].startswith("tpls")] == []
