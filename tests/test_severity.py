"""Severities match the consequence on the targets selected (a configure or compile failure is an
error, a clang warning is a warning), and messages speak of the targets selected."""
import json

from conftest import run_cli

CMAKE = """cmake_minimum_required(VERSION 3.18)
project(demo LANGUAGES CXX CUDA)
set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -Xcompiler -fopenmp")
add_executable(demo main.cu)
target_link_libraries(demo PRIVATE CUDA::curand CUDA::cusolver CUDA::cublas)
"""


def _scan(tmp_path, *args):
    proc = run_cli("scan", ".", "--isolated", "--no-cache", "--output-format", "json", *args, cwd=tmp_path)
    return json.loads(proc.stdout)


def test_build_file_severities(tmp_path):
    (tmp_path / "CMakeLists.txt").write_text(CMAKE)
    (tmp_path / "main.cu").write_text("int main() { return 0; }\n")
    found = {(f["line"], f["code"]): f for f in _scan(tmp_path)}
    xcompiler = found[(3, "BLD005")]
    assert xcompiler["severity"] == "warning" and xcompiler["impact"] == "portability"  # clang warns, builds
    for code in ("RND008", "SLV008", "BLD004"):  # CUDA:: targets do not exist on ROCm: configure fails
        assert found[(5, code)]["severity"] == "error", code


def test_messages_follow_the_targets(tmp_path):
    # 256 threads already mean the same occupancy on wave64 targets, 128 on wave32 ones (ARC004).
    (tmp_path / "k.cu").write_text(
        "__global__ void __launch_bounds__(256, 2) k(float* x) {\n"
        "    x[0] = __shfl_sync(0xffffffff, x[0], 0);\n}\n"
        "__global__ void __launch_bounds__(128, 2) h(float* x) { x[0] = 1.f; }\n")
    wave32 = _scan(tmp_path, "--target", "gfx1100")
    assert wave32 and all("64-lane" not in f["message"] and "wave64" not in f["message"] for f in wave32)
    bounds = next(f for f in wave32 if f["code"] == "ARC004")
    assert "(2 * 256) / 128 on wave32" in bounds["message"]
    wave64 = next(f for f in _scan(tmp_path, "--target", "gfx942") if f["code"] == "ARC004")
    assert "(2 * 128) / 256 on wave64" in wave64["message"] and "wave32" not in wave64["message"]


def test_a_deprecated_name_that_still_compiles_is_a_warning(tmp_path):
    # SYN006: `cg::reduce` does not exist in HIP (an error); `this_multi_grid()` is deprecated and ROCm 7.2
    # still declares it (a portability warning).
    (tmp_path / "k.cu").write_text(
        "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\nnamespace cg = cooperative_groups;\n"
        "__global__ void k(float* x) {\n"
        "    auto tile = cg::tiled_partition<32>(cg::this_thread_block());\n"
        "    x[0] = cg::reduce(tile, x[0], cg::plus<float>());\n"
        "    cg::this_multi_grid().sync();\n}\n")
    found = {f["line"]: f for f in _scan(tmp_path, "--select", "SYN006")}
    assert (found[6]["severity"], found[6]["impact"]) == ("error", "compile-error")
    assert (found[7]["severity"], found[7]["impact"]) == ("warning", "portability")
