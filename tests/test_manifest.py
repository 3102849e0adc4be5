"""The rule manifest (rules/manifest.json, hiplint.manifest): current, the registry's rules, and a
scan that imports only the rules a file can need finds what a scan with every rule finds."""
from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, run_cli
from hiplint import manifest
from hiplint.engine import Linter
from hiplint.languages import language_of
from hiplint.registry import Registry, load_registry, rule_index, select_rules
from hiplint.testing import fixture_files, fixture_settings, parse_expectations

FILES = fixture_files(FIXTURES)


def builtin_classes():
    # Another test may have put a third-party pack on sys.path (tests/packs): not the manifest's.
    return [r for r in load_registry().rules if r.pack in ("builtin", "hiplint")]


def entries_registry() -> Registry:
    m = manifest.load()
    assert m is not None, "rules/manifest.json is missing or stale: run `python -m hiplint.manifest`"
    return Registry(m.entries)


def test_shipped_manifest_is_current():
    # After adding or changing a rule (or hiplint's pattern splitting): python -m hiplint.manifest
    assert manifest.main(["--check"]) == 0, \
        "rules/manifest.json is stale: run `python -m hiplint.manifest` and commit the result"


def test_manifest_lists_the_registry_rules():
    m = manifest.load()
    assert m is not None, "rules/manifest.json is missing or stale: run `python -m hiplint.manifest`"
    classes = builtin_classes()
    assert [e.code for e in m.entries] == [r.code for r in classes]
    for entry, cls in zip(m.entries, classes):
        assert entry.load() is cls
        assert (entry.name, entry.pack, entry.default_enabled, entry.languages, entry.wave_sizes) == \
            (cls.name, cls.pack, cls.default_enabled, frozenset(cls.languages), frozenset(cls.wave_sizes))



def test_rule_index_is_the_manifest_unless_a_pack_may_be_installed(monkeypatch):
    from hiplint import registry

    for packs in (False, True):
        monkeypatch.setattr(registry, "_may_have_packs", lambda: packs)
        rule_index.cache_clear()
        try:
            expected = load_registry().rules if packs else manifest.load().entries
            assert rule_index().rules == expected
        finally:
            rule_index.cache_clear()


def test_selection_and_its_errors_are_the_same_from_the_manifest():
    from hiplint.config import ConfigError, Settings

    for over in ({}, {"select": ("ALL",)}, {"select": ("WRP",), "ignore": ("WRP002",)},
                 {"extend_select": ("HL001", "PY")}, {"select": ("shuffle-without-width", "MEM")}):
        settings = Settings().with_overrides(**over)
        assert [e.code for e in select_rules(settings, entries_registry())] == \
            [r.code for r in select_rules(settings, Registry(tuple(builtin_classes())))]
    for bad in ({"select": ("WRP999",)}, {"ignore": ("nope",)}):
        messages = []
        for registry in (entries_registry(), Registry(tuple(builtin_classes()))):
            with pytest.raises(ConfigError) as err:
                select_rules(Settings().with_overrides(**bad), registry)
            messages.append(str(err.value))
        assert messages[0] == messages[1]


def test_a_stale_manifest_is_not_used(monkeypatch):
    manifest.load.cache_clear()
    rule_index.cache_clear()
    try:
        monkeypatch.setattr(manifest, "source_digest", lambda: "0" * 64)
        assert manifest.load() is None
        from hiplint import registry

        monkeypatch.setattr(registry, "_may_have_packs", lambda: False)
        assert rule_index() is load_registry()  # every rule imported, as without a manifest
        assert manifest.plan_layout([]) is None
    finally:
        monkeypatch.undo()
        manifest.load.cache_clear()
        rule_index.cache_clear()
    assert manifest.load() is not None


