"""Parsing C, C++, CUDA and HIP sources with tree-sitter-cuda.

A file becomes one or more *units*: the file itself, plus one unit per macro body that looks like
code (tree-sitter keeps `#define` bodies as opaque text). Rules see every unit; a unit maps its byte
offsets back to the file so findings and fixes always point at the file.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import tree_sitter_cuda
from tree_sitter import Language, Node, Parser, Tree

GRAMMAR_VERSION = "tree-sitter-cuda-0.21.2"

# A macro body is parsed as code only when it could hold a call, an operator or a statement.
_CODE_LIKE = re.compile(rb"[(;{=&|<>%/*+-]")
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

    @property
    def root(self) -> Node:
        return self.tree.root_node

    @property
    def is_macro(self) -> bool:
        return self.macro is not None

    def text(self, node: Node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", errors="replace")

    def file_range(self, node: Node) -> tuple[int, int]:
        return node.start_byte + self.delta, node.end_byte + self.delta


def iter_nodes(root: Node, types: frozenset[str] | set[str] | None = None):
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


def _splice_continuations(body: bytes) -> bytes:
    # Backslash-newline becomes two spaces: the length, and so every offset, is kept.
    return body.replace(b"\\\r\n", b"   ").replace(b"\\\n", b"  ")


def parse_file(parser: Parser, data: bytes) -> list[Unit]:
    tree = parser.parse(data)
    units = [Unit(tree, data)]
    for node in iter_nodes(tree.root_node, {"preproc_def", "preproc_function_def"}):
        value = node.child_by_field_name("value")
        if value is None:
            continue
        body = data[value.start_byte:value.end_byte]
        if not _CODE_LIKE.search(body):
            continue
        name_node = node.child_by_field_name("name")
        name = data[name_node.start_byte:name_node.end_byte].decode("utf-8", "replace") if name_node else ""
        wrapped = _WRAP_PREFIX + _splice_continuations(body) + _WRAP_SUFFIX
        unit_tree = parser.parse(wrapped)
        units.append(Unit(unit_tree, wrapped, value.start_byte - len(_WRAP_PREFIX), node, name))
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
