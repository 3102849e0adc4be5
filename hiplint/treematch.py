"""Structured query patterns matched in Python from their root node, for runs too small to pay the compile.

tree-sitter analyses every pattern that has child patterns against the whole grammar when it compiles
a query: 10-20 ms for one on binary expressions or function bodies, whatever the file. A one-file run
(a pre-commit hook, the first lint in an editor) spent about a third of its time there. A pattern
made of one node kind and nothing below it costs nothing to compile, so for such runs the engine
compiles `(kind) @root` in place of a pattern this module can read, and applies the rest of the
pattern here to each node the query finds (hiplint.queryplan, QueryPlan.queries_for). Larger runs
compile the patterns: a walk in C is faster than this once the source is large.

The shapes read: node patterns `(kind ...)` and `(_ ...)` with child patterns, fields, captures, string
literals of anonymous nodes and alternations `[...]`, and the predicates `#eq?`, `#match?`,
`#any-of?` and their `#not-` forms, and anchors `.` between named child patterns. A pattern with
anything else (quantifiers, negated fields, sibling sequences, supertypes) returns None from
`TreePattern.parse` and stays a query. Matches are those tree-sitter gives: every way the child patterns can take the node's
children in order (tree-sitter splits its state when a capturing step could also match a later
sibling), with the captures in document order. A test compares both ways on every fixture
(tests/test_treematch.py).
"""
from __future__ import annotations

import re

from tree_sitter import Node

from hiplint.lazy import lazy_re
from hiplint.lookup import predicates_hold

_TOKEN = re.compile(r'''\s+|;[^\n]*|(?P<str>"(?:[^"\\]|\\.)*")|(?P<punct>[()\[\]])|(?P<cap>@[\w.-]+)'''
                    r'''|(?P<pred>\#[\w-]+[?!])|(?P<field>[\w-]+:)|(?P<word>[\w.-]+|[^\s()\[\]"@;]+)''')
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}
_PREDICATES = {"eq?", "not-eq?", "match?", "not-match?", "any-of?", "not-any-of?"}


class Unsupported(Exception):
    pass


def _tokens(text: str) -> list[tuple[str, str]]:
    out = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise Unsupported(text[pos:pos + 20])
        pos = m.end()
        if m.lastgroup is None:
            continue
        value = m.group(m.lastgroup)
        if m.lastgroup == "str":
            value = re.sub(r"\\(.)", lambda e: _ESCAPES.get(e.group(1), e.group(1)), value[1:-1])
        out.append((m.lastgroup, value))
    return out


class _Pat:
    """One pattern: a node (`kind`, "_" for any named node), a string literal (`literal`) or an
    alternation (`options`); `children` are (field or None, pattern)."""

    __slots__ = ("kind", "literal", "options", "children", "captures", "anchors")

    def __init__(self, kind=None, literal=None, options=None):
        self.kind, self.literal, self.options = kind, literal, options
        self.children: list[tuple[str | None, _Pat]] = []
        self.captures: list[str] = []
        self.anchors: list[int] = []  # k: an anchor before child pattern k (len(children): after the last)

    def captured(self) -> set[str]:
        """Every capture name in this pattern."""
        names = set(self.captures)
        for p in self.options or ():
            names |= p.captured()
        for _, c in self.children:
            names |= c.captured()
        return names

    def always(self) -> set[str]:
        """The capture names every match of this pattern has."""
        names = set(self.captures)
        if self.options:
            names |= set.intersection(*(p.always() for p in self.options))
        for _, c in self.children:
            names |= c.always()
        return names

    def kinds(self) -> set[str] | None:
        """The node kinds this pattern's root can be, None for any."""
        if self.options is not None:
            out: set[str] = set()
            for p in self.options:
                k = p.kinds()
                if k is None:
                    return None
                out |= k
            return out
        if self.kind == "_":
            return None
        return {self.kind} if self.kind is not None else None


