"""Fixing through the command line, end to end, with the test-only rule pack in tests/packs.

TST001 has a safe fix (old_api -> new_api), TST002 an unsafe one (legacy_rng -> modern_rng), TST003 a
display-only suggestion (mystery -> known) that is never applied.
"""
import pytest

from conftest import ROOT, run_cli

PACK_ENV = {"PYTHONPATH": str(ROOT / "tests" / "packs")}
SRC = b"""void step(int x) {
    old_api(x);
    legacy_rng(x);
    mystery(x);
}
"""
SAFE = SRC.replace(b"old_api", b"new_api")
UNSAFE = SAFE.replace(b"legacy_rng", b"modern_rng")


def hl(*args, **kw):
    return run_cli(*args, "--select", "TST", "--isolated", "--no-progress", env=PACK_ENV, **kw)


@pytest.fixture
def kernel(tmp_path):
    p = tmp_path / "step.cu"
    p.write_bytes(SRC)
    return p


def test_pack_loads_and_reports(kernel):
    r = hl("scan", "--output-format", "concise", kernel)
    assert r.returncode == 1, r.stderr
    out = r.stdout.decode()
    assert "TST001 [*]" in out and "TST002" in out and "TST003" in out


def test_scan_fix_applies_only_safe_fixes(kernel):
    r = hl("scan", "--fix", "--output-format", "concise", kernel)
    assert kernel.read_bytes() == SAFE
    out = r.stdout.decode()
    assert "Fixed 1 finding." in out
    assert "TST001" not in out and "TST002" in out and "TST003" in out
    assert r.returncode == 1  # findings remain


def test_unsafe_fixes_adds_the_unsafe_ones_never_display_only(kernel):
    r = hl("scan", "--fix", "--unsafe-fixes", "--output-format", "concise", kernel)
    assert kernel.read_bytes() == UNSAFE
    assert "Fixed 2 findings." in r.stdout.decode()


def test_fix_command_is_the_short_form(kernel, tmp_path):
    other = tmp_path / "other.cu"
    other.write_bytes(SRC)
    a = hl("fix", "--output-format", "concise", kernel)
    b = hl("scan", "--fix", "--output-format", "concise", other)
    assert kernel.read_bytes() == other.read_bytes() == SAFE
    assert a.returncode == b.returncode
    assert a.stdout.replace(b"step.cu", b"X") == b.stdout.replace(b"other.cu", b"X")


def test_diff_prints_a_unified_diff_writes_nothing_and_exits_1(kernel):
    r = hl("scan", "--diff", kernel)
    assert kernel.read_bytes() == SRC
    assert r.returncode == 1
    out = r.stdout.decode()
    assert out.startswith("--- a/") and "\n+++ b/" in out
    assert "-    old_api(x);\n+    new_api(x);\n" in out
    assert "modern_rng" not in out
    assert "Would fix 1 finding." in r.stderr.decode()


def test_diff_with_unsafe_fixes_shows_them(kernel):
    r = hl("scan", "--diff", "--unsafe-fixes", kernel)
    assert kernel.read_bytes() == SRC
    assert "+    modern_rng(x);" in r.stdout.decode()


def test_diff_with_nothing_to_change_exits_0(tmp_path):
    p = tmp_path / "clean.cu"
    p.write_bytes(b"void f() { new_api(1); }\n")
    r = hl("scan", "--diff", p)
    assert r.returncode == 0 and r.stdout == b""


def test_fix_on_a_directory_and_a_second_run_changes_nothing(tmp_path):
    (tmp_path / "a").mkdir()
    for name in ("a/one.cu", "two.cuh"):
        (tmp_path / name).write_bytes(SRC)
    first = hl("fix", "--output-format", "concise", tmp_path)
    assert "Fixed 2 findings." in first.stdout.decode()
    assert (tmp_path / "a/one.cu").read_bytes() == SAFE and (tmp_path / "two.cuh").read_bytes() == SAFE
    second = hl("fix", "--output-format", "concise", tmp_path)
    assert "Fixed" not in second.stdout.decode()
    assert hl("scan", "--diff", tmp_path).stdout == b""


