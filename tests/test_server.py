"""`hiplint server`: the language server, driven by a real LSP client (pygls') over stdio, and the
position arithmetic it rests on."""
from __future__ import annotations

import asyncio
import os
import sys
import textwrap

import pytest

from hiplint.server import LineIndex, suppression_edit

# Generous: the test machines are loaded, and a server's first lint compiles the query plan.
WAIT = 120.0

KERNEL = (
    "#include <cuda_runtime.h>\n"
    "\n"
    "__device__ int atomic_agg_inc(int* counter) {\n"
    "    unsigned int active = __activemask();\n"
    "    int leader = __ffs(active) - 1;\n"
    "    /* ünïcødé 🚀 */ int lane = threadIdx.x % 32;\n"
    "    int change = __popc(active);\n"
    "    int res = 0;\n"
    "    if (lane == leader)\n"
    "        res = atomicAdd(counter, change);\n"
    "    res = __shfl_sync(active, res, leader);\n"
    "    return res + __popc(active & ((1u << lane) - 1));\n"
    "}\n"
)


def _utf16(s: str) -> int:
    return len(s.encode("utf-16-le")) // 2


# --- positions ----------------------------------------------------------------------------------

def test_byte_offsets_become_utf16_positions_on_non_ascii_lines():
    text = "a\n/* é 🚀 */ x = 1;\n"
    data = text.encode()
    x = data.index(b"x")
    idx = LineIndex(data, "utf-16")
    assert idx.position(x) == (1, _utf16("/* é 🚀 */ "))  # 🚀 is two UTF-16 units, é one
    assert idx.position(x) == (1, 11)  # 10 code points
    assert LineIndex(data, "utf-8").position(x) == (1, len("/* é 🚀 */ ".encode()))
    assert LineIndex(data, "utf-32").position(x) == (1, len("/* é 🚀 */ "))
    for enc in ("utf-8", "utf-16", "utf-32"):
        i = LineIndex(data, enc)
        assert i.offset(*i.position(x)) == x
        assert i.offset(*i.position(len(data))) == len(data)
    # A finding's own 1-based, code-point column maps to the same place.
    assert idx.position_of_column(2, len("/* é 🚀 */ ") + 1) == idx.position(x)


def test_positions_past_a_line_clamp_and_crlf_is_not_counted():
    data = "ab\r\ncd\r\n".encode()
    idx = LineIndex(data, "utf-16")
    assert idx.position(data.index(b"c")) == (1, 0)
    assert idx.offset(0, 99) == 2  # before the \r
    assert idx.line_text(0) == "ab"


@pytest.mark.parametrize("line, lang, expected", [
    ("    x = f(m);", "cuda", "    x = f(m);  // hiplint: ignore[WRP004] TODO: say why"),
    ("    x = f(m);  // hiplint: ignore[WRP001] old reason", "cuda",
     "    x = f(m);  // hiplint: ignore[WRP001, WRP004] old reason"),
    ("#define M(x) f(x) \\", "cuda", "#define M(x) f(x) /* hiplint: ignore[WRP004] TODO: say why */ \\"),
    ("run(['nvcc'])", "python", "run(['nvcc'])  # hiplint: ignore[WRP004] TODO: say why"),
])
def test_suppression_edit_uses_the_projects_syntax(line, lang, expected):
    at, text = suppression_edit(line, len(line), "WRP004", lang)
    assert line[:at] + text + line[at:] == expected


# --- the server over stdio ------------------------------------------------------------------------

pygls = pytest.importorskip("pygls", reason="the language server needs pygls (pip install '.[lsp]')")
from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402


class Session:
    """One server process and a client that keeps every publishDiagnostics it receives."""

    def __init__(self, root):
        self.root = root
        self.client = LanguageClient("hiplint-tests", "1")
        self.diagnostics: dict[str, list] = {}
        self.event = asyncio.Event()
        self.messages: list = []

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params):
            self.diagnostics.setdefault(params.uri, []).append(params)
            self.event.set()

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def on_message(params):
            self.messages.append(params)

    async def start(self, init_options=None):
        env = dict(os.environ)
        await self.client.start_io(sys.executable, "-m", "hiplint", "server", cwd=str(self.root), env=env)
        await asyncio.wait_for(self.client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=self.root.as_uri(),
            initialization_options=init_options)), WAIT)
        self.client.initialized(types.InitializedParams())

    async def wait_for(self, uri, predicate=lambda p: True, count=None):
        """The first diagnostics for `uri` (after the first `count` already seen) that satisfy `predicate`."""
        seen = len(self.diagnostics.get(uri, [])) if count is None else count
        deadline = asyncio.get_running_loop().time() + WAIT
        while True:
            got = self.diagnostics.get(uri, [])
            for p in got[seen:]:
                if predicate(p):
                    return p
            seen = len(got)
            self.event.clear()
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise AssertionError(f"no matching diagnostics for {uri}: {got[-1:] if got else 'none'}")
            try:
                await asyncio.wait_for(self.event.wait(), left)
            except asyncio.TimeoutError:
                pass

    def open(self, path, text, language_id="cuda", version=1):
        uri = path.as_uri()
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language_id, version=version, text=text)))
        return uri

    async def stop(self):
        await asyncio.wait_for(self.client.shutdown_async(None), WAIT)
        self.client.exit(None)
        await asyncio.wait_for(self.client.stop(), WAIT)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 6 * WAIT))


