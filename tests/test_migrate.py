"""`hiplint migrate`: renames on the syntax tree, safety of the trees, idempotence, compile check."""
import hashlib
import os
import shutil
import tomllib
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from hiplint.config import load_settings
from hiplint.languages import language_of
from hiplint.model import Applicability
from hiplint.migrate import (BACKUP_SUFFIX, CHECKLIST_NAME, MigrateError, MigrateOptions, Migrator,
                             parse_error_count, protected_texts, rewrite_source)
from hiplint.registry import load_registry, select_rules
from hiplint.renames import TableError, load_from, load_table, table_dir

MIGRATE = FIXTURES / "migrate"


def migrator(src, **opts):
    settings = load_settings([str(src)], None, True)
    return Migrator(settings, select_rules(settings, load_registry()), MigrateOptions(**opts))


def migrate(src, out, **opts):
    return migrator(src, out=str(out), **opts).run(str(src))


def tree_digest(root: Path) -> dict:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def c_sources(root: Path):
    return [p for p in sorted(root.rglob("*")) if p.is_file() and language_of(str(p)) == "cuda"]


def comments_and_strings(data: bytes) -> list[bytes]:
    return protected_texts(data)


def test_the_comment_and_string_check_sees_them():
    data = (FIXTURES / "warp" / "not_warp_code.cu").read_bytes()
    texts = comments_and_strings(data)
    assert any(b"hl-ok" in t for t in texts) and any(b"__ballot_sync" in t for t in texts)


# The table ------------------------------------------------------------------------------------

def test_every_family_names_its_source():
    for path in sorted(table_dir().glob("*.toml")):
        fam = tomllib.loads(path.read_text())["family"]
        assert fam["title"] and "https://" in fam["source"], path


def test_table_covers_the_families_the_issue_names():
    t = load_table()
    for cuda, hip in {"cudaMalloc": "hipMalloc", "cuLaunchKernel": "hipModuleLaunchKernel",
                      "cublasSgemm": "hipblasSgemm", "curand_uniform": "hiprand_uniform",
                      "cusolverDnDgetrf": "hipsolverDnDgetrf", "cusparseSpMV": "hipsparseSpMV",
                      "cufftExecC2C": "hipfftExecC2C", "nvtxRangePushA": "roctxRangePushA",
                      "cudaDeviceProp": "hipDeviceProp_t", "cuFloatComplex": "hipFloatComplex"}.items():
        assert t.names[cuda] == hip
    assert t.namespaces["cub"] == "hipcub"
    assert t.headers["curand.h"] == "hiprand/hiprand.h"  # not the deprecated top-level <hiprand.h>


def test_cublas_64_bit_api_maps_without_v2():
    # cuBLAS 12's `cublasDnrm2_v2_64`: hipBLAS names it `hipblasDnrm2_64` (no `_v2_64` spelling in ROCm 7.2).
    t = load_table()
    assert t.names["cublasDnrm2_v2_64"] == t.names["cublasDnrm2_64"] == "hipblasDnrm2_64"
    assert not any(hip.endswith("_v2_64") for hip in t.names.values())


def test_no_hip_name_is_renamed_again():
    t = load_table()
    for mapping in (t.names, t.headers, t.namespaces):
        assert not set(mapping.values()) & set(mapping), "a second migration would change the output"


def test_table_rejects_a_name_in_two_places(tmp_path):
    for name, body in (("a.toml", '[family]\ntitle="A"\nsource="x"\n[rename]\ncudaFoo="hipFoo"\n'),
                       ("b.toml", '[family]\ntitle="B"\nsource="y"\n[unsupported]\ncudaFoo="no"\n')):
        (tmp_path / name).write_text(body)
    with pytest.raises(TableError, match="cudaFoo"):
        load_from(tmp_path)


def test_table_rejects_a_name_outside_its_prefix(tmp_path):
    (tmp_path / "a.toml").write_text('[family]\ntitle="A"\nsource="x"\n[prefix]\nfrom="cuda"\nto="hip"\nnames=["cublasX"]\n')
    with pytest.raises(TableError, match="prefix"):
        load_from(tmp_path)


# Renames on the tree ----------------------------------------------------------------------------

