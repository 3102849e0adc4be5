"""The rules' TOML tables, read from parsed copies.

Each table `rules/**/X.toml` has `X.json` beside it: `{"sha256": <of the TOML's bytes>, "table": <the
TOML parsed>}`. Reading the JSON takes a few milliseconds where parsing the TOML takes tens (the
cuSOLVER API table about 0.1 s, the eleven rename tables about 30 ms): a sizeable part of a one-file
run. A copy that is missing, unreadable or made from other bytes is ignored and the TOML is parsed,
so a stale copy costs time, never correctness.

    python -m hiplint.tomlcopy            # write the copies (after editing a table)
    python -m hiplint.tomlcopy --check    # exit 1 when one is missing or stale

`tests/test_toml_copies.py` fails while a shipped copy is stale.
"""
from __future__ import annotations

import hashlib
import json
import os


def copy_path(path) -> str:
    """Where the parsed copy of the TOML file `path` is."""
    return os.path.splitext(str(path))[0] + ".json"


def parse(raw: bytes) -> dict:
    import tomllib  # imported here: a run whose copies all match never parses TOML

    return tomllib.loads(raw.decode("utf-8"))


def copy_text(raw: bytes) -> str:
    """The parsed copy of a TOML file whose bytes are `raw`."""
    return json.dumps({"sha256": hashlib.sha256(raw).hexdigest(), "table": parse(raw)},
                      ensure_ascii=False, separators=(",", ":")) + "\n"


def from_copy(raw: bytes, copy: bytes | None) -> dict:
    """The TOML `raw` parsed: from `copy` (a parsed copy's bytes) when it was made from `raw`."""
    if copy is not None:
        try:
            parsed = json.loads(copy)
            if parsed.get("sha256") == hashlib.sha256(raw).hexdigest() and isinstance(parsed.get("table"), dict):
                return parsed["table"]
        except (ValueError, AttributeError, TypeError):
            pass
    return parse(raw)


def load(path) -> dict:
    """The TOML file `path` parsed (tomllib's errors for a file that is not TOML)."""
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        with open(copy_path(path), "rb") as fh:
            copy = fh.read()
    except OSError:
        copy = None
    return from_copy(raw, copy)


def tables(root: str) -> list[str]:
    """Every TOML table under `root` (the rules package), sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        out.extend(os.path.join(dirpath, n) for n in filenames if n.endswith(".toml"))
    return sorted(out)


def main(argv=None) -> int:
    """Write the parsed copy of every table under rules/ (`--check`: exit 1 when one is missing or stale)."""
    import sys

    from hiplint.manifest import rules_dir

    argv = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in argv
    root = rules_dir()
    stale = []
    for path in tables(root):
        with open(path, "rb") as fh:
            want = copy_text(fh.read())
        target = copy_path(path)
        try:
            with open(target, encoding="utf-8") as fh:
                have = fh.read()
        except OSError:
            have = None
        if have != want:
            stale.append(os.path.relpath(target, os.path.dirname(root)).replace(os.sep, "/"))
            if not check:
                with open(target, "w", encoding="utf-8") as fh:
                    fh.write(want)
    for name in stale:
        print(f"{'stale' if check else 'wrote'}: {name}" + (" (run `python -m hiplint.tomlcopy`)" if check else ""))
    return 1 if (check and stale) else 0


if __name__ == "__main__":
    raise SystemExit(main())