def _codes(params):
    return sorted(d.code for d in params.diagnostics)


def _apply(text: str, edits) -> str:
    """Apply LSP text edits (UTF-16 positions) to text."""
    data = text.encode()
    idx = LineIndex(data, "utf-16")
    spans = sorted(((idx.offset(e.range.start.line, e.range.start.character),
                     idx.offset(e.range.end.line, e.range.end.character), e.new_text) for e in edits), reverse=True)
    for s, e, new in spans:
        data = data[:s] + new.encode() + data[e:]
    return data.decode()


@pytest.mark.lsp
def test_open_change_code_actions_hover_and_shutdown(tmp_path):
    src = tmp_path / "agg.cu"
    src.write_text(KERNEL, encoding="utf-8")

    async def scenario():
        s = Session(tmp_path)
        await s.start({"debounceMs": 50})
        try:
            uri = s.open(src, KERNEL)
            first = await s.wait_for(uri, count=0)
            assert _codes(first) == ["WRP001", "WRP004", "WRP005", "WRP006", "WRP008"]
            by_code = {d.code: d for d in first.diagnostics}

            # The range of WRP001 is after the non-ASCII comment: UTF-16 columns.
            line5 = KERNEL.splitlines()[5]
            wrp001 = by_code["WRP001"].range
            assert wrp001.start.line == 5
            assert wrp001.start.character == _utf16(line5[:line5.index("threadIdx")])
            assert by_code["WRP001"].severity is not None and by_code["WRP001"].source == "hiplint"
            assert by_code["WRP001"].code_description.href.endswith("/WRP001.md")

            # Related locations: WRP005 stands for the other uses of `active`.
            related = by_code["WRP005"].related_information
            assert related and {r.location.range.start.line for r in related} == {4, 6, 11}
            assert all(r.location.uri == uri for r in related)

            # Code actions: the safe fix is the preferred quick fix, the unsafe one says so; each
            # finding also offers a suppression comment.
            line = by_code["WRP006"].range.start.line
            actions = await asyncio.wait_for(s.client.text_document_code_action_async(types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(types.Position(line, 0), types.Position(line, 200)),
                context=types.CodeActionContext(diagnostics=[]))), WAIT)
            titles = {a.title: a for a in actions}
            safe = [a for a in actions if a.is_preferred]
            assert safe and all(t.startswith("WRP008") for t in [a.title for a in safe])
            assert "Suppress WRP006 on this line" in titles and "Suppress WRP008 on this line" in titles
            actions4 = await asyncio.wait_for(s.client.text_document_code_action_async(types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri), range=by_code["WRP004"].range,
                context=types.CodeActionContext(diagnostics=[by_code["WRP004"]]))), WAIT)
            unsafe = [a for a in actions4 if a.title.startswith("WRP004")]
            assert unsafe and unsafe[0].title.endswith("(unsafe)") and not unsafe[0].is_preferred
            assert all(a.diagnostics[0].code == "WRP004" for a in actions4)

            # Applying the safe fix through didChange: the finding goes away.
            fix = safe[0].edit.document_changes[0]
            assert fix.text_document.version == 1
            fixed = _apply(KERNEL, fix.edits)
            s.client.text_document_did_change(types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)]))
            second = await s.wait_for(uri, lambda p: p.version == 2)
            assert "WRP008" not in _codes(second) and "WRP004" in _codes(second)

            # The suppression comment silences WRP004 (an incremental change, on a non-ASCII document).
            line4 = next(d for d in second.diagnostics if d.code == "WRP004").range.start.line
            actions4 = await asyncio.wait_for(s.client.text_document_code_action_async(types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(types.Position(line4, 0), types.Position(line4, 0)),
                context=types.CodeActionContext(diagnostics=[]))), WAIT)
            sup = next(a for a in actions4 if a.title == "Suppress WRP004 on this line")
            edit = sup.edit.document_changes[0].edits[0]
            assert edit.new_text.endswith("// hiplint: ignore[WRP004] TODO: say why")
            s.client.text_document_did_change(types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
                content_changes=[types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)]))
            third = await s.wait_for(uri, lambda p: p.version == 3)
            assert "WRP004" not in _codes(third) and "WRP001" in _codes(third)

            # Hover on a finding shows its rule's page, as `hiplint rule CODE` prints it.
            from hiplint.docs import rule_markdown
            from hiplint.registry import load_registry

            pos = by_code["WRP001"].range.start
            hover = await asyncio.wait_for(s.client.text_document_hover_async(types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=pos)), WAIT)
            assert hover.contents.kind == types.MarkupKind.Markdown
            assert hover.contents.value == rule_markdown(load_registry().by_name_or_code("WRP001"))
            nothing = await asyncio.wait_for(s.client.text_document_hover_async(types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(1, 0))), WAIT)
            assert nothing is None
        finally:
            await s.stop()
        assert s.client.stopped

    run(scenario())


