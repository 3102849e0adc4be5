"""hiplint must not pass what it did not check, and its work must stay bounded on any input."""
import json

import pytest

from hiplint.config import KNOWN_TARGETS, ConfigError, _targets

# A shuffle down without a width reads across the halves of a 64-lane wave (WRP001 on wave64 targets).
BAD = b"""__global__ void k(float* out) {
    int lane = threadIdx.x & 31;
    out[lane] = __shfl_down_sync(0xffffffff, out[lane], 1);
}
"""


@pytest.fixture
def proj(tmp_path):
    (tmp_path / ".git").mkdir()  # the repository root: configuration is not looked for above it
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bad.cu").write_bytes(BAD)
    return tmp_path


# 1. A mistyped target is a configuration error that names the known ones.
def test_unknown_target_is_an_error(cli, proj):
    with pytest.raises(ConfigError, match="gfx942"):
        _targets(["gfx9420"])
    assert _targets(["gfx90a:xnack+", "gfx1100"]) == ("gfx90a", "gfx1100")
    assert set(KNOWN_TARGETS.values()) == {32, 64}
    proc = cli("scan", "src/bad.cu", "--target", "gfx9420", cwd=proj)
    assert proc.returncode == 2 and b"gfx9420" in proc.stderr and b"gfx942," in proc.stderr
    (proj / "pyproject.toml").write_text("[tool.hiplint]\ntargets = ['gfx9420']\n")
    proc = cli("scan", "src/bad.cu", cwd=proj)
    assert proc.returncode == 2 and b"gfx9420" in proc.stderr


# 2. `fix = true` in a repository's configuration must not turn the check-only hook or CI into a rewrite.
FIXABLE = b"""__global__ void k(float* out) {
    int lane = threadIdx.x % warpSize;
    out[lane] = __shfl_down_sync(0xffffffff, out[lane], 1);
}
"""


def _hook_args(hook_id):
    import shlex

    import yaml
    from conftest import ROOT

    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    args = shlex.split(hooks[hook_id]["entry"])
    assert args[0] == "hiplint"
    return args[1:]


def test_check_only_hook_never_fixes_even_when_configured_to(cli, proj):
    (proj / "pyproject.toml").write_text("[tool.hiplint]\nfix = true\nunsafe-fixes = true\n")
    (proj / "k.cu").write_bytes(FIXABLE)
    proc = cli(*_hook_args("hiplint"), "k.cu", cwd=proj)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (proj / "k.cu").read_bytes() == FIXABLE and b"WRP006" in proc.stdout
    # --no-unsafe-fixes overrides the configuration too: with --fix only the safe fix is applied.
    assert cli("scan", "--no-unsafe-fixes", "--no-fix", "k.cu", cwd=proj).returncode == 1
    assert (proj / "k.cu").read_bytes() == FIXABLE


def test_ci_examples_scan_with_no_fix():
    import re

    from conftest import ROOT

    for name in ("docs/examples/github-workflow.yml", "docs/examples/gitlab-ci.yml", "docs/ci.md"):
        text = re.sub(r"\n\s+(--)", r" \1", (ROOT / name).read_text())
        gates = [line for line in text.splitlines() if re.search(r"^\s*(-\s+|run:\s+)?hiplint scan \.", line)]
        assert gates and all("--no-fix" in line for line in gates), (name, gates)


# 3. Skipped files are counted, never "All checks passed"; --fail-on-skipped fails the run.
def test_skipped_file_is_not_a_pass(cli, proj):
    (proj / "blob.cu").write_bytes(b"int x;\0\0\0binary\n")
    proc = cli("scan", "blob.cu", cwd=proj)
    assert proc.returncode == 0, proc.stderr
    assert b"All checks passed" not in proc.stdout and b"1 file or path not checked" in proc.stdout
    assert b"blob.cu: skipped: binary file" in proc.stderr
    assert cli("scan", "blob.cu", "--fail-on-skipped", cwd=proj).returncode == 1
    (proj / "hiplint.toml").write_text("fail-on-skipped = true\n")
    assert cli("scan", "blob.cu", cwd=proj).returncode == 1
    # With findings too, the summary says what was not checked.
    proc = cli("scan", "blob.cu", "src/bad.cu", cwd=proj)
    assert proc.returncode == 1 and b"Skipped, not checked: 1 file or path" in proc.stdout


