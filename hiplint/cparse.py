"""Parsing C, C++, CUDA and HIP sources with tree-sitter-cuda.

A file becomes one or more *units*: the file itself, plus one unit per macro body that looks like
code (tree-sitter keeps `#define` bodies as opaque text). Rules see every unit; a unit maps its byte
offsets back to the file so findings and fixes always point at the file.
"""
from __future__ import annotations

import bisect
import itertools
import re

from hiplint.lazy import lazy_re
from dataclasses import dataclass
from functools import lru_cache

import tree_sitter_cuda
from tree_sitter import Language, Node, Parser, Query, QueryCursor, Tree

GRAMMAR_VERSION = "tree-sitter-cuda-0.21.2"

# A macro body is parsed as code only when it could hold a call, an operator or a statement.
_CODE_LIKE = lazy_re(rb"[(;{=&|<>%/*+-]")
_WRAP_PREFIX = b"void __hiplint_macro_body__(void) {\n"
_WRAP_SUFFIX = b"\n;}\n"


@lru_cache(maxsize=1)
def language() -> Language:
    return Language(tree_sitter_cuda.language())


def new_parser() -> Parser:
    return Parser(language())


@dataclass
class Unit:
    """A parsed piece of a file. `delta` maps unit bytes to file bytes: file = unit + delta."""

    tree: Tree
    data: bytes
    delta: int = 0
    macro: Node | None = None  # the #define node in the file tree, for macro units
    macro_name: str = ""
    node: Node | None = None  # the unit's subtree when several macro bodies share one parse

    @property
    def root(self) -> Node:
        return self.node if self.node is not None else self.tree.root_node

    @property
    def is_macro(self) -> bool:
        return self.macro is not None

    def text(self, node: Node) -> str:
        # Rules call this ~400 times per file: the positional "replace" halves the cost of decode.
        return self.data[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def file_range(self, node: Node) -> tuple[int, int]:
        return node.start_byte + self.delta, node.end_byte + self.delta


def iter_nodes(root: Node, types: frozenset[str] | set[str] | None = None):
    """Nodes of `root`'s subtree (root included) in pre-order, optionally only those of `types`.

    With `types` of named node kinds, a compiled tree-sitter query finds them in C: a Python walk
    over every node of a large file costs more than parsing it (benchmark: bench/bench_scan.py).
    The kinds rules ask for most are indexed once per tree, so asking again for a function body or
    a condition costs a lookup, not another walk of the tree.
    """
    types = frozenset(types) if types is not None else None
    if types and types <= _INDEX_KINDS:
        yield from _from_index(root, types)
        return
    if types:
        # Compiling a query costs 13-20 ms whatever its size (tree-sitter analyses the grammar for
        # it): a one-file run asks for half a dozen such sets in a few small subtrees, where walking
        # in Python costs far less. Each set is walked until the bytes walked for it reach
        # _WALK_BUDGET, then compiled once and queried from then on (a large file, a server).
        query = _kinds_queries.get(types)
        if query is None and types not in _kinds_queries:
            walked = _walked.get(types, 0) + root.end_byte - root.start_byte
            if walked <= _WALK_BUDGET and _named_kinds(types):
                _walked[types] = walked
                found = list(walk_tree(root, types))
                found.sort(key=lambda n: (n.start_byte, -n.end_byte))  # as a query's captures are below
                yield from found
                return
            query = _kinds_queries[types] = _kinds_query(types)
        if query is not None:
            found = QueryCursor(query).captures(root).get("n", [])
            # Pre-order: by start, the enclosing node (longer) first.
            found.sort(key=lambda n: (n.start_byte, -n.end_byte))
            yield from found
            return
    yield from walk_tree(root, types)


_WALK_BUDGET = 64 * 1024  # bytes of source walked in Python per set of kinds before its query is compiled
_walked: dict[frozenset, int] = {}  # set of kinds -> bytes walked for it so far
_kinds_queries: dict = {}  # set of kinds -> its compiled query (None: kinds a query cannot find)

FUNCTION_TYPES = frozenset({"function_definition", "lambda_expression"})


def path_to(root: Node, node: Node) -> list[Node] | None:
    """[root, ..., node]: `node`'s ancestors from the root down, or None when `node` is not in root's tree.
    One walk down (tree-sitter finds each child in C), where walking up with `.parent` walks down from
    the root at every step: quadratic in the depth."""
    path = [root]
    n = root
    while n != node:
        n = n.child_with_descendant(node)
        if n is None or len(path) > 100_000:
            return None
        path.append(n)
    return path


class FunctionSpans:
    """A tree's functions and lambdas by byte range, to find the one around a place: walking up with
    `.parent` costs the depth at each step in tree-sitter 0.26, and a long `else if` chain (one level
    deeper per branch) made walking up from every node cubic."""

    def __init__(self, root: Node | None):
        self.nodes = list(iter_nodes(root, FUNCTION_TYPES)) if root is not None else []  # pre-order
        self.starts = [n.start_byte for n in self.nodes]
        self.ends = [n.end_byte for n in self.nodes]
        # Largest end among the first i+1 functions: once it falls short, no earlier function spans.
        self.max_ends = list(itertools.accumulate(self.ends, max))

    def innermost(self, start: int, end: int, strict: bool = False) -> Node | None:
        """The innermost function spanning [start, end); with `strict`, not one spanning exactly that."""
        for i in range(bisect.bisect_right(self.starts, start) - 1, -1, -1):
            # Functions nest: the last one starting at or before `start` that also ends after `end`.
            if self.max_ends[i] < end:
                return None
            if self.ends[i] >= end and not (strict and (self.starts[i], self.ends[i]) == (start, end)):
                return self.nodes[i]
        return None


# Kinds that rules and passes look for again and again, in whole files and in function bodies:
# found by one query per tree. Frequent small kinds (identifier, binary_expression) are not indexed:
# they are asked for in small subtrees, where a query is cheap.
_INDEX_KINDS = frozenset({
    "comment", "preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef", "preproc_def",
    "preproc_function_def", "preproc_include", "function_definition", "function_declarator", "declaration",
    "parameter_declaration", "init_declarator", "assignment_expression", "update_expression",
    "call_expression", "using_declaration", "lambda_expression",  # with function_definition: FileContext.enclosing_function
})
_INDEX_KEEP = 4  # trees whose index is kept (a file and its macro bodies; older ones are dropped)
_indexes: dict[int, tuple[Node, dict]] = {}  # root id -> (root, kind -> (starts, nodes)); the root keeps its tree alive


def _tree_root(node: Node) -> Node:
    while True:
        parent = node.parent
        if parent is None:
            return node
        node = parent


# The index patterns, for a caller that runs its own query over a whole tree anyway (the engine):
# it passes what they captured to `seed_index` and the tree is walked once, not twice.
INDEX_CAPTURE = "__index__"
INDEX_KINDS_ORDER = tuple(sorted(_INDEX_KINDS))  # pattern i of INDEX_PATTERNS finds kind i
INDEX_PATTERNS = "\n".join(f"({kind}) @{INDEX_CAPTURE}" for kind in INDEX_KINDS_ORDER)


def _index(root: Node) -> dict:
    held = _indexes.get(root.id)
    if held is not None and held[0] == root:
        return held[1]
    by_kind: dict[str, list[Node]] = {}
    for i, captures in QueryCursor(_index_query()).matches(root):
        by_kind.setdefault(INDEX_KINDS_ORDER[i], []).extend(captures[INDEX_CAPTURE])
    return seed_index(root, by_kind)


@lru_cache(maxsize=1)
def _index_query() -> Query:
    return Query(language(), INDEX_PATTERNS)


def seed_index(root: Node, by_kind: dict[str, list[Node]]) -> dict:
    """Index every node of an indexed kind in `root`'s tree, given by kind (INDEX_PATTERNS matched on
    `root`). A kind's nodes are sorted when first asked for: many trees never are."""
    index = {kind: [None, None, nodes] for kind, nodes in by_kind.items()}  # [starts, ends, nodes]
    if len(_indexes) >= _INDEX_KEEP:
        _indexes.pop(next(iter(_indexes)))
    _indexes[root.id] = (root, index)
    return index


def _from_index(sub: Node, types: frozenset[str]) -> list[Node]:
    index = _index(_tree_root(sub))
    start, end = sub.start_byte, sub.end_byte
    found = []
    kinds = 0
    for kind in types:
        entry = index.get(kind)
        if entry is None:
            continue
        if entry[0] is None:
            nodes = entry[2]
            nodes.sort(key=lambda n: (n.start_byte, -n.end_byte))
            entry[0] = [n.start_byte for n in nodes]
            entry[1] = [n.end_byte for n in nodes]
        starts, ends, nodes = entry
        kinds += 1
        # Byte offsets kept beside the nodes: reading them off a Node is a call into C.
        for i in range(bisect.bisect_left(starts, start), bisect.bisect_right(starts, end)):
            node_end = ends[i]
            if node_end > end:
                continue
            node_start = starts[i]
            if node_start == end and end > start:
                continue
            node = nodes[i]
            if node_start == start and node_end == end and node.id != sub.id and _is_ancestor(node, sub):
                continue
            found.append(node)
    if kinds > 1:  # one kind's nodes are already in pre-order
        found.sort(key=lambda n: (n.start_byte, -n.end_byte))
    return found


def _is_ancestor(node: Node, sub: Node) -> bool:
    """Is `node` (with the same byte range as `sub`) above `sub` in the tree?"""
    p = sub.parent
    while p is not None and p.start_byte == sub.start_byte and p.end_byte == sub.end_byte:
        if p.id == node.id:
            return True
        p = p.parent
    return False


def _named_kinds(types: frozenset[str]) -> bool:
    lang = language()
    return all(lang.id_for_node_kind(t, True) for t in types)


@lru_cache(maxsize=256)
def _kinds_query(types: frozenset[str]) -> Query | None:
    lang = language()
    if not _named_kinds(types):
        return None  # anonymous tokens (e.g. "#endif") or unknown kinds: walk in Python
    try:
        return Query(lang, " ".join(f"({t}) @n" for t in sorted(types)))
    except Exception:
        return None


def walk_tree(root: Node, types):
    """Pre-order walk without recursion (2,000 nested braces must not hit Python's stack limit)."""
    cursor = root.walk()
    visited_children = False
    while True:
        if not visited_children:
            node = cursor.node
            if types is None or node.type in types:
                yield node
            if cursor.goto_first_child():
                continue
        if cursor.goto_next_sibling():
            visited_children = False
            continue
        if not cursor.goto_parent():
            return
        visited_children = True


# `#if defined(A) and B`: C++ spells && || ! as `and` `or` `not` too, and compilers accept them in
# directives, but the grammar does not (it keeps only `B` as the condition). Directive lines are
# respelled for parsing with the same length, so every offset still points into the file as it is.
_DIRECTIVE_WITH_WORD_OPS = lazy_re(rb"^[ \t]*#[ \t]*(?:el)?if\b(?:[^\n]|\\\r?\n)*?\b(?:and|or|not)\b[^\n]*"
                                      rb"(?:(?<=\\)\n[^\n]*|(?<=\\\r)\n[^\n]*)*", re.M)
_WORD_OPS = lazy_re(rb"\b(and|or|not)\b")
# The cheap test first (a few ms for 5 MB of sources): a directive with such a word at all.
_ANY_WORD_OP = lazy_re(rb"#[ \t]*(?:el)?if\b(?:[^\n\\]|\\[^\n]|\\\r?\n)*?\b(?:and|or|not)\b")
_SPELLED = {b"and": b"&& ", b"or": b"||", b"not": b"!  "}


_C_COMMENTS = lazy_re(r"//[^\n]*|/\*.*?\*/", re.S)


def strip_c_comments(text: str) -> str:
    """`text` with its // and /* */ comments blanked (string literals are not looked at: for
    searches of names in code, where a comment naming an API must not count)."""
    return _C_COMMENTS.sub(" ", text)


def respell_operators(expr: str) -> str:
    """A directive's condition with `and` `or` `not` written `&&` `||` `!`, for tests on its text."""
    return re.sub(r"\b(and|or|not)\b", lambda w: {"and": "&&", "or": "||", "not": "!"}[w.group(1)], expr)


# `__has_include(<cudnn.h>)` in an `#if`: the grammar has no header-name token there; the name's punctuation
# read as `_` (same length) makes it a call with one identifier argument (hiplint.preproc reads the original).
_HAS_INCLUDE = lazy_re(rb"\b__has_include(?:_next)?[ \t]*\([ \t]*([<\"][^>\"\n()]*[>\"])[ \t]*\)")
_NOT_WORD = lazy_re(rb"\W")


def for_parsing(data: bytes) -> bytes:
    """`data` as the parser is given it: `and`/`or`/`not` in `#if`/`#elif` lines respelled `&&`/`||`/`!`,
    and `__has_include(<x.h>)` arguments spelled as an identifier (same length). Anything read back for
    messages or fixes comes from the original bytes."""
    if b"__has_include" in data:
        data = _HAS_INCLUDE.sub(lambda m: m.group(0)[:m.start(1) - m.start(0)] + _NOT_WORD.sub(b"_", m.group(1))
                                + m.group(0)[m.end(1) - m.start(0):], data)
    if not _ANY_WORD_OP.search(data):
        return data
    return _DIRECTIVE_WITH_WORD_OPS.sub(lambda m: _WORD_OPS.sub(lambda w: _SPELLED[w.group(1)], m.group(0)), data)


# Query matching is quadratic in nesting depth (tree-sitter keeps a match in progress at every level):
# a generated `1+1+...` of 5,000 terms took 20 s, one of 2.5 million never ended.
MAX_NESTING = 1000
# A level takes two bytes at least (`1+`). The look-behind starts a match only after a delimiter (or at
# the start): tried at every byte, the plain repeat cost 0.45 s on the 5.6 MB benchmark corpus, this 0.07 s.
_LONG_STATEMENT = lazy_re(rb"(?<![^;{}])[^;{}]{%d,}" % (2 * MAX_NESTING))


def too_deep(root: Node, data: bytes, limit: int = MAX_NESTING) -> int | None:
    """A byte offset where the tree nests more than `limit` levels, or None. Only statements of
    2 * MAX_NESTING bytes or more can; a few places in each are probed from the root down (a
    left-nested chain is deep at its start, a right-nested one at its end), each probe at most `limit`
    steps: bounded work on any input."""
    for m in itertools.islice(_LONG_STATEMENT.finditer(data), 8):
        start, end = m.span()
        probes = {start + k * 256 for k in range(8)} | {end - 1 - k * 256 for k in range(8)} | \
                 {start + (end - start) * k // 8 for k in range(1, 8)}
        for pos in sorted(p for p in probes if start <= p < end):
            cursor, depth = root.walk(), 0
            while cursor.goto_first_child_for_byte(pos) is not None:
                depth += 1
                if depth > limit:
                    return pos
    return None


# Blocks and brace initializers nested this deep are generated, not written: tree-sitter's `.parent`
# walks down from the root (it costs the depth), so every walk up from such a depth costs its square:
# 8,000 nested `{` took 15 s, and the fixer re-lints the file on every pass. Beyond this the file is
# skipped with a note.
MAX_BLOCK_NESTING = 256
_BRACE = lazy_re(rb"[{}]")


def too_deep_blocks(root: Node, data: bytes, limit: int = MAX_BLOCK_NESTING) -> int | None:
    """A byte offset inside more than `limit` nested `{`, or None. The text is scanned once for the
    deepest brace (one step per brace: linear), then the tree confirms it (a brace in a string or
    comment nests nothing), probing down at most `limit` + 1 steps."""
    if data.count(b"{") <= limit:
        return None
    depth = best = at = 0
    for m in _BRACE.finditer(data):
        if m.group() == b"{":
            depth += 1
            if depth > best:
                best, at = depth, m.start()
        elif depth:
            depth -= 1
    if best <= limit:
        return None
    cursor, levels = root.walk(), 0
    while cursor.goto_first_child_for_byte(at) is not None:
        levels += 1
        if levels > limit:
            return at
    return None


def valid_utf8(data: bytes) -> tuple[bytes, list[tuple[int, int]]]:
    """`data` with every byte that is not UTF-8 replaced by `?` (same length, so every offset holds), and
    where those bytes were. tree-sitter's query predicates (`#match?`) decode captured text as strict
    UTF-8: one Latin-1 byte in a string or comment stopped the scan of the file."""
    try:
        data.decode("utf-8")
        return data, []
    except UnicodeDecodeError:
        pass
    spans: list[tuple[int, int]] = []
    out = bytearray(data)
    for m in _NOT_UTF8.finditer(data):
        if m.group(1) is not None:
            spans.append((m.start(1), m.end(1)))
            out[m.start(1):m.end(1)] = b"?" * (m.end(1) - m.start(1))
    return bytes(out), spans


# One well-formed UTF-8 sequence (RFC 3629), or one byte that starts none: group 1.
_NOT_UTF8 = lazy_re(
    rb"[\x00-\x7f]+|[\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}"
    rb"|\xed[\x80-\x9f][\x80-\xbf]|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}|\xf4[\x80-\x8f][\x80-\xbf]{2}"
    rb"|([\x80-\xff])", re.S)


def _splice_continuations(body: bytes) -> bytes:
    # Backslash-newline becomes two spaces: the length, and so every offset, is kept.
    return body.replace(b"\\\r\n", b"   ").replace(b"\\\n", b"  ")


def parse_file(parser: Parser, data: bytes) -> list[Unit]:
    tree = parser.parse(for_parsing(data))
    return [Unit(tree, data)] + macro_units(parser, tree, data)


def macro_units(parser: Parser, tree: Tree, data: bytes) -> list[Unit]:
    """Units for the code-like `#define` bodies of a parsed file."""
    units: list[Unit] = []
    bodies = []  # (#define node, name, start of its value in the file, wrapped body)
    for node in iter_nodes(tree.root_node, {"preproc_def", "preproc_function_def"}):
        value = node.child_by_field_name("value")
        if value is None:
            continue
        body = data[value.start_byte:value.end_byte]
        if not _CODE_LIKE.search(body):
            continue
        name_node = node.child_by_field_name("name")
        name = data[name_node.start_byte:name_node.end_byte].decode("utf-8", "replace") if name_node else ""
        bodies.append((node, name, value.start_byte, _WRAP_PREFIX + _splice_continuations(body) + _WRAP_SUFFIX))
    if bodies:
        units.extend(_batched_macro_units(parser, bodies) or _single_macro_units(parser, bodies))
    return units


def _single_macro_units(parser: Parser, bodies) -> list[Unit]:
    return [Unit(parser.parse(wrapped), wrapped, start - len(_WRAP_PREFIX), node, name)
            for node, name, start, wrapped in bodies]


def _batched_macro_units(parser: Parser, bodies) -> list[Unit] | None:
    """All macro bodies of a file in one parse (one parse call per macro costs more than the
    parsing itself in macro-heavy files). Used only when every wrapper function came out exactly
    where it was put, so no body's syntax leaked into its neighbour; else None."""
    if len(bodies) < 2:
        return None
    data = b"".join(wrapped for _, _, _, wrapped in bodies)
    tree = parser.parse(data)
    top = tree.root_node.named_children
    if len(top) != len(bodies):
        return None
    units, offset = [], 0
    for (node, name, start, wrapped), fn in zip(bodies, top):
        end = offset + len(wrapped) - 1  # the wrapper ends at its closing brace, before the newline
        if fn.type != "function_definition" or fn.start_byte != offset or fn.end_byte != end:
            return None
        units.append(Unit(tree, data, start - len(_WRAP_PREFIX) - offset, node, name, fn))
        offset += len(wrapped)
    return units


def error_ranges(root: Node) -> list[tuple[int, int]]:
    """Byte ranges of ERROR and MISSING nodes, for HL001 and for rules that must stay quiet there."""
    if not root.has_error:
        return []
    out = []
    stack = [root]
    while stack:
        node = stack.pop()
        if not node.has_error:
            continue
        if node.type == "ERROR" or node.is_missing:
            out.append((node.start_byte, node.end_byte))
            continue
        stack.extend(node.children)
    out.sort()
    return out


_DECLARING = frozenset({"function_definition", "declaration", "field_declaration"})
_TAG_SPECIFIERS = frozenset({"struct_specifier", "enum_specifier", "union_specifier", "class_specifier"})


def is_defined_name(node: Node) -> bool:
    """Is `node` the name a declaration gives (`cusolverStatus_t cusolverDnDHgesv(...) { return ...; }`,
    `typedef enum nvtxColorType_t {...} nvtxColorType_t;`, `void nvtxMarkA(const char*);`) rather than a
    use of it? A project's shim or stub that defines a CUDA API's name implements it; it does not call it."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "function_declarator" and parent.child_by_field_name("declarator") == node:
        outer = parent.parent
        while outer is not None and outer.type in ("pointer_declarator", "reference_declarator"):
            outer = outer.parent
        return outer is not None and outer.type in _DECLARING
    if parent.type in _TAG_SPECIFIERS and parent.child_by_field_name("name") == node:
        return parent.child_by_field_name("body") is not None
    if parent.type == "type_definition" and node.type == "type_identifier":
        return any(c == node for c in parent.children_by_field_name("declarator"))
    if parent.type == "enumerator" and parent.child_by_field_name("name") == node:
        return True  # `enum mode_t {NORMAL, CUDNN_VALIDATE};`: the project's own constant
    return False


def defined_names(ctx) -> frozenset:
    """Names the file itself defines or declares (functions, tags with a body, typedefs): see
    is_defined_name. Cached per file."""
    cached = ctx.cache.get("defined_names")
    if cached is None:
        found = set()
        for unit in ctx.units:
            for node in iter_nodes(unit.root, {"function_declarator", "type_definition", *_TAG_SPECIFIERS}):
                names = [node.child_by_field_name("declarator")] if node.type == "function_declarator" else \
                    node.children_by_field_name("declarator") if node.type == "type_definition" else \
                    [node.child_by_field_name("name")]
                for name in names:
                    if name is not None and name.type in ("identifier", "type_identifier") and is_defined_name(name):
                        found.add(unit.text(name))
        cached = ctx.cache["defined_names"] = frozenset(found)
    return cached