@pytest.mark.parametrize("launch", ["chevron", "ggl"])
@pytest.mark.parametrize("path", c_sources(FIXTURES), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_fixture_parses_and_keeps_comments_and_strings(path, launch):
    # (A fixture without comments or strings still has to parse after the migration.)
    data = path.read_bytes()
    out = rewrite_source(data, str(path), launch_syntax=launch).data
    assert parse_error_count(out) <= parse_error_count(data)
    assert comments_and_strings(out) == comments_and_strings(data)


def test_user_names_comments_and_strings_stay():
    src = (MIGRATE / "saxpy_streams.cu").read_bytes()
    out = rewrite_source(src, "saxpy_streams.cu").data.decode()
    for kept in ("struct cudaHelper_t", "static bool cudaOk", "cudaHelper_t& h", "if (host[0] != 4.0f) cudaOk = false",
                 "// device buffers via cudaMalloc", '"cudaError %s at %s:%d\\n"', '"saxpy: %.3f ms, cudaOk=%d (cudaMemcpy done)\\n"',
                 "prop.name"):
        assert kept in out, kept
    for gone in ("cudaStream_t", "cudaMallocHost", "cudaDeviceProp", "cudaDevAttrMultiProcessorCount"):
        assert gone not in out, gone
    assert "hipHostMalloc(&host" in out and "hipHostFree(host)" in out
    assert "hipDeviceAttributeMultiprocessorCount" in out


def test_macro_bodies_are_renamed_through_their_byte_mapping():
    out = rewrite_source((MIGRATE / "saxpy_streams.cu").read_bytes(), "x.cu").data.decode()
    macro = out[out.index("#define CUDA_CHECK"):out.index("} while (0)")]
    assert "hipError_t err_ = (call);" in macro and "err_ != hipSuccess" in macro and "hipGetErrorString(err_)" in macro
    assert "#define CUDA_CHECK(call)" in macro  # the user's macro name stays


def test_templates_and_headers():
    out = rewrite_source((MIGRATE / "complex_ops.cuh").read_bytes(), "complex_ops.cuh").data.decode()
    assert "#include <hip/hip_complex.h>" in out and "cuComplex.h" not in out
    assert "inline hipFloatComplex cudaScale(hipFloatComplex z" in out  # user function name kept
    assert "data[i] = hipCmulf(data[i], w);" in out  # inside a function template


def test_nvidia_only_branch_is_left_as_cuda():
    out = rewrite_source((MIGRATE / "complex_rotate.cu").read_bytes(), "complex_rotate.cu").data.decode()
    assert "cudaDeviceProp p; cudaGetDeviceProperties(&p, 0); return \"cuda\";" in out
    assert "hipMalloc(&d" in out


def test_branches_on_a_project_switch_stay_cuda(tmp_path):
    # config.cuh sets LIB_DEVICE_CUDA only when the build is not for AMD: what it guards is NVIDIA code,
    # kept as CUDA like an `#ifndef USE_ROCM` branch; the rest is renamed.
    (tmp_path / "config.cuh").write_text("#pragma once\n#if defined(__HIP_PLATFORM_AMD__)\n#define LIB_DEVICE_HIP\n"
                                         "#else\n#define LIB_DEVICE_CUDA\n#endif\n")
    src = ('#include "config.cuh"\nvoid sync_all() {\n#ifdef LIB_DEVICE_CUDA\n    cudaDeviceSynchronize();\n#endif\n'
           "    cudaStreamSynchronize(0);\n}\n").encode()
    kernel = tmp_path / "k.cu"
    kernel.write_bytes(src)
    out = rewrite_source(src, "k.cu", fs_path=str(kernel)).data.decode()
    assert "    cudaDeviceSynchronize();" in out and "hipStreamSynchronize(0)" in out
    # Without the header the switch means nothing: the call is renamed.
    assert "hipDeviceSynchronize()" in rewrite_source(src, "k.cu").data.decode()


def test_runtime_header_is_added_once_to_cu_files():
    out = rewrite_source((MIGRATE / "complex_rotate.cu").read_bytes(), "complex_rotate.cu").data.decode()
    assert out.count("#include <hip/hip_runtime.h>") == 1
    assert out.index("#include <hip/hip_runtime.h>") < out.index('#include "complex_ops.cuh"')
    saxpy = rewrite_source((MIGRATE / "saxpy_streams.cu").read_bytes(), "s.cu").data.decode()
    assert saxpy.count("hip/hip_runtime.h") == 1  # <cuda_runtime.h> became it; nothing added
    plain = rewrite_source(b"int f(int x) { return x; }\n", "plain.cpp").data
    assert plain == b"int f(int x) { return x; }\n"  # .cpp files get nothing nvcc did not give them


def test_deprecated_thread_calls_become_their_device_twins():
    # CUDA 4.0 deprecated cudaThread* for cudaDevice* (same behaviour); HIP has only the cudaDevice* ones.
    src = (b"void f(size_t* v) { cudaThreadSynchronize(); cudaThreadSetLimit(cudaLimitStackSize, 1024); "
           b"cudaThreadGetLimit(v, cudaLimitStackSize); cudaThreadExit(); }\n")
    out = rewrite_source(src, "t.cu").data.decode()
    assert "hipDeviceSynchronize();" in out and "hipDeviceSetLimit(hipLimitStackSize, 1024)" in out
    assert "hipDeviceGetLimit(v, hipLimitStackSize)" in out and "hipDeviceReset();" in out
    assert "cudaThread" not in out
    # `cudaError`, the enum tag of cudaError_t (Rodinia writes `cudaError e = cudaGetLastError();`)
    out = rewrite_source(b"cudaError e = cudaGetLastError(); enum cudaError f;\n", "e.cu").data.decode()
    assert "hipError_t e = hipGetLastError(); enum hipError_t f;" in out


def test_host_string_functions_get_their_header(tmp_path):
    # nvcc's implicit cuda_runtime.h brings <string.h> into .cu files, ROCm 7's hip_runtime.h does not:
    # migrate applies NV009's fix, before the first top-level #include.
    out = tmp_path / "out"
    result = migrate(MIGRATE, out)
    text = (out / "legacy_host.cu").read_text()
    assert text.index("#include <cstring>\n") < text.index("#include <stdio.h>")
    assert text.count("#include <cstring>") == 1
    assert not [f for f in result.findings if f.code == "NV009"]


def test_a_quoted_include_of_the_projects_own_cuda_h_stays(tmp_path):
    # Rodinia's b+tree: util/cuda/cuda.cu includes "cuda.h", its own util/cuda/cuda.h (a quoted include is
    # looked up beside the file first), inside extern "C". Renaming it to hip/hip_runtime.h put HIP's C++
    # header inside extern "C" ("templates must have C++ linkage"); it stays, and the runtime header is
    # added before the extern "C" block.
    (tmp_path / "cuda.h").write_text("void setdevice(void);\n")
    src = (b'#ifdef __cplusplus\nextern "C" {\n#endif\n#include "cuda.h"\n'
           b"void setdevice(void) { int n; cudaGetDeviceCount(&n); cudaSetDevice(n - 1); }\n"
           b"#ifdef __cplusplus\n}\n#endif\n")
    (tmp_path / "cuda.cu").write_bytes(src)
    out = rewrite_source(src, "cuda.cu", fs_path=str(tmp_path / "cuda.cu")).data.decode()
    assert out.startswith("#include <hip/hip_runtime.h>\n#ifdef __cplusplus")
    assert '#include "cuda.h"' in out and "hipGetDeviceCount(&n)" in out
    # Without a cuda.h beside it, the include names the toolkit's header: renamed.
    other = tmp_path / "sub"
    other.mkdir()
    (other / "k.cu").write_bytes(src)
    out = rewrite_source(src, "k.cu", fs_path=str(other / "k.cu")).data.decode()
    assert '#include "hip/hip_runtime.h"' in out and '"cuda.h"' not in out


def test_helpers_behind_a_cuda_header_guard_stay_for_amd(tmp_path):
    # cuda-samples' helper_cuda.h defines checkCudaErrors/findCudaDevice under `#ifdef __CUDA_RUNTIME_H__`:
    # migrate applies API004's fix (test HIP's guard too), and the helpers inside are renamed.
    src = tmp_path / "src"
    src.mkdir()
    (src / "helper.h").write_text("#pragma once\n#ifdef __CUDA_RUNTIME_H__\n"
                                  "inline void check(cudaError_t e) { if (e != cudaSuccess) cudaDeviceReset(); }\n#endif\n")
    result = migrate(src, tmp_path / "out")
    text = (tmp_path / "out" / "helper.h").read_text()
    assert "#if defined(__CUDA_RUNTIME_H__) || defined(HIP_INCLUDE_HIP_HIP_RUNTIME_H)\n" in text
    assert "inline void check(hipError_t e) { if (e != hipSuccess) hipDeviceReset(); }" in text
    assert not [f for f in result.findings if f.code == "API004"]


def test_quasi_random_names_of_cuda_samples_are_renamed():
    # MC_EstimatePiInlineQ / MC_EstimatePiQ: hipRAND names the table took from rules/curand/api.toml.
    src = (b"curandStateSobol64_t s; curandDirectionVectors64_t* v; "
           b"void f(curandGenerator_t g) { curandSetGeneratorOrdering(g, CURAND_ORDERING_QUASI_DEFAULT); "
           b"curandGetDirectionVectors64(&v, CURAND_SCRAMBLED_DIRECTION_VECTORS_64_JOEKUO6); }\n")
    out = rewrite_source(src, "q.cu").data.decode()
    for name in ("hiprandStateSobol64_t s", "hiprandDirectionVectors64_t* v", "HIPRAND_ORDERING_QUASI_DEFAULT",
                 "hiprandGetDirectionVectors64(&v, HIPRAND_SCRAMBLED_DIRECTION_VECTORS_64_JOEKUO6)"):
        assert name in out, name


def test_graph_memory_and_access_policy_names_are_renamed():
    # cuda-samples' graphMemoryNodes / graphMemoryFootprint / simpleAttributes
    src = (b"cudaMemAllocNodeParams p; cudaGraphMemAttributeType t = cudaGraphMemAttrUsedMemHigh; "
           b"void f(cudaAccessPolicyWindow* v, int d) { v->hitProp = cudaAccessPropertyPersisting; "
           b"cudaDeviceGetGraphMemAttribute(d, t, 0); int a; "
           b"cudaDeviceGetAttribute(&a, cudaDevAttrMemoryPoolsSupported, d); }\n")
    out = rewrite_source(src, "g.cu").data.decode()
    for name in ("hipMemAllocNodeParams p", "hipGraphMemAttributeType t = hipGraphMemAttrUsedMemHigh",
                 "hipAccessPolicyWindow* v", "hitProp = hipAccessPropertyPersisting", "hipDeviceGetGraphMemAttribute(d",
                 "hipDeviceAttributeMemoryPoolsSupported"):
        assert name in out, name


def test_spaced_launch_chevrons_are_joined(tmp_path):
    # Rodinia's particlefilter writes `k << < g, b >> > (args)`: nvcc reads it, clang does not (NV010's fix).
    src = tmp_path / "src"
    src.mkdir()
    (src / "p.cu").write_text("__global__ void k(int* p) { p[0] = 1; }\nvoid f(int* p) { k << < 1, 32 >> > (p); }\n")
    migrate(src, tmp_path / "out")
    assert "k <<< 1, 32 >>> (p);" in (tmp_path / "out" / "p.cu").read_text()


def test_launch_syntax_ggl():
    src = b"""#include <hip/hip_runtime.h>
template <typename T> __global__ void k(T* p, int n) {}
__global__ void z() {}
void go(float* p, int n, cudaStream_t s) {
    k<float><<<dim3(n / 64), 64, 0, s>>>(p, n);
    k<<<1, 2>>>(p, n);
    z<<<1, 1, 128>>>();
}
"""
    out = rewrite_source(src, "l.cu", launch_syntax="ggl").data.decode()
    assert "hipLaunchKernelGGL(HIP_KERNEL_NAME(k<float>), dim3(n / 64), 64, 0, s, p, n);" in out
    assert "hipLaunchKernelGGL(k, 1, 2, 0, 0, p, n);" in out
    assert "hipLaunchKernelGGL(z, 1, 1, 128, 0);" in out
    assert "void go(float* p, int n, hipStream_t s)" in out
    assert "<<<" not in out
    assert rewrite_source(src, "l.cu").data.decode().count("<<<") == 3  # default: launches stay


def test_cub_namespace_and_headers():
    src = b"""#include <cub/cub.cuh>
using namespace cub;
namespace c2 = cub;
__global__ void k(float* out) {
    typedef cub::BlockReduce<float, 256> BR;
    __shared__ typename BR::TempStorage tmp;
    float s = BR(tmp).Sum(1.f);
    if (threadIdx.x == 0) *out = s;
}
void h(void* t, size_t b, float* i, float* o, int n) { cub::DeviceReduce::Sum(t, b, i, o, n); }
"""
    out = rewrite_source(src, "r.cu").data.decode()
    assert "#include <hipcub/hipcub.hpp>" in out and "using namespace hipcub;" in out
    assert "namespace c2 = hipcub;" in out
    assert "typedef hipcub::BlockReduce<float, 256> BR;" in out and "hipcub::DeviceReduce::Sum(" in out
    assert "cub::" not in out.replace("hipcub::", "")


def test_member_and_field_names_are_not_renamed():
    src = b"struct S { int cudaMalloc; }; void f(S s) { s.cudaMalloc = 1; cudaMalloc(0, 0); }\n"
    out = rewrite_source(src, "m.cpp").data.decode()
    assert "int cudaMalloc;" in out and "s.cudaMalloc = 1" in out and "hipMalloc(0, 0)" in out


# Trees: safety, summary, checklist ----------------------------------------------------------------

def test_out_writes_the_tree_and_never_touches_the_source(tmp_path):
    before = tree_digest(MIGRATE)
    result = migrate(MIGRATE, tmp_path / "out")
    assert tree_digest(MIGRATE) == before
    out = tmp_path / "out"
    assert (out / "saxpy_streams.cu").exists()
    assert "project(migrate_fixture LANGUAGES CXX HIP)" in (out / "CMakeLists.txt").read_text()  # ported (test_buildport.py)
    assert result.count("changed") == 7 and result.count("copied") == 1  # .hiplint-project
    checklist = (out / CHECKLIST_NAME).read_text()
    assert "- [ ] `CMakeLists.txt`: ported (" in checklist and "7 changed" in checklist


def test_out_refuses_a_non_empty_directory_unless_forced(tmp_path, cli):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    r = cli("migrate", MIGRATE, "--out", out)
    assert r.returncode == 2 and b"not empty" in r.stderr
    assert sorted(os.listdir(out)) == ["keep.txt"]
    r = cli("migrate", MIGRATE, "--out", out, "--force")
    assert r.returncode == 0, r.stderr
    assert (out / "keep.txt").read_text() == "mine" and (out / "saxpy_streams.cu").exists()
    assert b"7 changed" in r.stdout


def test_options_are_checked(tmp_path, cli):
    assert cli("migrate", MIGRATE).returncode == 2  # neither --out nor --in-place
    r = cli("migrate", MIGRATE, "--out", tmp_path / "o", "--in-place")
    assert r.returncode == 2 and b"exactly one" in r.stderr
    work = tmp_path / "src"
    shutil.copytree(MIGRATE, work)
    r = cli("migrate", work, "--out", work / "sub")
    assert r.returncode == 2 and b"overlaps" in r.stderr


def test_in_place_keeps_a_backup_of_the_original(tmp_path):
    work = tmp_path / "proj"
    shutil.copytree(MIGRATE, work)
    original = tree_digest(work)
    result = migrator(work, in_place=True).run(str(work))
    assert result.count("copied") == 0 and result.count("changed") == 7
    assert "LANGUAGES CXX HIP" in (work / "CMakeLists.txt").read_text()  # the build file is ported in place too
    backup = Path(str(work) + BACKUP_SUFFIX)
    assert result.backup == str(backup) and tree_digest(backup) == original
    assert "hipMalloc" in (work / "saxpy_streams.cu").read_text()
    # Again: the backup still holds the original, and nothing else changes.
    migrated = tree_digest(work)
    migrator(work, in_place=True).run(str(work))
    assert tree_digest(backup) == original
    assert {k: v for k, v in tree_digest(work).items() if k != CHECKLIST_NAME} == \
           {k: v for k, v in migrated.items() if k != CHECKLIST_NAME}


def test_in_place_with_hip_extension_renames_files(tmp_path):
    work = tmp_path / "proj"
    shutil.copytree(MIGRATE, work)
    migrator(work, in_place=True, hip_extension=True).run(str(work))
    names = sorted(os.listdir(work))
    assert "saxpy_streams.hip" in names and "saxpy_streams.cu" not in names
    assert "complex_ops.cuh" in names  # headers keep their names: includes still resolve
    summary_src = tmp_path / "inc"
    summary_src.mkdir()
    (summary_src / "kernel.cu").write_text("__global__ void k() {}\n")
    (summary_src / "main.cu").write_text('#include "kernel.cu"\n#include "other.h"\nint main() { k<<<1, 1>>>(); }\n')
    migrate(summary_src, tmp_path / "inc-out", hip_extension=True)
    main = (tmp_path / "inc-out" / "main.hip").read_text()
    assert '#include "kernel.hip"' in main and '#include "other.h"' in main


@pytest.mark.parametrize("opts", [{}, {"launch_syntax": "ggl", "hip_extension": True}], ids=["default", "ggl-hip"])
def test_a_second_migration_changes_nothing(tmp_path, opts):
    first, second = tmp_path / "one", tmp_path / "two"
    migrate(FIXTURES, first, **opts)
    result = migrate(first, second, **opts)
    a = {k: v for k, v in tree_digest(first).items() if k != CHECKLIST_NAME}
    b = {k: v for k, v in tree_digest(second).items() if k != CHECKLIST_NAME}
    assert a == b
    assert result.count("changed") == 0


def test_binary_unreadable_and_odd_files_are_copied_not_touched(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    blob = b"\x7fELF\0\0cudaMalloc\0"
    (src / "kernel.cu").write_bytes(blob)
    (src / "notes.txt").write_text("call cudaMalloc here\n")
    (src / "locked.cu").write_text("void f() { cudaMalloc(0, 0); }\n")
    (src / "link.cu").symlink_to("kernel.cu")
    import builtins
    real_open = builtins.open

    def fake_open(path, *a, **k):
        if str(path).endswith("locked.cu"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *a, **k)

    monkeypatch.setattr(builtins, "open", fake_open)
    result = migrate(src, tmp_path / "out")
    monkeypatch.setattr(builtins, "open", real_open)
    by_name = {f.src: f for f in result.files}
    assert by_name["kernel.cu"].action == "copied" and by_name["kernel.cu"].reason == "binary file"
    assert (tmp_path / "out" / "kernel.cu").read_bytes() == blob
    assert by_name["notes.txt"].action == "copied"
    assert (tmp_path / "out" / "notes.txt").read_text() == "call cudaMalloc here\n"
    assert by_name["locked.cu"].action == "skipped" and "Permission denied" in by_name["locked.cu"].reason
    assert by_name["link.cu"].action == "copied" and os.readlink(tmp_path / "out" / "link.cu") == "kernel.cu"
    summary = result.summary()
    assert "1 skipped" in summary and "binary file" in summary and "Permission denied" in summary


def test_unsupported_apis_stay_and_go_to_the_checklist(tmp_path):
    result = migrate(FIXTURES / "api", tmp_path / "out")
    out = (tmp_path / "out" / "no_hip_equivalent.cu").read_text()
    assert "cusolverDnDHgesv(h" in out and "hipsolverHandle_t h" in out  # kept, never silently "renamed"
    codes = sorted(f.code for f in result.findings if f.path == "no_hip_equivalent.cu")
    # One name and one header are left to the specialists (SLV001 for cusolverDnDHgesv, LIB002 for
    # <mma.h>): the fallback API rules stay quiet there.
    assert codes.count("API001") == 1 and codes.count("API002") == 1
    assert "SLV001" in codes and "LIB002" in codes
    checklist = (tmp_path / "out" / CHECKLIST_NAME).read_text()
    assert "API001" in checklist and "no_hip_equivalent.cu:" in checklist


def test_project_headers_are_read_from_the_source_tree(tmp_path):
    # The compat header redefines the sync shuffle for ROCm builds: the kernel that includes it is fine
    # as it is, and its mask must be left alone (the file without the header gets WRP006's fix).
    src = tmp_path / "src"
    (src / "kernels").mkdir(parents=True)
    (src / "compat.cuh").write_text("#pragma once\n#ifdef USE_ROCM\n"
                                   "#define __shfl_xor_sync(mask, var, lane) __shfl_xor(var, lane)\n#endif\n")
    kernel = ('#include "compat.cuh"\n__global__ void k(float* x) {\n'
              "    x[threadIdx.x] = __shfl_xor_sync(0xffffffff, x[threadIdx.x], 1);\n}\n")
    (src / "kernels" / "k.cu").write_text(kernel)
    (src / "kernels" / "bare.cu").write_text(kernel.replace('#include "compat.cuh"\n', ""))
    result = migrate(src, tmp_path / "out")
    assert not [f for f in result.findings if f.code == "WRP006"]
    assert "HIPLINT_FULL_WARP_MASK" in (tmp_path / "out" / "kernels" / "bare.cu").read_text()
    assert "__shfl_xor_sync(0xffffffff," in (tmp_path / "out" / "kernels" / "k.cu").read_text()
    without_fixes = migrate(src, tmp_path / "plain", apply_fixes=False)
    assert sorted(f.path for f in without_fixes.findings if f.code == "WRP006") == ["kernels/bare.cu"]


def test_safe_fixes_are_applied_before_renaming(tmp_path):
    from hiplint import CudaRule, Fix

    class Spin(CudaRule):
        """Test rule: a safe fix from one name to another."""
        code, name, summary = "TST001", "test-rule", "test"
        query = '((identifier) @id (#eq? @id "old_sleep"))'

        def check(self, ctx, captures):
            for node in captures["id"]:
                ctx.report(node, fix=Fix.safe("rename", ctx.replace(node, "new_sleep")))

    src = tmp_path / "src"
    src.mkdir()
    (src / "a.cu").write_text("void old_sleep();\nvoid f() { old_sleep(); cudaDeviceSynchronize(); }\n")
    settings = load_settings([str(src)], None, True)
    result = Migrator(settings, [Spin], MigrateOptions(out=str(tmp_path / "out"))).run(str(src))
    out = (tmp_path / "out" / "a.cu").read_text()
    assert out == "#include <hip/hip_runtime.h>\nvoid new_sleep();\nvoid f() { new_sleep(); hipDeviceSynchronize(); }\n"
    assert result.files[0].fixes == 2


# Compile oracle -----------------------------------------------------------------------------

def _toolchain_or_skip():
    # The ROCm 7.2 toolchain (tests/oracle/setup.sh): real `*_sync` functions with their 64-bit-mask
    # check and headers that no longer bring <cstring> in, which HIP 5.2 could not judge.
    from oracle.toolchain import rocm72_full_missing
    why = rocm72_full_missing()
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the ROCm 7.2 toolchain is missing: {why}")
        pytest.skip(why)


@pytest.fixture(scope="module")
def migrated_fixtures(tmp_path_factory):
    out = tmp_path_factory.mktemp("migrated") / "out"
    migrate(MIGRATE, out)
    return out


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["saxpy_streams.cu", "monte_carlo_pi.cu", "complex_rotate.cu", "legacy_host.cu"])
def test_migrated_fixtures_compile_for_amd(migrated_fixtures, name):
    _toolchain_or_skip()
    from oracle.toolchain import HIP_ARCHS, compile_rocm72_full
    path = migrated_fixtures / name
    result = compile_rocm72_full(path.read_text(), HIP_ARCHS, include_dir=path.parent, rename_headers=False)
    assert result.ok, f"{name} does not compile for {', '.join(HIP_ARCHS)} with ROCm 7.2:\n{result}"


# Safe-fix fixtures whose migrated file still stops the AMD build, each at a step the checklist names.
MIGRATED_MANUAL_STEPS = {
    "api/ambiguous_ffs.cu": "API005: the `__ffs` cast narrows a 64-bit value, so its fix is unsafe",
    "warp/aggregated_atomics.cu": "WRP005/WRP006: the ballot variable's widening is unsafe beside 32-lane code",
    "dualtarget_switches/src/count.cpp": "its project header picks the runtime by -DSIMX_USE_HIP, which its build sets",
}


def _safe_fix_fixtures():
    out = []
    for fixed in sorted(FIXTURES.rglob("*.fixed.*")):
        if ".unsafe." in fixed.name or any(p.endswith(".expected") for p in fixed.parts):
            continue
        orig = fixed.with_name(fixed.name.replace(".fixed", ""))
        text = orig.read_text(encoding="utf-8", errors="replace") if orig.exists() else ""
        if orig.suffix in (".cu", ".cpp", ".hip") and "hl-oracle: cuda-only" not in text and "hl-oracle: skip" not in text:
            out.append(str(orig.relative_to(FIXTURES)))
    return out


@pytest.fixture(scope="module")
def migrated_tree(tmp_path_factory):
    """Every fixture migrated at once, and every safe-fix fixture's result compiled (in parallel: the
    oracle runs in one pytest process)."""
    _toolchain_or_skip()
    from concurrent.futures import ThreadPoolExecutor

    from oracle.toolchain import HIP_ARCHS, compile_rocm72_full
    src = tmp_path_factory.mktemp("fixtures") / "src"
    shutil.copytree(FIXTURES, src, ignore=lambda d, names: [n for n in names if ".fixed." in n or n.endswith(".expected")])
    out = tmp_path_factory.mktemp("migrated-all") / "out"
    migrate(src, out)

    def compile_one(rel):
        path = out / rel if (out / rel).exists() else (out / rel).with_suffix(".hip")
        return compile_rocm72_full(path.read_text(encoding="utf-8", errors="surrogateescape"), HIP_ARCHS,
                                   include_dir=path.parent, rename_headers=False)
    rels = _safe_fix_fixtures()
    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        results = dict(zip(rels, pool.map(compile_one, rels)))
    return out, results


@pytest.mark.oracle
@pytest.mark.parametrize("rel", _safe_fix_fixtures())
def test_every_safe_fix_fixture_compiles_for_amd_after_migrate(migrated_tree, rel):
    # `migrate` applies the safe fixes and the renames: the result builds for gfx90a, gfx942 and gfx1100
    # (ROCm 7.2), except where the checklist names the manual step.
    from oracle.toolchain import HIP_ARCHS
    out, results = migrated_tree
    result = results[rel]
    if rel in MIGRATED_MANUAL_STEPS:
        checklist = (out / CHECKLIST_NAME).read_text(encoding="utf-8")
        assert not result.ok and Path(rel).name in checklist, f"{rel}: {MIGRATED_MANUAL_STEPS[rel]}"
        return
    assert result.ok, f"{rel} does not compile for {', '.join(HIP_ARCHS)} with ROCm 7.2 after migrate:\n{result}"


@pytest.mark.oracle
def test_the_unmigrated_fixture_does_not_compile_for_amd():
    # The compile check can fail: the CUDA original does not build against HIP.
    _toolchain_or_skip()
    from oracle.toolchain import compile_rocm72_full
    assert not compile_rocm72_full((MIGRATE / "monte_carlo_pi.cu").read_text(), ("gfx942",)).ok


def test_related_locations_move_with_inserted_lines():
    from hiplint.migrate import _shift
    from hiplint.model import Finding, RelatedLocation, Severity

    f = Finding(code="WRP006", name="n", message="m", severity=Severity.ERROR, path="in/k.cu", line=2, column=1,
                end_line=2, end_column=5, related=(RelatedLocation("in/k.cu", 9, 3, 10, 4, "use"),))
    (out,) = _shift([f], [1, 5], "out/k.hip")
    assert (out.path, out.line) == ("out/k.hip", 3)
    assert out.related == (RelatedLocation("out/k.hip", 11, 3, 12, 4, "use"),)


# What is left, and why -------------------------------------------------------------------------

MANY_KERNELS = "".join(f"""
__global__ void scan{i}(const float* in, float* out) {{
    int lane = threadIdx.x & 31;
    float v = in[threadIdx.x];
    float first = __shfl_sync(0xffffffff, v, 0);
    out[threadIdx.x] = v + first + lane;
}}
""" for i in range(30))
PARTIAL_MASK = "__global__ void half(float* x) {\n    x[0] = __shfl_xor_sync(0xffff, x[0], 1);\n}\n"
BREAKS = "void f() {\n    break_me();\n}\n"


def _left_tree(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "many.cu").write_text(MANY_KERNELS)
    (src / "half.cu").write_text(PARTIAL_MASK)
    (src / "breaks.cu").write_text(BREAKS)
    shutil.copy(FIXTURES / "python" / "torch_version.py", src / "torch_version.py")
    return src


def _migrate_with_pack(src, out, **opts):
    import sys
    sys.path.insert(0, str(ROOT / "tests" / "packs"))
    import hiplint_testpack as pack
    settings = load_settings([str(src)], None, True)
    rules = select_rules(settings, load_registry()) + [pack.ParseBreaker]
    return Migrator(settings, rules, MigrateOptions(out=str(out), **opts)).run(str(src))


def test_every_safe_fix_is_applied_and_the_summary_says_what_is_left_and_why(tmp_path):
    src = _left_tree(tmp_path)
    result = _migrate_with_pack(src, tmp_path / "out")
    many = (tmp_path / "out" / "many.cu").read_text()
    # 30 kernels, 60 safe fixes (WRP006 mask, WRP008 width): all of them, none left as hand work.
    assert many.count("__shfl_sync(HIPLINT_FULL_WARP_MASK, v, 0, 32)") == 30
    left = result.findings
    assert not [f for f in left if f.code in ("WRP006", "WRP008") and f.path == "many.cu"]
    unsafe = [f for f in left if f.fix is not None and f.fix.applicability == Applicability.UNSAFE]
    assert {f.code for f in unsafe} >= {"WRP006", "PY001"}  # the partial mask, the torch checks
    dropped = [f for f in left if f.code == "TST020"]
    assert len(dropped) == 1 and dropped[0].fix.applicability == Applicability.DISPLAY_ONLY
    assert "not applied: it would add a parse error" in dropped[0].fix.title
    summary = result.summary()
    manual = len(left) - len(unsafe) - 1
    assert (f"{len(left)} finding(s) left ({manual} need a manual step, {len(unsafe)} with only unsafe fixes "
            "(review them: migrate again with --unsafe-fixes), 1 whose fix could not be applied, listed below)") in summary
    assert "1 fix(es) not applied: it would add a parse error" in summary
    checklist = (tmp_path / "out" / CHECKLIST_NAME).read_text()
    # No promise of a command that would not make the fix: the dropped one has no hint, the unsafe
    # ones point at another migration (their fixes were computed on the CUDA text, before renames).
    assert "`hiplint fix`" not in checklist and "`hiplint fix --unsafe-fixes`" not in checklist
    breaks_item = next(line for line in checklist.splitlines() if "breaks.cu" in line and "TST020" in line)
    assert "*(fix" not in breaks_item
    assert "*(fix, review it: migrate again with `--unsafe-fixes`)*" in checklist
    assert "60 fixed automatically" in checklist  # the migration's own fixes, not "0"
    plain = _migrate_with_pack(src, tmp_path / "plain", apply_fixes=False)
    assert "with safe fixes (migrate again without --no-fix)" in plain.summary()


def test_unsafe_fixes_are_applied_on_request_also_to_python_files(tmp_path):
    src = _left_tree(tmp_path)
    result = _migrate_with_pack(src, tmp_path / "out", unsafe_fixes=True)
    assert "__shfl_xor_sync(0xffffull," in (tmp_path / "out" / "half.cu").read_text()
    py = (tmp_path / "out" / "torch_version.py").read_bytes()
    assert py == (FIXTURES / "python" / "torch_version.unsafe.fixed.py").read_bytes()
    by_name = {f.src: f for f in result.files}
    assert by_name["torch_version.py"].action == "changed" and by_name["torch_version.py"].fixes > 0
    assert not [f for f in result.findings if f.fix is not None and f.fix.applicability >= Applicability.UNSAFE]
    assert "with only unsafe fixes" not in result.summary()
    assert "safe and unsafe fix(es) applied" in result.summary()


# The table against the HIP headers ------------------------------------------------------------------

# Families whose HIP headers the ROCm 7.2 chroot has (shared/oracle/rocm72_chroot.sh installs HIP,
# hipBLAS, hipBLASLt, hipCUB, hipSOLVER, hipRAND, hipSPARSE, hipFFT), and the header directories.
# NVTX -> roctx is not checked: roctracer is not among the chroot's packages.
ROCM72_FAMILIES = frozenset({"runtime", "driver", "device", "nvrtc", "cub", "cublas", "curand", "cusolver",
                             "cusparse", "cufft"})
ROCM72_HEADER_DIRS = ("hip", "hipblas", "hipblas-common", "hipblaslt", "hipcub", "hipsolver", "hiprand",
                      "rocrand", "hipsparse", "hipfft", "rocprim")


def _rocm72_include() -> Path:
    root = os.environ.get("HIPLINT_ROCM72_ROOT") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "hiplint-oracle", "sid-rocm72")
    inc = Path(root) / "usr" / "include"
    if not (inc / "hip" / "hip_version.h").is_file() or "HIP_VERSION_MINOR 2" not in (inc / "hip" / "hip_version.h").read_text():
        pytest.skip(f"the ROCm 7.2 chroot is absent ({root}: make it with shared/oracle/rocm72_chroot.sh setup, "
                    "or set HIPLINT_ROCM72_ROOT)")
    return inc


