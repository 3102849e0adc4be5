"""Project headers: macros a compat header defines for AMD reach the files that include it, and the
cache lints a file again when such a header changes."""
import json
from pathlib import Path

from conftest import run_cli

from hiplint.config import load_settings
from hiplint.engine import Linter, lint_file
from hiplint.registry import load_registry, select_rules

COMPAT = ("#pragma once\n#ifdef USE_ROCM\n"
          "#define __shfl_xor_sync(mask, var, lane) __shfl_xor(var, lane)\n#endif\n")
KERNEL = ('#include "{include}"\n'
          "__global__ void k(float* x) {{\n"
          "    x[threadIdx.x] = __shfl_xor_sync(0xffffffff, x[threadIdx.x], 1);\n"
          "}}\n")


def scan_codes(root: Path, code: str) -> list:
    """(path, code) of what `hiplint scan src --select code` reports under `root`, with the cache on."""
    proc = run_cli("scan", "src", "--isolated", "--select", code, "--output-format", "json", cwd=root)
    return [(f["path"], f["code"]) for f in json.loads(proc.stdout)]


def wrp006(path: Path) -> list:
    settings = load_settings([str(path)], isolated=True)
    linter = Linter(settings, select_rules(settings, load_registry()))
    return [f for f in lint_file(linter, str(path), str(path), "cuda").findings if f.code == "WRP006"]


def test_include_path_found_in_a_parent_directory(tmp_path):
    # include/mylib/ops/k.cu says "mylib/compat.cuh", as a build with -Iinclude would find it.
    (tmp_path / "include" / "mylib" / "ops").mkdir(parents=True)
    (tmp_path / "include" / "mylib" / "compat.cuh").write_text(COMPAT)
    kernel = tmp_path / "include" / "mylib" / "ops" / "k.cu"
    kernel.write_text(KERNEL.format(include="mylib/compat.cuh"))
    assert wrp006(kernel) == []
    # Without the header the call is reported again.
    (tmp_path / "include" / "mylib" / "compat.cuh").unlink()
    assert len(wrp006(kernel)) == 1


def test_header_in_an_nvidia_only_branch_does_not_count(tmp_path):
    (tmp_path / "compat.cuh").write_text(COMPAT.replace("#ifdef USE_ROCM", "#if 1"))
    kernel = tmp_path / "k.cu"
    kernel.write_text("#ifndef USE_ROCM\n" + KERNEL.format(include="compat.cuh").replace("\n", "\n#endif\n", 1))
    assert len(wrp006(kernel)) == 1
    # A #define inside an NVIDIA-only branch of the header does not count either.
    (tmp_path / "compat.cuh").write_text(COMPAT.replace("#ifdef USE_ROCM", "#ifndef USE_ROCM"))
    kernel.write_text(KERNEL.format(include="compat.cuh"))
    assert len(wrp006(kernel)) == 1


def test_include_cycles_and_missing_headers_are_harmless(tmp_path):
    (tmp_path / "a.cuh").write_text('#pragma once\n#include "b.cuh"\n#include "missing.cuh"\n')
    (tmp_path / "b.cuh").write_text('#pragma once\n#include "a.cuh"\n' + COMPAT)
    kernel = tmp_path / "k.cu"
    kernel.write_text(KERNEL.format(include="a.cuh"))
    assert wrp006(kernel) == []


def test_cache_lints_again_when_an_included_header_changes(tmp_path):
    (tmp_path / "src").mkdir()
    header = tmp_path / "src" / "compat.cuh"
    header.write_text(COMPAT)
    (tmp_path / "src" / "k.cu").write_text(KERNEL.format(include="compat.cuh"))

    def codes():
        return scan_codes(tmp_path, "WRP006")

    assert codes() == []
    stored = [json.loads(p.read_text()) for p in (tmp_path / ".hiplint_cache").rglob("*.json")]
    assert any((d.get("body") or {}).get("depends") for d in stored)  # the kernel's entry names the header it read
    header.write_text("#pragma once\n")  # the port drops its compat macro: the kernel breaks on ROCm
    assert codes() == [("src/k.cu", "WRP006")]
    header.write_text(COMPAT)
    assert codes() == []


def arc001(path: Path) -> list:
    settings = load_settings([str(path)], isolated=True)
    linter = Linter(settings, select_rules(settings, load_registry()))
    return [f for f in lint_file(linter, str(path), str(path), "cuda").findings if f.code == "ARC001"]


