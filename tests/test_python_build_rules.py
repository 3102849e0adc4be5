"""Python and build-file rules end to end: discovery, suppressions, robustness, helpers."""
import json
import textwrap

from hiplint.config import Settings
from hiplint.rules.build import _cmake, _nvcc
from hiplint.rules.build._vendor import is_hip_word
from hiplint.testing import linter_for


def _lint(name: str, text: str, *codes: str):
    settings = Settings().with_overrides(extend_select=codes) if codes else Settings()
    lang = {"py": "python", "txt": "cmake", "cmake": "cmake"}.get(name.rsplit(".", 1)[-1], "make")
    result = linter_for(settings).lint_bytes(name, textwrap.dedent(text).encode(), lang)
    assert not result.internal_error, result.notes
    return result.findings


def _codes(findings):
    return sorted((f.line, f.code) for f in findings)


def test_scan_discovers_python_cmake_and_make_files(tmp_path, cli):
    (tmp_path / "setup.py").write_text("import torch\nV = float(torch.version.cuda)\n")
    (tmp_path / "CMakeLists.txt").write_text("project(p LANGUAGES CXX CUDA)\n")
    (tmp_path / "cmake").mkdir()
    (tmp_path / "cmake" / "flags.cmake").write_text("set(CMAKE_CUDA_FLAGS \"--use_fast_math\")\n")
    (tmp_path / "Makefile").write_text("NVCC = nvcc\n")
    (tmp_path / "rules.mk").write_text("LIBS = -lcudart\n")
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "Makefile").write_text("NVCC = nvcc\n")
    (tmp_path / "pyproject.toml").write_text('[tool.hiplint]\nextend-exclude = ["vendor"]\n')
    proc = cli("scan", "--output-format", "json", ".", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    found = {(f["path"], f["code"]) for f in json.loads(proc.stdout)}
    assert found == {("setup.py", "PY001"), ("CMakeLists.txt", "BLD001"), ("cmake/flags.cmake", "BLD005"),
                     ("Makefile", "BLD007"), ("rules.mk", "BLD004")}


def test_python_syntax_error_is_one_finding_not_a_crash(tmp_path, cli):
    (tmp_path / "old.py").write_text("import pynvml\nprint 'hello'\nx = float(torch.version.cuda)\n")
    proc = cli("scan", "--output-format", "json", "old.py", cwd=tmp_path)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    findings = json.loads(proc.stdout)
    assert [(f["code"], f["line"]) for f in findings] == [("PY000", 2)]


def test_own_line_ignore_covers_the_whole_python_statement():
    src = """\
    from torch.utils.cpp_extension import CUDAExtension
    # hiplint: ignore[PY003] built only in the CUDA image
    EXT = CUDAExtension("e", ["e.cu"],
                        extra_compile_args={"nvcc": ["--use_fast_math"]})
    OTHER = CUDAExtension("o", ["o.cu"], extra_compile_args={"nvcc": ["-lineinfo"]})
    """
    assert _codes(_lint("setup.py", src)) == [(5, "PY003")]


def test_own_line_ignore_before_a_compound_statement_covers_its_header_only():
    src = """\
    import torch
    # hiplint: ignore[PY001] intended
    for part in torch.version.cuda.split("."):
        y = float(torch.version.cuda)
    """
    assert _codes(_lint("a.py", src)) == [(4, "PY001")]
    src2 = """\
    import torch
    # hiplint: ignore[PY001] intended
    if torch.version.cuda:
        pass
    X = float(torch.version.cuda)
    """
    assert _codes(_lint("a.py", src2)) == [(5, "PY001")]


def test_hash_suppressions_work_in_cmake_and_makefiles():
    cmake = """\
    project(p LANGUAGES CXX CUDA)  # hiplint: ignore[BLD001] CUDA-only subproject
    # hiplint: ignore[BLD004]
    target_link_libraries(app CUDA::cudart)
    target_link_libraries(app CUDA::cublas)
    set(X 1)  # hiplint: ignore[BLD006]
    """
    assert _codes(_lint("CMakeLists.txt", cmake, "HL100")) == [(4, "BLD004"), (5, "HL100")]
    make = """\
    LIBS = -lcudart  # hiplint: ignore[BLD004]
    NVCC = nvcc
    """
    assert _codes(_lint("Makefile", make)) == [(2, "BLD007")]


def test_unparseable_build_files_do_not_crash():
    garbage = "if(\n)))(( $<$<: \"unterminated\nproject(x LANGUAGES CUDA\n\\\n"
    _lint("CMakeLists.txt", garbage)
    _lint("Makefile", "ifeq (\n\telse\nendif endif\n\"quote -arch=sm_80\n")


def test_makefile_conditionals_naming_hip_are_left_alone():
    make = """\
    ifeq ($(GPU),amd)
    CC = hipcc
    else ifeq ($(GPU),nvidia)
    CC = nvcc
    FLAGS = -arch=sm_80
    endif
    NVCC = nvcc
    app: app.cu
    	$(NVCC) -o $@ $<
    """
    assert _codes(_lint("Makefile", make)) == [(7, "BLD007")]
    # No recipe runs $(NVCC) itself: beside hipcc, it is the NVIDIA choice.
    assert _codes(_lint("Makefile", make.replace("\t$(NVCC)", "\t$(CC)"))) == []


def test_cmake_generator_expressions_are_peeled():
    cmds = _cmake.parse(b"target_compile_options(t PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)\n")
    toks = cmds[0].tokens()
    assert [t.text for t in toks] == ["t", "PRIVATE", "--expt-relaxed-constexpr"]
    assert "COMPILE_LANGUAGE:CUDA" in toks[2].genex


def test_nvcc_scan_needs_an_nvidia_arch_value_and_nvcc_context_for_generic_flags():
    def uses(words, ctx):
        return [(u.token, u.value) for u in _nvcc.scan([(w, i, i) for i, w in enumerate(words)], ctx)]

    assert uses(["-arch", "x86_64", "-G", "-dc"], False) == []
    assert uses(["-arch", "sm_80", "-G", "-dc"], True) == [("-arch", "sm_80"), ("-G", ""), ("-dc", "")]
    assert uses(["-x", "c++", "-x", "cu"], True) == [("-x", "cu")]


def test_hip_words():
    assert all(is_hip_word(w) for w in ("IS_HIP_EXTENSION", "use_rocm", "isROCm", "is_hip", "gcnArchName", "gfx942"))
    assert not any(is_hip_word(w) for w in ("ship", "chip", "hipster", "chipset", "is_cuda", "torch"))


def test_capability_gate_needs_numbers_and_capability_origin():
    src = """\
    import torch
    cap = torch.cuda.get_device_capability()
    a = cap >= (9, 0)
    b = cap == other_cap
    name = torch.cuda.get_device_name()
    c = name >= "A"
    """
    assert _codes(_lint("a.py", src)) == [(3, "PY002")]


def test_capability_gates_amd_numbers_answer_rightly():
    # AMD reports (9, x), (11, 0), (12, 0): gates below Ada's 8.9 take AMD as a newer GPU, and an
    # equality with 8 never matches it; from 8.9 (FP8, Hopper, Blackwell) the answer is NVIDIA's.
    src = """\
    import torch
    cap = torch.cuda.get_device_capability()
    a = cap >= (8, 0)
    b = cap[0] < 8
    c = cap[0] == 8
    d = cap >= (8, 9)
    e = cap[0] >= 10
    f = cap in ((9, 0), (10, 0))
    g = cap[0] * 10 + cap[1] >= 75
    """
    assert _codes(_lint("a.py", src)) == [(6, "PY002"), (7, "PY002"), (8, "PY002")]


def test_triton_rule_is_off_for_wave32_only_targets():
    src = "threads = num_warps * 32\n"
    assert _codes(_lint("k.py", src)) == [(1, "PY007")]
    settings = Settings().with_overrides(targets=("gfx1100",))
    result = linter_for(settings).lint_bytes("k.py", src.encode(), "python")
    assert [f.code for f in result.findings] == []


def test_extension_flags_follow_variables_in_scope_only_and_skip_vendor_guarded_extensions():
    src = """\
    from torch.utils.cpp_extension import IS_HIP_EXTENSION, CUDAExtension

    def add_gencodes(cc_flag):
        cc_flag += ["-gencode", "arch=compute_90,code=sm_90"]

    cc_flag = ["-O3"]
    add_gencodes(cc_flag)
    if not IS_HIP_EXTENSION:
        nvcc_flags = ["--use_fast_math"]
        ext = CUDAExtension("a", ["a.cu"], extra_compile_args={"nvcc": nvcc_flags + cc_flag})
    plain = CUDAExtension("b", ["b.cu"], extra_compile_args={"nvcc": cc_flag + ["-Xcompiler", "-fPIC"]})
    """
    findings = _lint("setup.py", src)
    assert [(f.line, f.code, f.severity.value) for f in findings] == [(11, "PY003", "warning")]


def test_imported_cuda_version_name_shadowed_by_a_parameter_is_not_reported():
    src = """\
    from torch.version import cuda

    def build(cuda=True):
        if cuda:
            return 1

    MAJOR = cuda.split(".")[0]
    """
    assert _codes(_lint("a.py", src)) == [(7, "PY001")]


def test_makefile_values_glued_to_the_assignment_operator_are_scanned():
    make = """\
    NVCCFLAGS=-arch=sm_80 --use_fast_math
    LIBS:=-lcudart
    NVCC?=nvcc
    """
    assert _codes(_lint("Makefile", make)) == [(1, "BLD005"), (1, "BLD006"), (2, "BLD004"), (3, "BLD007")]


def test_optional_gpu_stack_imports_are_info_notes():
    # Only an import whose `try` catches a failed import is optional; one stack reported once per file,
    # at its first required import when it has one.
    from conftest import FIXTURES

    text = (FIXTURES / "python" / "stacks_optional.py").read_text()
    found = {f.line: f.severity.value for f in _lint("stacks_optional.py", text) if f.code == "PY006"}
    assert found == {4: "info", 10: "info", 17: "error", 27: "error"}
    # The same imports outside `try` are errors and warnings again.
    plain = "import cutlass.cute as cute\nfrom cuda import cudart\n"
    assert {f.line: f.severity.value for f in _lint("plain.py", plain)} == {1: "error", 2: "warning"}


def test_flags_that_only_warn_under_hipcc_are_warnings():
    """`-lineinfo` reaches compile steps only (an unused linker input: a warning, not a failed link);
    `-diag-suppress=N` with one dash is an unused argument; with two dashes, or with its value apart,
    the build fails."""
    from hiplint.model import Severity

    py = _lint("setup.py", """\
        from torch.utils.cpp_extension import CUDAExtension
        CUDAExtension("e", ["e.cu"], extra_compile_args={"nvcc": [
            "-lineinfo", "-diag-suppress=174", "--diag-suppress=177", "-diag-suppress", "186"]})
        """)
    # One finding per severity; the file's other options of that severity are its related locations.
    assert [(f.line, f.severity, len(f.related)) for f in py] == [(3, Severity.WARNING, 1), (3, Severity.ERROR, 1)]
    assert "unused" in py[0].related[0].message and "input file" in py[1].related[0].message
    cmake = _lint("CMakeLists.txt", """\
        target_compile_options(k PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
        set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -lineinfo")
        """)
    assert [(f.line, f.severity) for f in cmake] == [(1, Severity.WARNING), (2, Severity.ERROR)]
    assert "ignores it when compiling" in cmake[0].message and "the link fails" in cmake[1].message


def test_nvidia_queries_behind_a_fallback_are_info():
    """A query caught where a missing package or program lands takes the fallback on ROCm: info. One
    caught only for CalledProcessError still raises FileNotFoundError there: an error."""
    from conftest import FIXTURES
    from hiplint.model import Severity

    path = FIXTURES / "python" / "gpu_monitor_fallback.py"
    findings = _lint("gpu_monitor_fallback.py", path.read_text())
    assert [(f.line, f.code, f.severity) for f in findings] == [
        (6, "PY004", Severity.INFO), (13, "PY004", Severity.INFO), (21, "PY004", Severity.ERROR)]
