"""Applying fixes never corrupts a file (hiplint/fix.py), with rules whose fixes misbehave on purpose."""
import os
import stat
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from hiplint.config import Settings
from hiplint.cparse import error_ranges, new_parser
from hiplint.engine import Linter
from hiplint.fix import fix_bytes, pass_limit, write_atomic
from hiplint.model import Applicability
from hiplint.runner import FixMode, run

sys.path.insert(0, str(ROOT / "tests" / "packs"))
import hiplint_testpack as pack  # noqa: E402

ALL_RULES = pack.PACK + pack.MISBEHAVING


def linter(*rules):
    return Linter(Settings(root=Path.cwd()), list(rules or ALL_RULES))


def fix(data: bytes, *rules, unsafe=False):
    lin = linter(*rules)
    return fix_bytes(lambda d: lin.lint_bytes("t.cu", d, "cuda").findings, data, "cuda",
                     Applicability.UNSAFE if unsafe else Applicability.SAFE)


def parse_errors(data: bytes) -> int:
    return len(error_ranges(new_parser().parse(data).root_node))


def test_overlapping_edits_are_resolved_over_passes():
    src = b"void f(int a) {\n    wrap(a);\n}\n"
    out = fix(src, pack.OverlappingWrap, pack.ArgV2)
    # Pass 1 takes the whole-call fix and skips the overlapping argument fix; pass 2 renames the argument.
    assert out.data == b"void f(int a) {\n    unwrapped(a_v2);\n}\n"
    assert out.converged and out.passes == 2
    assert [f.code for f in out.applied] == ["TST010", "TST011"]


def test_a_fix_that_adds_parse_errors_is_dropped_and_reported_others_kept():
    src = b"void f() {\n    break_me();\n    old_api(1);\n}\n"
    out = fix(src, pack.ParseBreaker, pack.RenameOldApi)
    assert out.data == b"void f() {\n    break_me();\n    new_api(1);\n}\n"
    assert parse_errors(out.data) == 0
    assert len(out.dropped) == 1 and "TST020" in out.dropped[0] and "parse error" in out.dropped[0]
    assert [f.code for f in out.applied] == ["TST001"]


def test_existing_parse_errors_do_not_block_fixes():
    src = b"void f() {\n    old_api(1);\n}\nint broken( = ;\n"
    before = parse_errors(src)
    assert before > 0
    out = fix(src, pack.RenameOldApi)
    assert b"new_api(1)" in out.data and parse_errors(out.data) <= before


def test_fixes_that_cycle_stop_and_say_so():
    src = b"void f() {\n    ping();\n}\n"
    out = fix(src, pack.PingPong)
    assert not out.converged
    assert out.passes <= 2
    assert any("cycle" in d and "TST030" in d for d in out.dropped)
    assert out.data in (b"void f() {\n    ping();\n}\n", b"void f() {\n    pong();\n}\n")


def test_fixes_deferred_one_per_pass_run_to_the_fixed_point():
    # 25 fixes sharing an isolation key (as WRP006's inserted #define does): one per pass, 25 passes,
    # all applied. A constant bound (10 passes) used to stop short and report "did not converge".
    src = b"void f() {\n" + b"".join(b"    step(%d);\n" % i for i in range(25)) + b"}\n"
    out = fix(src, pack.OnePerPass)
    assert out.converged
    assert len(out.applied) == 25 and b"step(" not in out.data.replace(b"stepped(", b"")
    assert out.passes == 25 <= pass_limit(25)


def test_fixes_that_keep_creating_fixable_findings_stop_at_the_bound():
    # Each pass leaves the finding it fixed (and never repeats a result): the bound stops it, and
    # something fixable really remains, so it is "not converged".
    out = fix(b"void f() {\n    grow();\n}\n", pack.Breeder)
    assert not out.converged
    assert out.passes == pass_limit(1)
    assert [f.code for f in out.remaining] == ["TST070"]


def test_edits_outside_the_file_are_dropped_not_applied():
    src = b"void f() {\n    bad_edit();\n}\n"
    out = fix(src, pack.OutOfRange)
    assert out.data == src
    assert len(out.dropped) == 2 and all("outside the file" in d for d in out.dropped)


def test_display_only_fixes_are_never_applied():
    src = b"void f() { mystery(1); }\n"
    assert fix(src, pack.Mystery, unsafe=True).data == src


