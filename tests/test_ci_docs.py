"""docs/ci.md and its example CI files: valid YAML, in sync, and using only options hiplint has."""
import json
import os
import re
import shlex
import subprocess
import sys

import yaml

from conftest import ROOT, run_cli
from hiplint import emit

DOCS = ROOT / "docs"
GITHUB = DOCS / "examples" / "github-workflow.yml"
GITLAB = DOCS / "examples" / "gitlab-ci.yml"


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
    formats = set(emit.EMITTERS)
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


# The examples' shell steps, run for real ----------------------------------------------------------
# Each `run:` step of the GitHub workflow and each `script:` entry of the GitLab job runs in a clone of
# a small project, as the platform would run it, with hiplint from this checkout on PATH in place of
# the install step. A step that is broken (an unknown flag, a wrong format name, a path that is never
# written) exits 2 or leaves its report missing, and the test fails.

# On main already: WRP001 (a warning) and WRP006 (an error).
OLD_KERNEL = "__global__ void old(float* o) {\n    int lane = threadIdx.x & 31;\n    o[lane] = __shfl_down_sync(0xffffffff, 1.f, 1);\n}\n"
NEW_BAD = "__global__ void k(float* o) {\n    int lane = threadIdx.x & 31;\n    o[lane] = __shfl_sync(0xffffffff, 1.f, 0);\n}\n"
NEW_GOOD = "__global__ void k(float* o) {\n    o[threadIdx.x] = 1.f;\n}\n"
INSTALL = re.compile(r'^python -m pip install "hiplint @ git\+\$\{HIPLINT_REPO\}@\$\{HIPLINT_REF\}"$')


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _project(tmp_path, new_kernel: str):
    """A clone (origin/main holds an old finding) on a branch `pr` that adds `new_kernel`."""
    upstream = tmp_path / "upstream"
    upstream.mkdir(parents=True)
    _git(upstream, "init", "-q", "-b", "main")
    for key, value in [("user.email", "dev@example.com"), ("user.name", "Dev"), ("commit.gpgsign", "false")]:
        _git(upstream, "config", key, value)
    (upstream / "src").mkdir()
    (upstream / "src" / "old.cu").write_text(OLD_KERNEL)
    _git(upstream, "add", ".")
    _git(upstream, "commit", "-q", "-m", "main")
    work = tmp_path / "work"
    _git(tmp_path, "clone", "-q", str(upstream), str(work))
    for key, value in [("user.email", "dev@example.com"), ("user.name", "Dev"), ("commit.gpgsign", "false")]:
        _git(work, "config", key, value)
    _git(work, "checkout", "-q", "-b", "pr")
    (work / "src" / "new.cu").write_text(new_kernel)
    _git(work, "add", ".")
    _git(work, "commit", "-q", "-m", "pr")
    return work


def _env(tmp_path, **extra):
    """PATH with a `hiplint` that runs this checkout (the install step's stand-in)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "hiplint"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m hiplint "$@"\n')
    shim.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", HIPLINT_NO_PROGRESS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    for name in ("HIPLINT_DOCS_URL", "GITHUB_ACTIONS", "CI", "NO_COLOR"):
        env.pop(name, None)
    env.update(extra)
    return env


def _shell(command: str, cwd, env) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-eo", "pipefail", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def _github_steps(job: str) -> list[tuple[str, str]]:
    """(name, command) of the job's run steps, the install step checked and left out."""
    wf = yaml.safe_load(GITHUB.read_text())
    steps = []
    for i, step in enumerate(wf["jobs"][job]["steps"]):
        if "run" not in step:
            continue
        command = step["run"].strip()
        if "pip install" in command:
            assert INSTALL.match(command), f"{job}: the install step is not pinned to HIPLINT_REPO/HIPLINT_REF: {command}"
            continue
        command = command.replace("${{ github.base_ref }}", "main")
        assert "${{" not in command, f"an expression the test does not stand in for: {command}"
        steps.append((step.get("name", f"step {i}"), command))
    return steps


def _run_github_job(job: str, work, env) -> dict[str, int]:
    return {name: _shell(cmd, work, env).returncode for name, cmd in _github_steps(job)}


def test_github_install_is_pinned_to_a_repository_and_a_ref():
    wf = yaml.safe_load(GITHUB.read_text())
    assert set(wf["env"]) == {"HIPLINT_REPO", "HIPLINT_REF"}
    gitlab = yaml.safe_load(GITLAB.read_text())["hiplint"]["variables"]
    for ref in (wf["env"]["HIPLINT_REF"], gitlab["HIPLINT_REF"]):  # a commit: no release tag exists
        assert ref == "<full commit SHA>" or re.fullmatch(r"[0-9a-f]{40}", ref), ref
    for job in ("gate", "code-scanning"):
        installs = [s["run"] for s in wf["jobs"][job]["steps"] if "pip install" in s.get("run", "")]
        assert len(installs) == 1 and INSTALL.match(installs[0].strip()), installs


def test_no_doc_installs_hiplint_from_a_package_index():
    bare = re.compile(r"pip install\s+(?:-\S+\s+)*['\"]?hiplint(?![\w-]*\s*@)")
    for path in [ROOT / "README.md", *DOCS.glob("*.md"), *DOCS.glob("examples/*")]:
        assert not bare.search(path.read_text()), f"{path.name} installs hiplint by name from a package index"


