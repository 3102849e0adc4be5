"""Every fixture under fixtures/ reports exactly its annotated findings; fix fixtures match exactly."""
import pytest

from conftest import FIXTURES
from hiplint.testing import compare, fixed_path, fixture_files, is_fixed_output, lint_fixture, run_fix

ALL = fixture_files(FIXTURES)
INPUTS = [p for p in ALL if not is_fixed_output(p)]


def _id(p):
    return str(p.relative_to(FIXTURES))


@pytest.mark.parametrize("path", ALL, ids=_id)
def test_fixture_findings(path):
    findings, ex, _, _ = lint_fixture(path)
    problems = compare(findings, ex, subset=is_fixed_output(path))
    assert not problems, f"{_id(path)}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("path", INPUTS, ids=_id)
@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_fixture_fixes(path, unsafe):
    outcome, linter, lang = run_fix(path, unsafe)
    expected = fixed_path(path, unsafe)
    changed = outcome.data != path.read_bytes()
    if not expected.exists():
        if unsafe and fixed_path(path, False).exists() and outcome.data == fixed_path(path, False).read_bytes():
            return  # no unsafe fixes beyond the safe ones
        assert not changed, f"{_id(path)}: fixes changed the file but {expected.name} does not exist:\n" + \
            outcome.data.decode("utf-8", "replace")
        return
    assert changed, f"{_id(path)}: {expected.name} exists but no fix applied"
    assert outcome.converged, f"{_id(path)}: fixes did not converge"
    assert not outcome.dropped, outcome.dropped
    assert outcome.data.decode() == expected.read_text(), f"{_id(path)}: fixed output differs from {expected.name}"
    # Idempotent: fixing the result changes nothing.
    again = [f for f in linter.lint_bytes(str(path), outcome.data, lang).findings
             if f.fix is not None and f.fix.applicability >= (1 if unsafe else 2)]
    assert not again, f"{_id(path)}: a second run would fix again: {[(f.line, f.code) for f in again]}"


def test_hl_related_marks_are_checked():
    from hiplint.model import Finding, RelatedLocation, Severity
    from hiplint.testing import parse_expectations

    text = ("const unsigned m = 1;  // hl-expect: WRP006\n"
            "f(m);  // hl-ok: WRP006  // hl-related: WRP006\n"
            "// hl-related: WRP006\n"
            "g(m);\n")
    ex = parse_expectations(text)
    assert ex.related == {(2, "WRP006"), (4, "WRP006")}

    def finding(*lines):
        return Finding(code="WRP006", name="n", message="m", severity=Severity.ERROR, path="t.cu", line=1, column=1,
                       end_line=1, end_column=2, related=tuple(RelatedLocation("t.cu", n, 1, n, 2) for n in lines))

    assert compare([finding(2, 4)], ex) == []
    assert compare([finding(2)], ex) == ["line 4: expected as a related location of WRP006, not listed"]
    assert compare([finding(2, 3, 4)], ex) == ["line 3: unexpected related location of WRP006"]
    assert compare([finding(2)], ex, subset=True) == []  # fixed outputs check only what remains

    ex = parse_expectations('f(m);  // hl-related: BLD005 "lineinfo", BLD005 "ptxas"\n')
    both = Finding(code="BLD005", name="n", message="m", severity=Severity.ERROR, path="t.cu", line=9, column=1,
                   end_line=9, end_column=2, related=(RelatedLocation("t.cu", 1, 1, 1, 2, "-Xptxas: ptxas"),
                                                      RelatedLocation("t.cu", 1, 9, 1, 12, "-lineinfo")))
    assert compare([both], ex) == ["line 9: unexpected BLD005: m"]
    one = Finding(**{**{s: getattr(both, s) for s in ("code", "name", "message", "severity", "path", "line", "column",
                                                      "end_line", "end_column")}, "related": both.related[:1]})
    assert compare([one], ex) == ["line 1: related location of BLD005 lacks 'lineinfo': '-Xptxas: ptxas'",
                                  "line 9: unexpected BLD005: m"]
