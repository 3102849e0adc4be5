"""`hiplint server`: a language server over stdio (pygls).

Diagnostics for C-family (CUDA, HIP, C++), Python, CMake and Makefile documents from their in-memory
text, on open and on change (debounced), with the settings found from the document's own path (the
same configuration files as `hiplint scan`), overlaid with the client's `hiplint` settings. Code actions
apply a finding's fix (safe fixes are the preferred quick fix; unsafe ones say "(unsafe)") or add a
suppression comment; hover over a finding shows its rule's page (`hiplint rule CODE`).

pygls is an optional dependency (`pip install '.[lsp]'` in the checkout): it is imported by `main()` only, so
the rest of hiplint, and this module's position arithmetic, work without it. One `Linter` per
configuration serves every change (rules, compiled queries and parser made once).
"""
from __future__ import annotations

import bisect
import os
import re
import sys
from dataclasses import dataclass, field

INSTALL_HINT = "hiplint server needs pygls: pip install 'pygls>=2,<3' 'lsprotocol>=2025.0.0' (or the lsp extra of the checkout: pip install '.[lsp]')"
DEFAULT_DEBOUNCE_MS = 300
# Client language ids that name a language hiplint reads, for documents whose name does not say.
LANGUAGE_IDS = {"cuda": "cuda", "cuda-cpp": "cuda", "cpp": "cuda", "c": "cuda", "hip": "cuda",
                "python": "python", "cmake": "cmake", "makefile": "make"}
CONFIG_FILES = (".hiplint.toml", "hiplint.toml", "pyproject.toml")
SUPPRESS_REASON = "TODO: say why"


# ---------------------------------------------------------------------------------------------
# Offsets and positions. hiplint speaks in UTF-8 byte offsets; LSP in (line, character) where a
# character is a UTF-16 code unit unless the client and server agreed on UTF-8 or UTF-32.

class LineIndex:
    """Byte offsets of a document's line starts, and conversions to and from LSP positions."""

    def __init__(self, data: bytes, encoding: str = "utf-16"):
        self.data = data
        self.encoding = encoding
        starts = [0]
        i = data.find(b"\n")
        while i != -1:
            starts.append(i + 1)
            i = data.find(b"\n", i + 1)
        self.starts = starts

    def _units(self, chunk: bytes) -> int:
        if self.encoding == "utf-8":
            return len(chunk)
        text = chunk.decode("utf-8", "replace")
        if self.encoding == "utf-32":
            return len(text)
        if text.isascii():
            return len(text)
        return len(text.encode("utf-16-le", "surrogatepass")) // 2

    def position(self, offset: int) -> tuple[int, int]:
        """(line, character), both 0-based, of a byte offset."""
        offset = max(0, min(offset, len(self.data)))
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        return line, self._units(self.data[start:offset])

    def position_of_column(self, line: int, column: int) -> tuple[int, int]:
        """(line, character) of a 1-based line and 1-based code-point column (a finding's own)."""
        line = max(1, min(line, len(self.starts)))
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.data)
        text = self.data[start:end].decode("utf-8", "replace")
        prefix = text[:max(0, column - 1)].encode("utf-8")
        return line - 1, self._units(prefix)

    def offset(self, line: int, character: int) -> int:
        """The byte offset of an LSP position (clamped to its line)."""
        if line >= len(self.starts):
            return len(self.data)
        start = self.starts[line]
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.data)
        raw = self.data[start:end]
        if self.encoding == "utf-8":
            return start + min(character, len(raw.rstrip(b"\r\n")))
        units = 0
        pos = start
        for ch in raw.decode("utf-8", "replace"):
            if units >= character or ch in "\r\n":
                break
            units += 1 if self.encoding == "utf-32" or ord(ch) < 0x10000 else 2
            pos += len(ch.encode("utf-8"))
        return pos

    def line_text(self, line: int) -> str:
        """The text of a 0-based line without its line ending."""
        if line >= len(self.starts):
            return ""
        start = self.starts[line]
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.data)
        return self.data[start:end].decode("utf-8", "replace").rstrip("\r\n")


def encoding_name(kind) -> str:
    value = str(getattr(kind, "value", kind) or "utf-16").lower()
    return value if value in ("utf-8", "utf-16", "utf-32") else "utf-16"


# ---------------------------------------------------------------------------------------------
# Suppression comments, in the project's syntax (hiplint.suppress).