def test_every_rename_target_for_rocm_7_2_is_declared_in_its_headers():
    import re
    inc = _rocm72_include()
    words = set()
    for d in ROCM72_HEADER_DIRS:
        for p in (inc / d).rglob("*"):
            if p.is_file():
                words |= set(re.findall(r"[A-Za-z_]\w*", p.read_text(errors="replace")))
    table = load_table().for_rocm((7, 2))
    checked = {c: h for c, h in table.names.items() if table.family_of[c] in ROCM72_FAMILIES}
    assert len(checked) > 500
    missing = sorted(f"{table.family_of[c]}: {c} -> {h}" for c, h in checked.items() if h not in words)
    assert not missing, "not declared in the ROCm 7.2 headers:\n" + "\n".join(missing)
    headers = sorted(f"{c} -> {h}" for c, h in table.headers.items()
                     if table.family_of[c] in ROCM72_FAMILIES and not (inc / h).is_file())
    assert not headers, headers


def test_renames_follow_the_rocm_version():
    table = load_table()
    # hipBLAS 3 (ROCm 7.0) removed the _v2 functions; its unsuffixed ones take hipDataType/hipComplex.
    assert table.names["cublasGemmEx"] == "hipblasGemmEx"  # the default, ROCm 7.0
    assert table.for_rocm((7, 2)).names["cublasGemmEx"] == "hipblasGemmEx"
    assert table.for_rocm((6, 2)).names["cublasGemmEx"] == "hipblasGemmEx_v2"
    assert table.for_rocm((6, 2)).names["cublasCgemm"] == "hipblasCgemm_v2"
    assert table.for_rocm((5, 7)).names["cublasZgemm"] == "hipblasZgemm_v2"  # older than every entry
    for cuda, hip in [("curandCreatePoissonDistribution", "hiprandCreatePoissonDistribution"),
                      ("CURAND_RNG_QUASI_SCRAMBLED_SOBOL64", "HIPRAND_RNG_QUASI_SCRAMBLED_SOBOL64"),
                      ("curandGenerateLongLong", "hiprandGenerateLongLong"),
                      ("cublasGetStatusString", "hipblasStatusToString"), ("cublasCreate_v2", "hipblasCreate")]:
        assert table.names[cuda] == hip


