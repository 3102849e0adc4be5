"""NV008 in headers: a plain C header that only C sources include keeps `register` (valid C)."""
import json

from conftest import run_cli

C_HEADER = "#pragma once\n#define HASH(s, h) do { register const char* p = (s); (h) = *p; } while (0)\n" \
           "static inline int twice(int x) { register int y = x; return 2 * y; }\n"


def scan(where, *args):
    proc = run_cli("scan", *args, "--no-cache", "--select", "NV008", "--output-format", "json", cwd=where)
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return sorted((f["path"], f["line"]) for f in json.loads(proc.stdout))


def test_a_c_header_only_c_sources_include_is_quiet(tmp_path):
    # Open MPI's layout: the header reaches C sources through other C headers, several levels deep.
    (tmp_path / ".git").mkdir()
    (tmp_path / "hash.h").write_text(C_HEADER)
    (tmp_path / "mid.h").write_text('#pragma once\n#include "hash.h"\nstruct template_s { int namespace_id; };\n')
    (tmp_path / "top.h").write_text('#pragma once\n#include "mid.h"\n')
    (tmp_path / "lib.c").write_text('#include "top.h"\nint f(void) { return twice(1); }\n')
    assert scan(tmp_path, ".") == []


def test_the_same_header_reached_by_a_gpu_source_is_reported(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "hash.h").write_text(C_HEADER)
    (tmp_path / "mid.h").write_text('#pragma once\n#include "hash.h"\n')
    (tmp_path / "lib.c").write_text('#include "mid.h"\n')
    (tmp_path / "kernel.cu").write_text('#include "mid.h"\n__global__ void k(int* o) { o[0] = twice(1); }\n')
    assert scan(tmp_path, ".") == [("hash.h", 2), ("hash.h", 3)]


def test_a_header_with_cpp_syntax_or_no_includer_is_reported(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "alone.h").write_text(C_HEADER)  # nobody includes it: its language is unknown
    (tmp_path / "tmpl.h").write_text(C_HEADER + "template <int N> struct T { int v = N; };\n")
    (tmp_path / "lib.c").write_text('#include "tmpl.h"\n')
    assert scan(tmp_path, ".") == [("alone.h", 2), ("alone.h", 3), ("tmpl.h", 2), ("tmpl.h", 3)]


def test_asm_operand_colons_are_c_and_its_assembly_is_the_cpus(tmp_path):
    # libatomic_ops in PAPI: C headers whose inline assembly has an empty output list (`:: "r"(x)`), and
    # ARM assembly whose `@` starts a comment. Only C sources include them: no NV008, no NV001.
    (tmp_path / ".git").mkdir()
    (tmp_path / "arm.h").write_text(
        "static inline void store(volatile int* a, int v) {\n"
        "  register int flag;\n"
        '  __asm__ __volatile__("@store\\n" "1: ldrex %0, [%2]\\n" : "=&r"(flag) : "r"(a), "r"(v));\n'
        '  __asm__ __volatile__("" :: "r"(a) : "memory");\n}\n')
    (tmp_path / "lock.h").write_text('#include "arm.h"\nstatic inline void lock(int* l) { __asm__ ("" :: "r"(l)); }\n')
    (tmp_path / "lib.c").write_text('#include "lock.h"\n')
    proc = run_cli("scan", ".", "--no-cache", "--select", "NV008,NV001", "--output-format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()
    assert json.loads(proc.stdout) == []
    # The same header reached by a CUDA source is compiled as C++: `register` is reported there.
    (tmp_path / "kernel.cu").write_text('#include "lock.h"\n__global__ void k(int* o) { lock(o); }\n')
    assert scan(tmp_path, ".") == [("arm.h", 2)]


def test_a_project_pinned_before_cxx17_keeps_register_in_its_cpp_sources(tmp_path):
    # Zero-RK and MGmol set CMAKE_CXX_STANDARD 14 and 11: their host C++ sources only get clang's
    # deprecation warning. A `.cu` source is reported still (its HIP dialect is the port's to choose),
    # and so is the C++ source once the project asks for C++17 anywhere at its top.
    (tmp_path / ".git").mkdir()
    cmake = "project(p CXX)\nset(CMAKE_CXX_STANDARD 14)\nadd_library(p dense.cpp k.cu)\n"
    (tmp_path / "CMakeLists.txt").write_text(cmake)
    (tmp_path / "dense.cpp").write_text("int f(int n) { register int s = 0; for (int i = 0; i < n; ++i) s += i; return s; }\n")
    (tmp_path / "k.cu").write_text("__global__ void k(int* o) { register int i = threadIdx.x; o[i] = i; }\n")
    assert [p for p, _ in scan(tmp_path)] == ["k.cu"]
    (tmp_path / "CMakeLists.txt").write_text(cmake + "if(WITH_NEW)\n  set(CMAKE_CXX_STANDARD 17)\nendif()\n")
    assert sorted(p for p, _ in scan(tmp_path)) == ["dense.cpp", "k.cu"]