def test_unsafe_fixes_need_the_unsafe_threshold():
    src = b"void f() { legacy_rng(1); old_api(2); }\n"
    assert fix(src, pack.ModernRng, pack.RenameOldApi).data == b"void f() { legacy_rng(1); new_api(2); }\n"
    assert fix(src, pack.ModernRng, pack.RenameOldApi, unsafe=True).data == b"void f() { modern_rng(1); new_api(2); }\n"


def test_crlf_line_endings_are_kept_also_in_inserted_lines():
    src = b"void f() {\r\n    needs_note();\r\n    old_api(1);\r\n}\r\n"
    out = fix(src, pack.AddLine, pack.RenameOldApi)
    assert out.data == b"void f() {\r\n    noted();\r\n    with_note();\r\n    new_api(1);\r\n}\r\n"
    assert out.data.count(b"\n") == out.data.count(b"\r\n")


def test_lf_file_stays_lf():
    out = fix(b"void f() {\n    needs_note();\n}\n", pack.AddLine)
    assert b"\r" not in out.data and b"noted();\n" in out.data


def test_latin1_bytes_outside_the_edits_are_untouched():
    src = "// Auteur : Séverine Müller, année 2019\nvoid f() {\n    old_api(1); /* déjà */\n}\n".encode("latin-1")
    out = fix(src, pack.RenameOldApi)
    assert out.data == src.replace(b"old_api", b"new_api")
    assert b"\xe9" in out.data and b"\xfc" in out.data


def test_utf8_bom_is_kept():
    src = b"\xef\xbb\xbfvoid f() { old_api(1); }\n"
    assert fix(src, pack.RenameOldApi).data == b"\xef\xbb\xbfvoid f() { new_api(1); }\n"


def test_second_run_changes_nothing():
    src = b"void f(int a) {\n    wrap(a);\n    old_api(a);\n    needs_note();\n}\n"
    first = fix(src, pack.OverlappingWrap, pack.ArgV2, pack.RenameOldApi, pack.AddLine)
    assert first.converged and first.data != src
    second = fix(first.data, pack.OverlappingWrap, pack.ArgV2, pack.RenameOldApi, pack.AddLine)
    assert second.data == first.data and not second.applied and second.passes == 0


# Writing files ---------------------------------------------------------------------------------

def test_write_atomic_keeps_permissions_and_leaves_no_temporary(tmp_path):
    p = tmp_path / "k.cu"
    p.write_bytes(b"old")
    os.chmod(p, 0o640)
    write_atomic(str(p), b"new")
    assert p.read_bytes() == b"new"
    assert stat.S_IMODE(p.stat().st_mode) == 0o640
    assert sorted(x.name for x in tmp_path.iterdir()) == ["k.cu"]


def test_write_atomic_failure_keeps_the_original(tmp_path, monkeypatch):
    p = tmp_path / "k.cu"
    p.write_bytes(b"old")

    def boom(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        write_atomic(str(p), b"new")
    assert p.read_bytes() == b"old"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["k.cu"]


def test_write_atomic_refuses_symlinks_and_changed_files(tmp_path):
    target = tmp_path / "real.cu"
    target.write_bytes(b"old")
    link = tmp_path / "link.cu"
    link.symlink_to(target)
    with pytest.raises(OSError, match="symbolic link"):
        write_atomic(str(link), b"new")
    with pytest.raises(OSError, match="changed on disk"):
        write_atomic(str(target), b"new", expected=b"something else")
    assert target.read_bytes() == b"old" and link.is_symlink()


def _scan_fix(paths, tmp_path):
    settings = Settings(root=tmp_path).with_overrides(respect_gitignore=False)
    return run([str(p) for p in paths], settings, list(pack.PACK), FixMode(enabled=True), jobs=1)


def test_fixing_a_tree_writes_only_regular_files_inside_it(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "shared.cu").write_bytes(b"void g() { old_api(1); }\n")
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "a.cu").write_bytes(b"void f() { old_api(1); }\n")
    (tree / "src" / "linked.cu").symlink_to(outside / "shared.cu")       # a symlinked file
    (tree / "vendor").symlink_to(outside, target_is_directory=True)      # a symlinked directory
    before_outside = (outside / "shared.cu").read_bytes()
    scan = _scan_fix([tree], tmp_path)
    assert (tree / "src" / "a.cu").read_bytes() == b"void f() { new_api(1); }\n"
    assert (outside / "shared.cu").read_bytes() == before_outside
    assert (tree / "src" / "linked.cu").is_symlink()
    assert any("symbolic link" in n for n in scan.notes)
    # No stray temporary files anywhere.
    assert not [p for p in tmp_path.rglob(".hiplint-*")]


