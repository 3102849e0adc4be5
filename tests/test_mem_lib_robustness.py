"""The MEM and LIB rules never crash: truncated and garbled versions of their fixtures lint without internal errors."""
import pytest

from conftest import FIXTURES
from hiplint.config import Settings
from hiplint.testing import linter_for

SOURCES = sorted(p for family in ("memory", "libs") for p in (FIXTURES / family).rglob("*")
                 if p.is_file() and ".fixed." not in p.name)


@pytest.fixture(scope="module")
def linter():
    settings = Settings(targets=("gfx90a", "gfx942", "gfx950", "gfx1100"), rocm_version=(6, 2))
    return linter_for(settings.with_overrides(select=("MEM", "LIB")))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_truncations_do_not_crash(linter, path):
    data = path.read_bytes()
    step = max(1, len(data) // 20)
    for cut in range(0, len(data), step):
        for variant in (data[:cut], data[cut:], data[:cut] + b"<<<(" + data[cut:], data[:cut] + b"\n#if X\n"):
            result = linter.lint_bytes(str(path), variant, "cuda")
            assert not result.internal_error, (cut, result.notes)


def test_once_per_file_library_findings_relate_the_other_uses(linter):
    """LIB002/LIB005 report a library once per file; its other includes and names are related locations."""
    code = (b"#include <mma.h>\n#include <cudnn.h>\n"
            b"__global__ void k() { nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> acc; }\n"
            b"void f(cudnnHandle_t h) { cudnnCreate(&h); }\n")
    found = {f.code: f for f in linter.lint_bytes("k.cu", code, "cuda").findings if f.line <= 2}
    assert [r.line for r in found["LIB002"].related] == [3, 3]
    assert [(r.line, r.message) for r in found["LIB005"].related] == [
        (4, "`cudnnHandle_t`: cuDNN used here"), (4, "`cudnnCreate`: cuDNN used here")]
