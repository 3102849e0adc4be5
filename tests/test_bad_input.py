"""Real input is messy: hiplint reports one line at most for each bad file and goes on."""
import os

import pytest

BAD = b"__global__ void k(int* o) { o[0] = threadIdx.x & 31; o[1] = __shfl_down_sync(__activemask(), o[1], 1); }\n"


@pytest.fixture
def tree(tmp_path):
    d = tmp_path / "t"
    d.mkdir()
    (d / "ok.cu").write_bytes(BAD)
    (d / "binary.cu").write_bytes(b"\x7fELF\x00\x01\x02" * 100)
    (d / "latin1.cu").write_bytes(b"// caf\xe9 \xff\xfe\n" + BAD)
    (d / "empty.cu").write_bytes(b"")
    (d / "nested.cu").write_bytes(b"void f() " + b"{" * 2000 + b"int x = threadIdx.x & 31; x += __shfl_down_sync(__activemask(), x, 1);" + b"}" * 2000 + b"\n")
    (d / "broken.cu").write_bytes(b"__global__ void k(int* o) { o[0] = ; MACRO(x) y z; o[1] = threadIdx.x >> 5; o[2] = __ballot_sync(~0ull, 1); }\n")
    os.symlink(".", d / "loop")
    os.symlink("missing.cu", d / "dangling.cu")
    (d / "dir.cu").mkdir()
    return d


def test_bad_files_do_not_stop_the_scan(cli, tree):
    proc = cli("scan", ".", "--output-format", "concise", cwd=tree)
    assert proc.returncode == 1
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert "Traceback" not in out + err
    assert "ok.cu:1:36: WRP001" in out
    assert "latin1.cu:2:36: WRP001" in out  # invalid UTF-8 elsewhere in the file does not matter
    assert "broken.cu:1:" in out and "WRP001" in out.split("broken.cu:1:")[1].splitlines()[0]
    # 2,000 nested blocks: skipped with a note (walking up such a tree costs the depth's square), and
    # counted: the summary does not say "all checks passed" for it.
    assert "nested.cu:1:" not in out and "Skipped, not checked: 3 files" in out
    lines = [l for l in err.splitlines() if l]
    assert any("binary.cu: skipped: binary file" in l for l in lines)
    assert any("nested.cu: skipped: blocks or braces nested more than 256 levels deep" in l for l in lines)
    # A broken link met in a walk (most often into a submodule not checked out) is no source of this
    # checkout: a note and the skipped count, not a finding. A named one stops the run (below).
    assert "dangling.cu" not in out and any("dangling.cu: skipped: broken symbolic link (to missing.cu)" in l for l in lines)
    assert len(lines) <= 3, err  # one line per bad file at most


def test_huge_generated_file(cli, tmp_path):
    body = b"".join(b"__global__ void k%d(float* o) { o[threadIdx.x] = %d.0f; }\n" % (i, i) for i in range(90000))
    assert len(body) > 5 * 1024 * 1024
    (tmp_path / "gen.cu").write_bytes(body + BAD)
    proc = cli("scan", "gen.cu", "--output-format", "concise", cwd=tmp_path)
    assert proc.returncode == 1 and b"WRP001" in proc.stdout and b"Traceback" not in proc.stderr


def test_unreadable_file_is_one_line(monkeypatch, tmp_path, capsys):
    # As root a chmod 000 file stays readable, so simulate the OS error where the engine opens it.
    from hiplint import engine
    from hiplint.config import Settings
    from hiplint.testing import linter_for

    p = tmp_path / "locked.cu"
    p.write_bytes(BAD)
    real_open = open

    def fake_open(path, *a, **k):
        if str(path) == str(p):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *a, **k)

    monkeypatch.setattr("builtins.open", fake_open)
    res = engine.lint_file(linter_for(Settings()), str(p), "locked.cu", "cuda")
    assert [f.code for f in res.findings] == ["HL002"]
    assert "Permission denied" in res.findings[0].message


def test_directory_named_like_a_source_and_missing_path(cli, tmp_path):
    (tmp_path / "d.cu").mkdir()
    proc = cli("scan", "d.cu", "nothere.cu", cwd=tmp_path)
    # A named path that does not exist fails the run (a renamed directory must not pass a CI gate),
    # said once; the paths that do exist are still scanned.
    assert proc.returncode == 2
    assert proc.stderr.count(b"nothere.cu: no such file or directory") == 1
    assert b"Traceback" not in proc.stderr


def test_missing_path_fails_even_when_the_others_have_findings(cli, tmp_path):
    (tmp_path / "k.cu").write_text("__global__ void k(unsigned *o) { *o = __ballot_sync(0xffffffff, 1); }\n")
    proc = cli("scan", "k.cu", "gone/", cwd=tmp_path)
    assert proc.returncode == 2
    assert b"k.cu:1:" in proc.stdout
    proc = cli("scan", "--exit-zero", "gone/", cwd=tmp_path)
    assert proc.returncode == 2 and b"All checks passed" not in proc.stdout


def test_a_long_else_if_chain_is_linted_in_linear_time():
    # Each `.parent` step costs the depth in tree-sitter 0.26 and an `else if` chain nests one level per
    # branch: walking up from every comparison to its function was cubic (2,000 branches: minutes).
    # The function around a node is now found by byte range; this file must finish like any other.
    from hiplint.config import Settings
    from hiplint.engine import Linter
    from hiplint.registry import load_registry, select_rules

    settings = Settings()
    linter = Linter(settings, select_rules(settings, load_registry()))
    body = "".join(("  if" if i == 0 else "  else if") + f" ((threadIdx.x & 31) == {i}) v = {i};\n" for i in range(3000))
    src = ("__device__ unsigned pick(float v) {\n" + body + "  return __ballot_sync(0xffffffff, v > 0);\n}\n").encode()
    result = linter.lint_bytes("chain.cu", src, "cuda")
    codes = {f.code for f in result.findings}
    assert not result.internal_error and {"WRP001", "WRP006"} <= codes


