"""A CUDA backend beside a HIP one (directories or files) is NVIDIA code; a hipify-generated twin is not
a HIP backend; the cache knows when a twin appears."""
import json
import shutil
from pathlib import Path

from conftest import run_cli

from hiplint.layout import hip_twin

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "layout"
KERNEL = "__global__ void k(float* x) { x[threadIdx.x] = __shfl_xor_sync(0xffffffff, x[threadIdx.x], 1); }\n"


def codes(root: Path, *args) -> list:
    proc = run_cli("scan", ".", "--isolated", "--select", "WRP", "--output-format", "json", *args, cwd=root)
    return sorted((f["path"], f["code"]) for f in json.loads(proc.stdout))


def test_twins_of_the_fixtures():
    assert hip_twin(str(FIXTURES / "backends" / "cuda" / "warp_sum.cu")) == str(FIXTURES / "backends" / "hip" / "warp_sum.hip")
    assert hip_twin(str(FIXTURES / "backends" / "cuda" / "not_ported.cu")) is None  # the HIP side lacks it
    assert hip_twin(str(FIXTURES / "atomics" / "Fetch_Add_CUDA.hpp")) == str(FIXTURES / "atomics" / "Fetch_Add_HIP.hpp")
    assert hip_twin(str(FIXTURES / "generated" / "cuda" / "scale.cu")) is None  # hipify wrote that hip/
    assert hip_twin(str(FIXTURES / "backends" / "hip" / "warp_sum.hip")) is None
    # The HIP word added to a `.cu` file's name, another extension, a CamelCase class file.
    assert hip_twin(str(FIXTURES / "suffixed" / "pme_spread.cu")) == str(FIXTURES / "suffixed" / "pme_spread_hip.cpp")
    assert hip_twin(str(FIXTURES / "suffixed" / "cuda_tile_utils.cuh")) == str(FIXTURES / "suffixed" / "hip_tile_utils.h")
    assert hip_twin(str(FIXTURES / "backends" / "cuda" / "src" / "CudaTimer.cpp")) == \
        str(FIXTURES / "backends" / "hip" / "src" / "HipTimer.cpp")
    assert hip_twin(str(FIXTURES / "suffixed" / "pme_spread_hip.cpp")) is None
    # NVIDIA's ray-tracing kernels beside AMD's.
    assert hip_twin(str(FIXTURES / "raytracing" / "optix" / "compat.h")) == str(FIXTURES / "raytracing" / "hiprt" / "compat.h")
    # The backend named in a middle extension.
    assert hip_twin(str(FIXTURES / "suffixed" / "Profiling.cuda.cc")) == str(FIXTURES / "suffixed" / "Profiling.hip.cc")
    # A backend directory named with a CUDA word (`cuda-ref/` beside `hip-ref/`).
    assert hip_twin(str(FIXTURES / "variants" / "cuda-ref" / "scale-cuda.cu")) == \
        str(FIXTURES / "variants" / "hip-ref" / "scale-hip.hip")


def test_a_twin_is_a_hip_name_not_any_sibling(tmp_path):
    for name in ("gather.cu", "gather_sycl.cpp", "gather.h", "gather.clh", "scan.cu", "scan.hip",
                 "cuda_math.h", "cuda_math.cpp", "reduce.cuh", "reduce.hip.cpp"):
        (tmp_path / name).write_text("// x\n")
    assert hip_twin(str(tmp_path / "gather.cu")) is None  # SYCL, OpenCL and the shared header are not HIP
    assert hip_twin(str(tmp_path / "scan.cu")) == str(tmp_path / "scan.hip")
    assert hip_twin(str(tmp_path / "cuda_math.h")) is None  # its own .cpp is no twin
    assert hip_twin(str(tmp_path / "reduce.cuh")) == str(tmp_path / "reduce.hip.cpp")


def test_backend_findings_show_with_report_nvidia_branches(tmp_path):
    shutil.copytree(FIXTURES / "backends", tmp_path / "lib")
    assert codes(tmp_path) == [("lib/cuda/not_ported.cu", "WRP006")]
    shown = codes(tmp_path, "--report-nvidia-branches")
    assert ("lib/cuda/warp_sum.cu", "WRP006") in shown


def test_no_twin_above_the_repository(tmp_path):
    # ~/src/cuda/proj and ~/src/hip/proj: two checkouts, not two backends of one project.
    proj = tmp_path / "cuda" / "proj"
    proj.mkdir(parents=True)
    (proj / ".git").mkdir()
    (tmp_path / "hip" / "proj").mkdir(parents=True)
    (proj / "k.cu").write_text(KERNEL)
    assert hip_twin(str(proj / "k.cu")) is None
    assert codes(proj) == [("k.cu", "WRP006")]


