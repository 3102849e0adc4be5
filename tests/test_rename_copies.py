"""The parsed copy (rules/rename/parsed.json) of the rename tables: current, equal to the TOML, and
ignored for a file it does not match."""
import json
import tomllib

from hiplint import renames


def test_shipped_parsed_copy_is_current():
    # Regenerate with: python -m hiplint.renames
    assert renames.main(["--check"]) == 0, "rules/rename/parsed.json is stale: run `python -m hiplint.renames`"


def test_parsed_copy_reads_as_the_toml_does():
    directory = renames.table_dir()
    copies = renames._parsed_copies(directory)
    paths = sorted(directory.glob("*.toml"))
    assert paths and set(copies) == {p.name for p in paths}
    for path in paths:
        assert renames._read(path, copies) == tomllib.loads(path.read_text(encoding="utf-8")), path.name


def test_a_stale_or_broken_copy_is_ignored(tmp_path):
    body = '[family]\ntitle="A"\nsource="x"\n[rename]\ncudaFoo="hipFoo"\n'
    (tmp_path / "a.toml").write_text(body)
    stale = {"files": {"a.toml": {"sha256": "0" * 64, "table": {"family": {"title": "A", "source": "x"},
                                                                   "rename": {"cudaFoo": "hipBar"}}}}}
    (tmp_path / renames.PARSED_NAME).write_text(json.dumps(stale))
    assert renames.load_from(tmp_path).names == {"cudaFoo": "hipFoo"}
    (tmp_path / renames.PARSED_NAME).write_text(renames.parsed_copy(tmp_path))
    assert renames.load_from(tmp_path).names == {"cudaFoo": "hipFoo"}
    (tmp_path / "a.toml").write_text(body.replace("hipFoo", "hipBaz"))  # edited after the copy was made
    assert renames.load_from(tmp_path).names == {"cudaFoo": "hipBaz"}
    for broken in ("{not json", '{"files": []}', '{"files": {"a.toml": 3}}'):
        (tmp_path / renames.PARSED_NAME).write_text(broken)
        assert renames.load_from(tmp_path).names == {"cudaFoo": "hipBaz"}
