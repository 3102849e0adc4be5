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


# User documentation describes the product as it is; how it got there is the git log's.
HISTORY = re.compile(r"\b(?:sessions?|this round|this branch|previous (?:version|commit|run|session)s?"
                     r"|(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh) session"
                     r"|(?:the )?latest run|added after|until then|ahead of being merged|20\d\d-\d\d-\d\d)\b", re.I)


def test_user_docs_hold_no_development_history():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    hits = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}" for p in pages
            for i, line in enumerate(p.read_text().splitlines(), 1) if HISTORY.search(line)]
    assert not hits, "development notes in user docs (the git log keeps history):\n" + "\n".join(hits)


def test_performance_doc_names_the_command_that_reproduces_its_figures():
    text = (ROOT / "docs" / "performance.md").read_text()
    assert "python bench/bench_scan.py --files 1000 --repeat 3" in text
    assert (ROOT / "bench" / "bench_scan.py").exists() and (ROOT / "bench" / "corpus.py").exists()
    figures = re.findall(r"^\| parse only \| [0-9.]+ \|", text, re.M)
    assert len(figures) == 1, "one set of current figures, not a log of runs"
