"""The project's own AMD build (hiplint.amdbuild): sources it compiles as HIP, its definitions, and the
build files only the NVIDIA build reads."""
import json
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
    # branch written for AMD are quiet; the new kernel's wave64 bugs and the header's own mask are not.
    assert scan(ROOT, "fixtures/dualtarget") == [
        ("fixtures/dualtarget/backend-cuda/compat_hip.h", 13, "WRP004"),
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
    assert body == """amd-build-files = [
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
nvidia-only-build-files = [
  'backend-cuda/CMakeLists.txt',
]
nvidia-only-blocks = [
  'CMakeLists.txt:9',
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
