"""Every rule documents itself, and its documented examples behave as documented."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from hiplint.config import Settings
from hiplint.registry import load_registry
from hiplint.rule import CODE_RE, NAME_RE, REQUIRED_SECTIONS
from hiplint.testing import fixture_settings, linter_for, parse_expectations

RULES = [r for r in load_registry().rules if r.pack in ("builtin", "hiplint")]
EXAMPLE_LANG = {"cuda": "x.cu", "python": "x.py", "cmake": "CMakeLists.txt", "make": "Makefile"}


def _ids(r):
    return r.code


@pytest.mark.parametrize("rule", RULES, ids=_ids)
def test_metadata(rule):
    assert CODE_RE.match(rule.code)
    assert NAME_RE.match(rule.name)
    assert rule.summary and not rule.summary.endswith(".")
    sections = rule.doc_sections()
    for s in REQUIRED_SECTIONS:
        assert sections.get(s, "").strip(), f"{rule.code}: docstring lacks '## {s}'"
    refs = sections["References"]
    assert re.search(r"https?://", refs), f"{rule.code}: References need at least one link"
    if rule.fix_availability != "none":
        assert sections.get("Fix", "").strip(), f"{rule.code}: a rule with fixes documents them in '## Fix'"


def test_codes_and_names_unique():
    codes = [r.code for r in load_registry().rules]
    names = [r.name for r in load_registry().rules]
    assert len(codes) == len(set(codes))
    assert len(names) == len(set(names))


def _lint_example(rule, code_text):
    lang = sorted(rule.languages - {"cuda"})[0] if rule.languages != {"cuda"} and "cuda" not in rule.languages else "cuda"
    name = EXAMPLE_LANG[lang]
    path = Path("/tmp") / name
    ex = parse_expectations(code_text, hash_comments=lang != "cuda")
    # The rule alone: an example shows what this rule reports, whatever the others say.
    settings = fixture_settings(ex, path).with_overrides(select=(rule.code,), extend_select=())
    return [f for f in linter_for(settings).lint_bytes(name, code_text.encode(), lang).findings if f.code == rule.code]


DOC_RULES = [r for r in RULES if r.code[:2] != "HL"]


@pytest.mark.parametrize("rule", DOC_RULES, ids=_ids)
def test_example_is_reported(rule):
    code = rule.fence_body("Example")
    if not code:
        pytest.fail(f"{rule.code}: '## Example' needs a code fence")
    assert _lint_example(rule, code), f"{rule.code}: its documented example is not reported"


@pytest.mark.parametrize("rule", DOC_RULES, ids=_ids)
def test_use_instead_is_clean(rule):
    code = rule.fence_body("Use instead")
    if not code:
        pytest.fail(f"{rule.code}: '## Use instead' needs a code fence")
    found = _lint_example(rule, code)
    assert not found, f"{rule.code}: its 'Use instead' code is reported: {[f.message for f in found]}"


def test_generated_rule_pages_are_current():
    proc = subprocess.run([sys.executable, "-m", "hiplint.docs", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, "docs/rules/ is stale; run `python -m hiplint.docs`:\n" + proc.stdout


def test_rule_command_prints_the_page(cli):
    proc = cli("rule", "WRP006")
    assert proc.returncode == 0
    out = proc.stdout.decode()
    assert out.startswith("# sync-mask-not-64bit (WRP006)")
    assert "## Why it breaks on AMD" in out and "static_assert" in out
    assert cli("rule", "sync-mask-not-64bit").stdout == proc.stdout
    bad = cli("rule", "NOPE999")
    assert bad.returncode == 2 and b"unknown rule" in bad.stderr


def test_every_rule_with_a_safe_fix_says_in_docs_fixes_why_it_is_safe():
    # `hiplint fix` and the pre-commit hook apply safe fixes unreviewed: docs/fixes.md owes the reason.
    import re
    docs = (ROOT / "docs" / "fixes.md").read_text(encoding="utf-8")
    rows = {m.group(1) for m in re.finditer(r"^\| ([A-Z]+[0-9]{3})\b", docs, re.M)}
    missing = []
    for path in sorted((ROOT / "rules").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if "Fix.safe(" not in source:
            continue
        # The rule classes of the file whose check builds a safe fix (one class per `code = "..."`).
        classes = re.split(r"^class ", source, flags=re.M)[1:]
        for body in classes:
            code = re.search(r'^\s+code = "([A-Z]+[0-9]{3})"', body, re.M)
            if code and "Fix.safe(" in body and code.group(1) not in rows:
                missing.append(f"{code.group(1)} ({path.relative_to(ROOT)})")
    assert not missing, "safe fixes with no row in docs/fixes.md: " + ", ".join(missing)