@pytest.mark.lsp
def test_configuration_from_pyproject_and_the_client_is_picked_up(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.hiplint]\nignore = ["WRP001"]\n')
    src = tmp_path / "src" / "k.cu"
    src.parent.mkdir()
    text = KERNEL
    src.write_text(text, encoding="utf-8")

    async def scenario():
        s = Session(tmp_path)
        await s.start()
        try:
            uri = s.open(src, text)
            first = await s.wait_for(uri, count=0)
            assert "WRP001" not in _codes(first) and "WRP005" in _codes(first)

            # pyproject.toml changes on disk: the watched-files notification re-lints open documents.
            pyproject.write_text('[tool.hiplint]\nignore = ["WRP005"]\n')
            s.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
                types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]))
            second = await s.wait_for(uri, lambda p: "WRP001" in _codes(p))
            assert "WRP005" not in _codes(second)

            # Saving pyproject.toml in the editor does the same.
            pyproject.write_text('[tool.hiplint]\n')
            s.client.text_document_did_save(types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=pyproject.as_uri())))
            await s.wait_for(uri, lambda p: "WRP005" in _codes(p) and "WRP001" in _codes(p))

            # The client's own settings narrow the rules (workspace/didChangeConfiguration).
            s.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
                settings={"hiplint": {"ignore": ["WRP006", "WRP008"]}}))
            fourth = await s.wait_for(uri, lambda p: "WRP006" not in _codes(p))
            assert "WRP008" not in _codes(fourth) and "WRP001" in _codes(fourth)

            # A configuration error is said once, as a message, and the document's diagnostics cleared.
            pyproject.write_text('[tool.hiplint]\nseverity = { WRP999 = "error" }\n')
            s.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
                types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]))
            await s.wait_for(uri, lambda p: not p.diagnostics)
            assert any("WRP999" in m.message and m.type == types.MessageType.Error for m in s.messages)
        finally:
            await s.stop()

    run(scenario())


@pytest.mark.lsp
def test_python_cmake_and_make_documents_and_unsaved_text(tmp_path):
    cmake = tmp_path / "CMakeLists.txt"
    py = tmp_path / "build.py"
    cmake_text = "find_package(CUDAToolkit REQUIRED)\nadd_library(k k.cu)\ntarget_link_libraries(k PRIVATE CUDA::cublas)\n"
    py_text = 'import subprocess\nsubprocess.run(["nvcc", "-arch=sm_80", "k.cu"])\n'

    async def scenario():
        s = Session(tmp_path)
        await s.start({"debounceMs": 0})
        try:
            # Neither file exists on disk: the server lints the editor's text.
            cu = s.open(cmake, cmake_text, language_id="cmake")
            pu = s.open(py, py_text, language_id="python")
            c = await s.wait_for(cu, count=0)
            p = await s.wait_for(pu, count=0)
            assert _codes(c) == ["BLD003", "BLD004"]
            assert _codes(p) == ["PY008"]
            assert p.diagnostics[0].range.start.line == 1
            mk = s.open(tmp_path / "Makefile", "NVCC = nvcc\nk: k.cu\n\t$(NVCC) -arch=sm_80 -o k k.cu\n",
                        language_id="makefile")
            assert _codes(await s.wait_for(mk, count=0)) == ["BLD006", "BLD007"]
            # An untitled C++ buffer is read as C-family code from its language id.
            untitled = "untitled:Untitled-1"
            s.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
                uri=untitled, language_id="cpp", version=1, text=KERNEL)))
            u = await s.wait_for(untitled, count=0)
            assert "WRP005" in _codes(u)
        finally:
            await s.stop()

    run(scenario())


def test_cli_says_how_to_install_pygls_when_it_is_missing(tmp_path):
    import subprocess

    # A directory that shadows pygls with a module whose import fails.
    (tmp_path / "pygls").mkdir()
    (tmp_path / "pygls" / "__init__.py").write_text("raise ImportError('no pygls here')\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    proc = subprocess.run([sys.executable, "-m", "hiplint", "server"], capture_output=True, env=env, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert b"pip install 'pygls>=2,<3'" in proc.stderr