def test_fixing_a_named_file_leaves_its_neighbours_alone(tmp_path):
    a, b = tmp_path / "a.cu", tmp_path / "b.cu"
    a.write_bytes(b"void f() { old_api(1); }\n")
    b.write_bytes(b"void f() { old_api(2); }\n")
    _scan_fix([a], tmp_path)
    assert b"new_api" in a.read_bytes() and b.read_bytes() == b"void f() { old_api(2); }\n"


def test_a_file_edited_during_the_scan_is_not_overwritten(tmp_path, monkeypatch):
    import hiplint.runner as runner
    p = tmp_path / "a.cu"
    p.write_bytes(b"void f() { old_api(1); }\n")
    real = runner.fix_bytes

    def fix_then_user_edits(*args, **kw):
        out = real(*args, **kw)
        p.write_bytes(b"void f() { old_api(1); /* edited meanwhile */ }\n")
        return out
    monkeypatch.setattr(runner, "fix_bytes", fix_then_user_edits)
    scan = _scan_fix([p], tmp_path)
    assert p.read_bytes() == b"void f() { old_api(1); /* edited meanwhile */ }\n"
    assert any("changed on disk" in n for n in scan.write_errors)
    assert not scan.fixed


def test_insertions_at_the_top_go_after_a_byte_order_mark():
    # WRP006 inserts its mask macro before line 1; placed before a BOM it left the BOM mid-file (a parse
    # error), so the safety net dropped the fix and a BOM file was never fixed.
    from hiplint.fix import BOM, apply_edits
    from hiplint.model import Edit, Fix

    data = BOM + b"int x;\n"
    out = apply_edits(data, [Fix.safe("a", Edit(0, 0, "// one\n")), Fix.safe("b", Edit(0, 0, "// two\n")),
                             Fix.safe("c", Edit(7, 8, "y"))])
    assert out == BOM + b"// one\n// two\nint y;\n"


def test_full_mask_fixes_wait_for_each_other_only_while_the_define_is_inserted():
    # WRP006 isolates the fix that inserts HIPLINT_FULL_WARP_MASK's #define (one per pass); once it is
    # there, every other mask is replaced in the next pass, not one per pass.
    from hiplint.testing import linter_for
    lin = linter_for(Settings(root=Path.cwd()).with_overrides(select=("WRP006",)))
    src = "".join(f"__global__ void k{i}(float* p) {{ p[0] = __shfl_sync(0xffffffff, p[0], 0); }}\n"
                  for i in range(6)).encode()
    out = fix_bytes(lambda d: lin.lint_bytes("t.cu", d, "cuda").findings, src, "cuda", Applicability.SAFE)
    assert out.converged and len(out.applied) == 6
    assert out.passes == 2


def test_a_read_only_file_is_not_rewritten(tmp_path):
    p = tmp_path / "a.cu"
    p.write_bytes(b"void f() { old_api(1); }\n")
    p.chmod(0o444)  # root may write it; its mode says no, and that is what counts
    with pytest.raises(PermissionError, match="read-only"):
        write_atomic(str(p), b"new")
    scan = _scan_fix([p], tmp_path)
    assert p.read_bytes() == b"void f() { old_api(1); }\n" and stat.S_IMODE(p.stat().st_mode) == 0o444
    assert scan.write_errors == [f"{p}: not written: read-only file; not rewritten"]
    assert not scan.fixed


def test_a_failed_write_is_an_error_even_with_quiet(tmp_path, monkeypatch):
    from click.testing import CliRunner
    import hiplint.runner as runner
    from hiplint.cli import cli
    p = tmp_path / "a.cu"
    source = b"__device__ float f(float v) { return __shfl_sync(0xffffffff, v, 0); }\n"
    p.write_bytes(source)

    def full_disk(*args, **kw):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(runner, "write_atomic", full_disk)
    monkeypatch.chdir(tmp_path)
    # A built-in rule with a safe fix: the test packs are not installed entry points for the CLI.
    r = CliRunner().invoke(cli, ["fix", "-q", "--isolated", "--select", "WRP006", "--no-cache", "a.cu"])
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert "hiplint: error: a.cu: not written: No space left on device" in r.stderr
    assert p.read_bytes() == source
