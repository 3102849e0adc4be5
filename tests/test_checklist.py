"""`--output-format checklist`: golden Markdown for a small tree (fixtures/format/), before and after --fix."""
import os
import shutil

import pytest

from conftest import FIXTURES, ROOT, run_cli

GOLDEN = FIXTURES / "format"
# The test pack first; the checkout too, for a run from a checkout that is not installed.
ENV = {"PYTHONPATH": os.pathsep.join([str(ROOT / "tests" / "packs"), str(ROOT)]), "HIPLINT_DOCS_URL": "docs/rules/"}


def _checklist(tmp_path, *extra):
    shutil.copytree(GOLDEN / "checklist" / "src", tmp_path / "src")
    # Paths are relative to the working directory, so the output does not depend on where tmp_path is.
    r = run_cli("scan", "--select", "TST", "--isolated", "--no-progress", "--output-format", "checklist", *extra, "src",
                cwd=tmp_path, env=ENV)
    assert r.returncode == 1, r.stderr
    return r.stdout.decode()


@pytest.mark.parametrize("golden,extra", [("checklist.md", ()), ("checklist.fixed.md", ("--fix",))])
def test_checklist_golden(tmp_path, golden, extra):
    out = _checklist(tmp_path, *extra)
    assert out == (GOLDEN / golden).read_text(), out


def test_checklist_orders_compile_breaks_first_and_groups_by_rule_and_file(tmp_path):
    out = _checklist(tmp_path)
    sections = [l for l in out.splitlines() if l.startswith("## ")]
    assert sections[0].startswith("## Compile and build breaks") and sections[1].startswith("## Silent wrong results")
    # Three TST002 findings in one file: one checkbox with the lines listed.
    items = [l for l in out.splitlines() if "TST002" in l and l.startswith("- [ ]")]
    assert items == [l for l in items if "lines 3, 4, 6 (3×)" in l] and len(items) == 1


def test_checklist_with_nothing_left(tmp_path):
    (tmp_path / "ok.cu").write_text("void f() { new_api(1); }\n")
    r = run_cli("scan", "--select", "TST", "--isolated", "--output-format", "checklist", "ok.cu", cwd=tmp_path, env=ENV)
    assert r.returncode == 0
    assert "Nothing left to do by hand." in r.stdout.decode() and "- [ ]" not in r.stdout.decode()


def test_long_groups_are_abbreviated():
    from hiplint.emit import Report, render
    from hiplint.model import Finding, Severity
    fs = [Finding("TST002", "t", "m", Severity.WARNING, "big.cu", n, 1, n, 2) for n in range(1, 31)]
    out = render("checklist", Report(fs, 1))
    assert "lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 and 18 more (30×)" in out


def test_checklist_starts_with_the_per_directory_table_by_impact_and_target():
    from hiplint.emit import Report, render
    from hiplint.model import Finding, Impact, Severity
    fs = [Finding("WRP001", "hardcoded-warp-size", "m", Severity.WARNING, "src/kern/a.cu", 1, 1, 1, 2, impact=Impact.SILENT),
          Finding("WRP006", "sync-mask-not-64bit", "m", Severity.ERROR, "src/kern/b.cu", 1, 1, 1, 2, impact=Impact.COMPILE),
          Finding("WRP006", "sync-mask-not-64bit", "m", Severity.ERROR, "lib|x/c.cu", 1, 1, 1, 2, impact=Impact.COMPILE)]
    out = render("checklist", Report(fs, 4))
    lines = out.splitlines()
    head = lines.index("| Directory | files | findings | compile | silent wrong | gfx90a (wave64) | gfx942 (wave64) | gfx1100 (wave32) |")
    assert head < min(i for i, l in enumerate(lines) if l.startswith("## "))  # before the sections
    assert "| `lib\\|x` | 1 | 1 | 1 | 0 | 1 | 1 | 1 |" in lines  # a | in a name does not split the row
    assert "| `src/kern` | 2 | 2 | 1 | 1 | 2 | 2 | 1 |" in lines  # WRP001 is a wave64 problem only
    assert "| **Total** | **3** | **3** | **2** | **1** | **3** | **3** | **2** |" in lines