def test_cuda_arch_defined_for_amd_only_settles_the_tests(tmp_path):
    kernel = tmp_path / "k.cu"
    kernel.write_text('#include "common.h"\n#if __CUDA_ARCH__ >= 800\nint wide;\n#endif\n')
    # Only in ROCm builds (through a HIP branch): the project's decision, reported at the header.
    (tmp_path / "common.h").write_text('#ifdef USE_ROCM\n#include "vendor.h"\n#endif\n')
    (tmp_path / "vendor.h").write_text("#define __CUDA_ARCH__ 1300\n")
    assert arc001(kernel) == []
    # A host-pass default is not that: AMD's device pass reads 0 as well, and the test is reported.
    (tmp_path / "common.h").write_text('#include "vendor.h"\n')
    (tmp_path / "vendor.h").write_text("#ifndef __CUDA_ARCH__\n#define __CUDA_ARCH__ 0\n#endif\n")
    assert [f.line for f in arc001(kernel)] == [2]


def test_odd_include_targets_never_stop_the_scan(tmp_path):
    (tmp_path / "adir.cuh").mkdir()  # a directory named like a header
    (tmp_path / "binary.cuh").write_bytes(b"\x7fELF\0\0\0" * 100)
    (tmp_path / "huge.cuh").write_bytes(b"// filler\n" * 300_000)  # 3 MB: above the size read
    (tmp_path / "latin1.cuh").write_bytes("// caf\xe9\n".encode("latin-1") + COMPAT.encode())
    kernel = tmp_path / "k.cu"
    includes = ["/dev/zero", "adir.cuh", "binary.cuh", "huge.cuh", "latin1.cuh"]
    kernel.write_text("".join(f'#include "{i}"\n' for i in includes) + KERNEL.format(include="missing.cuh"))
    assert wrp006(kernel) == []  # the latin-1 header's macro still counts; nothing else was read


SWITCH = ("#pragma once\n#if defined(__HIP_PLATFORM_AMD__)\n#define LIB_DEVICE_HIP\n"
          "#else\n#define LIB_DEVICE_CUDA\n#endif\n")
PTX_KERNEL = ('#include "lib/device.cuh"\n'
              "__device__ unsigned lane() {\n    unsigned l = 0;\n#ifdef LIB_DEVICE_CUDA\n"
              '    asm("mov.u32 %0, %%laneid;" : "=r"(l));\n#endif\n    return l;\n}\n')


def test_project_switch_from_a_nested_header_and_the_cache(tmp_path):
    # k.cu -> lib/device.cuh -> lib/config.cuh, which sets the switch only when the build is not for AMD.
    (tmp_path / "src" / "lib").mkdir(parents=True)
    (tmp_path / "src" / "lib" / "device.cuh").write_text('#pragma once\n#include "config.cuh"\n')
    config = tmp_path / "src" / "lib" / "config.cuh"
    config.write_text(SWITCH)
    (tmp_path / "src" / "k.cu").write_text(PTX_KERNEL)

    def codes():
        return scan_codes(tmp_path, "NV001")

    assert codes() == []
    # The header now defines the switch for every build: the asm is compiled for AMD, and reported,
    # although k.cu and the header it includes directly are unchanged.
    config.write_text("#pragma once\n#define LIB_DEVICE_CUDA\n")
    assert codes() == [("src/k.cu", "NV001")]
    config.write_text(SWITCH)
    assert codes() == []


def test_switch_cycles_and_missing_headers_are_harmless(tmp_path):
    (tmp_path / "a.cuh").write_text('#pragma once\n#include "b.cuh"\n#ifndef USE_ROCM\n#define SW_A\n#endif\n')
    (tmp_path / "b.cuh").write_text('#pragma once\n#include "a.cuh"\n#include "missing.cuh"\n')
    kernel = tmp_path / "k.cu"
    kernel.write_text('#include "b.cuh"\n#ifdef SW_A\n__device__ void f() { asm("trap;"); }\n#endif\n')
    settings = load_settings([str(kernel)], isolated=True)
    linter = Linter(settings, select_rules(settings, load_registry()))
    result = lint_file(linter, str(kernel), str(kernel), "cuda")
    assert [f.code for f in result.findings if f.code == "NV001"] == []
    read = {path for path, digest in result.depends.items() if digest != "absent"}
    assert read == {str(tmp_path / "a.cuh"), str(tmp_path / "b.cuh")}
    # missing.cuh was looked for beside b.cuh and in the directories above: creating it there re-lints.
    assert str(tmp_path / "missing.cuh") in result.depends


