"""Suppression comments: each form, and the problems hiplint reports with them."""
from hiplint.config import Settings
from hiplint.testing import linter_for


def lint(code: str, *select):
    settings = Settings().with_overrides(extend_select=tuple(select))
    return [(f.line, f.code) for f in linter_for(settings).lint_bytes("t.cu", code.encode(), "cuda").findings]


KERNEL_HEAD = "__global__ void k(int* o) { o[9] = __shfl_down_sync(__activemask(), o[9], 1);\n"


def test_trailing_ignore_covers_its_line_only():
    code = KERNEL_HEAD + "  o[0] = threadIdx.x & 31; // hiplint: ignore[WRP001] launched with 32 threads\n  o[1] = threadIdx.x & 31;\n}\n"
    assert lint(code) == [(3, "WRP001")]


def test_own_line_ignore_covers_the_next_statement():
    code = KERNEL_HEAD + (
        "  // hiplint: ignore[WRP001]\n"
        "  o[0] = (threadIdx.x & 31)\n"
        "       + (threadIdx.x >> 5);\n"
        "  o[1] = threadIdx.x & 31;\n}\n")
    assert lint(code) == [(5, "WRP001")]


def test_prefix_and_name_selectors():
    code = KERNEL_HEAD + "  o[0] = threadIdx.x & 31; // hiplint: ignore[WRP]\n  o[1] = threadIdx.x & 31; // hiplint: ignore[hardcoded-warp-size]\n}\n"
    assert lint(code) == []


def test_other_codes_are_not_suppressed():
    code = KERNEL_HEAD + "  o[0] = threadIdx.x & 31; // hiplint: ignore[WRP006]\n}\n"
    assert lint(code) == [(2, "WRP001")]


def test_disable_enable_range():
    code = KERNEL_HEAD + (
        "  // hiplint: disable[WRP001]\n"
        "  o[0] = threadIdx.x & 31;\n"
        "  o[1] = threadIdx.x >> 5;\n"
        "  // hiplint: enable[WRP001]\n"
        "  o[2] = threadIdx.x & 31;\n}\n")
    assert lint(code) == [(6, "WRP001")]


def test_unclosed_range_and_stray_enable_are_reported():
    code = KERNEL_HEAD + "  // hiplint: disable[WRP001]\n  o[0] = threadIdx.x & 31;\n  // hiplint: enable[WRP006]\n}\n"
    assert lint(code) == [(2, "HL102"), (4, "HL102")]


def test_file_ignore():
    code = "// hiplint: file-ignore[WRP001]\n" + KERNEL_HEAD + "  o[0] = threadIdx.x & 31;\n}\n"
    assert lint(code) == []


def test_blanket_forms_are_refused():
    code = KERNEL_HEAD + "  o[0] = threadIdx.x & 31; // hiplint: ignore\n  o[1] = 1; /* hiplint: noqa */\n}\n"
    assert sorted(lint(code)) == [(2, "HL101"), (2, "WRP001"), (3, "HL101")]


def test_unused_suppressions_are_opt_in():
    code = KERNEL_HEAD + "  o[0] = 1; // hiplint: ignore[WRP001]\n  o[1] = threadIdx.x & 31; // hiplint: ignore[WRP001]\n}\n"
    assert lint(code) == []
    assert lint(code, "HL100") == [(2, "HL100")]


def test_suppression_text_inside_strings_is_not_a_suppression():
    code = KERNEL_HEAD + '  const char* s = "// hiplint: ignore[WRP001]"; o[0] = threadIdx.x & 31;\n}\n'
    assert lint(code) == [(2, "WRP001")]


def test_ignore_on_a_related_line_drops_that_place_only():
    code = ("__device__ float f(float v) {\n"
            "  const unsigned int m = 0xffffffffu;\n"
            "  v += __shfl_xor_sync(m, v, 1);\n"
            "  v += __shfl_xor_sync(m, v, 2); // hiplint: ignore[WRP006] checked by hand\n"
            "  return v;\n}\n")
    settings = Settings().with_overrides(extend_select=("HL100",))
    findings = linter_for(settings).lint_bytes("t.cu", code.encode(), "cuda").findings
    assert [(f.line, f.code) for f in findings] == [(2, "WRP006")]  # and no HL100: the comment was used
    assert [r.line for r in findings[0].related] == [3]


def test_grouped_build_options_are_suppressed_one_by_one():
    # BLD005 merges a file's nvcc options into one finding after suppressions: ignoring the first
    # option moves the finding to the next, it does not hide the others.
    text = ('set(CMAKE_CUDA_FLAGS "--use_fast_math")  # hiplint: ignore[BLD005] measured\n'
            'set(CMAKE_CUDA_FLAGS "--expt-relaxed-constexpr")\n'
            'set(CMAKE_CUDA_FLAGS "--expt-extended-lambda")\n')
    settings = Settings().with_overrides(extend_select=("HL100",))
    findings = linter_for(settings).lint_bytes("CMakeLists.txt", text.encode(), "cmake").findings
    assert [(f.line, f.code) for f in findings] == [(2, "BLD005")]
    assert [r.line for r in findings[0].related] == [3]
    assert "expt-relaxed-constexpr" in findings[0].message and "lambda" in findings[0].related[0].message


def test_merge_groups_keeps_fixable_findings_apart():
    from hiplint.engine import merge_groups
    from hiplint.model import Edit, Finding, Fix, Severity

    def finding(line, fix=None):
        return Finding(code="BLD005", name="n", message=f"m{line}", severity=Severity.ERROR, path="f", line=line,
                       column=1, end_line=line, end_column=2, fix=fix, group="g")

    fixable = finding(5, Fix.safe("t", Edit(0, 1, "x")))
    out = merge_groups([finding(3), fixable, finding(1)])
    assert [(f.line, f.message) for f in out] == [(5, "m5"), (1, "m1")]
    assert [(r.line, r.message) for r in out[1].related] == [(3, "m3")]
    assert all(f.group is None for f in out)
