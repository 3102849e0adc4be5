"""PyModule.span resolves positions per top-level statement: the same byte offsets as libcst's
position pass over the whole module on every Python fixture, and the right bytes of the file where
that pass is off (a UTF-8 BOM, a latin-1 file: libcst counts UTF-8 bytes of its own text)."""
import libcst as cst
import pytest
from libcst.metadata import ByteSpanPositionProvider, MetadataWrapper

from conftest import FIXTURES
from hiplint.pyparse import PyModule, _collector_class
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
    collector = _collector_class()()
    module.visit(collector)
    return PyModule(module, Source("x.py", data), collector)


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
