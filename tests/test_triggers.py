"""Rules skipped by a file's text (hiplint.triggers, hiplint.queryplan): never a changed finding."""
from __future__ import annotations

import random

import pytest
from tree_sitter import Query

from conftest import FIXTURES
from hiplint import CudaRule
from hiplint.config import Settings
from hiplint.cparse import language
from hiplint.engine import Linter
from hiplint.languages import language_of
from hiplint.lookup import LookupPattern
from hiplint.queryplan import QueryPlan
from hiplint.registry import load_registry, select_rules
from hiplint.testing import fixture_files, fixture_settings, parse_expectations
from hiplint.triggers import TextSearch, pattern_requirement, regex_literals

C_FIXTURES = [p for p in fixture_files(FIXTURES) if language_of(str(p)) == "cuda"]
PY_FIXTURES = [p for p in fixture_files(FIXTURES) if language_of(str(p)) == "python"]


@pytest.mark.parametrize("regex, expected", [
    ("^(cusolverDn|hipsolverDn)", {"cusolverDn", "hipsolverDn"}),
    ("^(cu|hip)blas(Lt)?(Gemm|MatmulDesc)", {"cublas", "hipblas"}),
    ("^__(h|half2)", {"__h", "__half2"}),
    ("tiled_partition$", {"tiled_partition"}),
    ("(nv|hip)rtc[A-Z]\\w*|cuLink\\w*", {"nvrtc", "hiprtc", "cuLink"}),
    ("^__nv_fp8_e[45]m[23]", {"__nv_fp8_e4m2", "__nv_fp8_e4m3", "__nv_fp8_e5m2", "__nv_fp8_e5m3"}),
    ("^(CUBLAS|HIPBLAS)_", {"CUBLAS_", "HIPBLAS_"}),
])
def test_regex_literals(regex, expected):
    assert regex_literals(regex) == expected


@pytest.mark.parametrize("regex", ["^[a-z]+x", "(?i)^cublas", "^(ab|cd)", "^(ab)?cdef", "x|^(a|b)"])
def test_regex_without_a_usable_literal(regex):
    assert regex_literals(regex) is None


def test_regex_literals_hold_on_matches():
    # Every string a regex matches contains one of its literals.
    cases = {"^(cu|hip)blas(Lt)?(Gemm|MatmulDesc)": ["cublasGemmEx", "hipblasLtMatmulDescCreate"],
             "^__nv_fp8x?[24]?_e[45]m[23]": ["__nv_fp8_e4m3", "__nv_fp8x2_e5m2"]}
    for regex, samples in cases.items():
        lits = regex_literals(regex)
        assert lits is None or all(any(l in s for l in lits) for s in samples)


def _requirement(pattern: str):
    q = Query(language(), pattern)
    return pattern_requirement(q, 0, pattern)


def test_pattern_requirement_from_predicates():
    assert _requirement('((identifier) @n (#eq? @n "__trap"))') == {"__trap"}
    assert _requirement('((identifier) @n (#any-of? @n "curand_init" "hiprand_init"))') == {"curand_init", "hiprand_init"}
    assert _requirement('((call_expression function: (identifier) @f) @c (#match? @f "^cusolverDn"))') == {"cusolverDn"}
    # The tightest of several predicates.
    assert _requirement('((identifier) @n (#match? @n "^cu") (#any-of? @n "cudaFoo"))') == {"cudaFoo"}


@pytest.mark.parametrize("pattern", [
    '(call_expression) @c',
    # A predicate on a capture a match may lack is vacuously true: no gate.
    '((call_expression function: [(identifier) @a (field_expression) @b]) @c (#eq? @a "zzz"))',
    '((call_expression function: (identifier)? @a) @c (#match? @a "^zzz"))',
    '((identifier) @n (#not-eq? @n "cudaMalloc"))',
    '((identifier) @n (#match? @n "^[a-z]"))',
])
def test_no_requirement(pattern):
    assert _requirement(pattern) is None


def test_text_search_finds_every_occurrence():
    rng = random.Random(7)
    words = [b"cuda", b"cudaMalloc", b"cudaMallocManaged", b"curand", b"curandState", b"__shfl", b"__shfl_sync",
             b"nvcuda", b"wmma", b"major", b"<<<", b"cudaDevAttrA", b"cudaDevAttrB", b"\xe9t\xe9"]
    search = TextSearch(words)
    for _ in range(300):
        data = b" ".join(rng.sample(words + [b"x", b"int", b"cu", b"cudaDev", b"\xff\xfe"], 6))
        expected = {w: [i for i in range(len(data)) if data.startswith(w, i)] for w in words}
        assert search.occurrences(data) == {w: at for w, at in expected.items() if at}
    assert TextSearch([]).occurrences(b"cuda") == {}


