"""The `html` report: a self-contained page for a lead (readiness, per-directory and per-family tables by
impact and target, top problems, every finding, the change since a baseline), escaped, small at scale,
and rendered by a real browser (headless Chromium) when one is installed."""
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli
from hiplint.emit import Report, render
from hiplint.model import Edit, Finding, Fix, Impact, RelatedLocation, Severity

EVIL = "<script>alert('x')</script>"


def _finding(**kw) -> Finding:
    base = dict(code="WRP001", name="hardcoded-warp-size", message="lane index assumes 32", severity=Severity.WARNING,
                path="src/a.cu", line=3, column=5, end_line=3, end_column=9, impact=Impact.SILENT,
                source_line="int lane = threadIdx.x & 31;")
    base.update(kw)
    return Finding(**base)


class _Tables(HTMLParser):
    """Table id -> rows of cell texts."""

    def __init__(self):
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table = None
        self._row = None
        self._cell = None
        self.scripts = 0
        self.external = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            self.scripts += 1
            if "src" in a:
                self.external.append(a["src"])
        if tag in ("link", "img", "iframe") or (tag != "a" and any(k in ("src", "href") for k in a)):
            self.external.append(f"{tag} {a}")
        if tag == "table":
            self._table = self.tables.setdefault(a.get("id") or f"t{len(self.tables)}", [])
        elif tag == "tr" and self._table is not None:
            self._row = []
            self._table.append(self._row)
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell.strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def _parse(text: str) -> _Tables:
    p = _Tables()
    p.feed(text)
    return p


def _rows(table) -> dict[str, dict[str, str]]:
    head = table[0]
    return {r[0]: dict(zip(head, r)) for r in table[1:]}


def _report(findings, files=5, tmp_path=None) -> Report:
    return Report(findings, files, root=str(tmp_path or "/"))


def test_directory_and_family_tables_count_by_impact_and_target(tmp_path):
    findings = [
        _finding(path=str(tmp_path / "src/kern/a.cu")),  # WRP001: wave64 only
        _finding(path=str(tmp_path / "src/kern/a.cu"), line=9, code="WRP006", name="sync-mask-not-64bit",
                 impact=Impact.COMPILE, severity=Severity.ERROR),  # both wave sizes
        _finding(path=str(tmp_path / "lib/b.cu"), code="PRF001", name="p", impact=Impact.PERFORMANCE),
    ]
    text = render("html", Report(findings, 5, root=str(tmp_path)))
    page = _parse(text)
    dirs = _rows(page.tables["by-directory"])
    kern = dirs["src/kern"]
    assert kern["files"] == "1" and kern["findings"] == "2" and kern["compile"] == "1" and kern["silent wrong"] == "1"
    assert kern["gfx942 (wave64)"] == "2" and kern["gfx90a (wave64)"] == "2"
    assert kern["gfx1100 (wave32)"] == "1"  # WRP001's problem does not exist on wave32
    assert dirs["lib"]["performance"] == "1"
    assert dirs["Total"]["findings"] == "3"
    fams = _rows(page.tables["by-family"])
    assert fams["WRP"]["findings"] == "2" and fams["PRF"]["findings"] == "1"
    # Readiness: 5 scanned, 2 with findings -> 3 clean; one file with a compile break, one with a silent
    # wrong result, one with a performance note.
    cards = dict((label, int(n)) for n, label in re.findall(r'<div class="card[^"]*"><b>(\d+)</b><span>([^<]+)</span>', text))
    assert cards["files compile and run on AMD as they are (no findings)"] == 3
    assert cards["files with compile or build breaks"] == 1
    assert cards["files with silent wrong results"] == 1
    assert cards["files with performance notes"] == 1


def test_everything_from_the_scan_is_escaped_and_nothing_is_fetched(tmp_path):
    f = _finding(message=f"bad {EVIL}", source_line=f"int x; // {EVIL}", path=str(tmp_path / f"src/{EVIL}.cu"),
                 fix=Fix.safe(f"use {EVIL}", Edit(0, 1, "x")), checklist=f"do {EVIL}",
                 related=(RelatedLocation(str(tmp_path / "src/b.cu"), 4, 1, 4, 2, EVIL),))
    text = render("html", Report([f], 1, root=str(tmp_path)))
    assert EVIL not in text and "<script>alert" not in text
    assert "&lt;script&gt;alert(" in text
    page = _parse(text)
    assert page.scripts == 1  # the page's own sorting script, inline
    assert page.external == []  # no stylesheet, image, frame or script from elsewhere
    assert "@import" not in text and "url(" not in text


def test_top_problems_link_rule_pages_and_findings_show_frame_and_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("HIPLINT_DOCS_URL", "https://example.org/rules")
    f = _finding(path=str(tmp_path / "src/a.cu"), fix=Fix.safe("use warpSize", Edit(0, 1, "x")))
    text = render("html", Report([f], 1, root=str(tmp_path)))
    assert 'href="https://example.org/rules/WRP001.md"' in text
    assert "Safe fix: use warpSize" in text
    assert "<mark>int lane = threadIdx.x &amp; 31;</mark>" in text
    assert "<details open><summary>src/a.cu" in text