class _Parser:
    def __init__(self, text: str):
        self.toks = _tokens(text)
        self.i = 0
        self.predicates: list[tuple[str, str, list]] = []

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self):
        tok = self.peek()
        self.i += 1
        return tok

    def pattern(self) -> _Pat:
        kind, value = self.take()
        if kind == "str":
            pat = _Pat(literal=value)
        elif value == "[":
            options = []
            while self.peek()[1] != "]":
                if self.peek()[0] is None:
                    raise Unsupported("unclosed [")
                options.append(self.pattern())
            self.take()
            if not options:
                raise Unsupported("empty alternation")
            pat = _Pat(options=options)
        elif value == "(":
            pat = self.node()
        else:
            raise Unsupported(f"{value!r}")
        while self.peek()[0] == "cap":
            pat.captures.append(self.take()[1][1:])
        if self.peek()[1] in ("*", "+", "?"):
            raise Unsupported("quantifier")
        return pat

    def predicate(self) -> None:
        name = self.take()[1][1:]
        if name not in _PREDICATES:
            raise Unsupported(name)
        args = []
        while self.peek()[1] != ")":
            kind, value = self.take()
            if kind not in ("cap", "str"):
                raise Unsupported(f"predicate argument {value!r}")
            args.append((kind, value))
        self.take()
        if len(args) < 2 or args[0][0] != "cap" or any(k != "str" for k, _ in args[1:]):
            raise Unsupported("predicate form")  # `#eq? @a @b` stays a query
        if not name.endswith("any-of?") and len(args) != 2:
            raise Unsupported("predicate arity")
        self.predicates.append((name, args[0][1][1:], [v for _, v in args[1:]]))

    def node(self) -> _Pat:
        """After `(`: a node pattern, or a group of one pattern with predicates."""
        kind, value = self.peek()
        if kind == "pred":
            raise Unsupported("predicate outside a pattern")
        if kind != "word":  # a group: `((node ...) @cap (#pred ...))`
            inner = self.pattern()
            while True:
                kind, value = self.peek()
                if value == ")":
                    self.take()
                    return inner
                if value == "(" and self.toks[self.i + 1][0] == "pred":
                    self.take()
                    self.predicate()
                    continue
                raise Unsupported("sibling sequence")
        self.take()
        if value in ("ERROR", "MISSING") or not re.fullmatch(r"[A-Za-z_]\w*", value):
            raise Unsupported(value)
        pat = _Pat(kind=value)
        while True:
            kind, value = self.peek()
            if value == ")":
                self.take()
                return pat
            if kind is None:
                raise Unsupported("unclosed (")
            if value == "(" and self.toks[self.i + 1][0] == "pred":
                self.take()
                self.predicate()
                continue
            if value == ".":  # an anchor: the next child is the first named child, or right after the last
                self.take()
                if pat.anchors and pat.anchors[-1] == len(pat.children):
                    raise Unsupported("two anchors")
                pat.anchors.append(len(pat.children))
                continue
            field = None
            if kind == "field":
                field = value[:-1]
                self.take()
            elif kind == "word":
                raise Unsupported(f"{value!r}")  # a negated field, `_` without parentheses
            pat.children.append((field, self.pattern()))


class TreePattern:
    """A query pattern applied in Python to candidate root nodes (`kinds`, or any node when None)."""

    def __init__(self, root: _Pat, predicates: list, text: str):
        self.root = root
        self.text = text
        self.kinds = root.kinds()
        # The root's child patterns that name a field (checked first, by `matches`).
        self._fielded = [(f, c) for f, c in root.children if f is not None] if root.options is None else []
        # Child patterns below the root (or one of its alternatives): what a compile would analyse.
        self.structured = bool(root.children) or any(o.children for o in root.options or ())
        # Predicates by capture, each tested as soon as its node is taken: a capture that a predicate
        # tests is in every match once (parse), so a failing test ends that way of matching early.
        self.tests: dict[str, list] = {}
        for name, capture, args in predicates:
            negated = name.startswith("not-")
            op = {"eq?": "eq", "any-of?": "any", "match?": "match"}[name[4:] if negated else name]
            if op == "match":
                arg = lazy_re(args[0])  # compiled when a node first reaches the test
            elif op == "any":
                arg = frozenset(args)
            else:
                arg = args[0]
            self.tests.setdefault(capture, []).append((op, negated, arg))

    @classmethod
    def parse(cls, text: str, is_supertype=None) -> "TreePattern | None":
        """The pattern as a TreePattern, or None when it has a shape this module does not read.
        `is_supertype(kind)`: whether a node kind is a supertype (matched by its subtypes: stays a query)."""
        try:
            p = _Parser(text)
            root = p.pattern()
            if p.peek()[0] is not None:
                raise Unsupported("more than one pattern")
            _check(root, is_supertype, top=True)
            always = root.always()
            named = root.captured()
            for _, capture, _ in p.predicates:
                if capture not in always or _count(root, capture) != 1:
                    raise Unsupported("predicate on a capture not in every match once")
            if not named:
                raise Unsupported("no capture")
            return cls(root, p.predicates, text)
        except (Unsupported, re.error, IndexError):
            return None

    def matches(self, node: Node) -> list[tuple[tuple[int, int], dict[str, list[Node]]]]:
        """The matches rooted at `node`, each as (order, {capture: [nodes]}). tree-sitter gives a match
        when its last step takes a node, in a walk of the tree in pre-order: `order` sorts matches so."""
        out = []
        seen = set()
        # Most nodes of the root's kind fail on a field's child (`function: (identifier) @fn` with
        # `#any-of? @fn ...`): that child is looked up by its field first, without walking the rest.
        for field, pat in self._fielded:
            if not any(_may_match(pat, c, self.tests) for c in node.children_by_field_name(field)):
                return out
        for binding, last in _match(self.root, node, self.tests):
            key = tuple((name, n.id) for name, n in binding)
            if key in seen:
                continue
            seen.add(key)
            captures: dict[str, list[Node]] = {}
            for name, n in sorted(binding, key=lambda b: (b[1].start_byte, -b[1].end_byte)):
                captures.setdefault(name, []).append(n)
            out.append(((last.start_byte, -last.end_byte), captures))
        return out


