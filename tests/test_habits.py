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


def test_rule_with_a_family_prefix_lists_the_family():
    proc = run_cli("rule", "WRP")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert lines and all(l.startswith("WRP") for l in lines)
    assert any(l.startswith("WRP006") and "sync-mask-not-64bit" in l for l in lines)
    assert len(lines) >= 6
    lower = run_cli("rule", "wrp").stdout.decode().splitlines()
    assert lower == lines
    data = json.loads(run_cli("rule", "WRP", "--output-format", "json").stdout)
    assert [d["code"] for d in data] == [l.split()[0] for l in lines]
    assert run_cli("rule", "ZZZ").returncode == 2  # no such family: still an error
    one = run_cli("rule", "WRP006")
    assert one.returncode == 0 and one.stdout.count(b"\n") > len(lines)  # a full code still explains that rule


@pytest.mark.parametrize("key,suggestion", [("selct", "select"), ("taregts", "targets"), ("fail_on", "fail-on"),
                                            ("extend-exlude", "extend-exclude")])
def test_unknown_configuration_key_suggests_the_closest(proj, key, suggestion):
    (proj / "pyproject.toml").write_text(f"[tool.hiplint]\n{key} = []\n")
    proc = run_cli("scan", "src", "--no-cache", cwd=proj)
    assert proc.returncode == 2
    assert f"unknown key `{key}` in hiplint settings; did you mean `{suggestion}`?".encode() in proc.stderr


def test_unknown_key_far_from_any_lists_the_known_keys(proj):
    (proj / "pyproject.toml").write_text("[tool.hiplint]\nzzzzqqq = 1\n")
    proc = run_cli("scan", "src", "--no-cache", cwd=proj)
    assert proc.returncode == 2 and b"known keys:" in proc.stderr and b"did you mean" not in proc.stderr


def test_statistics_as_json_with_a_total(proj):
    proc = run_cli("scan", "src", "--isolated", "--no-cache", "--statistics", "--output-format", "json", cwd=proj)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["total"] == sum(r["count"] for r in data["rules"]) >= 2
    assert {"code", "name", "count", "fixable"} <= set(data["rules"][0])
    text = run_cli("scan", "src", "--isolated", "--no-cache", "--statistics", cwd=proj).stdout.decode().splitlines()
    assert text[-1] == f"Found {data['total']} findings."


def test_write_baseline_prints_one_line(proj):
    proc = run_cli("scan", "src", "--isolated", "--no-cache", "--write-baseline", "b.json", cwd=proj)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode().splitlines()
    n = sum(e["count"] for codes in json.loads((proj / "b.json").read_text())["files"].values() for e in codes.values())
    assert out == [f"hiplint: wrote {n} findings in 1 file to baseline b.json"]
    assert b"WRP" not in proc.stdout and proc.stderr == b""
    assert run_cli("scan", "src", "--isolated", "--no-cache", "--write-baseline", "b.json", "-q", cwd=proj).stdout == b""


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def _history(tmp_path: Path) -> Path:
    """main: two commits, then a third after `feature` branched off; feature: one commit of its own."""
    origin = tmp_path / "origin"
    origin.mkdir()
    _git(origin, "init", "-q", "-b", "main")
    for k, v in (("user.email", "dev@example.com"), ("user.name", "Dev"), ("commit.gpgsign", "false")):
        _git(origin, "config", k, v)
    (origin / "src").mkdir()
    (origin / "src" / "k.cu").write_bytes(BAD)
    _git(origin, "add", ".")
    _git(origin, "commit", "-q", "-m", "one")
    (origin / "README").write_text("x\n")
    _git(origin, "add", ".")
    _git(origin, "commit", "-q", "-m", "two")
    _git(origin, "checkout", "-q", "-b", "feature")
    (origin / "src" / "new.cu").write_bytes(BAD)
    _git(origin, "add", ".")
    _git(origin, "commit", "-q", "-m", "feature")
    _git(origin, "checkout", "-q", "main")
    (origin / "README").write_text("y\n")
    _git(origin, "commit", "-q", "-am", "three")
    return origin


