"""The pre-commit hooks, run by the real pre-commit against a copy of this checkout."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT

BAD = "__global__ void k(float* out) {\n    int lane = threadIdx.x & 31;\n    out[lane] = __shfl_down_sync(__activemask(), 0.f, 1);\n}\n"
GOOD = "__global__ void k(float* out) {\n    int lane = threadIdx.x % warpSize;\n    out[lane] = __shfl_xor_sync(__activemask(), 0.f, 1);\n}\n"
# What a hook repository needs to be pip-installed by pre-commit.
PACKAGE_FILES = ["pyproject.toml", "setup.py", "README.md", "LICENSE", ".pre-commit-hooks.yaml", "hiplint", "rules"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _init(repo: Path) -> None:
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")
    git(repo, "config", "commit.gpgsign", "false")


def test_hooks_file_is_valid_and_covers_hip():
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"hiplint", "hiplint-fix", "hiplint-build"}
    import re
    for h in (hooks["hiplint"], hooks["hiplint-fix"]):
        assert h["language"] == "python" and h["entry"].startswith("hiplint scan")
        pattern = re.compile(h["files"])
        for name in ("k.cu", "k.cuh", "k.hip", "a.cpp", "a.h", "a.hpp", "a.c"):
            assert pattern.search(name), name
        for name in ("a.py", "a.cu.txt", "CMakeLists.txt"):
            assert not pattern.search(name), name
    assert "--fix" in hooks["hiplint-fix"]["entry"] and "--fix" not in hooks["hiplint"]["entry"]


def test_build_hook_covers_the_files_the_build_and_python_rules_read():
    """Every file name hiplint reads as cmake, make or python matches hiplint-build; C-family sources do not."""
    import re

    from hiplint.languages import EXTENSION_LANGUAGES, FILENAME_LANGUAGES, language_of

    hook = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}["hiplint-build"]
    assert hook["language"] == "python" and hook["entry"].startswith("hiplint scan") and "--fix" not in hook["entry"]
    pattern = re.compile(hook["files"])
    names = list(FILENAME_LANGUAGES) + [f"x{ext}" for ext in EXTENSION_LANGUAGES]
    names += [f"sub/dir/{n}" for n in names] + ["setup.py", "cmake/FindFoo.cmake"]
    for name in names:
        assert language_of(name) in ("cmake", "make", "python"), name
        assert pattern.search(name), name
    for name in ("k.cu", "a.cpp", "a.h", "CMakeLists.txt.in", "notMakefile", "a.pyc"):
        assert not pattern.search(name), name


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> tuple[Path, str]:
    """This checkout's package tree as a git repository with the hooks file committed."""
    repo = tmp_path_factory.mktemp("hiplint-hooks")
    for name in PACKAGE_FILES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, repo / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        elif src.exists():
            shutil.copy(src, repo / name)
    if not (repo / "README.md").exists():  # pyproject names it; a bare checkout may not have it yet
        (repo / "README.md").write_text("# hiplint\n")
    _init(repo)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "hiplint")
    return repo, git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def _project(tmp_path: Path, hook_repo, hook_id: str) -> Path:
    repo_path, sha = hook_repo
    _init(tmp_path)
    config = {"repos": [{"repo": str(repo_path), "rev": sha, "hooks": [{"id": hook_id}]}]}
    (tmp_path / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    return tmp_path


def _run(project: Path, home: Path, *files: str):
    git(project, "add", ".")
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--files", *files], cwd=project, env=env,
                          capture_output=True, text=True, timeout=900)


def test_hook_fails_on_bad_file_and_passes_on_good(tmp_path, hook_repo, pre_commit_home):
    project = _project(tmp_path, hook_repo, "hiplint")
    (project / "bad.cu").write_text(BAD)
    (project / "good.cu").write_text(GOOD)
    (project / "kernel.hip").write_text(BAD)
    (project / "notes.txt").write_text(BAD)  # not a source: the hook never sees it
    bad = _run(project, pre_commit_home, "bad.cu")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "bad.cu:2:16: WRP001" in bad.stdout
    good = _run(project, pre_commit_home, "good.cu", "notes.txt")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Passed" in good.stdout
    hip = _run(project, pre_commit_home, "kernel.hip")
    assert hip.returncode == 1 and "kernel.hip:2:16: WRP001" in hip.stdout


def test_fix_hook(tmp_path, hook_repo, pre_commit_home):
    project = _project(tmp_path, hook_repo, "hiplint-fix")
    (project / "good.cu").write_text(GOOD)
    (project / "bad.cu").write_text(BAD)
    assert _run(project, pre_commit_home, "good.cu").returncode == 0
    bad = _run(project, pre_commit_home, "bad.cu")
    # WRP001 has no automatic fix: what is left is reported and fails the hook.
    assert bad.returncode == 1 and "WRP001" in bad.stdout
    assert (project / "good.cu").read_text() == GOOD


def test_build_hook_runs_on_cmake_and_python(tmp_path, hook_repo, pre_commit_home):
    project = _project(tmp_path, hook_repo, "hiplint-build")
    (project / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.18)\nproject(x LANGUAGES CXX CUDA)\n"
                                            "set(CMAKE_CUDA_ARCHITECTURES 80)\n")
    (project / "bad.cu").write_text(BAD)  # not this hook's file
    (project / "tool.py").write_text("print('hello')\n")
    bad = _run(project, pre_commit_home, "CMakeLists.txt")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "CMakeLists.txt:2:" in bad.stdout and "BLD00" in bad.stdout
    good = _run(project, pre_commit_home, "tool.py", "bad.cu")
    assert good.returncode == 0, good.stdout + good.stderr
