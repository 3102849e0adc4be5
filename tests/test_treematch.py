"""Structured patterns applied in Python (hiplint.treematch) in place of a compiled query: the same matches."""
from __future__ import annotations

import json

import pytest
from tree_sitter import Query, QueryCursor

import hiplint.queryplan as qp
from conftest import FIXTURES
from hiplint.config import Settings
from hiplint.cparse import INDEX_PATTERNS, for_parsing, language, new_parser
from hiplint.engine import Linter
from hiplint.languages import language_of
from hiplint.queryplan import QueryPlan
from hiplint.registry import load_registry, select_rules
from hiplint.testing import fixture_files, fixture_settings, parse_expectations
from hiplint.treematch import TreePattern

C_FIXTURES = [p for p in fixture_files(FIXTURES) if language_of(str(p)) == "cuda"]
SUPERTYPES = qp._supertypes()


def _all_rule_patterns() -> list[str]:
    settings = Settings().with_overrides(extend_select=("ALL",))
    linter = Linter(settings, select_rules(settings, load_registry()))
    plan = QueryPlan.build(linter.cuda_rules, linter.unit_rules)
    n_index = len(INDEX_PATTERNS.split("\n"))
    texts = plan.base_patterns[n_index:] + [p for g in plan.gates for p in g.patterns]
    return sorted({t.strip() for t in texts})


PATTERNS = _all_rule_patterns()
READ = [(t, TreePattern.parse(t, SUPERTYPES.__contains__)) for t in PATTERNS]
READ = [(t, tp) for t, tp in READ if tp is not None]
_COMPILED: dict[str, Query] = {}


def _compiled(text: str) -> Query:
    if text not in _COMPILED:
        _COMPILED[text] = Query(language(), text)
    return _COMPILED[text]


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _spans(captures):
    return {name: [(n.start_byte, n.end_byte, n.type) for n in nodes] for name, nodes in captures.items()}


def test_the_built_in_rules_patterns_are_read():
    # Every structured pattern of the built-in rules is read: a one-file run compiles none of them.
    structured = [t for t in PATTERNS if "(" in t.strip("()").split(")", 1)[0] or t.count("(") > 1]
    assert structured
    assert len(READ) == len(PATTERNS)