def suppression_edit(line_text: str, line_end_character: int, code: str, lang: str) -> tuple[int, str]:
    """Where on the finding's line to insert, and what, to suppress `code` there: a trailing
    `ignore[CODE] reason` comment, or the code added to one the line already has.
    Returns (character in the line's code points, text)."""
    from hiplint.suppress import DIRECTIVE

    for m in DIRECTIVE.finditer(line_text):
        if m.group("kind") == "ignore" and m.group("codes"):
            close = m.end("codes") - 1  # the `]`
            return close, f", {code}"
    comment = "#" if lang in ("python", "cmake", "make") else "//"
    stripped = line_text.rstrip()
    if lang == "cuda" and stripped.endswith("\\"):
        # A macro continues on the next line: a block comment before the backslash keeps it going.
        at = len(stripped) - 1
        return at, f"/* hiplint: ignore[{code}] {SUPPRESS_REASON} */ "
    return len(stripped), f"  {comment} hiplint: ignore[{code}] {SUPPRESS_REASON}"


# ---------------------------------------------------------------------------------------------
# The server's state, independent of the protocol library.

@dataclass
class Linted:
    version: int | None
    index: LineIndex
    lang: str
    path: str
    findings: list = field(default_factory=list)
    ranges: list = field(default_factory=list)  # ((l0, c0), (l1, c1)) per finding


def uri_to_path(uri: str) -> str | None:
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if os.name == "nt" and re.match(r"^/[A-Za-z]:", path):
        path = path[1:]
    return os.path.normpath(path)


def path_to_uri(path: str) -> str:
    from pathlib import Path

    return Path(os.path.abspath(path)).as_uri()


def language_for(path: str | None, language_id: str | None, include=()) -> str | None:
    from hiplint.languages import language_of

    if path:
        lang = language_of(path, include)
        if lang in ("cuda", "python", "cmake", "make"):
            return lang
        if lang is not None:
            return None
    return LANGUAGE_IDS.get((language_id or "").lower())


class Workspace:
    """Settings, rules and one Linter per configuration, reused across edits."""

    def __init__(self):
        self.client_settings: dict = {}
        self._settings: dict = {}  # directory -> Settings
        self._linters: dict = {}  # configuration key -> Linter
        self._registry = None

    def reset(self) -> None:
        self._settings.clear()
        self._linters.clear()

    def _overrides(self) -> dict:
        s = self.client_settings or {}

        def listed(key):
            v = s.get(key)
            if v is None:
                return None
            return (v,) if isinstance(v, str) else tuple(str(x) for x in v)

        kw = {
            "config_path": s.get("config") or None,
            "isolated": bool(s.get("isolated", False)),
            "select": listed("select"),
            "extend_select": listed("extendSelect") or listed("extend-select"),
            "ignore": listed("ignore"),
            "targets": listed("targets") or listed("target"),
            "rocm_version": s.get("rocmVersion") or s.get("rocm-version"),
        }
        if "reportNvidiaBranches" in s:
            kw["report_nvidia_branches"] = bool(s["reportNvidiaBranches"])
        return kw

    def settings_for(self, path: str | None):
        from hiplint.cli import build_settings

        directory = os.path.dirname(path) if path else os.getcwd()
        settings = self._settings.get(directory)
        if settings is None:
            settings = build_settings([directory], self._overrides())
            self._settings[directory] = settings
        return settings

    def linter_for(self, settings):
        from hiplint.engine import Linter
        from hiplint.registry import load_registry, select_rules

        # Documents of several directories under one configuration file share its Linter.
        key = (str(settings.config_path), str(settings.root))
        linter = self._linters.get(key)
        if linter is None:
            if self._registry is None:
                self._registry = load_registry()
            linter = Linter(settings, select_rules(settings, self._registry))
            linter.reuse_trees = True  # documents are linted again on every change
            self._linters[key] = linter
        return linter

    def rule(self, code: str):
        from hiplint.registry import load_registry

        if self._registry is None:
            self._registry = load_registry()
        return self._registry.by_name_or_code(code)

    def lint(self, uri: str, text: str, version, language_id: str | None, encoding: str) -> Linted | None:
        """Lint a document's text; None when hiplint does not read its language."""
        from hiplint.engine import is_binary

        path = uri_to_path(uri)
        settings = self.settings_for(path)
        lang = language_for(path, language_id, settings.include)
        if lang is None:
            return None
        data = text.encode("utf-8", "surrogatepass")
        index = LineIndex(data, encoding)
        display = path or uri
        linted = Linted(version, index, lang, display)
        if is_binary(data):
            return linted
        linter = self.linter_for(settings)
        result = linter.lint_bytes(display, data, lang, path)
        for f in result.findings:
            if f.start_byte or f.end_byte:
                start, end = index.position(f.start_byte), index.position(f.end_byte)
            else:
                start = index.position_of_column(f.line, f.column)
                end = index.position_of_column(f.end_line, f.end_column)
            linted.findings.append(f)
            linted.ranges.append((start, end))
        return linted


