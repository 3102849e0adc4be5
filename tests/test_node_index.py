"""cparse.iter_nodes answers indexed kinds from one query per tree: the same nodes, in the same
(pre-)order, as walking the subtree, for any subtree of any fixture."""
import random
import subprocess
import sys

from conftest import FIXTURES
from hiplint.cparse import _INDEX_KINDS, iter_nodes, walk_tree, new_parser, parse_file
from hiplint.languages import language_of
from hiplint.testing import fixture_files

KIND_SETS = [{"call_expression"}, {"init_declarator", "assignment_expression"}, {"function_definition"},
             {"comment"}, {"preproc_def", "preproc_function_def"}, {"declaration", "parameter_declaration"},
             {"preproc_include"}, {"update_expression", "assignment_expression", "init_declarator"}]


def test_index_matches_a_walk_on_every_fixture():
    rng = random.Random(5)
    parser = new_parser()
    files = [p for p in fixture_files(FIXTURES) if language_of(str(p)) == "cuda"]
    checked = 0
    for path in files:
        for unit in parse_file(parser, path.read_bytes()):
            nodes = list(walk_tree(unit.root, None))
            for sub in rng.sample(nodes, min(15, len(nodes))) + [unit.root]:
                for kinds in KIND_SETS:
                    assert kinds <= _INDEX_KINDS
                    got = [n.id for n in iter_nodes(sub, kinds)]
                    want = [n.id for n in walk_tree(sub, frozenset(kinds))]
                    assert got == want, (str(path), sub.type, kinds)
                    checked += 1
    assert checked > 10000


def test_same_range_parent_is_not_part_of_the_subtree():
    # The function definition spans the whole file (no trailing newline): a subtree query on its
    # body must not return it, a query on the root must.
    tree = new_parser().parse(b"void f() { g(); }")
    root = tree.root_node
    fn = root.children[0]
    assert [n.type for n in iter_nodes(root, {"function_definition"})] == ["function_definition"]
    body = fn.child_by_field_name("body")
    assert list(iter_nodes(body, {"function_definition"})) == []
    assert [n.type for n in iter_nodes(fn, {"call_expression"})] == ["call_expression"]


def test_scanning_cuda_does_not_import_libcst(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k(int* p) { p[threadIdx.x & 31] = 0; }\n")
    code = ("import sys\nfrom hiplint.cli import main\n"
            f"sys.argv = ['hiplint', 'scan', '--isolated', '--no-cache', {str(src)!r}]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('libcst' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"
