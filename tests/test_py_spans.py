"""PyModule.span resolves positions per top-level statement: the same byte offsets as libcst's
position pass over the whole module on every Python fixture, and the right bytes of the file where
that pass is off (a UTF-8 BOM, a latin-1 file: libcst counts UTF-8 bytes of its own text)."""
import libcst as cst
import pytest
from libcst.metadata import ByteSpanPositionProvider, MetadataWrapper

from conftest import FIXTURES
from hiplint.pyparse import PyModule, _Collected
from hiplint.source import Source

AWKWARD = {
    "crlf": b"# header\r\nimport torch\r\n\r\nif torch.version.cuda:\r\n    x = 1\r\n",
    "bom": b"\xef\xbb\xbf# -*- coding: utf-8 -*-\nimport os\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\n",
    "latin1": "# -*- coding: latin-1 -*-\n# caf\u00e9\ns = 'na\u00efve'\nimport torch\nv = torch.version.cuda\n".encode("latin-1"),
    "no_newline": b"import torch\n\n\n# trailing comment\nv = torch.version.cuda",
    "multibyte": "s = '\u00e9\u00e9\u00e9'\ndef f():\n    return '\u4e2d\u6587' + torch.version.cuda\n".encode(),
}


def _module(data: bytes) -> PyModule:
    module = cst.parse_module(data)
    return PyModule(module, Source("x.py", data), _Collected(module))


def _check(data: bytes) -> int:
    py = _module(data)
    full = MetadataWrapper(py.module, unsafe_skip_copy=True).resolve(ByteSpanPositionProvider)
    for node, s in full.items():
        assert py.span(node) == (s.start, s.start + s.length), type(node).__name__
    return len(full)


@pytest.mark.parametrize("name", sorted(AWKWARD))
def test_awkward_files_point_at_the_right_bytes(name):
    data = AWKWARD[name]
    py = _module(data)
    enc = "latin-1" if name == "latin1" else "utf-8"
    names = py.nodes(cst.Name, cst.SimpleString)
    assert len(names) > 3
    for node in names:
        start, end = py.span(node)
        assert data[start:end].decode(enc) == py.module.code_for_node(node), (name, node)


def test_every_python_fixture():
    checked = 0
    for path in sorted(FIXTURES.rglob("*.py")):
        try:
            checked += _check(path.read_bytes())
        except cst.ParserSyntaxError:
            continue  # PY000's fixtures
    assert checked > 1000


class _Visited(cst.CSTVisitor):
    """What a libcst visitor sees, in its order: the reference for the field walk of _Collected."""

    def __init__(self):
        self.order, self.parents, self._stack = [], {}, []

    def on_visit(self, node):
        self.order.append(node)
        if self._stack:
            self.parents[node] = self._stack[-1]
        self._stack.append(node)
        return True

    def on_leave(self, original_node):
        self._stack.pop()


def _parses(path) -> bool:
    try:
        cst.parse_module(path.read_bytes())
        return True
    except cst.ParserSyntaxError:  # the PY000 fixture
        return False


@pytest.mark.parametrize("path", [p for p in sorted(FIXTURES.rglob("*.py")) if _parses(p)] + sorted(AWKWARD),
                         ids=lambda p: str(p.relative_to(FIXTURES)) if not isinstance(p, str) else p)
def test_field_walk_sees_what_a_visitor_sees(path):
    module = cst.parse_module(AWKWARD[path] if isinstance(path, str) else path.read_bytes())
    visited = _Visited()
    module.visit(visited)
    walked = _Collected(module)
    for kind in {type(n) for n in visited.order}:
        assert [id(n) for n in walked.by_type[kind]] == [id(n) for n in visited.order if type(n) is kind], kind.__name__
    assert sum(map(len, walked.by_type.values())) == len(visited.order)
    assert {k: id(v) for k, v in walked.parents.items()} == {id(k): id(v) for k, v in visited.parents.items()}