def test_migrate_renames_for_the_configured_rocm_version(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "g.cu").write_text("#include <cublas_v2.h>\nvoid g(cublasHandle_t h) { cublasCreate_v2(&h);\n"
                              "  const char* s = cublasGetStatusString(CUBLAS_STATUS_SUCCESS);\n"
                              "  cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, 0, 0, CUDA_R_32F, 1, 0, CUDA_R_32F, 1,"
                              " 0, 0, CUDA_R_32F, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT); (void)s; }\n")
    for version, gemm in (("7.2", "hipblasGemmEx("), ("6.2", "hipblasGemmEx_v2(")):
        settings = load_settings([str(src)], None, True).with_overrides(rocm_version=tuple(map(int, version.split("."))))
        out = tmp_path / version
        Migrator(settings, [], MigrateOptions(out=str(out), report_unknown_names=False)).run(str(src))
        text = (out / "g.cu").read_text()
        assert gemm in text and "hipblasCreate(&h)" in text and "hipblasStatusToString(" in text, text


def test_table_rejects_a_bad_versioned_entry(tmp_path):
    (tmp_path / "x.toml").write_text('[family]\ntitle = "x"\nsource = "y"\n[versioned]\ncudaX = { "six" = "hipX" }\n')
    with pytest.raises(TableError, match="invalid ROCm version"):
        load_from(tmp_path)