def test_gitignored_directory_named_explicitly_is_scanned(cli, proj):
    (proj / ".gitignore").write_text("build/\n")
    (proj / "build").mkdir()
    (proj / "build" / "gen.cu").write_bytes(BAD)
    proc = cli("scan", "build", "--output-format", "concise", cwd=proj)
    assert proc.returncode == 1 and b"gen.cu" in proc.stdout
    proc = cli("scan", ".", "--output-format", "json", cwd=proj)  # a walk from above still honours it
    assert "build" not in {f["path"].split("/")[0] for f in json.loads(proc.stdout)}
    # A named directory with nothing to check does not pass silently.
    (proj / "docs").mkdir()
    (proj / "docs" / "notes.txt").write_text("text\n")
    proc = cli("scan", "docs", cwd=proj)
    assert b"All checks passed" not in proc.stdout and b"docs: no files to check" in proc.stderr
    assert cli("scan", "docs", "--fail-on-skipped", cwd=proj).returncode == 1


# Lone-CR (old Mac) line endings: read as lines, fixed with the endings kept byte for byte.
def test_lone_cr_file_is_read_and_fixed_byte_exact(cli, proj):
    cr = FIXABLE.replace(b"\n", b"\r")
    (proj / "k.cu").write_bytes(cr)
    proc = cli("scan", "k.cu", "--output-format", "json", cwd=proj)
    found = json.loads(proc.stdout)
    assert [(f["code"], f["line"]) for f in found] == [("WRP006", 3)]
    assert cli("scan", "k.cu", "--fix", cwd=proj).returncode == 0
    fixed = (proj / "k.cu").read_bytes()
    assert fixed != cr and b"\n" not in fixed
    (proj / "lf.cu").write_bytes(FIXABLE)
    cli("scan", "lf.cu", "--fix", cwd=proj)
    assert fixed == (proj / "lf.cu").read_bytes().replace(b"\n", b"\r")


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be"])
def test_utf16_file_is_decoded_scanned_and_fixed_faithfully(cli, proj, codec):
    import codecs

    bom = codecs.BOM_UTF16_BE if codec == "utf-16-be" else b""
    text = FIXABLE.decode().replace("\n", "\r\n") + "// é ☃\r\n"
    (proj / "k.cu").write_bytes(bom + text.encode(codec))
    proc = cli("scan", "k.cu", "--output-format", "json", cwd=proj)
    assert [(f["code"], f["line"]) for f in json.loads(proc.stdout)] == [("WRP006", 3)], proc.stderr
    assert cli("scan", "k.cu", "--fix", cwd=proj).returncode == 0
    (proj / "u8.cu").write_bytes(text.encode())
    cli("scan", "u8.cu", "--fix", cwd=proj)
    assert (proj / "k.cu").read_bytes() == bom + (proj / "u8.cu").read_bytes().decode().encode(codec)


# 5. Reading is bounded in size and time: /dev/zero ends, a FIFO that never writes does not hang.
def test_reading_is_bounded(tmp_path):
    from hiplint.source import Skip, read_bounded

    (tmp_path / "big.cu").write_bytes(b"x" * 101)
    with pytest.raises(Skip, match="larger than"):
        read_bounded(str(tmp_path / "big.cu"), limit=100)
    assert read_bounded(str(tmp_path / "big.cu"), limit=101) == b"x" * 101
    with pytest.raises(Skip, match="larger than"):
        read_bounded("/dev/zero", limit=1000)


def test_dev_zero_and_silent_fifo_are_skipped_with_a_note(cli, proj):
    import os
    import subprocess
    import sys

    proc = cli("scan", "/dev/zero", cwd=proj)
    assert proc.returncode == 0 and b"/dev/zero: skipped: more than" in proc.stderr
    assert b"All checks passed" not in proc.stdout
    fifo = proj / "silent.cu"
    os.mkfifo(fifo)
    keep = os.open(fifo, os.O_RDWR)  # a writer that never writes
    try:
        proc = cli("scan", "silent.cu", "--fail-on-skipped", cwd=proj, env={"HIPLINT_STREAM_TIMEOUT": "1"})
    finally:
        os.close(keep)
    assert proc.returncode == 1 and b"silent.cu: skipped: no end of input" in proc.stderr
    # Process substitution, <(cat k.cu): a pipe that ends is read and scanned.
    r, w = os.pipe()
    os.write(w, BAD)
    os.close(w)
    proc = subprocess.run([sys.executable, "-m", "hiplint", "scan", f"/dev/fd/{r}", "--output-format", "concise"],
                          cwd=proj, pass_fds=(r,), capture_output=True, timeout=120)
    os.close(r)
    assert proc.returncode == 1 and b"WRP001" in proc.stdout, proc.stderr


# 4. Cache entries: validated fully, and signed with a per-user key kept outside the repository.
def _entries(root):
    return sorted(p for p in (root / ".hiplint_cache").rglob("*.json") if p.parent.name != "plans")


