"""Parsing shortcuts the benchmark asked for must not change what rules see."""
import pytest

import hiplint.cparse as cparse
from hiplint.cparse import iter_nodes, walk_tree, new_parser, parse_file
from hiplint.config import Settings
from hiplint.engine import Linter
from hiplint.registry import load_registry, select_rules

SOURCE = b"""\
#define BEGIN_NS namespace port {
#define END_NS }
#define LANE() (threadIdx.x & 31)
#define BAD_BODY(x) ((x) + + )
#define WARP_OF(t) ((t) >> 5)
#define SUM(a, b) do { (a) += (b); } while (0)
BEGIN_NS
__global__ void k(int* o) {
#if defined(__HIP_PLATFORM_AMD__)
    o[threadIdx.x & 63] = 0;  // a comment
#else
    o[LANE()] = WARP_OF(threadIdx.x) + __shfl_down_sync(__activemask(), 0, 1);
#endif
}
END_NS
"""


def _units_summary(units):
    return [(u.macro_name, u.delta + u.root.start_byte, cparse.Unit.text(u, u.root)) for u in units]


def test_batched_macro_units_match_single_parses():
    parser = new_parser()
    balanced = b"\n".join(l for l in SOURCE.split(b"\n") if not l.startswith((b"#define BEGIN_NS", b"BEGIN_NS")))
    units = parse_file(parser, balanced)
    assert [u.macro_name for u in units[1:]] == ["LANE", "BAD_BODY", "WARP_OF", "SUM"]
    assert all(u.node is not None for u in units[1:])  # batched
    bodies = [(u.macro, u.macro_name, u.macro.child_by_field_name("value").start_byte,
               u.data[u.root.start_byte:u.root.end_byte + 2]) for u in units[1:]]
    single = cparse._single_macro_units(parser, bodies)
    for b, s in zip(units[1:], single):
        fn = s.root.named_children[0]
        # Same text at the same file offsets, whichever way it was parsed.
        assert b.text(b.root) == s.text(fn)
        assert b.root.start_byte + b.delta == fn.start_byte + s.delta
        assert b.root.has_error == fn.has_error


def test_batching_falls_back_when_a_body_leaks():
    parser = new_parser()
    balanced = b"#define A(x) ((x) + 1)\n#define B(x) do { f(x); } while (0)\n"
    assert all(u.node is not None for u in parse_file(parser, balanced)[1:])  # one shared parse
    leaky = b"#define OPEN(x) { if (x) {\n#define F(a) (a) * 2\n"
    units = parse_file(parser, leaky)
    assert all(u.node is None for u in units[1:])  # the open braces would swallow F: parsed one by one
    # Whether batched or not, each unit maps back to its own macro body in the file.
    for u in units[1:]:
        value = u.macro.child_by_field_name("value")
        text = leaky[value.start_byte:value.end_byte].decode()
        assert text.strip() in u.data.decode()


def test_findings_do_not_depend_on_batching(monkeypatch):
    s = Settings()
    linter = Linter(s, select_rules(s, load_registry()))

    def findings():
        return [(f.code, f.line, f.column, f.message, f.fingerprint)
                for f in linter.lint_bytes("k.cu", SOURCE, "cuda").findings]

    batched = findings()
    assert [(c, l) for c, l, *_ in batched] == [("WRP001", 3)]
    monkeypatch.setattr(cparse, "_batched_macro_units", lambda *a: None)
    assert findings() == batched


def test_query_iteration_equals_python_walk():
    tree = new_parser().parse(SOURCE)
    for kinds in ({"comment"}, {"preproc_if", "preproc_ifdef"}, {"preproc_def", "preproc_function_def"},
                  {"identifier"}, {"binary_expression", "call_expression"}):
        got = [(n.start_byte, n.end_byte, n.type) for n in iter_nodes(tree.root_node, kinds)]
        want = [(n.start_byte, n.end_byte, n.type) for n in walk_tree(tree.root_node, kinds)]
        assert got == want and got, kinds
    # Inside a subtree (rules search a function's body), and with kinds given as a tuple.
    fn = next(iter_nodes(tree.root_node, {"function_definition"}))
    for kinds in (("identifier",), ("binary_expression", "subscript_expression")):
        got = [(n.start_byte, n.end_byte) for n in iter_nodes(fn, kinds)]
        assert got == [(n.start_byte, n.end_byte) for n in walk_tree(fn, set(kinds))] and got
    # Anonymous tokens cannot be queried by kind: the walk still finds them.
    assert [n.type for n in iter_nodes(tree.root_node, {"#endif"})] == ["#endif"]