def _may_match(p: _Pat, node: Node, tests: dict) -> bool:
    """Whether `node` passes pattern `p`'s own kind and the predicates on its own captures (not its
    children's): a necessary condition for a match at `node`."""
    if p.options is not None:
        if not any(_may_match(o, node, tests) for o in p.options):
            return False
    elif p.literal is not None:
        if node.is_named or node.type != p.literal:
            return False
    elif not node.is_named or (p.kind != "_" and node.type != p.kind):
        return False
    return all(c not in tests or _passes(tests[c], node) for c in p.captures)


def _passes(tests: list, node: Node) -> bool:
    """The predicates on one capture, on the text of the tree's source as tree-sitter's own read it."""
    return predicates_hold(tests, node.text.decode("utf-8", "replace"))


def _count(p: _Pat, capture: str) -> int:
    n = p.captures.count(capture)
    if p.options:
        n += max(_count(o, capture) for o in p.options)
    return n + sum(_count(c, capture) for _, c in p.children)


def _check(p: _Pat, is_supertype, top: bool = False) -> None:
    if p.options is not None:
        for o in p.options:
            _check(o, is_supertype)
            if o.options is not None:
                raise Unsupported("nested alternation")
        return
    if p.kind is not None and p.kind != "_" and is_supertype is not None and is_supertype(p.kind):
        raise Unsupported("supertype")
    if p.kind is not None and p.kind.startswith("_") and p.kind != "_":
        raise Unsupported("hidden kind")
    for k in p.anchors:  # anchors count named nodes: only between named child patterns
        for j in (k - 1, k):
            if 0 <= j < len(p.children) and _maybe_anonymous(p.children[j][1]):
                raise Unsupported("an anchor beside an anonymous node")
    for _, c in p.children:
        _check(c, is_supertype)


def _maybe_anonymous(p: _Pat) -> bool:
    return p.literal is not None or any(_maybe_anonymous(o) for o in p.options or ())


def _match(p: _Pat, node: Node, tests: dict) -> list[tuple[list[tuple[str, Node]], Node]]:
    """Every binding of pattern `p` at `node`: (a list of (capture, node), the node its last step took)."""
    if p.options is None:
        if p.literal is not None:
            if node.is_named or node.type != p.literal:
                return []
        elif not node.is_named or (p.kind != "_" and node.type != p.kind):
            return []
    for c in p.captures:
        if c in tests and not _passes(tests[c], node):
            return []
    if p.options is not None:
        out = []
        for o in p.options:
            out.extend(_match(o, node, tests))
    else:
        out = _children(p, node, tests) if p.children else [([], node)]
    if p.captures and out:
        return [([(c, node) for c in p.captures] + b, last) for b, last in out]
    return out


def _children(p: _Pat, node: Node, tests: dict) -> list[tuple[list[tuple[str, Node]], Node]]:
    """Every way the child patterns take `node`'s children in order (skipping others) as bindings."""
    children = p.children
    kids = node.children
    fields = [node.field_name_for_child(i) for i in range(len(kids))] if any(f for f, _ in children) else None
    anchors = p.anchors
    named_index, n_named = [], 0
    if anchors:
        for kid in kids:
            named_index.append(n_named if kid.is_named else -1)
            n_named += kid.is_named
    results: list[tuple[list[tuple[str, Node]], Node]] = []

    def assign(k: int, start: int, prev_named: int, acc: list, last: Node) -> None:
        if k == len(children):
            if k in anchors and prev_named != n_named - 1:
                return
            results.append((acc, last))
            return
        field, pat = children[k]
        for i in range(start, len(kids)):
            if field is not None and fields[i] != field:
                continue
            if anchors:
                if k in anchors and named_index[i] != prev_named + 1:
                    continue
                taken = named_index[i] if named_index[i] >= 0 else prev_named
            else:
                taken = prev_named
            for b, end in _match(pat, kids[i], tests):
                assign(k + 1, i + 1, taken, acc + b, end)

    assign(0, 0, -1, [], node)
    return results
