"""Third-party rule packs load through the `hiplint.rules` entry-point group, like the built-in pack."""
import json
import textwrap

import pytest

PACK = '''
from hiplint import CudaRule, Severity


class NoPrintf(CudaRule):
    """Device printf.

    ## What it does
    Reports printf calls.

    ## Why it breaks on AMD
    A demo rule for the plugin test.

    ## Example
    ```cuda
    __global__ void k() { printf("x"); }
    ```

    ## Use instead
    ```cuda
    __global__ void k() { }
    ```

    ## References
    - https://example.org/demo
    """
    code = "DEMO001"
    name = "demo-no-printf"
    summary = "printf in device code"
    severity = Severity.INFO
    query = '((call_expression function: (identifier) @f) @report (#eq? @f "printf"))'
'''


def install_pack(root, module_body, name="hlpack_demo", ep_value="hlpack_demo"):
    """Install a distribution the way pip leaves it: a package plus a .dist-info with entry_points.txt."""
    (root / name).mkdir()
    (root / name / "__init__.py").write_text(module_body)
    info = root / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[hiplint.rules]\ndemo = {ep_value}\n")
    (info / "RECORD").write_text("")
    return {"PYTHONPATH": str(root)}


@pytest.fixture
def src(tmp_path):
    d = tmp_path / "src"
    d.mkdir()
    (d / "k.cu").write_text('__global__ void k() { printf("hi"); }\n')
    return d


def test_pack_rules_load_but_stay_unselected(cli, tmp_path, src):
    env = install_pack(tmp_path, PACK)
    rules = cli("rules", env=env).stdout.decode()
    assert "DEMO001" in rules and "[demo]" in rules
    default = cli("scan", str(src), "--output-format", "json", env=env)
    assert json.loads(default.stdout) == []
    chosen = cli("scan", str(src), "--output-format", "json", "--extend-select", "DEMO", env=env)
    assert [f["code"] for f in json.loads(chosen.stdout)] == ["DEMO001"]
    assert b"# demo-no-printf (DEMO001)" in cli("rule", "DEMO001", env=env).stdout


def test_broken_pack_is_named_and_exits_2(cli, tmp_path, src):
    env = install_pack(tmp_path, "raise ImportError('boom')\n")
    proc = cli("scan", str(src), env=env)
    assert proc.returncode == 2
    assert b"rule pack 'demo'" in proc.stderr and b"boom" in proc.stderr
    assert b"Traceback" not in proc.stderr


def test_pack_cannot_take_a_builtin_code(cli, tmp_path, src):
    env = install_pack(tmp_path, PACK.replace('"DEMO001"', '"WRP001"'))
    proc = cli("scan", str(src), env=env)
    assert proc.returncode == 2 and b"WRP001" in proc.stderr


def test_a_rule_that_crashes_is_an_internal_error_not_a_pass(cli, tmp_path, src):
    # The rule's failure is one line on stderr, the scan goes on, the run exits 2, and the summary does
    # not claim that all checks passed.
    crashing = PACK.replace('    query = ', '    def check(self, ctx, captures):\n        raise KeyError("boom")\n\n    query = ')
    env = install_pack(tmp_path, crashing)
    proc = cli("scan", str(src), "--isolated", "--no-cache", "--extend-select", "DEMO", env=env)
    assert proc.returncode == 2
    assert b"internal error in rule DEMO001: KeyError" in proc.stderr and b"Traceback" not in proc.stderr
    assert b"All checks passed" not in proc.stdout and b"not every check ran" in proc.stdout


def test_quick_look_for_packs_reads_entry_points_like_importlib_metadata():
    from hiplint.registry import _declares_a_pack

    assert not _declares_a_pack("[console_scripts]\nhiplint = hiplint.cli:main\n\n[hiplint.rules]\nbuiltin = hiplint.rules\n")
    assert _declares_a_pack("[hiplint.rules]\nbuiltin = hiplint.rules\ndemo = hlpack_demo\n")
    assert not _declares_a_pack("[other.group]\ndemo = hlpack_demo\n")


def test_no_pack_installed_means_no_importlib_metadata(cli, tmp_path, src):
    # The scan of one file does not pay for importing importlib.metadata when no pack is installed;
    # with one installed (test_pack_rules_load_but_stay_unselected) the pack loads.
    import subprocess
    import sys

    code = ("import sys, hiplint.registry as r; r.load_registry(); "
            "print('importlib.metadata' in sys.modules, r._may_have_packs())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300).stdout.split()
    assert out == ["False", "False"] or out[1] == "True", out  # True only where a pack is installed here
    env = dict(install_pack(tmp_path, PACK))
    import os
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([env["PYTHONPATH"], os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env).stdout.split()
    assert out == ["True", "True"], out