def _scan_json(cli, root, xdg, *args):
    proc = cli("scan", "src", "--output-format", "json", *args, cwd=root, env={"XDG_CACHE_HOME": str(xdg)})
    return proc.returncode, [(f["code"], f["line"]) for f in json.loads(proc.stdout or b"[]")]


def test_cache_entries_that_are_not_objects_are_misses(cli, proj, tmp_path):
    xdg = tmp_path / "xdg"
    cold = _scan_json(cli, proj, xdg)
    assert cold[0] == 1 and cold[1]
    for bad in ("null", "[]", '{"format": 2, "body": [], "mac": "x"}', '"text"'):
        for e in _entries(proj):
            e.write_text(bad)
        assert _scan_json(cli, proj, xdg) == cold, bad
    key = xdg / "hiplint" / "key"
    assert key.is_file() and key.stat().st_mode & 0o777 == 0o600


def test_cache_entry_edited_forged_or_from_another_machine_is_a_miss(cli, proj, tmp_path):
    from hiplint.cache import Cache

    mine, other = tmp_path / "mine", tmp_path / "other"
    cold = _scan_json(cli, proj, mine)
    assert cold[1]
    (entry,) = _entries(proj)
    d = json.loads(entry.read_text())
    d["body"]["findings"] = []  # hides the file's findings: an edit without the key is a miss
    entry.write_text(json.dumps(d))
    assert _scan_json(cli, proj, mine) == cold
    # The same edit signed with another machine's key (a committed or copied cache) is a miss too...
    other_key = b"k" * 64

    def forge():
        d = json.loads(entry.read_text())
        d["body"]["findings"] = []
        d["mac"] = Cache(str(entry.parent.parent), other_key)._mac(entry.stem, d["body"])
        entry.write_text(json.dumps(d))

    forge()
    assert _scan_json(cli, proj, mine) == cold
    # ...and is served only on the machine whose key signed it (proof the signature is what decides).
    forge()
    (other / "hiplint").mkdir(parents=True)
    (other / "hiplint" / "key").write_bytes(other_key)
    (other / "hiplint" / "key").chmod(0o600)
    assert _scan_json(cli, proj, other) == (0, [])


# Deeply nested braces: walking up the tree is quadratic in its depth; beyond a bound the file is skipped.
def test_deeply_nested_braces_are_skipped_with_a_note(cli, proj):
    from hiplint.cparse import MAX_BLOCK_NESTING

    n = MAX_BLOCK_NESTING + 10
    body = b"    int lane = threadIdx.x & 31;\n    o[lane] = __shfl_down_sync(0xffffffff, o[lane], 1);\n"
    (proj / "deep.cu").write_bytes(b"__global__ void k(float* o) {\n" + b"{" * n + body + b"}" * n + b"\n}\n")
    proc = cli("scan", "deep.cu", "--fix", "--fail-on-skipped", cwd=proj)
    assert proc.returncode == 1 and b"deep.cu: skipped: blocks or braces nested more than" in proc.stderr
    # Braces in strings and comments nest nothing: such a file is checked.
    (proj / "str.cu").write_bytes(b'const char* s = "' + b"{" * n + b'";\n' + FIXABLE)
    proc = cli("scan", "str.cu", "--output-format", "concise", cwd=proj)
    assert proc.returncode == 1 and b"WRP006" in proc.stdout and b"skipped" not in proc.stderr


def test_walking_up_from_deep_nodes_finds_what_parent_walks_find():
    from hiplint.context import FileContext
    from hiplint.cparse import new_parser, path_to
    from hiplint.config import Settings
    from hiplint.source import Source

    data = b"int f() {" + b"for (;;) {" * 5 + b"if (1) { g(); }" + b"}" * 5 + b"}\nint z;\n"
    root = new_parser().parse(data).root_node
    call = root.descendant_for_byte_range(data.index(b"g()"), data.index(b"g()") + 3)
    assert path_to(root, call)[-1] == call and path_to(root, call)[0] == root
    ctx = FileContext("x.cu", Source("x.cu", data), Settings(), "cuda", None)

    class U:  # the unit whose tree holds the node
        pass
    ctx.unit = U()
    ctx.unit.root = root

    def by_parent(node, types):
        n = node.parent
        while n is not None and n.type not in types:
            n = n.parent
        return n

    for types in ({"for_statement"}, {"function_definition"}, {"if_statement"}, {"while_statement"}):
        assert ctx.enclosing(call, types) == by_parent(call, types)