def test_no_findings_is_a_clean_page(tmp_path):
    text = render("html", Report([], 7, root=str(tmp_path)))
    assert "<b>7</b><span>files compile and run on AMD as they are" in text
    assert "by-directory" not in text


def test_ten_thousand_findings_stay_a_few_megabytes(tmp_path):
    from hiplint.registry import load_registry

    rules = list(load_registry().rules)
    findings = []
    for i in range(10_000):
        r = rules[i % len(rules)]
        findings.append(_finding(code=r.code, name=r.name, message=r.summary or "m", severity=r.severity,
                                 impact=r.impact, path=str(tmp_path / f"src/d{i % 40}/f{i % 400}.cu"),
                                 line=i % 300 + 1, end_line=i % 300 + 1, checklist=r.checklist or None,
                                 source_line="    float v = __shfl_down_sync(0xffffffff, x, offset);  // a comment",
                                 fix=Fix.safe("use warpSize", Edit(0, 1, "x")) if i % 3 == 0 else None))
    text = render("html", Report(findings, 2000, root=str(tmp_path)))
    size = len(text.encode())
    print(f"html report of 10,000 findings: {size} bytes ({size / 1e6:.2f} MB)")
    assert size < 6_000_000
    assert text.count("<details>") == 400  # collapsed per file: a large report opens folded
    assert text.count('<div class="f">') == 10_000


# Through the command line: --output-format html, and the change since a baseline ----------------------

KERNEL = "__global__ void k(float* o) {\n    int lane = threadIdx.x & 31;\n    o[lane] = __shfl_sync(0xffffffff, 1.f, 0);\n}\n"


def test_cli_html_with_baseline_shows_new_and_fixed(tmp_path):
    import json

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_text(KERNEL)
    (tmp_path / "src" / "old.cu").write_text(KERNEL)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    proc = run_cli("scan", "src/k.cu", "--isolated", "--no-cache", "--output-format", "json", cwd=tmp_path)
    per_file = len(json.loads(proc.stdout))
    assert per_file >= 2
    base = tmp_path / "baseline.json"
    proc = run_cli("scan", "src", "--isolated", "--no-cache", "--write-baseline", base, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (tmp_path / "src" / "old.cu").write_text("__global__ void o(float* p) { p[threadIdx.x] = 0; }\n")  # fixed
    (tmp_path / "src" / "new.cu").write_text(KERNEL)  # new
    proc = run_cli("scan", "src", "--isolated", "--no-cache", "--baseline", base, "--output-format", "html",
                   "-o", "r.html", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    text = (tmp_path / "r.html").read_text()
    assert re.search(rf"Since the baseline</h2><p>Baseline <code>[^<]*baseline.json</code>: <b>{per_file}</b> new findings", text)
    assert f"<b>{per_file}</b> fixed or changed" in text
    assert f"{per_file} unchanged" in text
    assert "src/new.cu" in text and "src/old.cu" not in text and "src/k.cu" not in text


# A real browser --------------------------------------------------------------------------------------

def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def test_chromium_renders_the_report(tmp_path):
    browser = _chromium()
    if browser is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed (CI=true): .ci/run installs it with apt")
        pytest.skip("chromium is not installed (apt-get install chromium); CI installs it")
    sample = tmp_path / "sample"  # outside any git work tree: paths are relative to it
    shutil.copytree(FIXTURES / "sample", sample)
    out = tmp_path / "report.html"
    proc = run_cli("scan", ".", "--isolated", "--no-cache", "--output-format", "html", "-o", out, cwd=sample)
    assert proc.returncode == 1, proc.stderr
    artifacts = Path(os.environ.get("HIPLINT_TEST_ARTIFACTS") or tmp_path)
    artifacts.mkdir(parents=True, exist_ok=True)
    shot = artifacts / "html-report.png"
    # A fresh profile per run; no GPU, no sandbox (containers run as root).
    flags = [browser, "--headless", "--disable-gpu", "--no-sandbox", f"--user-data-dir={tmp_path / 'profile'}",
             "--enable-logging=stderr", "--v=0", "--window-size=1280,2000"]
    run = subprocess.run([*flags, f"--screenshot={shot}", out.as_uri()], capture_output=True, text=True, timeout=180)
    assert shot.is_file() and shot.stat().st_size > 10_000, run.stderr[-2000:]
    print(f"screenshot of the html report: {shot}")
    assert "Uncaught" not in run.stderr and "CONSOLE" not in run.stderr, run.stderr[-2000:]
    dom = subprocess.run([*flags, "--dump-dom", out.as_uri()], capture_output=True, text=True, timeout=180)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "Uncaught" not in dom.stderr, dom.stderr[-2000:]
    page = _parse(dom.stdout)
    dirs = _rows(page.tables["by-directory"])
    assert dirs["src"]["files"] == "2" and dirs["Total"]["findings"] == "9"
    assert dirs["Total"]["gfx1100 (wave32)"] == "3" and dirs["Total"]["gfx942 (wave64)"] == "9"
    assert "Every finding (9 in 2 files)" in dom.stdout
