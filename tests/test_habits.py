"""Habits of a professional linter: --color/FORCE_COLOR/NO_COLOR, rule families, "did you mean" for
configuration keys, --statistics as JSON, a one-line --write-baseline, shallow clones with --diff-base,
--fix --diff-base, pre-commit hooks for build and Python files, migrate progress in logs."""
import json
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, run_cli

BAD = b"""__global__ void k(float* out) {
    int lane = threadIdx.x & 31;
    out[lane] = __shfl_down_sync(0xffffffff, out[lane], 1);
}
"""
ESC = b"\x1b["


@pytest.fixture
def proj(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bad.cu").write_bytes(BAD)
    return tmp_path


@pytest.mark.parametrize("fmt", ["full", "concise"])
@pytest.mark.parametrize("args,env,colored", [
    ((), {}, False),  # not a terminal
    (("--color", "always"), {}, True),
    ((), {"FORCE_COLOR": "1"}, True),
    ((), {"FORCE_COLOR": "0"}, False),
    (("--color", "never"), {"FORCE_COLOR": "1"}, False),
    ((), {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),
    (("--color", "always"), {"NO_COLOR": "1"}, True),  # the explicit option wins
])
def test_color_option_and_environment(proj, fmt, args, env, colored):
    proc = run_cli("scan", "src", "--isolated", "--no-cache", "--output-format", fmt, *args, cwd=proj, env=env)
    assert proc.returncode == 1, proc.stderr
    assert (ESC in proc.stdout) is colored


def test_force_color_never_colors_machine_formats_or_files(proj):
    proc = run_cli("scan", "src", "--isolated", "--no-cache", "--output-format", "json", cwd=proj, env={"FORCE_COLOR": "1"})
    assert ESC not in proc.stdout and json.loads(proc.stdout)
    proc = run_cli("scan", "src", "--isolated", "--no-cache", "-o", "out.txt", cwd=proj, env={"FORCE_COLOR": "1"})
    assert ESC not in (proj / "out.txt").read_bytes()
