"""SYN, NV and ARC rules: each rule's documented example is reported and its "Use instead" is not;
the preprocessor map treats branches beside a HIP branch as NVIDIA-only."""
import pytest

from hiplint.config import Settings
from hiplint.cparse import new_parser
from hiplint.preproc import PlatformMap
from hiplint.registry import load_registry
from hiplint.rule import REQUIRED_SECTIONS
from hiplint.testing import linter_for

FAMILIES = ("SYN", "NV0", "ARC")
RULES = [r for r in load_registry().rules if r.code.startswith(FAMILIES)]


def _codes(code: str, rule_code: str) -> list[str]:
    settings = Settings().with_overrides(extend_select=(rule_code,))
    result = linter_for(settings).lint_bytes("doc_example.cu", code.encode(), "cuda")
    assert not result.internal_error, result.notes
    return [f.code for f in result.findings]


def test_families_are_present():
    codes = {r.code for r in RULES}
    assert {"SYN001", "SYN002", "SYN005", "NV001", "NV006", "ARC001", "ARC002", "ARC004"} <= codes


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_docs_have_sections(rule):
    sections = rule.doc_sections()
    missing = [s for s in REQUIRED_SECTIONS if not sections.get(s)]
    assert not missing, f"{rule.code} lacks {missing}"
    assert "http" in sections["References"]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_example_is_reported(rule):
    body = rule.fence_body("Example")
    assert body, f"{rule.code}: no ```cuda fence in Example"
    assert rule.code in _codes(body, rule.code)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_use_instead_is_clean(rule):
    body = rule.fence_body("Use instead")
    assert body, f"{rule.code}: no ```cuda fence in Use instead"
    assert rule.code not in _codes(body, rule.code)


def _kinds(src: bytes) -> dict[str, str | None]:
    tree = new_parser().parse(src)
    pmap = PlatformMap(tree.root_node, src)
    return {marker: pmap.kind_at(src.index(marker.encode())) for marker in ("mark_a", "mark_b", "mark_c")}


def test_elif_after_hip_branch_is_nvidia_only():
    src = b"#if defined(__HIP_PLATFORM_AMD__)\nmark_a\n#elif __CUDA_ARCH__ >= 800\nmark_b\n#else\nmark_c\n#endif\n"
    assert _kinds(src) == {"mark_a": "hip", "mark_b": "nvidia", "mark_c": "nvidia"}


def test_cuda_arch_split_without_hip_branch_stays_unknown():
    src = b"#ifdef __CUDA_ARCH__\nmark_a\n#else\nmark_b\n#endif\nmark_c\n"
    assert _kinds(src) == {"mark_a": None, "mark_b": None, "mark_c": None}


def test_device_pass_macro_is_an_alternative_only_to_nvcc_device_code():
    # __HIP_DEVICE_COMPILE__ is undefined in AMD's host pass: the #else is AMD host code. The
    # __CUDA_ARCH__ branch is compiled by no AMD pass, and AMD's device pass has its own branch.
    src = b"#if defined(__HIP_DEVICE_COMPILE__)\nint mark_a;\n#elif defined(__CUDA_ARCH__)\nint mark_b;\n#else\nint mark_c;\n#endif\n"
    assert _kinds(src) == {"mark_a": "hip", "mark_b": "nvidia", "mark_c": None}


NVIDIA_BRANCH = """\
__device__ unsigned lane() {
#if defined(__HIP_PLATFORM_AMD__)
    return __lane_id();
#else
    unsigned r;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
    return r;
#endif
}
"""


def test_cli_option_reports_nvidia_branches(tmp_path, cli):
    src = tmp_path / "lane.cu"
    src.write_text(NVIDIA_BRANCH)
    quiet = cli("check", src, "--select", "NV001", "--output-format", "concise", cwd=tmp_path)
    loud = cli("check", src, "--select", "NV001", "--output-format", "concise",
               "--report-nvidia-branches", cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stdout.decode() + quiet.stderr.decode()
    assert b"NV001" not in quiet.stdout
    assert loud.returncode == 1 and b"lane.cu:6:" in loud.stdout and b"NV001" in loud.stdout


def test_static_tile_size_not_a_power_of_two_is_reported():
    # nvcc rejects such a tile as well, so the compiled fixtures cannot hold one; checked here instead.
    src = ("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
           "__global__ void k(float* o) {\n"
           "    cg::thread_block_tile<24> t = cg::tiled_partition<24>(cg::this_thread_block());\n"
           "    o[0] = t.size();\n}\n")
    assert _codes(src, "SYN006") == ["SYN006", "SYN006"]