def test_no_switch_learnt_when_the_other_side_has_an_unread_header(tmp_path):
    # The AMD branch includes a header hiplint cannot find (an -I path it does not know): it may define
    # the switch for AMD as well, so the NVIDIA-only definition proves nothing.
    (tmp_path / "select.cuh").write_text('#pragma once\n#ifdef USE_ROCM\n#include "rocm/config.cuh"\n'
                                         "#else\n#define LIB_HAS_LANEID 1\n#endif\n")
    kernel = tmp_path / "k.cu"
    kernel.write_text(PTX_KERNEL.replace("lib/device.cuh", "select.cuh").replace("LIB_DEVICE_CUDA", "LIB_HAS_LANEID"))
    settings = load_settings([str(kernel)], isolated=True)
    linter = Linter(settings, select_rules(settings, load_registry()))
    assert [f.code for f in lint_file(linter, str(kernel), str(kernel), "cuda").findings if f.code == "NV001"] == ["NV001"]
    (tmp_path / "rocm").mkdir()
    (tmp_path / "rocm" / "config.cuh").write_text("#pragma once\n")  # found, and silent on the switch
    assert [f.code for f in lint_file(linter, str(kernel), str(kernel), "cuda").findings if f.code == "NV001"] == []


def test_cache_lints_again_when_a_missing_header_appears(tmp_path):
    # The kernel includes a compat header that does not exist yet: its mask is reported. Once the header
    # is written, the cached entry must not be served.
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_text(KERNEL.format(include="compat.cuh"))

    def codes():
        return scan_codes(tmp_path, "WRP006")

    assert codes() == [("src/k.cu", "WRP006")]
    (tmp_path / "compat.cuh").write_text(COMPAT)  # one directory up: found as with -I.
    assert codes() == []


def test_kernel_header_follows_its_includer_through_the_cache(tmp_path):
    # SYN005 asks which sources include a kernel header; they become the header's dependencies.
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cuh").write_text(
        "#pragma once\n#include <cooperative_groups.h>\n"
        "__global__ void k(float* d) { d[0] = 1.f; cooperative_groups::this_grid().sync(); }\n")
    launcher = tmp_path / "src" / "k.cu"
    cooperative = ('#include "k.cuh"\nvoid run(float* d) { void* a[] = {&d}; '
                   "cudaLaunchCooperativeKernel((void*)k, 8, 64, a, 0, 0); }\n")
    launcher.write_text(cooperative)

    def codes():
        return scan_codes(tmp_path, "SYN005")

    assert codes() == []
    launcher.write_text('#include "k.cuh"\nvoid run(float* d) { k<<<8, 64>>>(d); }\n')
    assert codes() == [("src/k.cuh", "SYN005")]
    launcher.write_text(cooperative)
    assert codes() == []


def test_kernel_header_is_linted_again_when_a_launcher_appears(tmp_path):
    # The directories looked through for includers are dependencies too: a new source beside the
    # header that launches its kernel cooperatively settles the header's SYN005.
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cuh").write_text(
        "#pragma once\n#include <cooperative_groups.h>\n"
        "__global__ void k(float* d) { d[0] = 1.f; cooperative_groups::this_grid().sync(); }\n")
    assert scan_codes(tmp_path, "SYN005") == [("src/k.cuh", "SYN005")]
    (tmp_path / "src" / "k.cu").write_text('#include "k.cuh"\nvoid run(float* d) { void* a[] = {&d}; '
                                           "cudaLaunchCooperativeKernel((void*)k, 8, 64, a, 0, 0); }\n")
    assert scan_codes(tmp_path, "SYN005") == []


def test_an_include_cycle_is_not_an_unread_header(tmp_path):
    # A header being read further up (a.cuh -> b.cuh -> a.cuh) is skipped, not counted as unreadable:
    # an unreadable header on one side would stop switches being learnt for the other.
    from hiplint import headers
    from hiplint.preproc import HIP_MACROS

    busy = str(tmp_path / "a.cuh")
    (tmp_path / "a.cuh").write_text("#pragma once\n")
    missing: list = []
    headers._BUSY.add(busy)
    try:
        found = list(headers._closure([("a.cuh", "hip")], str(tmp_path), HIP_MACROS, 0, set(), True, missing))
    finally:
        headers._BUSY.discard(busy)
    assert found == [] and missing == []
    # Not busy, it is read; a missing one is recorded with the places looked at.
    found = list(headers._closure([("a.cuh", "hip"), ("gone.cuh", "nvidia")], str(tmp_path), HIP_MACROS, 0,
                                  set(), True, missing))
    assert [path for path, _, side in found] == [busy]
    assert missing and missing[0][0] == "nvidia" and str(tmp_path / "gone.cuh") in missing[0][1]