def test_github_gate_runs_and_fails_only_on_new_findings(tmp_path):
    summary = tmp_path / "summary.md"
    work = _project(tmp_path, NEW_BAD)
    env = _env(tmp_path, GITHUB_STEP_SUMMARY=str(summary))
    steps = _github_steps("gate")
    results = {name: _shell(cmd, work, env) for name, cmd in steps}
    gate, summary_step = results["hiplint (new findings only)"], results["Migration checklist in the job summary"]
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "::error file=src/new.cu" in gate.stdout and "src/old.cu" not in gate.stdout, gate.stdout
    assert summary_step.returncode == 0, summary_step.stderr
    assert "src/new.cu" in summary.read_text() and "old.cu" not in summary.read_text()

    clean = _project(tmp_path / "clean", NEW_GOOD)
    results = _run_github_job("gate", clean, _env(tmp_path, GITHUB_STEP_SUMMARY=str(tmp_path / "clean.md")))
    assert results == {"hiplint (new findings only)": 0, "Migration checklist in the job summary": 0}, results


def test_github_code_scanning_writes_the_sarif(tmp_path):
    work = _project(tmp_path, NEW_BAD)
    assert _run_github_job("code-scanning", work, _env(tmp_path)) == {"hiplint (SARIF)": 0}
    log = json.loads((work / "hiplint.sarif").read_text())
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris == {"src/old.cu", "src/new.cu"}, uris  # unfiltered: old findings too


def _gitlab(work, env) -> list[subprocess.CompletedProcess]:
    job = yaml.safe_load(GITLAB.read_text())["hiplint"]
    assert set(job["variables"]) >= {"HIPLINT_REPO", "HIPLINT_REF"}
    installs = [c for c in job["before_script"] if "pip install" in c]
    assert installs and all(INSTALL.match(c.strip()) for c in installs), installs
    assert all(c in installs for c in job["before_script"]), job["before_script"]
    out = []
    for command in job["script"]:  # the runner stops at the first entry that fails
        out.append(_shell(command, work, env))
        if out[-1].returncode:
            break
    return out


def test_gitlab_job_on_a_merge_request(tmp_path):
    work = _project(tmp_path, NEW_BAD)
    quality, gate = _gitlab(work, _env(tmp_path, CI_MERGE_REQUEST_TARGET_BRANCH_NAME="main"))
    assert quality.returncode == 0, quality.stderr
    report = json.loads((work / "gl-code-quality-report.json").read_text())
    assert {i["location"]["path"] for i in report} == {"src/old.cu", "src/new.cu"}
    assert gate.returncode == 1, gate.stdout + gate.stderr  # a new finding
    assert "src/new.cu" in gate.stdout and "src/old.cu" not in gate.stdout
    assert (work / "hiplint-junit.xml").exists()

    clean = _project(tmp_path / "clean", NEW_GOOD)
    assert [r.returncode for r in _gitlab(clean, _env(tmp_path, CI_MERGE_REQUEST_TARGET_BRANCH_NAME="main"))] == [0, 0]


def test_gitlab_job_on_the_default_branch(tmp_path):
    work = _project(tmp_path, NEW_GOOD)
    _git(work, "checkout", "-q", "main")
    runs = _gitlab(work, _env(tmp_path))
    assert [r.returncode for r in runs] == [0, 1], [r.stdout + r.stderr for r in runs]  # WRP006 on main is an error
    assert (work / "hiplint-junit.xml").exists()


# pre-commit ---------------------------------------------------------------------------------------

def _precommit_snippet() -> dict:
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", (DOCS / "ci.md").read_text(), re.S) if "repos:" in b]
    assert len(blocks) == 1, "docs/ci.md should show one .pre-commit-config.yaml"
    return blocks[0]


def test_precommit_snippet_names_real_hooks_and_pins_a_commit():
    text = _precommit_snippet()
    config = yaml.safe_load(text)
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    (repo,) = config["repos"]
    documented = {h["id"] for h in repo["hooks"]} | set(re.findall(r"#\s*-\s*id:\s*([\w-]+)", text))
    assert documented == set(hooks), (documented, set(hooks))
    # No release tag exists to pin to: the docs pin a commit (a placeholder for a full SHA, or one).
    rev = str(repo["rev"])
    assert rev == "<full commit SHA>" or re.fullmatch(r"[0-9a-f]{40}", rev), rev
    tags = subprocess.run(["git", "tag", "--list"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert not re.fullmatch(r"v?\d+(\.\d+)*", rev) or rev in tags, f"rev {rev} is a tag this repository lacks"


def test_precommit_hook_entries_run(tmp_path):
    """Each hook's entry, as pre-commit would call it on a file: a usage error (exit 2) is a broken hook."""
    (tmp_path / "good.cu").write_text(NEW_GOOD)
    # WRP001 has no fix, so the fix hook also leaves a finding and fails.
    (tmp_path / "bad.cu").write_text("__global__ void k(float* out) {\n    int lane = threadIdx.x & 31;\n"
                                     "    out[lane] = __shfl_down_sync(__activemask(), 0.f, 1);\n}\n")
    # The build hook's files: CMake with and without a CUDA-only project.
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.21)\nproject(x LANGUAGES CXX)\n")
    (tmp_path / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.18)\nproject(x LANGUAGES CXX CUDA)\n")
    for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text()):
        command, *args = shlex.split(hook["entry"]) + hook.get("args", [])
        assert command == "hiplint", hook["entry"]
        good, bad, code = ("good.cu", "bad.cu", b"WRP001")
        if hook["id"] == "hiplint-build":
            good, bad, code = ("good/CMakeLists.txt", "CMakeLists.txt", b"BLD001")
        assert re.search(hook["files"], good) and re.search(hook["files"], bad)
        assert run_cli(*args, good, cwd=tmp_path).returncode == 0, hook["id"]
        bad = run_cli(*args, bad, cwd=tmp_path)
        assert bad.returncode == 1 and code in bad.stdout, (hook["id"], bad.stdout, bad.stderr)
