"""Python files for rules: parse once with libcst, share the result through `ctx.cache`.

    py = pyparse.get(ctx)          # None when the file is not valid Python (PY000 reports that)
    for call in py.nodes(cst.Call): ...
    start, end = py.span(node)     # byte offsets into the file, for ctx.report_range
    py.names(node)                 # {"torch.version.cuda", ...}: dotted text plus import-resolved names

`get` also sets `ctx.cache["next_statement"]`, which the engine uses so that an own-line
`# hiplint: ignore[...]` covers the whole next statement (or a compound statement's header).
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from functools import cache

from hiplint.lazy import libcst as cst

CACHE_KEY = "python"
ERROR_KEY = "python_syntax_error"


@dataclass
class SyntaxProblem:
    line: int
    column: int  # 1-based
    message: str


class _Collected:
    """One pass over the tree: nodes by type (each list in source order), parent links and import
    aliases (cheaper than libcst's metadata providers)."""

    def __init__(self, module):
        self.by_type: dict[type, list] = {}
        self.parents: dict[int, object] = {}  # id(node) -> parent (libcst's __hash__ is a Python call)
        self.aliases: dict[str, str] = {}
        is_node = _IS_NODE
        stack = [(module, None)]
        while stack:  # pre-order, children in source order: the order a libcst visitor sees them
            node, parent = stack.pop()
            kind = type(node)
            self.by_type.setdefault(kind, []).append(node)
            if parent is not None:
                self.parents[id(node)] = parent
            if kind is cst.Import or kind is cst.ImportFrom:
                self._alias(node)
            children = []
            for name in _child_fields(node):
                value = getattr(node, name)
                vt = type(value)
                if vt is tuple or vt is list:
                    children.extend(v for v in value if is_node.get(type(v)) or _is_node(v))
                elif is_node.get(vt) or _is_node(value):
                    children.append(value)
            stack.extend((child, node) for child in reversed(children))

    def _alias(self, node) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted(alias.name) or ""
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self.aliases[alias.asname.name.value] = full
                else:
                    top = full.split(".")[0]
                    self.aliases.setdefault(top, top)
        elif not node.relative and node.module is not None and not isinstance(node.names, cst.ImportStar):
            base = dotted(node.module) or ""
            for alias in node.names:
                name = dotted(alias.name) or ""
                local = alias.asname.name.value if alias.asname is not None and \
                    isinstance(alias.asname.name, cst.Name) else name
                self.aliases[local] = f"{base}.{name}"


_IS_NODE: dict[type, bool] = {}  # class -> is it a libcst node (an ABC isinstance test per value is slow)


def _is_node(value) -> bool:
    kind = type(value)
    answer = _IS_NODE[kind] = isinstance(value, cst.CSTNode)
    return answer


# Node class -> its child fields in the order libcst visits them (source order). Walking the fields
# directly is faster than a libcst visitor, which rebuilds every node it passes
# (`_visit_and_replace_children`): that was half the time of a scan of Python files.
# (fields, fields None in the node they were learnt from: visited only when set, as an f-string's
# format_spec, so a node with one of them set is asked about again).
_FIELD_ORDER: dict = {}


def _child_fields(node) -> tuple[str, ...]:
    kind = type(node)
    learnt = _FIELD_ORDER.get(kind)
    if learnt is None:
        learnt = _FIELD_ORDER[kind] = _visited_fields(node)
    fields, unset = learnt
    if unset:
        present = tuple(f for f in unset if getattr(node, f) is not None)
        if present:
            variant = _FIELD_ORDER.get((kind, present))
            if variant is None:
                variant = _FIELD_ORDER[(kind, present)] = _visited_fields(node)
            return variant[0]
    return fields


def _visited_fields(node) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Ask libcst: visit `node` but not its children, and note each attribute it visits (libcst
    announces a child field even when it is None or empty). Also: the fields it did not visit that
    are None here (possibly visited when set)."""
    import dataclasses

    fields: list[str] = []

    class Recorder(cst.CSTVisitor):
        def on_visit(self, n) -> bool:
            return n is node

        def on_visit_attribute(self, n, attribute: str) -> None:
            if n is node:
                fields.append(attribute)

    node.visit(Recorder())
    order = tuple(dict.fromkeys(fields))
    unset = tuple(f.name for f in dataclasses.fields(node) if f.name not in order and getattr(node, f.name) is None)
    return order, unset


class PyModule:
    """A parsed file. Byte spans and line ranges are computed on first use: most files report nothing."""

    def __init__(self, module: cst.Module, source, collector):
        self.module = module
        self.source = source
        self.by_type = collector.by_type
        self.parents = collector.parents
        self.aliases = collector.aliases
        self._spans = None
        self._offsets: dict[int, int] | None = None  # id(top-level statement) -> its first byte
        self._statement_spans: dict[int, tuple] = {}

    # Positions -----------------------------------------------------------------------------------
    def span(self, node: cst.CSTNode) -> tuple[int, int]:
        """Byte offsets of `node` in the file. Positions are resolved for the top-level statement that
        holds the node, not the whole module: libcst's position pass over a 100 KB file takes longer
        than parsing it, and a finding needs one statement."""
        top, parent = node, self.parents.get(id(node))
        while parent is not None and parent is not self.module:
            top, parent = parent, self.parents.get(id(parent))
        if parent is None or self._statement_offset(top) is None:
            return self._module_span(node)  # the module itself, or a node of its header or footer
        held = self._statement_spans.get(id(top))
        if held is None:
            from libcst.metadata import ByteSpanPositionProvider, MetadataWrapper
            alone = self.module.with_changes(body=[top], header=[], footer=[])
            spans = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(ByteSpanPositionProvider)
            held = self._statement_spans[id(top)] = (top, self._statement_offset(top), spans, alone.code)
        _, offset, spans, code = held
        s = spans[node]
        return offset + self._file_bytes(code, s.start), offset + self._file_bytes(code, s.start + s.length)

    def _file_bytes(self, code: str, utf8_offset: int) -> int:
        """libcst counts UTF-8 bytes whatever the file's encoding: convert to the file's own bytes."""
        enc = self._encoding()
        if enc == "utf-8":
            return utf8_offset
        chars = len(code.encode("utf-8")[:utf8_offset].decode("utf-8", "ignore"))
        return len(code[:chars].encode(enc))

    def _encoding(self) -> str:
        enc = self.module.encoding.lower().replace("_", "-")
        return "utf-8" if enc in ("utf-8", "utf8", "utf-8-sig") else self.module.encoding

    def _statement_offset(self, top) -> int | None:
        if self._offsets is None:
            module = self.module
            enc = self._encoding()
            pos = 3 if self.source.data.startswith(b"\xef\xbb\xbf") else 0  # a BOM is not in libcst's code
            pos += sum(len(module.code_for_node(line).encode(enc)) for line in module.header)
            self._offsets = {}
            for stmt in module.body:
                self._offsets[id(stmt)] = pos
                pos += len(module.code_for_node(stmt).encode(enc))
        return self._offsets.get(id(top))

    def _module_span(self, node) -> tuple[int, int]:
        if self._spans is None:
            from libcst.metadata import ByteSpanPositionProvider, MetadataWrapper
            self._spans = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(ByteSpanPositionProvider)
        s = self._spans[node]
        return s.start, s.start + s.length

    def lines(self, node: cst.CSTNode) -> tuple[int, int]:
        start, end = self.span(node)
        return self.source.line_of(start), self.source.line_of(max(start, end - 1))

    # Tree ------------------------------------------------------------------------------------------
    def nodes(self, *types) -> list:
        out = []
        for t in types:
            out.extend(self.by_type.get(t, ()))
        return out

    def parent(self, node: cst.CSTNode):
        return self.parents.get(id(node))

    def ancestors(self, node: cst.CSTNode):
        n = self.parents.get(id(node))
        while n is not None:
            yield n
            n = self.parents.get(id(n))

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    # Names -----------------------------------------------------------------------------------------
    def names(self, node: cst.CSTNode) -> set[str]:
        """The dotted source text of a Name/Attribute, plus the same with its first part resolved through
        the file's imports (`th.version.cuda` -> `torch.version.cuda` after `import torch as th`)."""
        d = dotted(node)
        if not d:
            return set()
        first, _, rest = d.partition(".")
        full = self.aliases.get(first)
        if full is None or full == first:
            return {d}
        return {d, f"{full}.{rest}" if rest else full}

    def is_name(self, node: cst.CSTNode, *candidates: str) -> bool:
        return bool(self.names(node) & set(candidates))


def descendants(node):
    """`node` and every node below it (libcst), in no particular order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def dotted(node) -> str | None:
    """`a.b.c` for Name/Attribute chains, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def assigned_values(py: PyModule, name_node, include_augmented: bool = False):
    """Values assigned to a variable in the scope of `name_node` (the function, else the module)."""
    name = name_node.value
    scope = scope_of(py, name_node)

    def visible(node):  # the same function, or the module level
        s = scope_of(py, node)
        return s is scope or s is None

    for assign in py.nodes(cst.Assign):
        if visible(assign) and any(isinstance(t.target, cst.Name) and t.target.value == name for t in assign.targets):
            yield assign.value
    for ann in py.nodes(cst.AnnAssign):
        if visible(ann) and isinstance(ann.target, cst.Name) and ann.target.value == name and ann.value is not None:
            yield ann.value
    if include_augmented:
        for aug in py.nodes(cst.AugAssign):
            if visible(aug) and isinstance(aug.target, cst.Name) and aug.target.value == name and \
                    isinstance(aug.operator, cst.AddAssign):
                yield aug.value
        for call in py.nodes(cst.Call):
            f = call.func
            if not visible(call):
                continue
            if isinstance(f, cst.Attribute) and dotted(f.value) == name and f.attr.value in ("append", "extend"):
                for arg in call.args:
                    yield cst.List([cst.Element(arg.value)]) if f.attr.value == "append" else arg.value


def scope_of(py: PyModule, node):
    """The function a node is in, or None at module level."""
    for anc in py.ancestors(node):
        if isinstance(anc, cst.FunctionDef):
            return anc
    return None


def string_value(node) -> str | None:
    """The value of a plain string literal (or implicitly concatenated ones), else None."""
    if isinstance(node, cst.SimpleString):
        try:
            v = node.evaluated_value
        except Exception:
            return None
        return v if isinstance(v, str) else None
    if isinstance(node, cst.ConcatenatedString):
        a, b = string_value(node.left), string_value(node.right)
        return a + b if a is not None and b is not None else None
    return None


def fstring_prefix(node) -> str | None:
    """The literal text before the first `{}` of an f-string (f"-arch={a}" -> "-arch=")."""
    if isinstance(node, cst.FormattedString):
        text = ""
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                text += part.value
            else:
                break
        return text
    return None


def get(ctx) -> PyModule | None:
    """The file's parsed module, parsed once per file; None (and a recorded problem) on a syntax error."""
    if CACHE_KEY in ctx.cache:
        return ctx.cache[CACHE_KEY]
    py = None
    try:
        module = cst.parse_module(ctx.source.data)
        py = PyModule(module, ctx.source, _Collected(module))
        ctx.cache["next_statement"] = _next_statement(py)
    except cst.ParserSyntaxError as exc:
        # The message's "error at L:C" names the offending token; raw_line can be the line after it.
        m = re.search(r"error at (\d+):(\d+)", exc.message)
        line, col = (int(m.group(1)), int(m.group(2))) if m else (exc.raw_line, exc.raw_column + 1)
        ctx.cache[ERROR_KEY] = SyntaxProblem(line, col, exc.message)
    except RecursionError:
        ctx.cache[ERROR_KEY] = SyntaxProblem(1, 1, "nesting too deep to analyse")
    except Exception as exc:  # libcst can reject valid-looking input (encodings, odd tokens): report, don't crash
        ctx.cache[ERROR_KEY] = SyntaxProblem(1, 1, f"{type(exc).__name__}: {exc}")
    ctx.cache[CACHE_KEY] = py
    return py


# Suppression support ---------------------------------------------------------------------------

@cache
def _compound():
    return (cst.If, cst.For, cst.While, cst.With, cst.Try, cst.FunctionDef, cst.ClassDef)


def _next_statement(py: PyModule):
    """line -> (first, last) of the statement starting after that line; a compound statement's header only.

    Computed on the first call: only files with an own-line `# hiplint: ignore[...]` need it."""
    starts: dict[int, tuple[int, int]] = {}
    ordered: list[int] = []

    def build():
        for node in py.nodes(cst.SimpleStatementLine, *_compound()):
            first, last = py.lines(node)
            if isinstance(node, _compound()):
                body = getattr(node, "body", None)
                if isinstance(body, cst.IndentedBlock) and body.body:
                    last = max(first, py.lines(body.body[0])[0] - 1)
            starts.setdefault(first, (first, last))
        ordered.extend(sorted(starts))

    def lines(after_line: int):
        if not ordered and py.by_type:
            build()
        i = bisect.bisect_right(ordered, after_line)
        if i >= len(ordered):
            return after_line + 1, after_line + 1
        return starts[ordered[i]]

    return lines
