"""The README's first steps work as written: the sample scan, and the test commands it shows."""
import re

from conftest import ROOT, run_cli
from hiplint.testing import fixed_path, is_fixed_output

README = (ROOT / "README.md").read_text()
SAMPLE = ROOT / "fixtures" / "sample"


def test_sample_is_only_sources_and_reports_what_the_readme_says():
    assert "hiplint scan fixtures/sample" in README
    shown = run_cli("scan", "fixtures/sample", "--show-files", cwd=ROOT).stdout.decode().split()
    assert shown and not [p for p in shown if is_fixed_output(ROOT / p)], shown  # no expected outputs in the sample
    said = re.search(r"It reports (\d+) findings in (\d+) files, (\d+) of them fixable with `--fix` and (\d+) more",
                     README.replace("\n", " "))
    assert said, "the README no longer says what the sample reports"
    scan = run_cli("scan", "fixtures/sample", "--no-cache", "--output-format", "concise", cwd=ROOT)
    assert scan.returncode == 1
    out = scan.stdout.decode()
    findings, files, fixable, unsafe = said.groups()
    assert f"Found {findings} findings in {files} of {files} files." in out, out
    assert f"[*] {fixable} fixable with `--fix`." in out and f"{unsafe} more fixable with `--fix --unsafe-fixes`" in out, out


def test_sample_expected_outputs_live_beside_the_sample():
    histogram = SAMPLE / "src" / "histogram.cu"
    assert fixed_path(histogram, False) == ROOT / "fixtures" / "sample.expected" / "src" / "histogram.fixed.cu"
    assert fixed_path(histogram, False).exists() and fixed_path(histogram, True).exists()
    assert fixed_path(ROOT / "fixtures" / "warp" / "x.cu", False) == ROOT / "fixtures" / "warp" / "x.fixed.cu"
