"""The command line as users and CI gates see it: exit codes, formats, configuration, selection."""
import json
import textwrap

import pytest

# A shuffle down without a width reads across the halves of a 64-lane wave: the `& 31` lane is wrong there.
BAD = b"""__global__ void k(float* out) {
    int lane = threadIdx.x & 31;
    out[lane] = __shfl_down_sync(0xffffffff, out[lane], 1);
}
"""
GOOD = b"""__global__ void k(float* out) {
    int lane = threadIdx.x % warpSize;
    out[lane] = __shfl_down_sync(__activemask(), out[lane], 1);
}
"""


@pytest.fixture
def proj(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bad.cu").write_bytes(BAD)
    (tmp_path / "src" / "good.cu").write_bytes(GOOD)
    return tmp_path


def test_exit_codes(cli, proj):
    assert cli("scan", "src/good.cu", cwd=proj).returncode == 0
    assert cli("scan", "src", cwd=proj).returncode == 1
    assert cli("scan", "src", "--exit-zero", cwd=proj).returncode == 0
    bad_flag = cli("scan", "--no-such-flag", cwd=proj)
    assert bad_flag.returncode == 2
    unknown = cli("scan", "src", "--select", "XYZ999", cwd=proj)
    assert unknown.returncode == 2 and b"XYZ999" in unknown.stderr


def test_json_contract(cli, proj):
    proc = cli("scan", "src", "--output-format", "json", cwd=proj)
    data = json.loads(proc.stdout)
    assert isinstance(data, list) and len(data) == 2
    required = {"code", "name", "severity", "message", "path", "line", "column", "end_line", "end_column", "fix"}
    for f in data:
        assert required <= set(f)
        assert f["severity"] in ("error", "warning", "info")
        assert f["path"] == "src/bad.cu"
    by_code = {f["code"]: f for f in data}
    assert by_code["WRP001"]["line"] == 2 and by_code["WRP001"]["column"] == 16
    assert by_code["WRP001"]["end_column"] == 32 and by_code["WRP001"]["fix"] is None
    fix = by_code["WRP006"]["fix"]
    assert fix["applicability"] == "safe" and fix["edits"]
    assert {"content", "location", "end_location"} <= set(fix["edits"][0])


def test_concise_and_full(cli, proj):
    out = cli("scan", "src/bad.cu", "--output-format", "concise", cwd=proj).stdout.decode()
    assert "src/bad.cu:2:16: WRP001 " in out
    assert "src/bad.cu:3:34: WRP006 [*] " in out
    full = cli("scan", "src/bad.cu", cwd=proj).stdout.decode()
    assert "2 |     int lane = threadIdx.x & 31;" in full
    assert "^^^^^^^^^^^^^^^^" in full
    assert "Safe fix:" in full


def test_selection(cli, proj):
    def codes(*args):
        proc = cli("scan", "src", "--output-format", "json", *args, cwd=proj)
        return sorted({f["code"] for f in json.loads(proc.stdout)})
    assert codes() == ["WRP001", "WRP006"]
    assert codes("--select", "WRP006") == ["WRP006"]
    assert codes("--ignore", "WRP") == []
    assert codes("--ignore", "WRP", "--extend-select", "WRP001") == ["WRP001"]  # more specific wins
    assert codes("--ignore", "hardcoded-warp-size") == ["WRP006"]
    assert codes("--target", "gfx1100") == ["WRP006"]  # wave32 only: lane arithmetic in 32s is right


def test_config_file_upward_and_overrides(cli, proj):
    (proj / "pyproject.toml").write_text(textwrap.dedent("""
        [project]
        name = "x"
        [tool.hiplint]
        ignore = ["WRP006"]
        severity = { WRP001 = "error" }
    """))
    proc = cli("scan", "bad.cu", "--output-format", "json", cwd=proj / "src")
    data = json.loads(proc.stdout)
    assert [(f["code"], f["severity"]) for f in data] == [("WRP001", "error")]
    proc = cli("scan", "bad.cu", "--output-format", "json", "--select", "WRP006", cwd=proj / "src")
    assert [f["code"] for f in json.loads(proc.stdout)] == []  # ignore from the file still applies
    proc = cli("scan", "bad.cu", "--output-format", "json", "--isolated", cwd=proj / "src")
    assert len(json.loads(proc.stdout)) == 2


def test_hiplint_toml_wins_and_unknown_key(cli, proj):
    (proj / "pyproject.toml").write_text("[tool.hiplint]\nignore = ['WRP006']\n")
    (proj / "src" / ".hiplint.toml").write_text("select = ['WRP006']\n")
    proc = cli("scan", "src/bad.cu", "--output-format", "json", cwd=proj)
    assert [f["code"] for f in json.loads(proc.stdout)] == ["WRP006"]
    (proj / "src" / ".hiplint.toml").write_text("selct = ['WRP006']\n")
    proc = cli("scan", "src/bad.cu", cwd=proj)
    assert proc.returncode == 2
    assert b"unknown key `selct`" in proc.stderr
    (proj / "src" / ".hiplint.toml").write_text("targets = ['sm_90']\n")
    assert cli("scan", "src/bad.cu", cwd=proj).returncode == 2


def test_per_file_ignores_and_excludes(cli, proj):
    (proj / "hiplint.toml").write_text('per-file-ignores = { "src/bad.cu" = ["WRP001"] }\nextend-exclude = ["vendor/"]\n')
    (proj / "vendor").mkdir()
    (proj / "vendor" / "v.cu").write_bytes(BAD)
    proc = cli("scan", ".", "--output-format", "json", cwd=proj)
    data = json.loads(proc.stdout)
    assert [(f["path"], f["code"]) for f in data] == [("src/bad.cu", "WRP006")]
    # A file named on the command line is scanned even when excluded.
    proc = cli("scan", "vendor/v.cu", "--output-format", "json", cwd=proj)
    assert len(json.loads(proc.stdout)) == 2
    proc = cli("scan", "vendor/v.cu", "--force-exclude", "--output-format", "json", cwd=proj)
    assert json.loads(proc.stdout) == []


def test_gitignore_respected(cli, proj):
    (proj / ".git").mkdir()
    (proj / ".gitignore").write_text("generated/\n")
    (proj / "generated").mkdir()
    (proj / "generated" / "g.cu").write_bytes(BAD)
    data = json.loads(cli("scan", ".", "--output-format", "json", cwd=proj).stdout)
    assert {f["path"] for f in data} == {"src/bad.cu"}
    data = json.loads(cli("scan", ".", "--no-respect-gitignore", "--output-format", "json", cwd=proj).stdout)
    assert {f["path"] for f in data} == {"src/bad.cu", "generated/g.cu"}


def test_stdin(cli):
    proc = cli("scan", "-", "--stdin-filename", "k.cu", "--output-format", "concise", input=BAD)
    assert proc.returncode == 1 and b"k.cu:3:34: WRP006" in proc.stdout
    fixed = cli("fix", "-", "--stdin-filename", "k.cu", input=BAD)
    assert b"HIPLINT_FULL_WARP_MASK" in fixed.stdout and fixed.stdout.startswith(b"#ifndef HIPLINT_FULL_WARP_MASK")
    assert b"WRP001" in fixed.stderr  # what remains is reported on stderr


def test_rules_and_version(cli):
    out = cli("rules").stdout.decode()
    assert "WRP006" in out and "sync-mask-not-64bit" in out
    data = json.loads(cli("rules", "--output-format", "json").stdout)
    assert any(r["code"] == "WRP001" and r["default"] for r in data)
    assert cli("version").stdout.startswith(b"hiplint ")
    assert cli("--version").returncode == 0


def test_no_progress_when_not_a_terminal(cli, proj):
    proc = cli("scan", "src", "--output-format", "json", cwd=proj)
    assert proc.stderr == b""


def test_progress_on_a_terminal(tmp_path):
    """With stderr on a terminal, a scan shows a progress counter (and clears it)."""
    import os
    import pty
    import subprocess
    import sys

    for i in range(60):
        (tmp_path / f"k{i}.cu").write_bytes(GOOD)
    master, slave = pty.openpty()
    env = dict(os.environ, HIPLINT_PROGRESS_DELAY="0")
    proc = subprocess.run([sys.executable, "-m", "hiplint", "scan", ".", "--jobs", "1"], cwd=tmp_path,
                          stdout=subprocess.PIPE, stderr=slave, env=env, timeout=300)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    err = b"".join(chunks).decode()
    assert proc.returncode == 0
    assert "hiplint: " in err and "/60 files" in err


def test_exclude_patterns_as_one_regex_agree_with_pathspec():
    # discovery folds a negation-free exclude list into one regex; it must decide as pathspec does.
    import pathspec

    from hiplint.config import DEFAULT_EXCLUDE
    from hiplint.discovery import _one_regex

    patterns = list(DEFAULT_EXCLUDE) + ["build*/", "*.gen.cu", "third_party/**/kernels", "/top_only.cu", "# note", ""]
    spec = pathspec.GitIgnoreSpec.from_lines(patterns)
    regex = _one_regex(spec)
    assert regex is not None
    probes = ["a.cu", ".git/", "src/.git/", "node_modules/x.cu", "build/", "build-rocm/", "src/build/",
              "buildfile.cu", "x.gen.cu", "src/x.gen.cuh", "third_party/a/b/kernels/", "third_party/kernels",
              "top_only.cu", "src/top_only.cu", "_deps/", "deps/", "venv/", "src/venv/", "my.venv/"]
    assert [regex.search(p) is not None for p in probes] == [spec.match_file(p) for p in probes]
    assert _one_regex(pathspec.GitIgnoreSpec.from_lines(["build/", "!build/keep.cu"])) is None  # negation


def test_show_files_lists_what_a_scan_reads(cli, proj):
    (proj / "hiplint.toml").write_text('extend-exclude = ["vendor/"]\n')
    (proj / "vendor").mkdir()
    (proj / "vendor" / "v.cu").write_bytes(BAD)
    (proj / "src" / "notes.txt").write_text("not a source")
    proc = cli("scan", "--show-files", cwd=proj)
    assert proc.returncode == 0
    assert sorted(proc.stdout.decode().split()) == ["src/bad.cu", "src/good.cu"]


def test_show_settings_prints_the_resolved_configuration(cli, proj):
    (proj / "hiplint.toml").write_text('targets = ["gfx942"]\nignore = ["WRP006"]\nrocm-version = "6.2"\n'
                                     'per-file-ignores = { "src/bad.cu" = ["WRP001"] }\nseverity = { WRP004 = "info" }\n')
    proc = cli("scan", "src", "--show-settings", "--extend-select", "ALL", cwd=proj)
    assert proc.returncode == 0
    rows = dict(line.split(" = ", 1) for line in proc.stdout.decode().splitlines())
    rows = {k.strip(): v for k, v in rows.items()}
    assert rows["configuration"].endswith("hiplint.toml")
    assert rows["targets"] == '["gfx942"]' and rows["wave-sizes"] == "[64]"
    assert rows["rocm-version"] == '"6.2"' and rows["ignore"] == '["WRP006"]'
    assert json.loads(rows["per-file-ignores"]) == {"src/bad.cu": ["WRP001"]}
    assert json.loads(rows["severity"]) == {"WRP004": "info"}
    enabled = next(v for k, v in rows.items() if k.startswith("rules enabled")).split()
    assert "WRP001" in enabled and "WRP006" not in enabled


def test_output_format_help_names_every_format(cli):
    from hiplint import emit
    from hiplint.cli import OUTPUT_FORMATS

    assert sorted(OUTPUT_FORMATS) == sorted(emit.EMITTERS)
    help_text = " ".join(cli("scan", "--help").stdout.decode().split())
    assert all(f in help_text for f in OUTPUT_FORMATS)


def test_clean_removes_only_the_cache_hiplint_made(cli, proj):
    assert cli("scan", "src", cwd=proj).returncode == 1
    assert (proj / ".hiplint_cache" / "CACHEDIR.TAG").is_file()
    proc = cli("clean", cwd=proj)
    assert proc.returncode == 0 and b"Removed .hiplint_cache" in proc.stdout
    assert not (proj / ".hiplint_cache").exists() and (proj / "src" / "bad.cu").exists()
    assert b"No cache to remove" in cli("clean", cwd=proj).stdout
    # A path that does not exist is a warning: it does not stand for the current directory's cache.
    assert cli("scan", "src", cwd=proj).returncode == 1
    proc = cli("clean", "missing/dir", cwd=proj)
    assert b"no such file or directory" in proc.stderr and (proj / ".hiplint_cache").is_dir()
    assert b"Removed" in cli("clean", cwd=proj).stdout
    # A cache-dir pointing at a directory hiplint did not make is left alone.
    (proj / "hiplint.toml").write_text('cache-dir = "src"\n')
    assert b"No cache to remove" in cli("clean", cwd=proj).stdout
    assert (proj / "src" / "bad.cu").exists()


def test_vendored_hip_headers_are_not_walked(cli, tmp_path):
    """A copy of ROCm's HIP headers (third_party/hip/include/hip/amd_detail) implements HIP: a
    directory walk skips it; named on the command line it is still scanned."""
    detail = tmp_path / "third_party" / "hip" / "include" / "hip" / "amd_detail"
    detail.mkdir(parents=True)
    (detail / "texture_fetch.h").write_bytes(BAD)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_bytes(BAD)
    proc = cli("scan", "--output-format", "json", ".", cwd=tmp_path)
    assert {f["path"] for f in json.loads(proc.stdout)} == {"src/k.cu"}
    named = cli("scan", "--output-format", "json", str(detail / "texture_fetch.h"), cwd=tmp_path)
    assert json.loads(named.stdout)


def test_archived_directory_is_not_walked_unless_a_build_names_it(cli, tmp_path):
    """`archive/` kept for reference (an earlier version with its own setup.py) is dead code: a walk
    skips it with a note; a build file beside it that names it, or naming it on the command line,
    brings it back."""
    old = tmp_path / "archive" / "csrc"
    old.mkdir(parents=True)
    (tmp_path / "archive" / "setup.py").write_text("from setuptools import setup\nsetup(name='old')\n")
    (old / "k.cu").write_bytes(BAD)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_bytes(BAD)
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='new', packages=['src'])\n")
    proc = cli("scan", "--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    assert {f["path"] for f in json.loads(proc.stdout)} == {"src/k.cu"}
    assert b"archive: not checked: a directory kept for reference" in proc.stderr
    named = cli("scan", "--no-cache", "--output-format", "json", "archive", cwd=tmp_path)
    assert {f["path"] for f in json.loads(named.stdout)} == {"archive/csrc/k.cu"}
    (tmp_path / "CMakeLists.txt").write_text("add_subdirectory(archive)\n")
    built = cli("scan", "--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    assert {f["path"] for f in json.loads(built.stdout)} == {"src/k.cu", "archive/csrc/k.cu"}


@pytest.mark.parametrize("content,message", [
    (b"[tool]\nhiplint = 3\n", b"`tool.hiplint` must be a table"),
    (b"\xff\xfe[tool.hiplint]\n", b"invalid TOML: not UTF-8 text"),
    (b"[tool.hiplint]\ncache-dir = 5\n", b"`cache-dir` must be a string"),
    (b"[tool.hiplint]\nseverity = { WRP999 = \"error\" }\n", b"severity: 'WRP999' matches no rule"),
    (b"[tool.hiplint.per-file-ignores]\n\"*.cu\" = [\"WRP0066\"]\n", b"per-file-ignores['*.cu']: 'WRP0066' matches no rule"),
])
def test_configuration_errors_name_the_problem(cli, tmp_path, content, message):
    # Fuzzing: these were internal errors (a traceback's last line) or silently ignored.
    (tmp_path / "pyproject.toml").write_bytes(content)
    (tmp_path / "k.cu").write_text("int x;\n")
    proc = cli("scan", "k.cu", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 2 and message in proc.stderr and b"internal error" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("args", [["--report", "sarif=src/bad.cu"], ["-o", "src/bad.cu"], ["-o", "./src/../src/bad.cu"],
                                  ["--report", "json=src/new.cuh"], ["-o", "src"]])
def test_a_report_never_overwrites_what_it_scans(cli, proj, args):
    r = cli("scan", "src", "-q", "--isolated", *args, cwd=proj)
    assert r.returncode == 2, r.stderr
    assert b"is a file this scan reads; refusing to overwrite it" in r.stderr
    assert (proj / "src" / "bad.cu").read_bytes() == BAD and not (proj / "src" / "new.cuh").exists()
    # A name the scan would not read is fine, inside the tree too; so is a named file's neighbour.
    assert cli("scan", "src", "--isolated", "-o", "src/hiplint.sarif", "--output-format", "sarif", cwd=proj).returncode == 1
    assert cli("scan", "src/good.cu", "--isolated", "-o", "src/bad.txt", cwd=proj).returncode == 0


def test_a_report_that_cannot_be_written_is_an_error(cli, proj):
    r = cli("scan", "src", "-q", "--isolated", "-o", "/dev/full", cwd=proj)
    assert r.returncode == 2 and b"hiplint: error: --output-file: /dev/full: not written" in r.stderr
    r = cli("scan", "src", "-q", "--isolated", "--report", "json=/dev/full", cwd=proj)
    assert r.returncode == 2 and b"hiplint: error: --report json: /dev/full: not written" in r.stderr


def test_a_report_is_replaced_atomically_or_left_alone(proj, monkeypatch):
    import os
    from click.testing import CliRunner
    from hiplint.cli import cli as main

    old = proj / "old.sarif"
    old.write_text("the previous report\n")
    monkeypatch.chdir(proj)
    r = CliRunner().invoke(main, ["scan", "src", "--isolated", "--no-cache", "-o", "new.json", "--output-format", "json"])
    assert r.exit_code == 1 and json.loads((proj / "new.json").read_text())
    assert (proj / "new.json").stat().st_mode & 0o777 == 0o666 & ~_umask()

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", full_disk)
    r = CliRunner().invoke(main, ["scan", "src", "-q", "--isolated", "--no-cache", "--report", "sarif=old.sarif"])
    assert r.exit_code == 2
    assert "hiplint: error: --report sarif: old.sarif: not written: No space left on device" in r.stderr
    assert old.read_text() == "the previous report\n"
    assert sorted(p.name for p in proj.iterdir()) == ["new.json", "old.sarif", "src"]  # no temporary left


def _umask() -> int:
    import os
    mask = os.umask(0o22)
    os.umask(mask)
    return mask
