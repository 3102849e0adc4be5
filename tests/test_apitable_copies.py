"""The parsed copies (api.json) of the library API tables: current, equal to the TOML, and ignored
when they do not match it."""
import json
import tomllib
from importlib import resources

from hiplint.rules import _apitable


def test_shipped_parsed_copies_are_current():
    # Regenerate with: python -m hiplint.rules._apitable
    assert _apitable.families(), "no api.toml found"
    assert _apitable.main(["--check"]) == 0


def test_parsed_copy_reads_as_the_toml_does():
    for family in _apitable.families():
        raw = resources.files("hiplint.rules").joinpath(family, "api.toml").read_bytes()
        assert _apitable.read_table_data(family) == tomllib.loads(raw.decode("utf-8")), family


def test_a_stale_copy_is_ignored(tmp_path, monkeypatch):
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "api.toml").write_text('[[api]]\ncuda = "cudaFoo"\nstatus = "supported"\n')
    stale = {"sha256": "0" * 64, "table": {"api": [{"cuda": "cudaBar", "status": "unsupported"}]}}
    (folder / "api.json").write_text(json.dumps(stale))

    class Root:
        def joinpath(self, *parts):
            return tmp_path.joinpath(*parts)

    monkeypatch.setattr(_apitable.resources, "files", lambda package: Root())
    assert _apitable.read_table_data("demo") == {"api": [{"cuda": "cudaFoo", "status": "supported"}]}
    (folder / "api.json").write_text(_apitable._parsed_copy((folder / "api.toml").read_bytes()))
    assert json.loads((folder / "api.json").read_text())["table"]["api"][0]["cuda"] == "cudaFoo"
    (folder / "api.json").write_text("{not json")
    assert _apitable.read_table_data("demo")["api"][0]["cuda"] == "cudaFoo"
