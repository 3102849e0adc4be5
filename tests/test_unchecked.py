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


# 2. `fix = true` in a repository's configuration must not turn the check-only hook or CI into a rewrite.
FIXABLE = b"""__global__ void k(float* out) {
    int lane = threadIdx.x % warpSize;
    out[lane] = __shfl_down_sync(0xffffffff, out[lane], 1);
}
"""


def _hook_args(hook_id):
    import shlex

    import yaml
    from conftest import ROOT

    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    args = shlex.split(hooks[hook_id]["entry"])
    assert args[0] == "hiplint"
    return args[1:]


def test_check_only_hook_never_fixes_even_when_configured_to(cli, proj):
    (proj / "pyproject.toml").write_text("[tool.hiplint]\nfix = true\nunsafe-fixes = true\n")
    (proj / "k.cu").write_bytes(FIXABLE)
    proc = cli(*_hook_args("hiplint"), "k.cu", cwd=proj)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (proj / "k.cu").read_bytes() == FIXABLE and b"WRP006" in proc.stdout
    # --no-unsafe-fixes overrides the configuration too: with --fix only the safe fix is applied.
    assert cli("scan", "--no-unsafe-fixes", "--no-fix", "k.cu", cwd=proj).returncode == 1
    assert (proj / "k.cu").read_bytes() == FIXABLE


def test_ci_examples_scan_with_no_fix():
    import re

    from conftest import ROOT

    for name in ("docs/examples/github-workflow.yml", "docs/examples/gitlab-ci.yml", "docs/ci.md"):
        text = re.sub(r"\n\s+(--)", r" \1", (ROOT / name).read_text())
        gates = [line for line in text.splitlines() if re.search(r"^\s*(-\s+|run:\s+)?hiplint scan \.", line)]
        assert gates and all("--no-fix" in line for line in gates), (name, gates)
