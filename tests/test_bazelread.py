"""Bazel BUILD files: what only NVIDIA macros list is the NVIDIA build's (hiplint.bazelread)."""
import json
from pathlib import Path

from conftest import run_cli

from hiplint import bazelread

KERNEL = "__global__ void k(float* x) { x[threadIdx.x] = __shfl_xor_sync(0xffffffff, x[threadIdx.x], 1); }\n"

BUILD = '''load("@local_config_cuda//cuda:build_defs.bzl", "if_cuda", "if_cuda_is_configured")
load("@local_config_rocm//rocm:build_defs.bzl", "if_rocm")
load("//:defs.bzl", "if_tensorrt_enabled")

cc_library(
    name = "kernels",
    srcs = ["common.cu.cc"] + if_cuda(["fused_gemm.cu.cc"]) + if_rocm(["wave_reduce.cu.cc"]),
    deps = if_tensorrt_enabled([":trt_bridge"]) + if_cuda_is_configured(["//gen:cutlass_headers"]),
)

cc_library(
    name = "trt_bridge",
    srcs = ["trt/bridge.cc"],
    hdrs = ["trt/bridge.h"],
)

cc_library(
    name = "sparse",
    srcs = select({
        "@local_config_cuda//cuda:using_nvcc": ["sparse_cusparse.cc"],
        "//conditions:default": ["sparse_cpu.cc"],
    }),
)

exports_files(["fused_gemm.cu.cc"])
'''


def scan(where: Path, *args) -> list:
    proc = run_cli("scan", ".", "--isolated", "--no-cache", "--output-format", "json", *args, cwd=where)
    return sorted({f["path"] for f in json.loads(proc.stdout)})


def _project(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "WORKSPACE").write_text("")
    (tmp_path / "BUILD").write_text(BUILD)
    for d in ("trt", "gen"):
        (tmp_path / d).mkdir()
    (tmp_path / "gen/BUILD").write_text(
        'genrule(\n    name = "cutlass_headers",\n    srcs = ["cutlass_headers.cu"],\n    outs = ["h.i"],\n'
        '    cmd = "nvcc -E $< > $@",\n)\n')
    for name in ("common.cu.cc", "fused_gemm.cu.cc", "wave_reduce.cu.cc", "trt/bridge.cc", "trt/bridge.h",
                 "sparse_cusparse.cc", "sparse_cpu.cc", "gen/cutlass_headers.cu"):
        (tmp_path / name).write_text(KERNEL)


def test_sources_only_nvidia_macros_list_are_the_nvidia_builds(tmp_path):
    # A TensorFlow-style BUILD file: `if_cuda([...])` beside `if_rocm([...])`, a target only an NVIDIA macro
    # depends on (and what it lists), a genrule only `if_cuda_is_configured` reaches, a CUDA `select()`
    # branch. `exports_files` compiles nothing.
    _project(tmp_path)
    facts = bazelread.read(str(tmp_path))
    assert facts.amd
    assert {Path(p).relative_to(tmp_path).as_posix() for p in facts.nvidia_files} == {
        "fused_gemm.cu.cc", "trt/bridge.cc", "trt/bridge.h", "sparse_cusparse.cc", "gen/cutlass_headers.cu"}
    assert scan(tmp_path, "--select", "WRP006") == ["common.cu.cc", "sparse_cpu.cc", "wave_reduce.cu.cc"]
    assert "fused_gemm.cu.cc" in scan(tmp_path, "--select", "WRP006", "--report-nvidia-branches")


def test_a_bazel_project_with_no_amd_path_is_read_as_before(tmp_path):
    _project(tmp_path)
    (tmp_path / "BUILD").write_text(BUILD.replace('load("@local_config_rocm//rocm:build_defs.bzl", "if_rocm")\n', "")
                                    .replace(' + if_rocm(["wave_reduce.cu.cc"])', ""))
    assert not bazelread.read(str(tmp_path)).amd
    assert "fused_gemm.cu.cc" in scan(tmp_path, "--select", "WRP006")


def test_macro_names():
    assert bazelread.nvidia_macro("if_cuda") and bazelread.nvidia_macro("if_cuda_is_configured")
    assert bazelread.nvidia_macro("if_tensorrt_enabled")
    assert not bazelread.nvidia_macro("if_cuda_or_rocm") and not bazelread.nvidia_macro("if_rocm")
    assert not bazelread.nvidia_macro("if_gpu_is_configured") and not bazelread.nvidia_macro("cuda_library")