def test_diff_base_in_a_shallow_clone_explains_fetch_depth(tmp_path):
    origin = _history(tmp_path)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--no-single-branch", "--branch", "feature",
                    origin.as_uri(), str(clone)], check=True, capture_output=True)
    assert _git(clone, "rev-parse", "--is-shallow-repository").strip() == "true"
    proc = run_cli("scan", "src", "--isolated", "--no-cache", "--diff-base", "origin/main", cwd=clone)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert "shallow clone" in err and "fetch-depth: 0" in err and "Traceback" not in err
    # A full clone resolves the same base.
    full = tmp_path / "full"
    subprocess.run(["git", "clone", "-q", "--branch", "feature", origin.as_uri(), str(full)], check=True, capture_output=True)
    proc = run_cli("scan", "src", "--isolated", "--no-cache", "--diff-base", "origin/main", "--output-format", "json", cwd=full)
    assert proc.returncode == 1, proc.stderr
    assert {Path(f["path"]).name for f in json.loads(proc.stdout)} == {"new.cu"}


def _kernel(name: str, i: int) -> str:
    return f"__global__ void {name}(float* out) {{\n    out[{i}] = __shfl_down_sync(0xffffffff, out[{i}], 1);\n}}\n"


def test_fix_with_diff_base_fixes_only_changed_lines(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for k, v in (("user.email", "dev@example.com"), ("user.name", "Dev"), ("commit.gpgsign", "false")):
        _git(repo, "config", k, v)
    (repo / "k.cu").write_text(_kernel("old1", 0) + _kernel("old2", 3))
    (repo / "untouched.cu").write_text(_kernel("old3", 4))
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    _git(repo, "checkout", "-q", "-b", "feature")
    (repo / "k.cu").write_text(_kernel("old1", 0) + _kernel("new1", 1) + _kernel("new2", 2) + _kernel("old2", 3))
    _git(repo, "commit", "-q", "-am", "new kernels")
    (repo / "fresh.cu").write_text(_kernel("fresh", 5))  # untracked: wholly new
    proc = run_cli("fix", ".", "--isolated", "--no-cache", "--diff-base", "main", cwd=repo)
    assert proc.returncode in (0, 1), proc.stderr
    text = (repo / "k.cu").read_text()
    assert "__shfl_down_sync(0xffffffff, out[0], 1)" in text and "__shfl_down_sync(0xffffffff, out[3], 1)" in text
    assert "0xffffffff, out[1]" not in text and "0xffffffff, out[2]" not in text  # the new lines are fixed
    assert (repo / "untouched.cu").read_text() == _kernel("old3", 4)
    assert "0xffffffff, out[5]" not in (repo / "fresh.cu").read_text()
    # Without --diff-base every line is fixed.
    proc = run_cli("fix", ".", "--isolated", "--no-cache", cwd=repo)
    assert "0xffffffff" not in (repo / "untouched.cu").read_text().split("#endif")[-1]


def test_changed_lines_follow_the_lines_a_fix_adds():
    from hiplint.fix import ChangedLineSet
    from hiplint.model import Edit, Finding, Fix, Severity

    data = b"a\nb\nc\nd\n"
    only = ChangedLineSet({2, 4})
    # Two lines inserted before line 1, and line 3 ("c") replaced by nothing on its line.
    only.follow(data, [Fix.safe("t", Edit(0, 0, "x\ny\n"), Edit(4, 5, "C"))])
    assert only.lines == {4, 6}
    at = lambda n: Finding("X001", "x", "m", Severity.WARNING, "f", n, 1, n, 2)
    assert only.allows(at(4)) and not only.allows(at(5))


def test_migrate_shows_progress_in_a_log(tmp_path):
    src = tmp_path / "cuda"
    src.mkdir()
    for i in range(7):
        (src / f"k{i}.cu").write_text(f"__global__ void k{i}(float* o) {{ o[threadIdx.x] = 0.f; }}\n")
    proc = run_cli("migrate", src, "--out", tmp_path / "hip", "--isolated", cwd=tmp_path, env={"HIPLINT_PROGRESS_EVERY": "3"})
    assert proc.returncode == 0, proc.stderr
    lines = [l for l in proc.stderr.decode().splitlines() if "migrated" in l]
    assert lines == ["hiplint: migrated 3/7 files", "hiplint: migrated 6/7 files", "hiplint: migrated 7/7 files"]
    assert "\r" not in proc.stderr.decode()
    quiet = run_cli("migrate", src, "--out", tmp_path / "hip2", "--isolated", "-q", cwd=tmp_path,
                    env={"HIPLINT_PROGRESS_EVERY": "3"})
    assert quiet.returncode == 0 and b"migrated" not in quiet.stderr
