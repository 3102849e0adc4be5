"""The parsed copies (X.json beside X.toml, hiplint.tomlcopy) of the rules' TOML tables: current, equal
to the TOML, and ignored when they do not match it."""
import json
import tomllib
from pathlib import Path

from hiplint import renames, tomlcopy
from hiplint.manifest import rules_dir


def test_shipped_parsed_copies_are_current():
    assert tomlcopy.tables(rules_dir()), "no TOML table found"
    assert tomlcopy.main(["--check"]) == 0, "a parsed copy is stale: run `python -m hiplint.tomlcopy`"


def test_every_copy_reads_as_its_toml_does():
    for path in tomlcopy.tables(rules_dir()):
        assert Path(tomlcopy.copy_path(path)).is_file(), path
        assert tomlcopy.load(path) == tomllib.loads(Path(path).read_text(encoding="utf-8")), path


def test_a_stale_missing_or_broken_copy_is_ignored(tmp_path):
    body = '[family]\ntitle="A"\nsource="x"\n[rename]\ncudaFoo="hipFoo"\n'
    toml = tmp_path / "a.toml"
    toml.write_text(body)
    assert renames.load_from(tmp_path).names == {"cudaFoo": "hipFoo"}  # no copy: the TOML
    stale = {"sha256": "0" * 64, "table": {"family": {"title": "A", "source": "x"}, "rename": {"cudaFoo": "hipBar"}}}
    Path(tomlcopy.copy_path(toml)).write_text(json.dumps(stale))
    assert renames.load_from(tmp_path).names == {"cudaFoo": "hipFoo"}
    Path(tomlcopy.copy_path(toml)).write_text(tomlcopy.copy_text(toml.read_bytes()))
    assert json.loads(Path(tomlcopy.copy_path(toml)).read_text())["table"]["rename"] == {"cudaFoo": "hipFoo"}
    assert renames.load_from(tmp_path).names == {"cudaFoo": "hipFoo"}
    toml.write_text(body.replace("hipFoo", "hipBaz"))  # edited after the copy was made
    assert renames.load_from(tmp_path).names == {"cudaFoo": "hipBaz"}
    for broken in ("{not json", "[]", '{"sha256": 3}', "null"):
        Path(tomlcopy.copy_path(toml)).write_text(broken)
        assert renames.load_from(tmp_path).names == {"cudaFoo": "hipBaz"}
    # A table that is not TOML is still reported as such, copy or not.
    toml.write_text("[family\n")
    import pytest

    with pytest.raises(renames.TableError):
        renames.load_from(tmp_path)