def test_cache_lints_again_when_a_hip_twin_appears(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "cuda").mkdir()
    (tmp_path / "cuda" / "k.cu").write_text(KERNEL)
    assert codes(tmp_path) == [("cuda/k.cu", "WRP006")]
    (tmp_path / "hip").mkdir()
    (tmp_path / "hip" / "k.hip").write_text("// the HIP backend\n")
    assert codes(tmp_path) == []  # a new entry key: not the one written before the twin existed
    shutil.rmtree(tmp_path / "hip")
    assert codes(tmp_path) == [("cuda/k.cu", "WRP006")]


def test_a_backend_directory_with_cuda_inside_its_name(tmp_path):
    # PETSc's `seqcuda/sellcuda.cu` beside `seqhip/sellhip.hip.cxx`: the CUDA word inside a directory's name.
    (tmp_path / ".git").mkdir()
    for d, f in (("seqcuda", "sellcuda.cu"), ("seqhip", "sellhip.hip.cxx")):
        (tmp_path / "sell" / d).mkdir(parents=True)
        (tmp_path / "sell" / d / f).write_text("// x\n")
    (tmp_path / "sell" / "seqcuda" / "extra.cu").write_text("// x\n")
    assert hip_twin(str(tmp_path / "sell" / "seqcuda" / "sellcuda.cu")) == str(tmp_path / "sell" / "seqhip" / "sellhip.hip.cxx")
    assert hip_twin(str(tmp_path / "sell" / "seqcuda" / "extra.cu")) is None
    assert hip_twin(str(tmp_path / "sell" / "seqcuda" / "extra.cu"), whole_directory=True) == str(tmp_path / "sell" / "seqhip")


def test_a_rocr_file_twins_a_cuda_one(tmp_path):
    # libfabric's per-vendor memory back ends: `hmem_cuda.c` beside `hmem_rocr.c` (ROCr, AMD's runtime).
    for name in ("hmem_cuda.c", "hmem_rocr.c", "hmem_ze.c"):
        (tmp_path / name).write_text("// x\n")
    assert hip_twin(str(tmp_path / "hmem_cuda.c")) == str(tmp_path / "hmem_rocr.c")
    assert hip_twin(str(tmp_path / "hmem_ze.c")) is None


def _tree(root: Path, files: dict) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_an_amd_directory_of_its_own_layout_is_the_amd_backend(tmp_path):
    # A CUDA kernel library beside its AMD counterpart laid out by GPU generation (tinygrad's
    # ThunderKittens beside HipKittens): only the umbrella header shares a name, so every CUDA file is
    # the NVIDIA back end's, with or without a readable build.
    (tmp_path / ".git").mkdir()
    cuda = {f"kittens/cuda/include/ops/op{i}.cuh": KERNEL for i in range(12)}
    cuda["kittens/cuda/include/kittens.cuh"] = "#pragma once\n"
    _tree(tmp_path, cuda)
    _tree(tmp_path, {"kittens/amd/include/kittens.cuh": "#pragma once\n#include <hip/hip_runtime.h>\n",
                     "kittens/amd/include/cdna3/mfma.cuh": "#include <hip/hip_runtime.h>\n"})
    op = tmp_path / "kittens/cuda/include/ops/op3.cuh"
    assert hip_twin(str(op)) == str(tmp_path / "kittens/amd")
    assert codes(tmp_path) == []


def test_an_amd_directory_without_hip_code_is_no_twin(tmp_path):
    # `amd/` may hold code for AMD's CPUs.
    (tmp_path / ".git").mkdir()
    _tree(tmp_path, {"simd/cuda/reduce.cu": KERNEL, "simd/amd/reduce_zen.cpp": "int reduce_avx2(int x) { return x; }\n"})
    assert hip_twin(str(tmp_path / "simd/cuda/reduce.cu")) is None
    assert codes(tmp_path) == [("simd/cuda/reduce.cu", "WRP006")]


def test_a_port_in_progress_keeps_its_unported_files(tmp_path):
    # The AMD side keeps the CUDA side's names for what it ported: the rest is not ported yet.
    (tmp_path / ".git").mkdir()
    _tree(tmp_path, {"ops/cuda/scan.cu": KERNEL, "ops/cuda/sort.cu": KERNEL, "ops/cuda/histogram.cu": KERNEL,
                     "ops/amd/scan.cpp": "#include <hip/hip_runtime.h>\n"})
    assert hip_twin(str(tmp_path / "ops/cuda/scan.cu")) == str(tmp_path / "ops/amd/scan.cpp")
    assert hip_twin(str(tmp_path / "ops/cuda/sort.cu")) is None
    assert codes(tmp_path) == [("ops/cuda/histogram.cu", "WRP006"), ("ops/cuda/sort.cu", "WRP006")]


