"""Fixes that hiplint applies without review must stay right at run time on AMD.

Since ROCm 6.2 the `*_sync` warp functions check, in every build without NDEBUG, that the mask equals
the lanes executing the call (`__hip_check_mask`: `mask == __ballot(true)`, else `__builtin_trap()`).
A constant all-lanes 64-bit mask therefore traps in any partly active wave, so no safe fix may emit one.
"""
import re

import pytest

from conftest import FIXTURES
from hiplint.model import Applicability
from hiplint.testing import fixture_files, is_fixed_output, lint_fixture

# A 64-bit all-ones constant however spelled: 0xffffffffffffffff, ~0ull, -1ull, ULLONG_MAX, ~0x0ULL.
CONSTANT_FULL_64 = re.compile(r"0[xX][fF]{16}|~\s*0(?:x0)?[uU]?[lL]{2}|-\s*1[uU]?[lL]{2}|ULLONG_MAX|UINT64_MAX")

INPUTS = [p for p in fixture_files(FIXTURES) if not is_fixed_output(p) and p.suffix in (".cu", ".cuh", ".hip", ".h", ".cpp")]


def test_the_fixture_set_has_partly_active_wave_cases():
    text = (FIXTURES / "fixsafety" / "partly_active_waves.cu").read_text()
    assert "if (warp == 0)" in text and "96" in text


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_no_fix_emits_a_constant_full_64bit_mask(path):
    findings, _, _, _ = lint_fixture(path)
    for f in findings:
        if f.fix is None or f.fix.applicability < Applicability.UNSAFE:
            continue
        for edit in f.fix.edits:
            assert not CONSTANT_FULL_64.search(edit.content), \
                f"{path.name}:{f.line} {f.code} fix writes a constant full 64-bit mask: {edit.content!r}"


def test_full_mask_fix_is_the_active_lanes_on_amd():
    fixed = (FIXTURES / "fixsafety" / "partly_active_waves.fixed.cu").read_text()
    amd = fixed.split("#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)", 1)[1].split("#else", 1)[0]
    assert amd.strip() == "#define HIPLINT_FULL_WARP_MASK __activemask()"
    # Every full mask of the warp-0 reduction and of the 96-thread kernel now goes through it.
    assert "0xffffffff," not in fixed and "~0u" not in fixed
    assert fixed.count("HIPLINT_FULL_WARP_MASK") >= 5


def test_mask_macro_used_only_as_sync_masks_is_fixed_safely():
    findings, _, _, _ = lint_fixture(FIXTURES / "warp" / "reduction_kernels.cu")
    macro = [f for f in findings if f.code == "WRP004" and "FULL_MASK" in f.message]
    assert macro and macro[0].fix.applicability == Applicability.SAFE
    assert "__activemask()" in macro[0].fix.edits[0].content


def test_mask_constant_used_only_as_sync_masks_is_fixed_safely_at_each_use():
    """A namespace-scope constant cannot be __activemask() (a device function) and must not become ~0ull
    (it would trap in partly active waves): each mask use becomes HIPLINT_FULL_WARP_MASK."""
    findings, _, _, _ = lint_fixture(FIXTURES / "fixsafety" / "partly_active_constant.cu")
    constants = [f for f in findings if f.code == "WRP006"]
    assert {f.line for f in constants} == {8, 9}  # once each, at the declaration
    assert all(f.fix.applicability == Applicability.SAFE for f in constants)
    assert sorted(r.line for f in constants for r in f.related) == [14, 36, 38]
    fixed = (FIXTURES / "fixsafety" / "partly_active_constant.fixed.cu").read_text()
    body = fixed.split("#endif\n#endif\n", 1)[1]
    assert "_sync(kFullMask" not in body and "_sync(vote::all_lanes" not in body and "__syncwarp(kFullMask" not in body
    assert body.count("HIPLINT_FULL_WARP_MASK") == 3
    amd = fixed.split("#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)", 1)[1].split("#else", 1)[0]
    assert amd.strip() == "#define HIPLINT_FULL_WARP_MASK __activemask()"


def test_mask_constant_fix_is_unsafe_with_other_uses_a_header_or_a_variable():
    unsafe = {f.message.split("`")[1]: f.fix for f in lint_fixture(FIXTURES / "warp" / "mask_constant_unsafe.cu")[0]
              if f.code == "WRP006"}
    assert unsafe["kAllLanes"].applicability == Applicability.UNSAFE and "other use" in unsafe["kAllLanes"].title
    assert unsafe["g_sync_mask"].applicability == Applicability.UNSAFE and "not `const`" in unsafe["g_sync_mask"].title
    header = [f for f in lint_fixture(FIXTURES / "warp" / "mask_constant_header.cuh")[0] if f.code == "WRP006"]
    assert header and header[0].fix.applicability == Applicability.UNSAFE and "header" in header[0].fix.title
    # A partial mask is a real lane mask, and a constant whose name is declared again is not resolved: no fix.
    kept = [f for f in lint_fixture(FIXTURES / "warp" / "mask_constants.cu")[0]
            if f.code == "WRP006" and "constant" in f.message]
    assert kept and all(f.fix is None for f in kept)


def test_narrowed_widening_is_not_safe():
    findings, _, _, _ = lint_fixture(FIXTURES / "fixsafety" / "narrowed_lane_mask.cu")
    by_line = {f.line: f for f in findings if f.code == "WRP004"}
    stored = by_line[7].fix
    assert stored.applicability == Applicability.UNSAFE
    assert any(e.content == "unsigned long long" for e in stored.edits)  # the variable widens with the shift
    assert by_line[15].fix.applicability == Applicability.SAFE  # inside the mask arithmetic: exact
    assert all(by_line[n].fix is None for n in (24, 25, 29))  # a cast, an outside variable, a 32-bit return


def test_no_fix_changes_a_call_of_the_projects_own_macro():
    findings, _, _, _ = lint_fixture(FIXTURES / "fixsafety" / "project_macro_call.cu")
    on_macro = [f for f in findings if f.code == "WRP008" and f.line == 10]
    assert on_macro and on_macro[0].fix.applicability == Applicability.DISPLAY_ONLY
    assert "project's own macro" in on_macro[0].fix.title


def test_ballot_widening_in_32_lane_code_says_what_it_does_not_fix():
    findings, _, _, _ = lint_fixture(FIXTURES / "sample" / "src" / "histogram.cu")
    widen = [f for f in findings if f.code == "WRP005" and f.fix is not None
             and f.fix.applicability == Applicability.UNSAFE]
    assert widen, "the sample's compaction ballot is widened unsafely"
    assert all("upper 32-lane group" in f.fix.title and ">> (threadIdx.x & 32)" in f.fix.title for f in widen)