def _lookup(pattern: str) -> LookupPattern | None:
    """The pattern as the plan would take it: a lookup only when it has a requirement."""
    req = _requirement(pattern)
    return LookupPattern.parse(pattern, (None, 0), frozenset(s.encode() for s in req)) if req else None


@pytest.mark.parametrize("pattern", [
    '((identifier) @n (#eq? @n "__trap"))',
    '([(identifier) (type_identifier)] @name (#match? @name "^(cusolverDn|hipsolver)") (#not-any-of? @name "cusolverDnX"))',
    '[(identifier) (field_identifier)] @f (#any-of? @f "major" "minor")',
])
def test_single_token_patterns_become_lookups(pattern):
    assert _lookup(pattern) is not None


@pytest.mark.parametrize("pattern", [
    '((call_expression function: (field_expression) @f) @c (#eq? @f "atomicCAS"))',  # not a name
    '((call_expression function: (identifier) @f arguments: (argument_list . (_) @a)) @c (#eq? @f "atomicCAS"))',
    '((string_literal) @s (#match? @s "cuda"))',  # not a token kind
    '((identifier) @n (#eq? @n "abc") (#lua-match? @n "^abc"))',  # a predicate lookups do not model
    '((identifier) @n (#match? @n "^abc") (#eq? @n @n))',
    '((call_expression function: (identifier) @c) @c (#eq? @c "atomicCAS"))',  # one name for two captures
])
def test_other_patterns_stay_queries(pattern):
    assert _lookup(pattern) is None


@pytest.mark.parametrize("pattern", [
    '((identifier) @n (#eq? @n "cudaMalloc"))',
    '([(identifier) (type_identifier)] @n (#match? @n "^cuda") (#not-match? @n "Async$"))',
    '([(type_identifier)] @n (#any-of? @n "cudaStream_t" "cudaEvent_t"))',
    '((field_identifier) @n (#match? @n "^major"))',
    '((identifier) @n (#not-eq? @n "cudaFree") (#match? @n "^cudaF"))',
    '((call_expression function: (identifier) @n) @call (#match? @n "^cuda(Malloc|Free)"))',
    '((call_expression function: (identifier) @n arguments: (argument_list) @args) @call (#eq? @n "cudaFree"))',
    '((call_expression function: (identifier) @n arguments: (argument_list)) @call (#any-of? @n "cudaMalloc" "cudaFree"))',
])
def test_lookup_matches_what_the_query_matches(pattern):
    from tree_sitter import QueryCursor
    from hiplint.cparse import new_parser

    data = (b"// cudaMalloc in a comment\n#define M cudaMalloc\n"
            b"cudaStream_t s; cudaEvent_t e; struct P { int major; int majorx; } p;\n"
            b"void f(void* q) { cudaMalloc(&q, 4); xcudaMalloc(q); cudaFree(q); cudaFreeAsync(q, s);\n"
            b"  const char* t = \"cudaMalloc\"; int v = p.major + p.majorx; cudaMallocAsync(&q, 4, s);\n"
            b"  void (*g)(void*) = cudaFree; p.cudaFree(q); ns::cudaFree(q); (cudaFree)(q); k<<<1, 1>>>(cudaMalloc); }\n")
    root = new_parser().parse(data).root_node
    lookup = _lookup(pattern)
    search = TextSearch(lookup.wants)

    def spans(captures):
        return [(name, [(n.start_byte, n.end_byte) for n in nodes]) for name, nodes in captures.items()]

    by_lookup = sorted(spans(c) for _, c in lookup.matches(root, data, search.occurrences(data)))
    by_query = sorted(spans(c) for _, c in QueryCursor(Query(language(), pattern)).matches(root))
    assert by_lookup == by_query and by_query


def _fixture_linter(path, language):
    """A linter with every rule (and the fixture's own settings) for a fixture, and its bytes."""
    data = path.read_bytes()
    ex = parse_expectations(data.decode("utf-8", "replace"), hash_comments=language == "python")
    settings = fixture_settings(ex, path).with_overrides(extend_select=("ALL",) + tuple(sorted(ex.codes)))
    return Linter(settings, select_rules(settings, load_registry())), data