def test_a_module_named_for_nvidia_beside_its_amd_one_is_the_nvidia_side(tmp_path):
    # unsloth's `hardware/nvidia.py` beside `hardware/amd.py`, chosen by `IS_ROCM`: nvidia-smi there never
    # runs on AMD. Without the AMD module it is reported.
    (tmp_path / ".git").mkdir()
    hw = tmp_path / "hardware"
    hw.mkdir()
    (hw / "nvidia.py").write_text('import subprocess\n\ndef gpus():\n    return subprocess.run(["nvidia-smi", "-L"])\n')
    (hw / "amd.py").write_text('import subprocess\n\ndef gpus():\n    return subprocess.run(["amd-smi", "list"])\n')
    assert hip_twin(str(hw / "nvidia.py")) == str(hw / "amd.py")
    assert hip_twin(str(hw / "amd.py")) is None

    def py004(*args):
        proc = run_cli("scan", ".", "--isolated", "--select", "PY004", "--output-format", "json", *args, cwd=tmp_path)
        return [f["path"] for f in json.loads(proc.stdout)]

    assert py004() == []
    assert py004("--report-nvidia-branches") == ["hardware/nvidia.py"]
    (hw / "amd.py").unlink()
    assert py004() == ["hardware/nvidia.py"]


def test_a_file_named_for_the_nvidia_gpu_beside_its_amd_gpu_one(tmp_path):
    # SV-Sim: `svsim_nvgpu_mpi.cuh` beside `svsim_amdgpu_mpi.hpp`, one per vendor.
    (tmp_path / "svsim_nvgpu_mpi.cuh").write_text("int a;\n")
    (tmp_path / "svsim_amdgpu_mpi.hpp").write_text("int b;\n")
    assert hip_twin(str(tmp_path / "svsim_nvgpu_mpi.cuh")) == str(tmp_path / "svsim_amdgpu_mpi.hpp")
    assert hip_twin(str(tmp_path / "svsim_amdgpu_mpi.hpp")) is None
    assert hip_twin(str(tmp_path / "svsim_nvgpu_omp.cuh")) is None  # no AMD one beside it


def test_an_nvidia_header_with_its_amd_twin_beside_amd_sources(tmp_path):
    # SV-Sim's `src/`: the AMD build compiles sources there, so headers beside them count as compiled;
    # one with its AMD twin beside it is the NVIDIA side all the same.
    (tmp_path / ".git").mkdir()
    src = tmp_path / "src"
    src.mkdir()
    (tmp_path / "CMakeLists.txt").write_text(
        "option(P_USE_HIP OFF)\nif(P_USE_HIP)\n  enable_language(HIP)\n  add_library(p src/main.hip)\nendif()\n"
        # installed for the library's users: a header some compile sees (hiplint.includers.dead_header)
        "install(FILES src/sim_nvgpu.cuh DESTINATION include)\n")
    (src / "main.hip").write_text('#include "sim_amdgpu.hpp"\n')
    (src / "sim_amdgpu.hpp").write_text("int sim;\n")
    (src / "sim_nvgpu.cuh").write_text(
        "__global__ void k(float* x) { x[0] = __shfl_xor_sync(0xffffffff, x[0], 1); }\n")

    def wrp006():
        proc = run_cli("scan", ".", "--isolated", "--no-cache", "--select", "WRP006", "--output-format", "json",
                       cwd=tmp_path)
        return [f["path"] for f in json.loads(proc.stdout)]

    assert wrp006() == []
    (src / "sim_amdgpu.hpp").rename(src / "sim_common.hpp")
    assert wrp006() == ["src/sim_nvgpu.cuh"]


def test_hip_written_over_cuda_and_loader_twins_are_nvidia_code(tmp_path):
    # Orochi: its copy of HIP's NVIDIA-platform header (`nvidia_hip_runtime_api_oro.h`, after HIP's own
    # `nvidia_detail/nvidia_hip_runtime_api.h`) implements HIP over CUDA; `contrib/cuew/` (the CUDA loader)
    # sits beside `contrib/hipew/` (the HIP one). Both are NVIDIA code; a `cuew/` with no `hipew/` is not.
    (tmp_path / ".git").mkdir()
    (tmp_path / "nvidia_hip_runtime_api_oro.h").write_text(KERNEL)
    (tmp_path / "nvidia_detail").mkdir()
    (tmp_path / "nvidia_detail" / "runtime.h").write_text(KERNEL)
    for loader in ("cuew", "hipew"):
        (tmp_path / "contrib" / loader / "src").mkdir(parents=True)
    (tmp_path / "contrib" / "cuew" / "src" / "cuew.cpp").write_text(KERNEL)
    (tmp_path / "contrib" / "hipew" / "src" / "hipew.cpp").write_text("int loaded;\n")
    (tmp_path / "kernels.cu").write_text(KERNEL)
    assert hip_twin(str(tmp_path / "contrib" / "cuew" / "src" / "cuew.cpp")) == str(tmp_path / "contrib" / "hipew")
    assert hip_twin(str(tmp_path / "kernels.cu")) is None
    assert codes(tmp_path) == [("kernels.cu", "WRP006")]
    shutil.rmtree(tmp_path / "contrib" / "hipew")
    assert ("contrib/cuew/src/cuew.cpp", "WRP006") in codes(tmp_path)


