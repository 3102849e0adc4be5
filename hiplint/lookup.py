"""Single-token patterns matched from where their names occur in the text, not by walking the tree.

A table rule's pattern such as `([(identifier) (type_identifier)] @name (#match? @name "^cusolver"))`
matches one token and tests its text. Run as a query, it pays for every identifier of every file:
tree-sitter hands each one to the predicate (about 1 s per pattern on the benchmark corpus). The
strings a match must contain are known (hiplint.triggers), and the text search that gates rules
already finds where they occur. So for such a pattern the engine takes each occurrence, finds the
token there (`named_descendant_for_byte_range`), and applies the pattern's kinds and predicates to it:
the same matches, at a cost that grows with the occurrences, not with the file.

Two shapes qualify, with predicates `#eq?`, `#any-of?`, `#match?` and their `#not-` forms on the
token: one token of a token kind (`[(identifier) (type_identifier)] @name`), and a call of a name
(`(call_expression function: (identifier) @fn [arguments: (argument_list) [@args]]) @call`), whose
token must sit in the `function` field of a call. The rest stay queries. A test compares both ways
on every fixture (tests/test_triggers.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from hiplint.lazy import lazy_re

# Node kinds that are tokens (no children): the deepest named node around an occurrence inside one is it.
TOKEN_KINDS = frozenset({"identifier", "type_identifier", "field_identifier", "namespace_identifier",
                         "statement_identifier"})

_STRING = r'"((?:[^"\\]|\\.)*)"'
_PREDICATE = lazy_re(r'\(\s*#([\w-]+)\?\s+@([\w.-]+)((?:\s+' + _STRING + r')*)\s*\)')
_STRINGS = lazy_re(_STRING)
_SHAPE = lazy_re(r'^(\(?)\s*(?:\[\s*((?:\(\w+\)\s*)+)\]|\((\w+)\))\s*@([\w.-]+)\s*(\)?)$')
# After predicates are removed and spaces normalised.
_CALL_SHAPE = lazy_re(r'^\(\(call_expression function: \(identifier\) @([\w.-]+)'
                         r'(?: arguments: \(argument_list\)(?: @([\w.-]+))?)?\) @([\w.-]+) \)$')
_KINDS = lazy_re(r"\((\w+)\)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), s)


def predicates_hold(tests, text: str) -> bool:
    """Text predicates `(op, negated, argument)` as tree-sitter's Python binding applies them: "eq" a
    string, "any" a set of strings, "match" a regex (`#match?` is re.search). Shared with hiplint.treematch."""
    for op, negated, arg in tests:
        if op == "eq":
            ok = text == arg
        elif op == "any":
            ok = text in arg
        else:
            ok = arg.search(text) is not None
        if ok == negated:
            return False
    return True


@dataclass(frozen=True)
class LookupPattern:
    owner: tuple  # (rule, pattern id), as for query patterns
    capture: str
    kinds: frozenset[str]
    wants: frozenset[bytes]  # one of these occurs in every match's token
    tests: tuple  # (op, negated, argument): "eq" a string, "any" a frozenset, "match" a compiled regex
    call: str = ""  # the call shape: the call's capture name ("" for a lone token)
    args: str | None = None  # the call shape: None, or "" (an argument list, not captured), or its capture name

    @classmethod
    def parse(cls, pattern: str, owner: tuple, wants: frozenset[bytes], checked: bool = False) -> "LookupPattern | None":
        """The pattern as a lookup, or None when it has neither shape (module docstring) or tests
        the token with anything but the text predicates modelled here. `checked`: the pattern was
        parsed as a lookup before (a saved query plan), so its `#match?` regexes compile: they are
        compiled when first used."""
        tests = []
        capture = None
        for op, cap, args, _ in _PREDICATE.findall(pattern):
            strings = [_unescape(s) for s in _STRINGS.findall(args)]
            negated = op.startswith("not-")
            op = op[4:] if negated else op
            if capture not in (None, cap) or not strings:
                return None
            capture = cap
            if op == "eq" and len(strings) == 1:
                tests.append(("eq", negated, strings[0]))
            elif op == "any-of":
                tests.append(("any", negated, frozenset(strings)))
            elif op == "match" and len(strings) == 1:
                if checked:
                    tests.append(("match", negated, lazy_re(strings[0])))
                    continue
                try:
                    tests.append(("match", negated, re.compile(strings[0])))
                except re.error:
                    return None
            else:
                return None
        if not tests:
            return None
        rest = " ".join(_PREDICATE.sub(" ", pattern).split())
        call = _CALL_SHAPE.match(rest)
        if call is not None:
            names = [n for n in call.groups() if n]
            if call.group(1) != capture or len(set(names)) != len(names):
                return None
            args = None if " arguments: " not in rest else (call.group(2) or "")
            return cls(owner, capture, frozenset({"identifier"}), wants, tuple(tests), call.group(3), args)
        shape = _SHAPE.match(rest)
        if shape is None or bool(shape.group(1)) != bool(shape.group(5)) or shape.group(4) != capture:
            return None
        kinds = frozenset(_KINDS.findall(shape.group(2))) if shape.group(2) else frozenset({shape.group(3)})
        if not kinds <= TOKEN_KINDS:
            return None
        return cls(owner, capture, kinds, wants, tuple(tests))

    def accepts(self, text: str) -> bool:
        return predicates_hold(self.tests, text)

    def matches(self, root: Node, data: bytes, hits: dict[bytes, list[int]]) -> list[tuple[int, dict]]:
        """(start byte, captures) of each match in `root`'s tree, captures in the order tree-sitter
        gives them; `hits` says where each wanted string occurs in `data`."""
        out = []
        seen = set()
        for s in self.wants:
            for pos in hits.get(s, ()):
                node = root.named_descendant_for_byte_range(pos, pos + len(s))
                if node is None or node.type not in self.kinds or node.start_byte in seen:
                    continue
                seen.add(node.start_byte)
                if not self.accepts(data[node.start_byte:node.end_byte].decode("utf-8", "replace")):
                    continue
                if not self.call:
                    out.append((node.start_byte, {self.capture: [node]}))
                    continue
                call = node.parent
                if call is None or call.type != "call_expression":
                    continue
                function = call.child_by_field_name("function")
                if function is None or function.id != node.id:
                    continue
                captures = {self.call: [call], self.capture: [node]}
                if self.args is not None:
                    args = call.child_by_field_name("arguments")
                    if args is None or args.type != "argument_list":
                        continue
                    if self.args:
                        captures[self.args] = [args]
                out.append((call.start_byte, captures))
        return out