def test_a_shim_in_the_includers_header_and_the_cache(tmp_path):
    # NV003: a header calling `__dp4a` without including anything is settled by the shim a file
    # including it includes first; the shim header is then a dependency of the header's entry.
    src = tmp_path / "src"
    src.mkdir()
    shim = src / "shims.cuh"
    defined = ("#pragma once\n#if defined(USE_ROCM)\n"
               "static __device__ int __dp4a(int a, int b, int c) { return __builtin_amdgcn_sdot4(a, b, c, false); }\n"
               "#endif\n")
    shim.write_text(defined)
    (src / "dot.cuh").write_text("#pragma once\n__device__ int dot(int a, int b) { return __dp4a(a, b, 0); }\n")
    (src / "k.cu").write_text('#include "shims.cuh"\n#include "dot.cuh"\n'
                              "__global__ void k(int* o) { o[0] = dot(o[1], o[2]); }\n")
    assert scan_codes(tmp_path, "NV003") == []
    shim.write_text("#pragma once\n// the shim moved elsewhere; __dp4a is only called: x = __dp4a(a, b, 0);\n")
    assert scan_codes(tmp_path, "NV003") == [("src/dot.cuh", "NV003")]
    shim.write_text(defined)
    assert scan_codes(tmp_path, "NV003") == []


def test_a_shim_every_includer_includes_first_settles_the_masks(tmp_path):
    # WRP006, qiskit-aer's layout: chunk.hpp includes compat/hipify.hpp under the ROCm switch (its own
    # `__shfl_xor_sync` for AMD) and then kernels.hpp, which calls the intrinsic without the shim. A
    # second includer that includes chunk.hpp first settles it too; one that includes kernels.hpp on its
    # own, where the AMD build may compile it, leaves the call reported.
    (tmp_path / ".git").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(
        'if(P_BACKEND STREQUAL "ROCM")\n  enable_language(HIP)\n  add_definitions(-DP_ROCM)\n'
        '  set_source_files_properties(src/a.cu PROPERTIES LANGUAGE HIP)\n  add_library(p src/a.cu)\nendif()\n')
    src = tmp_path / "src"
    (src / "compat").mkdir(parents=True)
    (src / "compat" / "hipify.hpp").write_text(
        "#pragma once\n#ifdef P_ROCM\n"
        "#define __shfl_xor_sync(mask, var, lane, width) __shfl_xor(var, lane, width)\n#endif\n")
    (src / "kernels.hpp").write_text(
        "#pragma once\n__device__ float mix(float v) { return v + __shfl_xor_sync(0xffffffff, v, 1, 32); }\n")
    (src / "chunk.hpp").write_text(
        '#pragma once\n#ifdef P_ROCM\n#include "compat/hipify.hpp"\n#endif\n#include "kernels.hpp"\n')
    (src / "device.hpp").write_text('#pragma once\n#include "chunk.hpp"\n#include "kernels.hpp"\n')
    (src / "a.cu").write_text('#include "device.hpp"\n__global__ void k(float* x) { x[0] = mix(x[0]); }\n')
    assert scan_codes(tmp_path, "WRP006") == []
    (src / "b.cu").write_text('#include "kernels.hpp"\n__global__ void k2(float* x) { x[0] = mix(x[0]); }\n')
    # (b.cu in the AMD target's list: a source no build names compiles nowhere, so it settles nothing)
    (tmp_path / "CMakeLists.txt").write_text(
        (tmp_path / "CMakeLists.txt").read_text().replace("src/a.cu)", "src/a.cu src/b.cu)"))
    assert scan_codes(tmp_path, "WRP006") == [("src/kernels.hpp", "WRP006")]


def test_names_defined_only_under_one_compiler_are_its_aliases(tmp_path):
    """A name every definition of which sits under `#ifdef __CUDACC__` (in a file that gives `__HIPCC__`
    its own branch) is defined only where nvcc compiles; one under `#if defined(__HIPCC__)` wherever
    hip-clang does. Not a name a build file may define, nor one also defined elsewhere."""
    from hiplint.includers import _walk, compiler_aliases

    _walk.cache_clear()
    (tmp_path / "config.h").write_text(
        "#ifdef __CUDACC__\n#define P_LIBRARY_COMPLEX 1\n#define P_SET_BY_BUILD 1\n#define P_TWICE 1\n"
        "#elif defined(__HIPCC__)\n#define P_OWN_COMPLEX 1\n#endif\n"
        "#if defined(__HIPCC__)\n#define P_COMMON_RNG 1\n#endif\n")
    (tmp_path / "other.h").write_text("#define P_TWICE 1\n")
    (tmp_path / "plain.h").write_text("#ifdef __CUDACC__\n#define P_NO_HIP_BRANCH 1\n#endif\n")
    (tmp_path / "Makefile").write_text("flags = -DP_SET_BY_BUILD\n")
    nvcc, hip = compiler_aliases(str(tmp_path))
    assert nvcc == {"P_LIBRARY_COMPLEX"}
    assert hip == {"P_COMMON_RNG"}  # (an `#elif` branch guards by no name: P_OWN_COMPLEX is not read)
    _walk.cache_clear()