# 6. Workers end with their parent; a configured `jobs` is capped at the cores available.
def test_configured_jobs_are_capped_at_the_cores(cli, proj):
    from hiplint.config import available_cores

    (proj / "hiplint.toml").write_text("jobs = 400\n")
    rows = {k.strip(): v for k, v in (l.split(" = ", 1) for l in cli("scan", "--show-settings", cwd=proj).stdout.decode().splitlines())}
    assert rows["jobs"].strip() == json.dumps(available_cores())
    rows = {k.strip(): v for k, v in (l.split(" = ", 1) for l in cli("scan", "--show-settings", "--jobs", "400", cwd=proj).stdout.decode().splitlines())}
    assert rows["jobs"].strip() == "400"  # given on the command line: as given


def _children(pid: int) -> set[int]:
    import os

    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                out.add(int(entry))
    return out


def _alive(pids) -> set[int]:
    alive = set()
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.add(p)
        except OSError:
            pass
    return alive


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_workers_end_with_their_parent(proj, sig):
    import os
    import signal
    import subprocess
    import sys
    import time

    from hiplint.runner import PARALLEL_MIN_FILES

    big = FIXABLE * 400
    for i in range(PARALLEL_MIN_FILES + 4):
        (proj / "src" / f"k{i}.cu").write_bytes(big)
    proc = subprocess.Popen([sys.executable, "-m", "hiplint", "scan", "src", "-j", "2", "--no-cache", "-q"],
                            cwd=proj, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
            workers |= _children(proc.pid)
            time.sleep(0.05)
        assert workers, "the scan never started its workers"
        time.sleep(0.5)  # the workers are linting (their initializer ran)
        proc.send_signal(getattr(signal, sig))
        proc.wait(timeout=120)
        deadline = time.monotonic() + 60
        while _alive(workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(workers)
    finally:
        for p in _alive(workers):
            os.kill(p, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()


# 7. Configuration is looked for up to the repository root, not above it.
def test_configuration_above_the_repository_root_is_not_read(cli, tmp_path):
    outer = tmp_path / "home"
    repo = outer / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / "src" / "bad.cu").write_bytes(BAD)
    (outer / "pyproject.toml").write_text("[tool.hiplint]\nignore = ['WRP001', 'WRP006']\n")
    proc = cli("scan", "src", "--output-format", "json", cwd=repo)
    assert {f["code"] for f in json.loads(proc.stdout)} >= {"WRP001", "WRP006"}
    assert b"none (defaults)" in cli("scan", "src", "--show-settings", cwd=repo).stdout
    # Named with --config it applies; and a repository's own configuration is found from below.
    proc = cli("scan", "src", "--config", outer / "pyproject.toml", "--output-format", "json", cwd=repo)
    assert json.loads(proc.stdout) == []
    (repo / "hiplint.toml").write_text("ignore = ['WRP006']\n")
    proc = cli("scan", "bad.cu", "--output-format", "json", cwd=repo / "src")
    assert {f["code"] for f in json.loads(proc.stdout)} == {"WRP001"}
    # Outside any repository, the home directory's file is not read from below it.
    (repo / ".git").rmdir()
    (repo / "hiplint.toml").unlink()
    proc = cli("scan", "src", "--output-format", "json", cwd=repo, env={"HOME": str(outer)})
    assert {f["code"] for f in json.loads(proc.stdout)} >= {"WRP001", "WRP006"}


# The fixer's search for fixes that break the parse: bounded re-parses, not one per fix.
def test_fixes_that_break_the_parse_are_found_in_bounded_parses(monkeypatch):
    from hiplint import fix as fixmod
    from hiplint.model import Applicability, Edit, Finding, Fix, Severity

    data = b"int a;\n" * 400
    breaking = {7, 123}

    def finding(i):
        at = i * 7 + 6  # before each line's newline: a comment (fine) or an unclosed `(` (a parse error)
        content = " (" if i in breaking else " /* ok */"
        return Finding(code="T001", name="t", message="m", severity=Severity.WARNING, path="x.cu", line=i + 1,
                       column=7, end_line=i + 1, end_column=7, start_byte=at, end_byte=at,
                       fix=Fix((Edit(at, at, content),), Applicability.SAFE, f"fix {i}"), source_line=f"{i}")

    parses = []
    real = fixmod._errors
    monkeypatch.setattr(fixmod, "_errors", lambda d, lang: parses.append(1) or real(d, lang))
    first = [True]

    def lint(d):
        if first[0]:
            first[0] = False
            return [finding(i) for i in range(400)]
        return []

    outcome = fixmod.fix_bytes(lint, data, "cuda", Applicability.SAFE)
    assert len(outcome.applied) == 398 and len(outcome.dropped) == 2
    assert all("parse error" in d for d in outcome.dropped)
    assert len(parses) <= 64 + 2  # bisection; one parse per fix before: 400
