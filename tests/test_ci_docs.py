"""docs/ci.md and its example CI files: valid YAML, in sync, and using only options hiplint has."""
import re
import shlex

import yaml

from conftest import ROOT, run_cli
from hiplint import emit

DOCS = ROOT / "docs"
GITHUB = DOCS / "examples" / "github-workflow.yml"
GITLAB = DOCS / "examples" / "gitlab-ci.yml"
# Formats that other features register; referenced by the docs ahead of being merged.
PLANNED_FORMATS = {"checklist"}


def _yaml_blocks(markdown: str) -> list:
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", markdown, re.S)]


def test_examples_parse_and_match_the_docs():
    github = yaml.safe_load(GITHUB.read_text())
    gitlab = yaml.safe_load(GITLAB.read_text())
    blocks = _yaml_blocks((DOCS / "ci.md").read_text())
    assert github in blocks, "the GitHub workflow in docs/ci.md differs from examples/github-workflow.yml"
    assert {"hiplint": gitlab["hiplint"]} in blocks, "the GitLab job in docs/ci.md differs from examples/gitlab-ci.yml"


def test_github_workflow_shape():
    wf = yaml.safe_load(GITHUB.read_text())
    gate, scanning = wf["jobs"]["gate"], wf["jobs"]["code-scanning"]
    assert gate["steps"][0]["with"]["fetch-depth"] == 0
    runs = " ".join(s.get("run", "") for s in gate["steps"])
    assert "--diff-base" in runs and "GITHUB_STEP_SUMMARY" in runs and "--output-format github" in runs
    upload = [s for s in scanning["steps"] if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    assert upload and upload[0]["with"]["sarif_file"] == "hiplint.sarif"
    assert scanning["permissions"]["security-events"] == "write"


def test_gitlab_job_shape():
    job = yaml.safe_load(GITLAB.read_text())["hiplint"]
    assert job["artifacts"]["reports"]["codequality"] == "gl-code-quality-report.json"
    assert job["variables"]["GIT_DEPTH"] == "0"


def _hiplint_commands(text: str) -> list[list[str]]:
    # Join YAML folded lines so that a command spread over lines is read whole.
    joined = re.sub(r"\n\s+(--)", r" \1", text)
    out = []
    for line in joined.splitlines():
        m = re.search(r"\bhiplint scan\b(.*)", line)
        if m:
            out.append(shlex.split(m.group(1).replace("${{ github.base_ref }}", "main")))
    return out


def test_commands_use_existing_options_and_formats():
    help_text = run_cli("scan", "--help").stdout.decode()
    known = set(re.findall(r"(--[a-z][a-z-]+)", help_text))
    formats = set(emit.EMITTERS) | PLANNED_FORMATS
    commands = _hiplint_commands(GITHUB.read_text()) + _hiplint_commands(GITLAB.read_text()) + \
        _hiplint_commands((DOCS / "ci.md").read_text())
    assert len(commands) >= 6
    for args in commands:
        for i, a in enumerate(args):
            if a.startswith("--"):
                assert a.split("=")[0] in known, f"unknown option {a} in {args}"
            if a == "--output-format":
                assert args[i + 1] in formats, args
            if a == "--report":
                assert args[i + 1].split("=")[0] in formats, args