def test_bytes_that_are_not_utf8_in_matched_code(cli, tmp_path):
    # tree-sitter's #match? predicates decode the captured text as strict UTF-8: a Latin-1 byte in a
    # string inside a kernel (captured whole by MEM001's pattern) stopped the file with an internal
    # error, and --fix and --diff of the whole run with it. The rules now see `?` there (same length).
    src = (b'__global__ void k(int *out, int x) {\n  const char *msg = "na\xefve";\n'
           b"  int v = __shfl_sync(0xffffffff, x, 0);\n  out[threadIdx.x] = v;\n}\n")
    (tmp_path / "k.cu").write_bytes(src)
    proc = cli("scan", str(tmp_path / "k.cu"), "--isolated", "--no-cache", "--output-format", "concise")
    assert proc.returncode == 1 and b"internal error" not in proc.stdout + proc.stderr and b"WRP006" in proc.stdout
    proc = cli("scan", str(tmp_path / "k.cu"), "--isolated", "--no-cache", "--fix")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # fixed, nothing left
    fixed = (tmp_path / "k.cu").read_bytes()
    assert b'"na\xefve"' in fixed and b"__shfl_sync(HIPLINT_FULL_WARP_MASK, x, 0)" in fixed


def test_bytes_that_are_not_utf8_become_question_marks_in_place():
    from hiplint.cparse import valid_utf8

    data = b"a\xe9b\xc3\xa9c\xf0\x9f\x98\x80d\xff\xed\xa0\x80"  # Latin-1, UTF-8, 4-byte UTF-8, a stray byte, a surrogate
    out, spans = valid_utf8(data)
    assert out == b"a?b\xc3\xa9c\xf0\x9f\x98\x80d????" and len(out) == len(data)
    assert spans == [(1, 2), (11, 12), (12, 13), (13, 14), (14, 15)]
    assert valid_utf8(b"plain") == (b"plain", [])


def test_an_expression_nested_thousands_deep_is_skipped_with_a_note():
    # tree-sitter's query matching is quadratic in nesting depth: 5,000 `1+` terms took 20 s and a 5 MB
    # line never ended. Such a file is skipped with a one-line note; a merely long one is linted.
    from hiplint.config import Settings
    from hiplint.engine import Linter
    from hiplint.registry import load_registry, select_rules

    settings = Settings()
    linter = Linter(settings, select_rules(settings, load_registry()))
    kernel = b"__global__ void k(float *x) { x[0] = __shfl_sync(0xffffffff, x[0], 0); }\n"
    deep = linter.lint_bytes("deep.cu", kernel + b"int a = " + b"1+" * 5000 + b"1;\n", "cuda")
    assert deep.findings == [] and any("nested more than 1000 levels deep (line 2" in n for n in deep.notes)
    long = linter.lint_bytes("long.cu", kernel + b"int a = " + b"1+" * 300 + b"1;\n" + b"/*" + b"x" * 5000 + b"*/\n", "cuda")
    assert [f.code for f in long.findings] == ["WRP006"] and long.notes == []


def test_named_broken_symlinks_fail_and_walks_skip_fifos(cli, tmp_path):
    import os

    (tmp_path / "dangling.cu").symlink_to("nowhere.cu")
    (tmp_path / "loop_a.cu").symlink_to("loop_b.cu")
    (tmp_path / "loop_b.cu").symlink_to("loop_a.cu")
    proc = cli("scan", "dangling.cu", "loop_a.cu", "--isolated", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 2  # as unreadable as a missing path: a CI gate must not pass on it
    assert proc.stderr.count(b"broken symbolic link") == 2
    # A named pipe with a source's name in a scanned directory would block the read forever.
    src = tmp_path / "src"
    src.mkdir()
    os.mkfifo(src / "pipe.cu")
    (src / "k.cu").write_text("__global__ void k(float *x) { x[0] = __shfl_sync(0xffffffff, x[0], 0); }\n")
    proc = cli("scan", "src", "--isolated", "--no-cache", "--output-format", "concise", cwd=tmp_path)
    assert proc.returncode == 1 and b"k.cu" in proc.stdout and b"pipe.cu" not in proc.stdout + proc.stderr


def test_preprocessor_output_is_skipped_with_a_note(cli, tmp_path):
    # A compiler's -E output (ROCm's preprocessed hipRTC header, kept in a repository): its lines belong to
    # the files its line markers name, so it is skipped with one note; a `#line` in a source is not that.
    markers = b'# 1 "<built-in>" 1\n# 1 "<command line>" 1\n# 1 "/opt/rocm/include/hip/amd_detail/x.h" 3\n'
    (tmp_path / "runtime_pp.h").write_bytes(markers + BAD)
    (tmp_path / "gen.cu").write_bytes(b'#line 10 "kernels.in"\n' + BAD)
    proc = cli("scan", ".", "--output-format", "concise", cwd=tmp_path)
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert "runtime_pp.h" not in out and "runtime_pp.h: skipped: preprocessor output" in err
    assert "gen.cu:" in out and "WRP001" in out
