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