def test_a_python_loader_that_picks_the_cuda_or_the_hip_package(tmp_path):
    # optimum-quanto's layout: `extensions/cuda/` (unpack plus AWQ and Marlin kernels) beside
    # `extensions/hip/` (unpack only); `extensions/__init__.py` imports one of them by the vendor of the
    # running PyTorch. The kernels the HIP package lacks are NVIDIA features, not a port in progress.
    # Without the loader's vendor test they are reported (a port file by file keeps the names).
    (tmp_path / ".git").mkdir()
    ext = tmp_path / "extensions"
    for sub in ("cuda/awq", "hip"):
        (ext / sub).mkdir(parents=True)
    (ext / "cuda" / "unpack.cu").write_text(KERNEL)
    (ext / "hip" / "unpack.cu").write_text("int hip_side;\n")
    (ext / "cuda" / "awq" / "gemv.cu").write_text(KERNEL)
    loader = ("import torch\n\nif torch.version.cuda:\n    from .cuda import *\n"
              "elif torch.version.hip:\n    from .hip import *\n")
    (ext / "__init__.py").write_text(loader)
    assert hip_twin(str(ext / "cuda" / "awq" / "gemv.cu")) == str(ext / "hip")
    assert codes(tmp_path) == []
    (ext / "__init__.py").write_text("from .cuda import *\nfrom .hip import *\n")
    assert ("extensions/cuda/awq/gemv.cu", "WRP006") in codes(tmp_path)


def test_a_library_directory_beside_its_amd_counterpart_is_nvidia_code(tmp_path):
    # An FFT benchmark: `libraries/cufft/` beside `libraries/rocfft/`, one back end per library; NCCL's
    # `nccl/` beside `rccl/`. A `cublas/` with nothing of AMD's beside it stays reported.
    (tmp_path / ".git").mkdir()
    for lib in ("cufft", "rocfft", "nccl", "rccl", "cublas"):
        (tmp_path / "libraries" / lib).mkdir(parents=True)
    (tmp_path / "libraries" / "cufft" / "helper.hpp").write_text(KERNEL)
    (tmp_path / "libraries" / "rocfft" / "helper.hpp").write_text("int amd_side;\n")
    (tmp_path / "libraries" / "nccl" / "comm.cu").write_text(KERNEL)
    (tmp_path / "libraries" / "rccl" / "comm.cpp").write_text("int amd_side;\n")
    (tmp_path / "libraries" / "cublas" / "gemm.cu").write_text(KERNEL)
    assert hip_twin(str(tmp_path / "libraries" / "cufft" / "helper.hpp")) == str(tmp_path / "libraries" / "rocfft")
    assert hip_twin(str(tmp_path / "libraries" / "nccl" / "comm.cu")) == str(tmp_path / "libraries" / "rccl")
    assert hip_twin(str(tmp_path / "libraries" / "cublas" / "gemm.cu")) is None
    assert codes(tmp_path) == [("libraries/cublas/gemm.cu", "WRP006")]


def test_a_file_named_for_an_nvidia_library_twins_its_amd_counterpart(tmp_path):
    # Parallel Research Kernels: `sgemm-cublas.cu` beside `sgemm-hipblas.cc`, one program per library.
    (tmp_path / ".git").mkdir()
    (tmp_path / "sgemm-cublas.cu").write_text(KERNEL)
    (tmp_path / "sgemm-hipblas.cc").write_text("int hip_side;\n")
    (tmp_path / "scan-nccl.cu").write_text(KERNEL)
    assert hip_twin(str(tmp_path / "sgemm-cublas.cu")) == str(tmp_path / "sgemm-hipblas.cc")
    assert hip_twin(str(tmp_path / "scan-nccl.cu")) is None  # no `scan-rccl` beside it
    assert codes(tmp_path) == [("scan-nccl.cu", "WRP006")]
