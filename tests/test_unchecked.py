"""hiplint must not pass what it did not check, and its work must stay bounded on any input."""
import json

import pytest

from hiplint.config import KNOWN_TARGETS, ConfigError, _targets

# A shuffle down without a width reads across the halves of a 64-lane wave (WRP001 on wave64 targets).
BAD = b"""__global__ void k(float* out) {
    int lane = threadIdx.x & 31;
    out[lane] = __shfl_down_sync(0xffffffff, out[lane], 1);
}
"""


@pytest.fixture
def proj(tmp_path):
    (tmp_path / ".git").mkdir()  # the repository root: configuration is not looked for above it
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bad.cu").write_bytes(BAD)
    return tmp_path


# 1. A mistyped target is a configuration error that names the known ones.
def test_unknown_target_is_an_error(cli, proj):
    with pytest.raises(ConfigError, match="gfx942"):
        _targets(["gfx9420"])
    assert _targets(["gfx90a:xnack+", "gfx1100"]) == ("gfx90a", "gfx1100")
    assert set(KNOWN_TARGETS.values()) == {32, 64}
    proc = cli("scan", "src/bad.cu", "--target", "gfx9420", cwd=proj)
    assert proc.returncode == 2 and b"gfx9420" in proc.stderr and b"gfx942," in proc.stderr
    (proj / "pyproject.toml").write_text("[tool.hiplint]\ntargets = ['gfx9420']\n")
    proc = cli("scan", "src/bad.cu", cwd=proj)
    assert proc.returncode == 2 and b"gfx9420" in proc.stderr