BLAS_RAND = """#include <cublas_v2.h>
#include <curand.h>
#include <cstdio>
int main() {
    cublasHandle_t h;
    cublasCreate_v2(&h);
    printf("%s\\n", cublasGetStatusString(CUBLAS_STATUS_SUCCESS));
    float *A = 0, *B = 0, *C = 0, alpha = 1.f, beta = 0.f;
    cuComplex ca{1.f, 0.f}, *cA = 0;
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &alpha, A, CUDA_R_32F, 4, B, CUDA_R_32F, 4, &beta, C,
                 CUDA_R_32F, 4, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    cublasCgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &ca, cA, 4, cA, 4, &ca, cA, 4);
    cublasDestroy_v2(h);
    curandGenerator_t g;
    curandCreateGenerator(&g, CURAND_RNG_QUASI_SCRAMBLED_SOBOL64);
    unsigned long long* out = 0;
    curandGenerateLongLong(g, out, 16);
    curandDiscreteDistribution_t d;
    curandCreatePoissonDistribution(3.0, &d);
    curandDestroyDistribution(d);
    return 0;
}
"""


@pytest.mark.oracle
def test_migrated_blas_and_rand_code_compiles_against_rocm_7_2(tmp_path):
    # The renames this table gained (hipBLAS 3's GemmEx/Cgemm, StatusToString, _v2 spellings, compute
    # types; hipRAND's Poisson distribution, Sobol64, GenerateLongLong): the migration compiles.
    import subprocess
    inc = _rocm72_include()
    root = inc.parent.parent
    src = tmp_path / "src"
    src.mkdir()
    (src / "blas_rand.cu").write_text(BLAS_RAND)
    settings = load_settings([str(src)], None, True).with_overrides(rocm_version=(7, 2))
    result = Migrator(settings, [], MigrateOptions(out=str(tmp_path / "out"))).run(str(src))
    assert not result.findings, [f.message for f in result.findings]  # API003: no unknown name left
    work = root / "src" / f"hiplint-test-{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    try:
        shutil.copy(tmp_path / "out" / "blas_rand.cu", work / "blas_rand.hip")
        # As shared/oracle/rocm72_chroot.sh runs it: the chroot's clang 22 with its ROCm 7.2 device libraries.
        libs = sorted(root.glob("usr/lib/llvm-22/lib/clang/*/amdgcn/bitcode"))
        if not libs or os.geteuid() != 0:
            pytest.skip("the ROCm 7.2 chroot has no clang 22 device libraries, or chroot needs root here")
        r = subprocess.run(["chroot", str(root), "/usr/lib/llvm-22/bin/clang++", "-x", "hip", "--rocm-path=/usr",
                            f"--rocm-device-lib-path=/{libs[0].relative_to(root)}", "-std=c++17",
                            "--offload-arch=gfx942", "-fsyntax-only", f"/src/{work.name}/blas_rand.hip"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.mark.oracle
def test_migrated_host_code_compiles_against_rocm_7_2(tmp_path):
    # ROCm 7's hip_runtime.h no longer brings <string.h> in: the migrated legacy_host.cu compiles only
    # because migrate included <cstring> (NV009); the plain CUDA file renamed by hand does not.
    import subprocess
    inc = _rocm72_include()
    root = inc.parent.parent
    libs = sorted(root.glob("usr/lib/llvm-22/lib/clang/*/amdgcn/bitcode"))
    if not libs or os.geteuid() != 0:
        pytest.skip("the ROCm 7.2 chroot has no clang 22 device libraries, or chroot needs root here")
    migrate(MIGRATE, tmp_path / "out")
    work = root / "src" / f"hiplint-test-{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    try:
        migrated = (tmp_path / "out" / "legacy_host.cu").read_text()
        (work / "migrated.hip").write_text(migrated)
        (work / "without.hip").write_text(migrated.replace("#include <cstring>\n", ""))

        def compiles(name):
            return subprocess.run(["chroot", str(root), "/usr/lib/llvm-22/bin/clang++", "-x", "hip", "--rocm-path=/usr",
                                   f"--rocm-device-lib-path=/{libs[0].relative_to(root)}", "-std=c++17",
                                   "--offload-arch=gfx942", "--offload-arch=gfx1100", "-c", f"/src/{work.name}/{name}",
                                   "-o", f"/src/{work.name}/{name}.o"], capture_output=True, text=True, timeout=300)
        ok = compiles("migrated.hip")
        assert ok.returncode == 0, ok.stderr[-3000:]
        bad = compiles("without.hip")
        assert bad.returncode != 0 and "strlen" in bad.stderr
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _small_tree(root: Path) -> None:
    (root / "sub").mkdir(parents=True)
    (root / "kernel.cu").write_text("#include <cuda_runtime.h>\nvoid f(float** p) { cudaMalloc(p, 4); }\n")
    (root / "sub" / "helper.cu").write_text("void g() { cudaDeviceSynchronize(); }\n")
    (root / "notes.txt").write_text("keep me\n")


@pytest.mark.parametrize("how", ["dot", "dotdot"])
def test_in_place_backup_lives_outside_the_tree(tmp_path, cli, how):
    work = tmp_path / "proj"
    _small_tree(work)
    original = tree_digest(work)
    if how == "dot":
        r = cli("migrate", ".", "--in-place", cwd=work)
    else:
        r = cli("migrate", "..", "--in-place", cwd=work / "sub")
    assert r.returncode == 0, r.stderr
    backup = tmp_path / ("proj" + BACKUP_SUFFIX)
    assert backup.is_dir() and tree_digest(backup) == original
    # Nothing of hiplint's lands inside the migrated tree but its checklist.
    assert sorted(os.listdir(work)) == sorted(["kernel.cu", "sub", "notes.txt", CHECKLIST_NAME])
    assert "hipMalloc" in (work / "kernel.cu").read_text()
    assert str(backup) in r.stdout.decode()


def test_in_place_backup_gets_a_new_name_and_is_verified(tmp_path, monkeypatch):
    import hiplint.migrate as m
    work = tmp_path / "proj"
    _small_tree(work)
    original = tree_digest(work)
    migrator(work, in_place=True).run(str(work))
    first = tmp_path / ("proj" + BACKUP_SUFFIX)
    migrated = tree_digest(work)
    result = migrator(work, in_place=True).run(str(work))
    second = tmp_path / ("proj" + BACKUP_SUFFIX + "-2")
    assert result.backup == str(second)
    assert tree_digest(first) == original and tree_digest(second) == migrated
    # A copy that does not match (a short write, say) stops the migration before any rewrite.
    (work / "kernel.cu").write_text("void f(float** p) { cudaMalloc(p, 4); }\n")
    before = tree_digest(work)
    real_copytree = shutil.copytree

    def bad_copytree(a, b, *args, **kw):
        real_copytree(a, b, *args, **kw)
        if str(b).endswith(".partial"):
            (Path(b) / "kernel.cu").write_bytes(b"")

    monkeypatch.setattr(m.shutil, "copytree", bad_copytree)
    with pytest.raises(MigrateError, match="does not match"):
        migrator(work, in_place=True).run(str(work))
    assert tree_digest(work) == before
    assert not (tmp_path / ("proj" + BACKUP_SUFFIX + "-3")).exists()
    assert not (tmp_path / ("proj" + BACKUP_SUFFIX + "-3.partial")).exists()


def test_in_place_refuses_a_tree_without_a_parent(tmp_path, monkeypatch):
    import hiplint.migrate as m
    work = tmp_path / "proj"
    _small_tree(work)
    # As if the tree were `/`: its backup cannot be placed outside it (never copy the real `/`).
    monkeypatch.setattr(m.os.path, "realpath", lambda p: "/")
    with pytest.raises(MigrateError, match="outside itself"):
        migrator(work, in_place=True)._backup(str(work), m.MigrationResult(str(work), str(work)))
    assert not list(tmp_path.glob("*" + BACKUP_SUFFIX + "*"))


def test_earlier_backups_and_caches_inside_a_tree_are_never_walked(tmp_path):
    work = tmp_path / "proj"
    _small_tree(work)
    (work / ("old" + BACKUP_SUFFIX)).mkdir()
    (work / ("old" + BACKUP_SUFFIX) / "orig.cu").write_text("void h() { cudaFree(0); }\n")
    (work / ".hiplint_cache").mkdir()
    (work / ".hiplint_cache" / "entry.cpp").write_text("cudaFree(0);\n")
    (work / "build" / "lint").mkdir(parents=True)
    (work / "build" / "lint" / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n# hiplint cache\n")
    out = tmp_path / "out"
    result = migrate(work, out)
    assert not (out / ("old" + BACKUP_SUFFIX)).exists() and not (out / ".hiplint_cache").exists()
    assert not (out / "build" / "lint" / "CACHEDIR.TAG").exists()
    assert any("backup or cache" in n for n in result.notes)
    migrator(work, in_place=True).run(str(work))
    assert "cudaFree" in (work / ("old" + BACKUP_SUFFIX) / "orig.cu").read_text()


def test_out_keeps_empty_directories_and_directory_links(tmp_path):
    src = tmp_path / "src"
    _small_tree(src)
    (src / "empty" / "deeper").mkdir(parents=True)
    (src / "linked").symlink_to("sub", target_is_directory=True)
    out = tmp_path / "out"
    result = migrate(src, out)
    assert (out / "empty" / "deeper").is_dir()
    assert (out / "linked").is_symlink() and os.readlink(out / "linked") == "sub"
    assert (out / "linked" / "helper.cu").read_text() == (out / "sub" / "helper.cu").read_text()
    assert any(f.src == "linked" and f.action == "copied" and "symbolic link" in f.reason for f in result.files)


def test_in_place_leaves_read_only_files_alone_and_fails(tmp_path, cli):
    work = tmp_path / "proj"
    _small_tree(work)
    kernel = work / "kernel.cu"
    before = kernel.read_bytes()
    kernel.chmod(0o444)
    r = cli("migrate", work, "--in-place", "-q")
    assert r.returncode == 2
    assert f"hiplint: error: {kernel}: cannot write (read-only file; not rewritten)" in r.stderr.decode()
    assert kernel.read_bytes() == before and kernel.stat().st_mode & 0o777 == 0o444
    assert "hipDeviceSynchronize" in (work / "sub" / "helper.cu").read_text()  # the others are migrated


def test_a_failed_write_fails_the_migration(tmp_path, monkeypatch):
    import hiplint.migrate as m
    src = tmp_path / "src"
    _small_tree(src)
    (src / "script.cu").write_text("void s() { cudaFree(0); }\n")
    (src / "script.cu").chmod(0o751)
    real = m.replace_file

    def full_disk(path, data, *args, **kw):
        if os.path.basename(path) == "kernel.cu":
            raise OSError(28, "No space left on device")
        return real(path, data, *args, **kw)
    monkeypatch.setattr(m, "replace_file", full_disk)
    result = migrate(src, tmp_path / "out")
    assert result.errors == [f"{src / 'kernel.cu'}: cannot write (No space left on device)"]
    assert (tmp_path / "out" / "script.cu").stat().st_mode & 0o777 == 0o751  # modes are kept
