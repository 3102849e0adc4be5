"""The API tables' "no HIP equivalent" rows against ROCm 7.2's own headers.

A row of `[unsupported]` says a port must rewrite the call. If ROCm 7.2 declares the name that the table's
own prefix rule gives (`cudaX` -> `hipX`, `cusolverX` -> `hipsolverX`), that advice is stale and a user
rewrites working code. Reads the headers of the ROCm 7.2 toolchain the compile oracle installs
(tests/oracle/setup.sh), hence the `oracle` marker."""
from __future__ import annotations

import os
import re
import tomllib

import pytest

from hiplint.renames import table_dir

pytestmark = pytest.mark.oracle


def _rocm72_include():
    from oracle.toolchain import ROCM72_ROOT
    include = ROCM72_ROOT / "usr/include"
    if not (include / "hip/hip_runtime_api.h").exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the ROCm 7.2 headers are missing under {include}")
        pytest.skip(f"ROCm 7.2 headers under {include} (tests/oracle/setup.sh)")
    return include


def _declared(include, prefixes: tuple[str, ...]) -> set[str]:
    """Identifiers declared as functions (`name(`), types or enumerators in the ROCm headers of these libraries."""
    names: set[str] = set()
    for top in ("hip", "hipblas", "hipblaslt", "hipsparse", "hipfft", "hipsolver", "hiprand", "rocrand", "hipcub"):
        for directory, _, files in os.walk(include / top):
            for f in files:
                if f.endswith((".h", ".hpp", ".inl")):
                    text = (include / directory / f).read_text(errors="replace")
                    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)  # a name in a comment is no API
                    names.update(n for n in re.findall(r"\b([A-Za-z_]\w*)\b", text) if n.startswith(prefixes))
    return names


def test_no_unsupported_row_names_an_api_rocm72_declares():
    include = _rocm72_include()
    stale = []
    tables = sorted(table_dir().glob("*.toml"))
    assert tables
    for path in tables:
        data = tomllib.loads(path.read_text())
        prefix = data.get("prefix") or {}
        if not prefix.get("from") or not prefix.get("to"):
            continue
        unsupported = data.get("unsupported") or {}
        declared = _declared(include, (prefix["to"],))
        for name in unsupported:
            if name.startswith(prefix["from"]):
                hip = prefix["to"] + name[len(prefix["from"]):]
                if hip in declared:
                    stale.append(f"{path.name}: {name} ({hip} is declared in ROCm 7.2)")
    assert stale == []