def test_a_changed_rule_file_makes_it_stale(tmp_path, monkeypatch):
    import shutil

    copy = tmp_path / "rules"
    shutil.copytree(manifest.rules_dir(), copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(manifest, "rules_dir", lambda: str(copy))
    before = manifest.source_digest()
    (copy / "warp" / "new_rule.py").write_text("# a newcomer's rule\n")
    assert manifest.source_digest() != before
    (copy / "warp" / "new_rule.py").unlink()
    assert manifest.source_digest() == before
    (copy / "manifest.json").write_text("{}")  # the manifest itself is not its own source
    assert manifest.source_digest() == before


def test_a_plan_cut_from_the_manifest_is_used_only_for_its_patterns():
    from hiplint.config import Settings

    settings = Settings()
    rules = [r() for r in select_rules(settings, Registry(tuple(builtin_classes())))]
    cuda = Linter(settings, [type(r) for r in rules]).cuda_rules
    assert manifest.plan_layout(cuda) is not None
    assert manifest.plan_layout(list(reversed(cuda))) is None  # another order: built, not cut

    class Changed(type(cuda[0])):
        query = cuda[0].query + "\n(identifier) @report\n"

    Changed.__module__, Changed.__qualname__ = type(cuda[0]).__module__, type(cuda[0]).__qualname__
    assert manifest.plan_layout([Changed()] + cuda[1:]) is None


def _settings(path, lang):
    data = path.read_bytes()
    ex = parse_expectations(data.decode("utf-8", "replace"), hash_comments=lang != "cuda")
    return fixture_settings(ex, path).with_overrides(extend_select=("ALL",) + tuple(sorted(ex.codes))), data


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_only_the_rules_a_file_needs_find_the_same(path):
    """Every fixture: the rules the manifest says it can need (the others are not imported) report
    exactly what every selected rule reports."""
    from hiplint.runner import _needed
    from hiplint.discovery import SourcePath

    lang = language_of(str(path))
    settings, data = _settings(path, lang)
    every = select_rules(settings, Registry(tuple(builtin_classes())))
    entries = select_rules(settings, entries_registry())
    needed = manifest.resolve(_needed(entries, [SourcePath(str(path), str(path), lang)]))
    assert len(needed) <= len(every)
    full = Linter(settings, every).lint_bytes(str(path), data, lang)
    part = Linter(settings, needed, selected_codes={r.code for r in every}).lint_bytes(str(path), data, lang)
    assert not full.internal_error and not part.internal_error
    assert [(f.code, f.line, f.column, f.message, f.related) for f in part.findings] == \
        [(f.code, f.line, f.column, f.message, f.related) for f in full.findings]


def test_a_hook_run_imports_only_what_the_file_needs(tmp_path):
    """`hiplint scan FILE` on a warp-reduction file: no library-table or Python rule is imported, and
    the findings and exit status are those of a run with every rule (--select ALL imports more)."""
    import sys

    (tmp_path / "k.cu").write_bytes((FIXTURES / "warp" / "reduction_kernels.cu").read_bytes())
    code = ("import sys, runpy; sys.argv = ['hiplint', 'scan', '--no-progress', '--output-format', 'json', 'k.cu'];\n"
            "try:\n    runpy.run_module('hiplint', run_name='__main__')\nexcept SystemExit as e:\n"
            "    print('EXIT', e.code, file=sys.stderr)\n"
            "    print('RULES', sorted(m for m in sys.modules if m.startswith('hiplint.rules.')), file=sys.stderr)\n")
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    loaded = json.loads(out.stderr.split("RULES ", 1)[1].replace("'", '"'))
    assert "EXIT 1" in out.stderr
    assert "hiplint.rules.warp.shuffle_width" in loaded
    assert not any(m.startswith(("hiplint.rules.python.", "hiplint.rules.cusolver.", "hiplint.rules.build."))
                   for m in loaded), loaded
    full = run_cli("scan", "--no-progress", "--output-format", "json", "--no-cache", "k.cu", cwd=tmp_path)
    assert json.loads(out.stdout) == json.loads(full.stdout)


def test_a_rule_module_that_fails_to_import_is_a_configuration_error():
    from dataclasses import replace

    from hiplint.config import ConfigError

    broken = replace(manifest.load().entries[0], module="hiplint.rules.no_such_module")
    with pytest.raises(ConfigError, match="cannot load rule pack 'builtin'"):
        manifest.resolve([broken])


def test_python_syntax_error_triggers_are_the_same_from_the_manifest(monkeypatch):
    """PY000 runs where another Python rule could: their triggers, read from the manifest."""
    from hiplint import registry
    from hiplint.rule import FileRule
    from hiplint.rules.python import syntax_error

    others = [r for r in builtin_classes() if issubclass(r, FileRule) and "python" in r.languages and r.code != "PY000"]
    expected = () if any(not r.triggers for r in others) else tuple(sorted({t for r in others for t in r.triggers}))
    monkeypatch.setattr(registry, "_may_have_packs", lambda: False)
    rule_index.cache_clear()
    try:
        assert isinstance(rule_index().rules[0], manifest.RuleEntry)
        assert syntax_error._other_rules_triggers() == expected and expected
    finally:
        rule_index.cache_clear()


def test_the_cache_key_reads_the_rules_once_when_the_manifest_was_checked(tmp_path):
    """The cache's code digest takes the manifest's digest for the rules package it was checked
    against (the files were just hashed for it); without a checked manifest it reads them."""
    from hiplint import cache

    entries = manifest.load().entries
    checked = cache._code_digest(entries)
    manifest.load.cache_clear()
    try:
        read = cache._code_digest(entries)  # no manifest loaded in this run: every file read
        assert read != checked and read == cache._code_digest(entries)
    finally:
        manifest.load()
    assert cache._code_digest(entries) == checked
    # Installed, the rules sit inside hiplint's own folder: that walk skips them.
    (tmp_path / "pkg" / "rules").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("")
    (tmp_path / "pkg" / "rules" / "b.py").write_text("")
    assert [p.rsplit("/", 1)[1] for p in cache._code_files(str(tmp_path / "pkg"))] == ["a.py", "b.py"]
    assert [p.rsplit("/", 1)[1] for p in cache._code_files(str(tmp_path / "pkg"), {str(tmp_path / "pkg" / "rules")})] == ["a.py"]
