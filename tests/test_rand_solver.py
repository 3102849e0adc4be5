"""cuRAND/cuSOLVER packs: table shape, documentation examples, build-file tokenizer."""
import tomllib
from importlib import resources

import pytest

from hiplint.rules._apitable import STATUSES, VERSION_RE, load_table
from hiplint.context import FileContext
from hiplint.rules._linkrule import _unaware_tokens
from hiplint.source import Source

FAMILIES = ("curand", "cusolver")


@pytest.mark.parametrize("family", FAMILIES)
def test_table_shape(family):
    text = resources.files("hiplint.rules").joinpath(family, "api.toml").read_text()
    data = tomllib.loads(text)
    sources = data["sources"]
    assert sources and all(v.startswith("https://") for v in sources.values())
    rows = data["api"]
    assert len(rows) > 100
    cuda = [r["cuda"] for r in rows]
    assert len(cuda) == len(set(cuda)), "duplicate CUDA names"
    for r in rows:
        assert r["status"] in STATUSES, r
        assert r.get("note"), r
        assert r.get("source"), r
        assert all(k in sources for k in r["source"].split()), r
        if r.get("since"):
            assert VERSION_RE.match(r["since"]), r
        if r["status"] == "unsupported":
            assert not r.get("hip"), r
        else:
            assert r.get("hip"), r
    # A HIP spelling may equal its own CUDA name (skipahead), never another row's CUDA name.
    clashes = [r for r in rows if r.get("hip") and r["hip"] != r["cuda"] and r["hip"] in set(cuda)]
    assert not clashes


def test_tables_hold_the_documented_facts():
    rand = {r.cuda: r for r in load_table("curand").rows}
    solver = {r.cuda: r for r in load_table("cusolver").rows}
    assert rand["curandSetGeneratorOrdering"].since == "6.2.0"
    assert rand["curand_mtgp32_single_specific"].status == "unsupported"
    assert rand["curandCreateGenerator"].hip == "hiprandCreateGenerator"
    assert solver["cusolverRfBatchSolve"].status == "not-supported-at-runtime"
    assert solver["cusolverDnXgetrf"].since == "6.2.0" and solver["cusolverDnXpotrf"].since == "6.3.0"
    assert solver["cusolverDnXgesvd"].status == "unsupported"
    assert all(r.status == "unsupported" for r in solver.values() if r.family == "mg")
    assert {r.family for r in solver.values()} >= {"dn", "dn-64", "dn-jacobi", "dn-irs", "sp", "rf", "mg"}
    assert {r.family for r in rand.values()} == {"host", "device"}


def tokens(data: bytes, cmake: bool) -> list[tuple]:
    ctx = FileContext("CMakeLists.txt" if cmake else "Makefile", Source("x", data), None,
                      "cmake" if cmake else "make")
    return list(_unaware_tokens(ctx, cmake))


def test_link_tokens_respect_comments_quotes_and_rocm_branches():
    data = b'LIBS = -lcurand # -lcusolver\nX = "-lhip -lcusolver" \'# not a comment\'\n'
    toks = tokens(data, cmake=False)
    words = [t[0] for t in toks]
    assert "-lcurand" in words and words.count("-lcusolver") == 1 and "-lhip" in words
    for text, start, end, _ in toks:
        assert data[start:end].decode() == text
    cm = b'target_link_libraries(app PRIVATE curand) #[[ cusolver ]] set(x cusolver)\n'
    toks = tokens(cm, cmake=True)
    assert [t[0] for t in toks if t[3]] == ["app", "PRIVATE", "curand"]
    assert [t[0] for t in toks if t[0] == "cusolver" and not t[3]] == ["cusolver"]
    escaped = [t[0] for t in tokens(b"X = a\\#b -lcurand # -lcusolver\n", cmake=False)]
    assert escaped == ["X", "=", "a\\#b", "-lcurand"]
    branches = b'if(GPU_RUNTIME STREQUAL "CUDA")\n  target_link_libraries(a CUDA::curand)\nelse()\n' \
               b'  target_link_libraries(a roc::rocrand curand)\nendif()\nif(USE_HIP)\n  set(L cusolver)\nendif()\n'
    assert [t[0] for t in tokens(branches, cmake=True) if "rand" in t[0] or "solver" in t[0]] == ["roc::rocrand", "curand"]
