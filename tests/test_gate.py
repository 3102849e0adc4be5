"""Gating only what is new: --diff-base (real git), baselines, --fail-on, --statistics, config keys."""
import json
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli
from hiplint.config import ConfigError, Settings, apply_table
from hiplint.gitdiff import parse_diff

OLD_KERNEL = """\
#include <cuda_runtime.h>

__global__ void reduce(const float* in, float* out) {
    int lane = threadIdx.x & 31;
    float v = __shfl_down_sync(__activemask(), in[threadIdx.x], 1);
    if (lane == 0) out[threadIdx.x / 32] = v;
}
"""


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return out.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "dev@example.com")
    git(tmp_path, "config", "user.name", "Dev")
    git(tmp_path, "config", "commit.gpgsign", "false")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "reduce.cu").write_text(OLD_KERNEL)
    (tmp_path / "src" / "other.cu").write_text("__global__ void other(int* o) { o[threadIdx.x >> 5] = __shfl_down_sync(__activemask(), 0, 1); }\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "old code")
    return tmp_path


def scan(repo: Path, *args: str, cwd: Path | None = None):
    proc = run_cli("scan", *args, "--isolated", "--no-cache", "--output-format", "json", cwd=cwd or repo)
    findings = json.loads(proc.stdout) if proc.stdout.strip().startswith(b"[") else None
    return proc, findings


def test_diff_base_reports_only_new_lines(repo):
    git(repo, "checkout", "-q", "-b", "feature")
    # Committed on the branch: a new kernel, and an edit above the old findings that shifts them.
    text = OLD_KERNEL.replace("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\n// moved down by two\n\n")
    text += "\n__global__ void added(int* o) {\n    o[threadIdx.x % 32] = __shfl_down_sync(__activemask(), 1, 1);\n}\n"
    (repo / "src" / "reduce.cu").write_text(text)
    git(repo, "commit", "-q", "-am", "add a kernel")
    # Uncommitted: a changed line in another file, and a new untracked file.
    (repo / "src" / "other.cu").write_text("__global__ void other(int* o) { o[threadIdx.x / 32] = __shfl_down_sync(__activemask(), 0, 1); }\n")
    (repo / "src" / "new.cu").write_text("__global__ void fresh(int* o) { o[threadIdx.x & 31] = __shfl_down_sync(__activemask(), 2, 1); }\n")

    proc, all_findings = scan(repo, "src")
    assert len(all_findings) == 5
    proc, findings = scan(repo, "src", "--diff-base", "main")
    assert proc.returncode == 1, proc.stderr
    got = sorted((f["path"], f["line"]) for f in findings)
    assert got == [("src/new.cu", 1), ("src/other.cu", 1), ("src/reduce.cu", 12)]

    # From a subdirectory, paths still match git's repository-relative ones.
    proc, findings = scan(repo, ".", "--diff-base", "main", cwd=repo / "src")
    assert sorted((f["path"], f["line"]) for f in findings) == [("new.cu", 1), ("other.cu", 1), ("reduce.cu", 12)]

    # Nothing new: back on main with a clean tree the gate passes.
    (repo / "src" / "new.cu").unlink()
    git(repo, "checkout", "-q", "--", "src/other.cu")
    git(repo, "checkout", "-q", "main")
    proc, findings = scan(repo, "src", "--diff-base", "main")
    assert proc.returncode == 0 and findings == []


def test_diff_base_unknown_ref_is_an_error(repo):
    proc, _ = scan(repo, "src", "--diff-base", "no-such-branch")
    assert proc.returncode == 2
    assert b"--diff-base" in proc.stderr and b"Traceback" not in proc.stderr


def test_parse_diff_hunks():
    text = ("diff --git a/k.cu b/k.cu\n--- a/k.cu\n+++ b/k.cu\n@@ -3,0 +4,2 @@\n+a\n+b\n@@ -10 +12 @@\n-x\n+y\n"
            "@@ -20,3 +22,0 @@\n-gone\n--- a/dead.cu\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n")
    assert parse_diff(text) == {"k.cu": {4, 5, 12}}


def test_baseline_survives_edits_above_and_reports_new_and_stale(repo):
    baseline = repo / ".hiplint-baseline.json"
    proc, _ = scan(repo, "src", "--write-baseline", str(baseline))
    assert proc.returncode == 0, proc.stderr  # writing a baseline is not a failure
    data = json.loads(baseline.read_text())
    assert data["version"] == 1
    assert {p: {c: e["count"] for c, e in codes.items()} for p, codes in data["files"].items()} == \
        {"src/reduce.cu": {"WRP001": 2}, "src/other.cu": {"WRP001": 1}}

    proc, findings = scan(repo, "src", "--baseline", str(baseline))
    assert proc.returncode == 0 and findings == []

    # Lines added above move every finding; the baseline still matches them. One old finding is
    # fixed (stale entry) and one new one appears.
    text = "// licence header\n// second line\n\n" + OLD_KERNEL.replace("threadIdx.x / 32", "threadIdx.x / warpSize")
    text += "__device__ int lane_id() { return (threadIdx.x & 31) + __shfl_down_sync(__activemask(), 0, 1); }\n"
    (repo / "src" / "reduce.cu").write_text(text)
    proc, findings = scan(repo, "src", "--baseline", str(baseline))
    assert proc.returncode == 1
    assert [(f["path"], f["line"]) for f in findings] == [("src/reduce.cu", 11)]
    assert b"1 baseline entry" in proc.stderr and b"src/reduce.cu: WRP001 x1" in proc.stderr

    # Scanning one file does not call the other file's entries stale.
    proc, _ = scan(repo, "src/other.cu", "--baseline", str(baseline))
    assert proc.returncode == 0 and b"no longer match" not in proc.stderr

    proc, _ = scan(repo, "src", "--baseline", str(baseline), "--prune-baseline")
    pruned = json.loads(baseline.read_text())
    assert pruned["files"]["src/reduce.cu"]["WRP001"]["count"] == 1
    assert pruned["files"]["src/other.cu"]["WRP001"]["count"] == 1
    proc, _ = scan(repo, "src", "--baseline", str(baseline))
    assert b"no longer match" not in proc.stderr


def test_baseline_counts_identical_lines(repo):
    (repo / "src" / "twice.cu").write_text("__global__ void k(int* o) {\n  o[threadIdx.x & 31] = __shfl_down_sync(__activemask(), 1, 1);\n}\n")
    baseline = repo / "b.json"
    scan(repo, "src/twice.cu", "--write-baseline", str(baseline))
    # A second, identical line in the same function is new even though its fingerprint is known.
    (repo / "src" / "twice.cu").write_text("__global__ void k(int* o) {\n  o[threadIdx.x & 31] = __shfl_down_sync(__activemask(), 1, 1);\n  o[threadIdx.x & 31] = __shfl_down_sync(__activemask(), 1, 1);\n}\n")
    proc, findings = scan(repo, "src/twice.cu", "--baseline", str(baseline))
    assert len(findings) == 1 and proc.returncode == 1


def test_baseline_errors(repo):
    proc, _ = scan(repo, "src", "--baseline", "missing.json")
    assert proc.returncode == 2 and b"--write-baseline" in proc.stderr
    (repo / "bad.json").write_text("{\"version\": 7}")
    proc, _ = scan(repo, "src", "--baseline", "bad.json")
    assert proc.returncode == 2 and b"not a version-1" in proc.stderr
    proc, _ = scan(repo, "src", "--prune-baseline")
    assert proc.returncode == 2


def test_baseline_and_fail_on_from_configuration(repo):
    baseline = repo / ".hiplint-baseline.json"
    scan(repo, "src/other.cu", "--write-baseline", str(baseline))
    (repo / "hiplint.toml").write_text('baseline = ".hiplint-baseline.json"\nfail-on = "error"\n')
    proc = run_cli("scan", "src", "--no-cache", "--output-format", "json", cwd=repo)
    findings = json.loads(proc.stdout)
    # other.cu is covered by the baseline; reduce.cu's warnings remain but are below `fail-on`.
    assert {f["path"] for f in findings} == {"src/reduce.cu"}
    assert proc.returncode == 0


def test_fail_on_threshold(repo):
    # WRP001 is a warning; HL101 (blanket suppression) an error.
    proc, findings = scan(repo, "src", "--fail-on", "error")
    assert findings and proc.returncode == 0
    proc, _ = scan(repo, "src", "--fail-on", "warning")
    assert proc.returncode == 1
    (repo / "src" / "sup.cu").write_text("int x = 1; // hiplint: ignore\n")
    proc, _ = scan(repo, "src", "--fail-on", "error")
    assert proc.returncode == 1
    proc, _ = scan(repo, "src", "--fail-on", "error", "--exit-zero")
    assert proc.returncode == 0


def test_statistics(repo):
    (repo / "src" / "sup.cu").write_text("int x = 1; // hiplint: ignore\n")
    proc = run_cli("scan", "src", "--isolated", "--no-cache", "--statistics", cwd=repo)
    assert proc.returncode == 1
    assert proc.stdout.decode().splitlines() == ["3  WRP001      hardcoded-warp-size", "1  HL101       blanket-suppression",
                                                  "Found 4 findings."]


def test_config_keys_validated():
    s = apply_table(Settings(), {"baseline": "b.json", "fail-on": "warning", "cache": False}, "t")
    assert s.extra == {"baseline": "b.json", "fail-on": "warning", "cache": False}
    with pytest.raises(ConfigError, match="fail-on"):
        apply_table(Settings(), {"fail-on": "sometimes"}, "t")
    with pytest.raises(ConfigError, match="unknown key `fail_on`"):
        apply_table(Settings(), {"fail_on": "error"}, "t")


def test_diff_base_keeps_a_finding_whose_related_location_changed(tmp_path):
    from hiplint.gitdiff import ChangedLines
    from hiplint.model import Finding, RelatedLocation, Severity

    path = str(tmp_path / "k.cu")
    f = Finding(code="WRP006", name="n", message="m", severity=Severity.ERROR, path=path, line=2, column=1,
                end_line=2, end_column=5)
    changed = ChangedLines(str(tmp_path), {"k.cu": {9}}, set())
    assert not changed.contains(f)
    f.related = (RelatedLocation(path, 9, 3, 9, 8, "a new use of the mask"),)
    assert changed.contains(f)


CUTLASS_HEADER = "#pragma once\n#include <cutlass/cutlass.h>\ntemplate <int N> struct Tile{name} {{ cutlass::Array<float, N> a; }};\n"


def test_a_library_to_reimplement_is_one_finding_per_directory(tmp_path):
    # CUTLASS headers one per file in a kernel directory: one LIB010 for the directory, the other files
    # as its related locations; another directory gets its own; findings of other rules stay per file.
    for d, names in (("kernels/gemm", ("a", "b", "c")), ("kernels/attention", ("d",))):
        (tmp_path / d).mkdir(parents=True)
        for n in names:
            (tmp_path / d / f"{n}.h").write_text(CUTLASS_HEADER.format(name=n))
    proc, found = scan(tmp_path, ".", "--select", "LIB010")
    lib = sorted((f["path"], len(f["related"])) for f in found)
    assert [p for p, _ in lib] == ["kernels/attention/d.h", "kernels/gemm/a.h"]
    gemm = next(f for f in found if f["path"] == "kernels/gemm/a.h")
    assert {r["path"] for r in gemm["related"]} >= {"kernels/gemm/b.h", "kernels/gemm/c.h"}


def test_a_new_file_in_a_grouped_directory_still_shows_under_a_baseline(tmp_path):
    # Grouping runs on what is reported: with the old files in the baseline, a new CUTLASS header in
    # the same directory is reported itself, not folded into a finding the baseline hides.
    (tmp_path / "kernels").mkdir()
    for n in ("a", "b"):
        (tmp_path / "kernels" / f"{n}.h").write_text(CUTLASS_HEADER.format(name=n))
    base = tmp_path / "baseline.json"
    proc, _ = scan(tmp_path, ".", "--select", "LIB010", "--write-baseline", str(base))
    assert proc.returncode == 0
    (tmp_path / "kernels" / "c.h").write_text(CUTLASS_HEADER.format(name="c"))
    proc, found = scan(tmp_path, ".", "--select", "LIB010", "--baseline", str(base))
    assert [f["path"] for f in found] == ["kernels/c.h"]
