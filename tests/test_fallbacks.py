"""A specialist's `covers` silences the generic table (API001/API002) only while the specialist runs:
with it ignored, the generic findings it spoke for come back."""
import pytest

from conftest import FIXTURES
from hiplint.config import Settings
from hiplint.testing import linter_for


def codes_by_line(path, ignore=()):
    settings = Settings(root=path.parent, targets=("gfx90a", "gfx942", "gfx1100"))
    linter = linter_for(settings.with_overrides(select=("ALL",), ignore=tuple(ignore)))
    result = linter.lint_bytes(str(path), path.read_bytes(), "cuda")
    assert not result.internal_error, result.notes
    return {(f.line, f.code) for f in result.findings}


@pytest.mark.parametrize("fixture, specialists, fallback, line", [
    ("libs/libcudacxx_once.cu", ["LIB011"], "API002", 4),
    ("memory/attention_fp8_bf16.cu", ["MEM009"], "API001", 15),
    ("nvidia/async_copy.cu", ["NV001", "NV004"], "API001", 20),
    ("nvidia/gemm_ptx.cu", ["NV001", "NV004"], "API001", 12),
    ("nvidia/sm90_clusters.cu", ["NV005"], "API001", 23),
])
def test_fallback_returns_when_its_specialists_are_off(fixture, specialists, fallback, line):
    path = FIXTURES / fixture
    assert (line, fallback) not in codes_by_line(path)
    found = codes_by_line(path, ignore=specialists)
    assert (line, fallback) in found
    assert not any(code in specialists for _, code in found)