def _findings_with_and_without_skipping(path, language):
    linter, data = _fixture_linter(path, language)

    def run(gating):
        linter.gating = gating
        return [(f.code, f.line, f.column, f.message) for f in linter.lint_bytes(str(path), data, language).findings]

    return run(True), run(False)


@pytest.mark.parametrize("path", C_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_gating_changes_no_finding(path):
    """Every rule, with and without skipping by text and lookups (the reference: one query with every
    pattern, on every file), on every C-family fixture: the same findings."""
    gated, reference = _findings_with_and_without_skipping(path, "cuda")
    assert gated == reference


def test_a_closed_gate_drops_its_patterns_matches(monkeypatch):
    """Gated patterns walk with the base ones, in one query: a pattern whose gate the file does not
    open may match (SLV004's comparison pattern matches any `<`), but its rule is never called."""
    settings = Settings().with_overrides(extend_select=("ALL",))
    linter = Linter(settings, select_rules(settings, load_registry()))
    linter.prepare()
    plan = linter._plan
    gated = [(g, o) for g in plan.gates for o in g.owners if o[0].code == "SLV004"]
    assert gated, "SLV004 has a gated pattern"
    rule = gated[0][1][0]
    calls = []
    original = type(rule).check

    def spy(self, ctx, captures):
        calls.append(ctx.path)
        return original(self, ctx, captures)

    monkeypatch.setattr(type(rule), "check", spy)
    plain = b"__global__ void k(int *a, int n) { if (threadIdx.x < n) a[threadIdx.x] = 0; }\n"
    linter.lint_bytes("plain.cu", plain, "cuda")
    assert calls == []
    solver = b"#include <cusolverDn.h>\nvoid f(int info) { if (info < 0) cusolverDnCreate(0); }\n"
    linter.lint_bytes("solver.cu", solver, "cuda")
    assert calls == ["solver.cu"]
    # The owners of a file that opens no gate: no gated pattern has one.
    closed = plan.queries_for(frozenset())[0][1]
    assert all(closed[slot] is None for g in plan.gates for slot in g.slots)


def test_files_of_every_kind_compile_no_query_after_the_plan(monkeypatch):
    """The plan's query is compiled once (in the parent, before workers fork): no file, whatever gates
    it opens, compiles another (a compile costs at least 20 ms)."""
    import hiplint.queryplan as qp

    settings = Settings().with_overrides(extend_select=("ALL",))
    linter = Linter(settings, select_rules(settings, load_registry()))
    linter.prepare()
    compiled = []

    real = qp.Query

    def counting(*args):
        compiled.append(args)
        return real(*args)

    monkeypatch.setattr(qp, "Query", counting)
    for path in C_FIXTURES[::4]:
        linter.lint_bytes(str(path), path.read_bytes(), "cuda")
    assert len(linter._plan._by_gates) > 3  # files that open different gates
    assert compiled == []


@pytest.mark.parametrize("path", PY_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_python_rules_skipped_by_text_change_no_finding(path):
    """Python rules run only on files with their `triggers` (no libcst parse otherwise): every
    Python fixture gives the same findings with and without that."""
    gated, reference = _findings_with_and_without_skipping(path, "python")
    assert gated == reference


def test_a_python_file_without_any_rules_names_is_not_parsed():
    from hiplint import pyparse

    settings = Settings()
    linter = Linter(settings, [r for r in select_rules(settings, load_registry()) if "python" in r.languages])
    assert all(r.triggers for r in linter.file_rules["python"])
    seen = []
    original = pyparse.get

    def spy(ctx):
        seen.append(ctx.path)
        return original(ctx)

    import hiplint.pyparse as module
    module.get = spy
    try:
        # `sys.version_info` is not the torch version attribute PY001 reads: a Python 2 tool script
        # that names no GPU stack has no Python 3 error to report.
        quiet = linter.lint_bytes("plain.py", b"import sys\nif sys.version_info[0] == 2:\n    print 'py2'\n", "python")
        loud = linter.lint_bytes("gpu.py", b"import torch\nprint 'cuda'\n", "python")
    finally:
        module.get = original
    assert quiet.findings == [] and "plain.py" not in seen
    assert [f.code for f in loud.findings] == ["PY000"] and "gpu.py" in seen


_PLANS: dict = {}  # rule codes -> (plan built, plan restored from its saved layout)


def _built_and_restored(linter):
    import json

    codes = tuple(r.code for r in linter.cuda_rules + linter.unit_rules)
    if codes not in _PLANS:
        built = QueryPlan.build(linter.cuda_rules, linter.unit_rules)
        layout = json.loads(json.dumps(built.layout(linter.cuda_rules)))  # as saved: through JSON
        _PLANS[codes] = built, QueryPlan.from_layout(layout, linter.cuda_rules, linter.unit_rules)
    return _PLANS[codes]


@pytest.mark.parametrize("path", C_FIXTURES[1::3], ids=lambda p: str(p.relative_to(FIXTURES)))
def test_saved_plan_changes_no_finding(path):
    """A run that finds the rules' query split saved (hiplint.engine) compiles only the base query and
    the gates it opens: the same split, and the same findings in the same order."""
    linter, data = _fixture_linter(path, "cuda")
    linter.prepare()
    built, restored = _built_and_restored(linter)
    assert restored.restored and not built.restored
    assert restored.base_patterns == built.base_patterns
    assert [(g.wants, g.patterns, [o[1] for o in g.owners]) for g in restored.gates] == \
        [(g.wants, g.patterns, [o[1] for o in g.owners]) for g in built.gates]
    assert restored.lookup_patterns == built.lookup_patterns and restored.lookup_wants == built.lookup_wants

    def run(plan):
        linter._plan = plan
        return [(f.code, f.line, f.column, f.message) for f in linter.lint_bytes(str(path), data, "cuda").findings]

    assert run(restored) == run(built)


def test_plan_saved_then_restored_and_a_bad_one_rebuilt(tmp_path, monkeypatch):
    import hiplint.engine as engine

    settings = Settings()
    rules = select_rules(settings, load_registry())

    def fresh():
        monkeypatch.setattr(engine, "_QUERIES", {})  # as in a new process
        # Not the built-in rules' split from the manifest (tests/test_manifest.py): the saved one.
        monkeypatch.setattr(engine.Linter, "_manifest_plan", lambda self: None)
        linter = Linter(settings, rules)
        linter.plan_dir = str(tmp_path / "plans")
        linter.prepare()
        return linter

    first = fresh()
    saved = list((tmp_path / "plans").iterdir())
    assert len(saved) == 1 and not first._plan.restored
    second = fresh()
    assert second._plan.restored
    assert list((tmp_path / "plans").iterdir()) == saved  # same rules, same file
    data = (FIXTURES / "sample" / "src" / "histogram.cu").read_bytes()
    codes = [f.code for f in second.lint_bytes("h.cu", data, "cuda").findings]
    assert codes and codes == [f.code for f in first.lint_bytes("h.cu", data, "cuda").findings]
    # Other splitting code (a changed checkout, same version number): another file, built afresh.
    monkeypatch.setattr(engine, "_splitter_digest", lambda: "other code")
    assert not fresh()._plan.restored and len(list((tmp_path / "plans").iterdir())) == 2
    monkeypatch.undo()
    monkeypatch.setattr(engine, "_QUERIES", {})
    # A pattern that is not the rule's, or a file cut short: built again, never trusted.
    layout = saved[0].read_text()
    saved[0].write_text(layout.replace('(preproc_include', '(call_expression', 1))
    assert not fresh()._plan.restored
    saved[0].write_text(layout[: len(layout) // 2])
    assert not fresh()._plan.restored


@pytest.mark.parametrize("path", C_FIXTURES[2::9], ids=lambda p: str(p.relative_to(FIXTURES)))
def test_restored_plan_first_file_compiles_only_its_gates(path, monkeypatch):
    """A fresh restored plan compiles, for its first file, only the base and the gates that file
    opens (a one-file run past the budget of matching in Python, tests/test_treematch.py); a second
    set of open gates compiles the whole query. Same findings."""
    import json

    import hiplint.queryplan as qp

    monkeypatch.setattr(qp, "TREE_MATCH_BUDGET", 0)

    linter, data = _fixture_linter(path, "cuda")
    linter.prepare()
    built = QueryPlan.build(linter.cuda_rules, linter.unit_rules)
    layout = json.loads(json.dumps(built.layout(linter.cuda_rules)))
    fresh = QueryPlan.from_layout(layout, linter.cuda_rules, linter.unit_rules)
    assert fresh.query is None

    def run(plan):
        linter._plan = plan
        return [(f.code, f.line, f.column, f.message) for f in linter.lint_bytes(str(path), data, "cuda").findings]

    assert run(fresh) == run(built)
    assert fresh._first is not None and fresh.query is None
    # Another set of open gates (nothing in the file at all): the whole query from then on.
    other = frozenset() if fresh._first[0] else frozenset(w for g in fresh.gates for w in g.wants)
    fresh.queries_for(other)
    assert fresh.query is not None
    assert run(fresh) == run(built)