def _covers(rng, start: tuple[int, int], end: tuple[int, int]) -> bool:
    """Whether the finding range `rng` touches [start, end]."""
    (s, e) = rng
    return s <= end and start <= e


# ---------------------------------------------------------------------------------------------
# The pygls server.

def build_server():
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer

    from hiplint import __version__
    from hiplint.config import ConfigError
    from hiplint.emit import rule_url
    from hiplint.model import Applicability, Severity

    ls = LanguageServer("hiplint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
    ws = Workspace()
    state: dict = {"debounce": DEFAULT_DEBOUNCE_MS / 1000, "results": {}, "timers": {}, "language_ids": {},
                   "config_error": None}
    ls.hiplint = ws  # for tests and tools
    severity = {Severity.ERROR: types.DiagnosticSeverity.Error, Severity.WARNING: types.DiagnosticSeverity.Warning,
                Severity.INFO: types.DiagnosticSeverity.Information}

    def encoding() -> str:
        return encoding_name(ls.workspace.position_encoding)

    def rng(r) -> types.Range:
        (l0, c0), (l1, c1) = r
        return types.Range(types.Position(l0, c0), types.Position(l1, c1))

    def related_location(linted: Linted, uri: str, loc) -> types.Location:
        if not loc.path or loc.path == linted.path:
            index, target = linted.index, uri
        else:
            path = loc.path if os.path.isabs(loc.path) else os.path.join(os.path.dirname(linted.path), loc.path)
            target = path_to_uri(path)
            try:
                with open(path, "rb") as fh:
                    index = LineIndex(fh.read(), linted.index.encoding)
            except OSError:
                index = None
        if index is None:
            a, b = (loc.line - 1, loc.column - 1), (loc.end_line - 1, loc.end_column - 1)
        else:
            a = index.position_of_column(loc.line, loc.column)
            b = index.position_of_column(loc.end_line, loc.end_column)
        return types.Location(uri=target, range=rng((a, b)))

    def diagnostic(linted: Linted, uri: str, f, r) -> types.Diagnostic:
        related = [types.DiagnosticRelatedInformation(location=related_location(linted, uri, loc),
                                                      message=loc.message or f"{f.code}: also here")
                   for loc in f.related]
        return types.Diagnostic(range=rng(r), message=f.message, severity=severity.get(f.severity),
                                code=f.code, code_description=types.CodeDescription(href=rule_url(f.code)),
                                source="hiplint", related_information=related or None)

    def publish(uri: str) -> None:
        doc = ls.workspace.get_text_document(uri)
        try:
            linted = ws.lint(uri, doc.source, doc.version, state["language_ids"].get(uri), encoding())
        except ConfigError as exc:
            message = f"hiplint: {exc}"
            if state["config_error"] != message:
                state["config_error"] = message
                ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, message))
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[], version=doc.version))
            return
        state["config_error"] = None
        if linted is None:
            state["results"].pop(uri, None)
            return
        state["results"][uri] = linted
        diags = [diagnostic(linted, uri, f, r) for f, r in zip(linted.findings, linted.ranges)]
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=doc.version))

    def schedule(uri: str, delay: float | None = None) -> None:
        import asyncio

        delay = state["debounce"] if delay is None else delay
        old = state["timers"].pop(uri, None)
        if old is not None:
            old.cancel()

        def fire():
            state["timers"].pop(uri, None)
            if uri in ls.workspace.text_documents:
                publish(uri)

        if delay <= 0:
            fire()
        else:
            state["timers"][uri] = asyncio.get_event_loop().call_later(delay, fire)

    def relint_all() -> None:
        ws.reset()
        state["config_error"] = None
        for uri in list(ls.workspace.text_documents):
            schedule(uri, 0)

    def take_settings(value) -> None:
        if isinstance(value, dict):
            value = value.get("hiplint", value)
            if isinstance(value, dict):
                ws.client_settings = value
                if "debounceMs" in value:
                    state["debounce"] = max(0.0, float(value["debounceMs"]) / 1000)

    @ls.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams):
        take_settings(params.initialization_options)

    @ls.feature(types.INITIALIZED)
    def initialized(params: types.InitializedParams):
        caps = ls.client_capabilities
        dyn = caps.workspace and caps.workspace.did_change_watched_files and \
            caps.workspace.did_change_watched_files.dynamic_registration
        if dyn:
            watchers = [types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_FILES]
            ls.client_register_capability(types.RegistrationParams(registrations=[types.Registration(
                id="hiplint-config-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))

    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams):
        state["language_ids"][params.text_document.uri] = params.text_document.language_id
        schedule(params.text_document.uri, 0)

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams):
        schedule(params.text_document.uri)

    @ls.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams):
        if os.path.basename(uri_to_path(params.text_document.uri) or "") in CONFIG_FILES:
            relint_all()

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams):
        uri = params.text_document.uri
        timer = state["timers"].pop(uri, None)
        if timer is not None:
            timer.cancel()
        state["results"].pop(uri, None)
        state["language_ids"].pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(params: types.DidChangeConfigurationParams):
        take_settings(params.settings)
        relint_all()

    @ls.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(params: types.DidChangeWatchedFilesParams):
        if any(os.path.basename(uri_to_path(c.uri) or "") in CONFIG_FILES for c in params.changes):
            relint_all()

    def edit_for(linted: Linted, uri: str, version, fix) -> types.WorkspaceEdit:
        crlf = linted.index.data.count(b"\r\n") * 2 > linted.index.data.count(b"\n")
        edits = []
        for e in sorted(fix.edits, key=lambda e: (e.start, e.end)):
            text = e.content.replace("\r\n", "\n")
            if crlf:
                text = text.replace("\n", "\r\n")
            edits.append(types.TextEdit(range=rng((linted.index.position(e.start), linted.index.position(e.end))),
                                        new_text=text))
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=edits)])

    @ls.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_action(params: types.CodeActionParams):
        uri = params.text_document.uri
        linted = state["results"].get(uri)
        if linted is None:
            return None
        doc = ls.workspace.get_text_document(uri)
        if doc.version is not None and linted.version is not None and doc.version != linted.version:
            publish(uri)  # the edits must be against the text the client has now
            linted = state["results"].get(uri)
            if linted is None:
                return None
        start = (params.range.start.line, params.range.start.character)
        end = (params.range.end.line, params.range.end.character)
        if start == end:  # a bare cursor: what is on its line
            start, end = (start[0], 0), (start[0], sys.maxsize)
        wanted = {d.code for d in params.context.diagnostics} if params.context.diagnostics else None
        actions, suppress = [], []
        for f, r in zip(linted.findings, linted.ranges):
            if not _covers(r, start, end) or (wanted is not None and f.code not in wanted):
                continue
            diag = [diagnostic(linted, uri, f, r)]
            if f.fix is not None and f.fix.edits and f.fix.applicability >= Applicability.UNSAFE:
                safe = f.fix.applicability == Applicability.SAFE
                title = f"{f.code}: {f.fix.title}" + ("" if safe else " (unsafe)")
                actions.append(types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, diagnostics=diag,
                                                is_preferred=safe, edit=edit_for(linted, uri, linted.version, f.fix)))
            line = r[0][0]
            if (f.code, line) in {(c, l) for c, l, _ in suppress}:
                continue
            text = linted.index.line_text(line)
            at, insert = suppression_edit(text, len(text), f.code, linted.lang)
            pos = linted.index.position_of_column(line + 1, at + 1)
            suppress.append((f.code, line, types.CodeAction(
                title=f"Suppress {f.code} on this line", kind=types.CodeActionKind.QuickFix, diagnostics=diag,
                edit=types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=linted.version),
                    edits=[types.TextEdit(range=rng((pos, pos)), new_text=insert)])]))))
        return actions + [a for _, _, a in suppress] or None

    @ls.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params: types.HoverParams):
        from hiplint.docs import rule_markdown

        linted = state["results"].get(params.text_document.uri)
        if linted is None:
            return None
        at = (params.position.line, params.position.character)
        pages, seen, first = [], set(), None
        for f, r in zip(linted.findings, linted.ranges):
            if r[0] <= at <= r[1] and f.code not in seen:
                rule = ws.rule(f.code)
                if rule is None:
                    continue
                seen.add(f.code)
                pages.append(rule_markdown(rule))
                first = first or r
        if not pages:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n---\n\n".join(pages)),
                           range=rng(first))

    return ls


def main() -> int:
    try:
        import pygls  # noqa: F401
        import lsprotocol  # noqa: F401
    except ImportError:
        print(f"hiplint: error: {INSTALL_HINT}", file=sys.stderr)
        return 2
    import logging

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    build_server().start_io()
    return 0