def test_stdin_fix_writes_the_fixed_source_to_stdout(kernel):
    r = hl("fix", "-", "--stdin-filename", "src/step.cu", input=SRC)
    assert r.stdout == SAFE
    # What remains goes to stderr, named as the editor's file.
    err = r.stderr.decode()
    assert "src/step.cu:3:5: TST002" in err and "TST001" not in err
    assert r.returncode == 1
    r = hl("scan", "--fix", "--unsafe-fixes", "-", "--stdin-filename", "step.cu", input=SRC)
    assert r.stdout == UNSAFE


def test_stdin_without_fix_reports_under_the_given_name():
    r = hl("scan", "--output-format", "concise", "-", "--stdin-filename", "lib/k.cu", input=SRC)
    assert r.returncode == 1
    assert "lib/k.cu:2:5: TST001" in r.stdout.decode()


def test_stdin_diff():
    r = hl("scan", "--diff", "-", "--stdin-filename", "k.cu", input=SRC)
    assert r.returncode == 1
    assert "+    new_api(x);" in r.stdout.decode()


def test_stdin_fix_keeps_crlf_and_latin1():
    src = "// café\r\nvoid f() {\r\n    old_api(1);\r\n}\r\n".encode("latin-1")
    r = hl("fix", "-", "--stdin-filename", "k.cu", input=src)
    assert r.stdout == src.replace(b"old_api", b"new_api")


def test_fix_leaves_a_read_only_file_alone_and_says_so_even_with_quiet(kernel):
    kernel.chmod(0o444)
    r = hl("fix", "-q", kernel)
    assert r.returncode == 2
    assert f"hiplint: error: {kernel}: not written: read-only file" in r.stderr.decode()
    assert kernel.read_bytes() == SRC and kernel.stat().st_mode & 0o777 == 0o444


def test_fix_keeps_file_permissions(kernel):
    kernel.chmod(0o751)
    hl("fix", kernel)
    assert kernel.read_bytes() == SAFE
    assert kernel.stat().st_mode & 0o777 == 0o751


# A file of many kernels ----------------------------------------------------------------------------

KERNEL = """
__global__ void scan{i}(const float* in, float* out) {{
    int lane = threadIdx.x & 31;
    float v = in[threadIdx.x];
    float first = __shfl_sync(0xffffffff, v, 0);
    for (int d = 1; d < 32; d *= 2) {{
        float up = __shfl_up_sync(0xffffffff, v, d);
        if (lane >= d) v += up;
    }}
    out[threadIdx.x] = v + first;
}}
"""


def test_fix_applies_every_safe_fix_in_a_file_of_many_kernels(tmp_path):
    # 40 copies of a kernel with two WRP006 full masks (one #define inserted once per file) and a WRP008
    # width on the broadcast (the guarded scan step needs none): 120 safe fixes. A constant bound of 10
    # passes used to stop after 90 of them and warn "did not converge".
    p = tmp_path / "many.cu"
    p.write_text("".join(KERNEL.format(i=i) for i in range(40)))
    r = run_cli("fix", "--isolated", "--no-progress", "--select", "WRP006,WRP008",
                "--output-format", "concise", p)
    out, err = r.stdout.decode(), r.stderr.decode()
    assert "Fixed 120 findings." in out, out + err
    assert "converge" not in out + err
    fixed = p.read_text()
    assert fixed.count("#define HIPLINT_FULL_WARP_MASK __activemask()") == 1
    assert fixed.count("__shfl_sync(HIPLINT_FULL_WARP_MASK, v, 0, 32)") == 40
    assert fixed.count("__shfl_up_sync(HIPLINT_FULL_WARP_MASK, v, d)") == 40
    again = run_cli("scan", "--isolated", "--no-progress", "--select", "WRP006,WRP008",
                    "--output-format", "concise", p)
    assert again.returncode == 0, again.stdout.decode()
