"""The scan cache: served only for unchanged files under the same settings; never for --fix/--diff."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import run_cli

KERNEL = "__global__ void k(int* o) {\n    o[threadIdx.x & 31] = __shfl_down_sync(__activemask(), 1, 1);\n}\n"


def entries(root: Path) -> list[Path]:
    """The per-file entries (not the saved query plans)."""
    return sorted(p for p in (root / ".hiplint_cache").rglob("*.json") if p.parent.name != "plans")


def scan_json(root: Path, *args):
    proc = run_cli("scan", "src", "--isolated", "--output-format", "json", *args, cwd=root)
    return proc, json.loads(proc.stdout)


def resign(entry: Path, d: dict) -> None:
    """Write `d` back signed with this user's key, as hiplint would have: what only the key's owner can do."""
    from hiplint.cache import Cache, user_key

    d["mac"] = Cache(str(entry.parent.parent), user_key())._mac(entry.stem, d["body"])
    entry.write_text(json.dumps(d))


def tamper(root: Path, message: str) -> None:
    for e in entries(root):
        d = json.loads(e.read_text())
        for f in d["body"]["findings"]:
            f["message"] = message
        resign(e, d)


def make_tree(root: Path, n: int = 1) -> None:
    (root / "src").mkdir()
    for i in range(n):
        (root / "src" / f"k{i}.cu").write_text(KERNEL.replace("void k(", f"void k{i}("))


def test_unchanged_file_is_served_from_cache(tmp_path):
    make_tree(tmp_path)
    _, cold = scan_json(tmp_path)
    assert len(entries(tmp_path)) == 1
    assert (tmp_path / ".hiplint_cache" / ".gitignore").read_text().strip().endswith("*")
    _, warm = scan_json(tmp_path)
    assert warm == cold
    # Proof the second scan did not lint: an entry edited behind hiplint's back is what it reports.
    tamper(tmp_path, "from the cache")
    _, served = scan_json(tmp_path)
    assert [f["message"] for f in served] == ["from the cache"]
    assert [f["fingerprint"] for f in served] == [f["fingerprint"] for f in cold]


def test_changed_content_settings_or_no_cache_lint_afresh(tmp_path):
    make_tree(tmp_path)
    scan_json(tmp_path)
    tamper(tmp_path, "stale")
    _, fresh = scan_json(tmp_path, "--no-cache")
    assert "stale" not in fresh[0]["message"]
    # Other settings, other key: wave32-only targets disable the wave64 rule.
    _, wave32 = scan_json(tmp_path, "--target", "gfx1100")
    assert wave32 == []
    # New content: a new entry, linted now.
    (tmp_path / "src" / "k0.cu").write_text(KERNEL + "__global__ void z(int* o) { o[threadIdx.x >> 5] = __shfl_down_sync(__activemask(), 0, 1); }\n")
    _, changed = scan_json(tmp_path)
    assert len(changed) == 2 and all("stale" not in f["message"] for f in changed)


def test_fix_and_diff_never_use_the_cache(tmp_path):
    make_tree(tmp_path)
    (tmp_path / "src" / "k0.cu").write_text(KERNEL + "int y = 2; // hiplint: ignore[WRP001]\n")
    scan_json(tmp_path, "--extend-select", "HL100")
    tamper(tmp_path, "stale")
    proc, fixed = scan_json(tmp_path, "--extend-select", "HL100", "--fix")
    assert fixed and all(f["message"] != "stale" for f in fixed)
    proc = run_cli("scan", "src", "--isolated", "--diff", cwd=tmp_path)
    assert b"stale" not in proc.stdout + proc.stderr


def test_corrupt_entry_is_a_miss(tmp_path):
    make_tree(tmp_path)
    _, cold = scan_json(tmp_path)
    for e in entries(tmp_path):
        e.write_text("{not json")
    proc, again = scan_json(tmp_path)
    assert proc.returncode == 1 and again == cold


def test_entry_with_a_field_of_the_wrong_type_is_a_miss(tmp_path):
    # Valid JSON is not a valid entry: a line that is a string crashed the report stage (fuzzing).
    make_tree(tmp_path)
    _, cold = scan_json(tmp_path)
    for e in entries(tmp_path):
        d = json.loads(e.read_text())
        for f in d["body"]["findings"]:
            f["line"], f["code"] = "x", None
        resign(e, d)  # signed, yet not what hiplint writes
    proc, again = scan_json(tmp_path)
    assert proc.returncode == 1 and again == cold


def test_concurrent_runs_share_the_cache_safely(tmp_path):
    # 60 files: above the process-pool threshold, so workers write entries too.
    make_tree(tmp_path, 60)
    cmd = [sys.executable, "-m", "hiplint", "scan", "src", "--isolated", "--output-format", "json", "-j", "2"]
    procs = [subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    results = [json.loads(o[0]) for o in outs]
    assert all(len(r) == 60 for r in results) and results[0] == results[1] == results[2], [o[1] for o in outs]
    assert len(entries(tmp_path)) == 60
    assert not list((tmp_path / ".hiplint_cache").rglob(".tmp-*"))
    _, warm = scan_json(tmp_path, "-j", "2")
    assert warm == results[0]


def test_cache_dir_setting_and_config_off(tmp_path):
    make_tree(tmp_path)
    (tmp_path / "hiplint.toml").write_text('cache-dir = "build/lint-cache"\n')
    run_cli("scan", "src", cwd=tmp_path)
    assert list((tmp_path / "build" / "lint-cache").rglob("*.json")) and not (tmp_path / ".hiplint_cache").exists()
    (tmp_path / "hiplint.toml").write_text('cache = false\ncache-dir = "other"\n')
    run_cli("scan", "src", cwd=tmp_path)
    assert not (tmp_path / "other").exists()


def test_related_locations_survive_the_cache_and_pickling():
    import pickle

    import pytest

    from hiplint.cache import finding_from_json, finding_to_json
    from hiplint.model import Finding, RelatedLocation, Severity

    f = Finding(code="WRP006", name="n", message="m", severity=Severity.ERROR, path="a.cu", line=2, column=3,
                end_line=2, end_column=9, fingerprint="0123456789abcdef", source_line="x",
                related=(RelatedLocation("a.cu", 7, 5, 7, 14, "passed to __shfl_sync here"),))
    back = finding_from_json(json.loads(json.dumps(finding_to_json(f))))
    assert back == f and back.related == f.related
    assert pickle.loads(pickle.dumps(f)) == f  # --jobs workers send findings back pickled
    d = finding_to_json(f)
    d["related"] = [["a.cu", "7", 5, 7, 14, ""]]  # a hand-edited entry: a miss, not a crash later
    with pytest.raises(TypeError):
        finding_from_json(d)


def test_related_locations_do_not_change_fingerprints():
    from hiplint.cparse import new_parser
    from hiplint.fingerprint import assign
    from hiplint.model import Finding, RelatedLocation, Severity

    data = b"void k() { int x = 1; }\n"
    tree = new_parser().parse(data)
    plain, grouped = (Finding(code="WRP006", name="n", message="m", severity=Severity.ERROR, path="a.cu", line=1,
                              column=16, end_line=1, end_column=17, start_byte=15, end_byte=16, source_line="x",
                              related=r) for r in ((), (RelatedLocation("a.cu", 1, 1, 1, 2, "use"),)))
    assign([plain], data, tree.root_node)
    assign([grouped], data, tree.root_node)
    assert plain.fingerprint and plain.fingerprint == grouped.fingerprint


def test_findings_with_related_locations_are_cached(tmp_path):
    # Such files used to be linted again on every scan (entries could not hold related locations).
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.cu").write_text(
        "__device__ float f(float v) {\n  const unsigned int m = 0xffffffffu;\n"
        "  v += __shfl_xor_sync(m, v, 1);\n  return v + __shfl_xor_sync(m, v, 2);\n}\n")
    _, cold = scan_json(tmp_path)
    assert [r["line"] for r in cold[0]["related"]] == [3, 4]
    assert len(entries(tmp_path)) == 1
    tamper(tmp_path, "from the cache")
    _, warm = scan_json(tmp_path)
    assert warm[0]["message"] == "from the cache" and warm[0]["related"] == cold[0]["related"]


TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# hiplint cache: https://bford.info/cachedir/\n"


def tree_files(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_repository_cache_dir_cannot_point_at_the_project_or_outside(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    make_tree(repo)
    (repo / ".git").mkdir()
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("mine\n")
    (tmp_path / "link").symlink_to(victim)
    (repo / "inlink").symlink_to(victim)
    for setting in [".", "..", "../victim", str(victim), "inlink", "src/../..", str(tmp_path)]:
        (repo / "hiplint.toml").write_text(f"cache-dir = {json.dumps(setting)}\n")
        before, outside = tree_files(repo), tree_files(tmp_path / "victim")
        scan = run_cli("scan", "src", cwd=repo)
        assert scan.returncode == 2 and b"cache-dir" in scan.stderr and b"project root" in scan.stderr, setting
        clean = run_cli("clean", cwd=repo)
        assert clean.returncode == 2 and b"project root" in clean.stderr, setting
        assert tree_files(repo) == before and tree_files(victim) == outside, setting
        assert not (repo / "CACHEDIR.TAG").exists() and not (victim / "CACHEDIR.TAG").exists()
    # A tag planted outside (by an older hiplint, say) does not make it hiplint's either.
    (victim / "CACHEDIR.TAG").write_text(TAG)
    (repo / "hiplint.toml").write_text('cache-dir = "../victim"\n')
    assert run_cli("clean", cwd=repo).returncode == 2 and (victim / "precious.txt").exists()


def test_an_existing_directory_hiplint_did_not_make_is_not_the_cache(tmp_path):
    make_tree(tmp_path)
    (tmp_path / "hiplint.toml").write_text('cache-dir = "src"\n')
    before = tree_files(tmp_path)
    scan = run_cli("scan", "src", cwd=tmp_path)
    assert scan.returncode == 2 and b"did not make" in scan.stderr
    assert tree_files(tmp_path) == before
    assert run_cli("scan", "src", "--no-cache", cwd=tmp_path).returncode == 1  # the scan itself still works
    assert b"No cache to remove" in run_cli("clean", cwd=tmp_path).stdout and tree_files(tmp_path) == before
    # An empty directory is fine: hiplint makes it its own.
    (tmp_path / "cache").mkdir()
    (tmp_path / "hiplint.toml").write_text('cache-dir = "cache"\n')
    assert run_cli("scan", "src", cwd=tmp_path).returncode == 1
    assert (tmp_path / "cache" / "CACHEDIR.TAG").is_file() and list((tmp_path / "cache").rglob("*.json"))


def test_clean_removes_only_what_hiplint_made(tmp_path):
    make_tree(tmp_path)
    assert run_cli("scan", "src", cwd=tmp_path).returncode == 1
    cache = tmp_path / ".hiplint_cache"
    (cache / "notes.txt").write_text("someone else's\n")
    proc = run_cli("clean", cwd=tmp_path)
    assert proc.returncode == 0 and b"kept the directory" in proc.stdout and b"notes.txt" in proc.stdout
    assert sorted(p.name for p in cache.iterdir()) == [".gitignore", "CACHEDIR.TAG", "notes.txt"]
    (cache / "notes.txt").unlink()
    assert b"Removed .hiplint_cache" in run_cli("clean", cwd=tmp_path).stdout and not cache.exists()


def test_links_planted_in_a_cache_are_never_written_or_deleted_through(tmp_path):
    from hiplint import __version__
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("mine\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    make_tree(repo)
    cache = repo / ".hiplint_cache"
    cache.mkdir()
    (cache / "CACHEDIR.TAG").write_text(TAG)
    (cache / ".gitignore").symlink_to(victim / "gitignore-through-link")
    (cache / __version__).symlink_to(victim, target_is_directory=True)
    assert run_cli("scan", "src", cwd=repo).returncode == 1
    assert sorted(p.name for p in victim.iterdir()) == ["precious.txt"]
    assert run_cli("clean", cwd=repo).returncode == 0
    assert sorted(p.name for p in victim.iterdir()) == ["precious.txt"]
    # A link deeper down (a run key's directory) is not written through either.
    (cache / __version__).unlink()
    assert run_cli("scan", "src", cwd=repo).returncode == 1
    [run_dir] = [p for p in (cache / __version__).iterdir() if p.is_dir() and p.name != "plans"]
    [sub] = list(run_dir.iterdir())
    shutil.rmtree(sub)
    sub.symlink_to(victim, target_is_directory=True)  # the entry's own directory
    assert run_cli("scan", "src", cwd=repo).returncode == 1
    assert sorted(p.name for p in victim.iterdir()) == ["precious.txt"]
    shutil.rmtree(run_dir)
    run_dir.symlink_to(victim, target_is_directory=True)  # the run key's directory
    assert run_cli("scan", "src", cwd=repo).returncode == 1
    assert sorted(p.name for p in victim.iterdir()) == ["precious.txt"]


def test_a_cache_directory_another_run_is_making_is_waited_for(tmp_path):
    """Runs that start together: one has created the directory and its tag file but not yet written
    the tag; the others wait for it instead of refusing a directory "hiplint did not make"."""
    import threading

    from hiplint import cache
    from hiplint.config import ConfigError

    d = tmp_path / ".hiplint_cache"
    d.mkdir()
    (d / cache.TAG_NAME).write_text("")
    timer = threading.Timer(0.1, lambda: (d / cache.TAG_NAME).write_text(cache.TAG_TEXT))
    timer.start()
    try:
        assert cache._claim(str(d))
    finally:
        timer.join()
    other = tmp_path / "other"
    other.mkdir()
    (other / cache.TAG_NAME).write_text("")
    (other / "notes.txt").write_text("mine")
    try:
        cache._claim(str(other))
    except ConfigError:
        pass
    else:
        raise AssertionError("a directory with other files and no hiplint tag must be refused")
    assert not cache._being_made(str(tmp_path / "missing"))


def test_a_switch_turned_on_in_another_header_lints_afresh(tmp_path):
    # `//#define SUM_TREE` in a header: code under `#ifdef SUM_TREE` is compiled by no build (not
    # reported). Uncommenting it there, with the source unchanged, must not serve the entry written before
    # (the source does not include that header: a forced include, a sibling's configuration).
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "options.h").write_text("//#define SUM_TREE\n")
    (tmp_path / "src" / "k.cu").write_text(
        '__device__ float sum(float v) {\n#ifdef SUM_TREE\n'
        "  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(__activemask(), v, o);\n#endif\n  return v;\n}\n")
    _, off = scan_json(tmp_path, "--select", "WRP003")
    assert off == []
    (tmp_path / "src" / "options.h").write_text("#define SUM_TREE\n")
    _, on = scan_json(tmp_path, "--select", "WRP003")
    assert [(f["code"], f["line"]) for f in on] == [("WRP003", 3)]
    _, fresh = scan_json(tmp_path, "--select", "WRP003", "--no-cache")
    assert fresh == on