@pytest.mark.parametrize("path", C_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_matches_as_the_compiled_query_gives_them(path):
    """Every rule pattern on every C-family fixture: the same matches, captures and order (by where
    the match starts, then as tree-sitter gives them) as the pattern compiled."""
    data = path.read_bytes()
    root = new_parser().parse(for_parsing(data)).root_node
    nodes = list(_walk(root))
    for text, tp in READ:
        by_query = [_spans(c) for _, c in QueryCursor(_compiled(text)).matches(root)]
        found = []
        for n in nodes:
            if tp.kinds is None or n.type in tp.kinds:
                found.extend(tp.matches(n))
        found.sort(key=lambda m: m[0])
        by_python = [_spans(c) for _, c in found]

        def start(m):
            return min(spans[0][0] for spans in m.values())

        assert sorted(by_python, key=start) == sorted(by_query, key=start), text


@pytest.mark.parametrize("pattern", [
    "(call_expression arguments: (argument_list (_)* @args)) @call",  # quantifier
    "(function_definition !body) @f",  # negated field
    '((binary_expression left: (_) @a right: (_) @b) (#eq? @a @b))',  # two captures compared
    "((comment) @c . (function_definition) @f)",  # sibling sequence
    "(expression) @e",  # a supertype
    "(ERROR) @e",
    "(binary_expression left: (_) right: (_))",  # nothing captured
    '((identifier) @a (#set! "x" "y"))',  # another predicate
])
def test_shapes_not_read_stay_queries(pattern):
    Query(language(), pattern)  # a valid query
    assert TreePattern.parse(pattern, SUPERTYPES.__contains__) is None


def test_anchors_and_repeated_children():
    code = b"void f() { g(a, b, c); h(1); }\n"
    root = new_parser().parse(code).root_node
    for text in ["(argument_list . (identifier) @first)", "(argument_list (identifier) @last .)",
                 "(argument_list (identifier) @x . (identifier) @y)", "(argument_list (identifier) @x (identifier) @y)",
                 '((call_expression function: (identifier) @f arguments: (argument_list . (_) @a .)) @c (#eq? @f "h"))']:
        tp = TreePattern.parse(text, SUPERTYPES.__contains__)
        assert tp is not None, text
        by_query = [_spans(c) for _, c in QueryCursor(Query(language(), text)).matches(root)]
        found = sorted((m for n in _walk(root) if tp.kinds is None or n.type in tp.kinds for m in tp.matches(n)),
                       key=lambda m: m[0])
        assert [_spans(c) for _, c in found] == by_query and by_query, text


def _fixture_linter(path):
    data = path.read_bytes()
    ex = parse_expectations(data.decode("utf-8", "replace"))
    settings = fixture_settings(ex, path).with_overrides(extend_select=("ALL",) + tuple(sorted(ex.codes)))
    linter = Linter(settings, select_rules(settings, load_registry()))
    linter.prepare()
    return linter, data


_BUILT: dict = {}  # rule codes -> (plan compiled whole, its saved layout)


def _built(linter):
    codes = tuple(r.code for r in linter.cuda_rules + linter.unit_rules)
    if codes not in _BUILT:
        built = QueryPlan.build(linter.cuda_rules, linter.unit_rules)
        _BUILT[codes] = built, json.loads(json.dumps(built.layout(linter.cuda_rules)))
    return _BUILT[codes]


@pytest.mark.parametrize("path", C_FIXTURES[::2], ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_small_run_gives_the_findings_of_the_compiled_plan(path, monkeypatch):
    """A fresh plan (as a one-file run restores it) matching in Python, and the plan compiled whole:
    the same findings in the same order."""
    linter, data = _fixture_linter(path)
    built, layout = _built(linter)
    fresh = QueryPlan.from_layout(layout, linter.cuda_rules, linter.unit_rules)
    monkeypatch.setattr(qp, "_tree_matched", 0)
    monkeypatch.setattr(qp, "TREE_MATCH_BUDGET", 1 << 40)  # every fixture, whatever its size

    def run(plan):
        linter._plan = plan
        return [(f.code, f.line, f.column, f.message) for f in linter.lint_bytes(str(path), data, "cuda").findings]

    light = run(fresh)
    assert fresh._light is not None and fresh.query is None and fresh._first is None
    assert light == run(built)


def _fresh(linter):
    _, layout = _built(linter)
    fresh = QueryPlan.from_layout(layout, linter.cuda_rules, linter.unit_rules)
    linter._plan = fresh
    return fresh


def test_a_small_run_compiles_no_query_and_a_large_one_compiles_the_plan(monkeypatch):
    """Every built-in pattern is read (treematch) or a node kind: a small file is walked in Python and
    nothing is compiled; past the budget (bytes matched in Python in this process) the plan's
    patterns are compiled once."""
    linter, small = _fixture_linter(FIXTURES / "warp" / "reduction_kernels.cu")
    fresh = _fresh(linter)
    compiled = []
    real = qp.Query
    monkeypatch.setattr(qp, "Query", lambda lang, text: compiled.append(text) or real(lang, text))
    monkeypatch.setattr(qp, "_tree_matched", 0)
    codes = [f.code for f in linter.lint_bytes("a.cu", small, "cuda").findings]
    assert "WRP001" in codes
    assert compiled == [] and type(fresh._light[0]) is qp.KindWalk
    big = small + b"\n" * qp.TREE_MATCH_BUDGET
    assert [f.code for f in linter.lint_bytes("b.cu", big, "cuda").findings] == codes
    assert len(compiled) == 1 and fresh._first is not None


def test_a_pattern_not_read_is_compiled_with_node_kinds_for_the_rest(monkeypatch):
    """A pattern treematch does not read (a rule pack's quantifier, say) stays a query: the light query
    is then compiled, that pattern as written and the others as `(kind) @__root__`. Same findings."""
    path = FIXTURES / "warp" / "reduction_kernels.cu"
    linter, data = _fixture_linter(path)
    built, _ = _built(linter)
    linter._plan = built
    want = [(f.code, f.line, f.column, f.message) for f in linter.lint_bytes(str(path), data, "cuda").findings]
    real_parse = TreePattern.parse
    monkeypatch.setattr(qp.TreePattern, "parse",
                        staticmethod(lambda text, st=None: None if "binary_expression" in text else real_parse(text, st)))
    fresh = _fresh(linter)
    compiled = []
    real = qp.Query
    monkeypatch.setattr(qp, "Query", lambda lang, text: compiled.append(text) or real(lang, text))
    monkeypatch.setattr(qp, "_tree_matched", 0)
    got = [(f.code, f.line, f.column, f.message) for f in linter.lint_bytes(str(path), data, "cuda").findings]
    assert got == want and any(c == "WRP001" for c, *_ in got)
    assert len(compiled) == 1 and "(binary_expression" in compiled[0] and f"@{qp.ROOT_CAPTURE}" in compiled[0]
    query, text = real(language(), compiled[0]), compiled[0].encode()
    for i in range(query.pattern_count):
        pattern = text[query.start_byte_for_pattern(i):query.end_byte_for_pattern(i)].decode().strip()
        assert "binary_expression" in pattern or pattern.count("(") == 1, pattern
