"""A document linted again after an edit (the language server) is parsed from its previous tree: the
same findings as a lint from scratch."""
from __future__ import annotations

import random

import pytest

from conftest import FIXTURES
from hiplint.config import Settings
from hiplint.engine import Linter, changed_span
from hiplint.languages import language_of
from hiplint.registry import load_registry, select_rules
from hiplint.testing import fixture_files

C_FIXTURES = [p for p in fixture_files(FIXTURES) if language_of(str(p)) == "cuda"]


@pytest.mark.parametrize("old, new, span", [
    (b"abcdef", b"abcdef", (6, 6, 6)),
    (b"abcdef", b"abXdef", (2, 3, 3)),
    (b"abcdef", b"abdef", (2, 3, 2)),
    (b"abcdef", b"abccdef", (3, 3, 4)),  # the prefix is the longest; the suffix never overlaps it
    (b"", b"x", (0, 0, 1)),
    (b"aaaa", b"aa", (2, 4, 2)),
    (b"xy", b"", (0, 2, 0)),
])
def test_changed_span(old, new, span):
    assert changed_span(old, new) == span
    start, old_end, new_end = span
    assert old[:start] + new[start:new_end] + old[old_end:] == new


def _edits(data: bytes, rng: random.Random):
    """A typist's edits: a character typed, a line deleted, a line pasted elsewhere, text undone."""
    lines = data.split(b"\n")
    yield data
    for _ in range(6):
        kind = rng.randrange(4)
        i = rng.randrange(len(lines))
        if kind == 0:
            j = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:j] + rng.choice([b"x", b"(", b"}", b" ", b"32", b"{"]) + lines[i][j:]
        elif kind == 1 and len(lines) > 2:
            del lines[i]
        elif kind == 2:
            lines.insert(rng.randrange(len(lines) + 1), lines[i])
        else:
            lines = data.split(b"\n")
        yield b"\n".join(lines)


def _findings(result):
    return [(f.code, f.line, f.column, f.end_line, f.end_column, f.message) for f in result.findings]


@pytest.mark.parametrize("path", C_FIXTURES[::6], ids=lambda p: str(p.relative_to(FIXTURES)))
def test_edits_parsed_from_the_previous_tree_give_the_findings_of_a_fresh_parse(path):
    settings = Settings().with_overrides(extend_select=("ALL",))
    rules = select_rules(settings, load_registry())
    typing, fresh = Linter(settings, rules), Linter(settings, rules)
    typing.reuse_trees = True
    rng = random.Random(str(path.relative_to(FIXTURES)))
    for text in _edits(path.read_bytes(), rng):
        assert _findings(typing.lint_bytes("doc.cu", text, "cuda")) == _findings(fresh.lint_bytes("doc.cu", text, "cuda"))
    assert typing._previous and not fresh._previous


@pytest.mark.parametrize("path", C_FIXTURES[3::10], ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_edited_tree_is_the_tree_of_a_fresh_parse(path):
    from hiplint.cparse import new_parser, walk_tree

    linter = Linter(Settings(), [])
    linter._parser = new_parser()
    linter.reuse_trees = True
    rng = random.Random(str(path.relative_to(FIXTURES)))  # the same edits in every checkout

    def nodes(tree):
        return [(n.type, n.start_byte, n.end_byte, n.start_point, n.end_point, n.is_missing)
                for n in walk_tree(tree.root_node, None)]

    for text in _edits(path.read_bytes(), rng):
        assert nodes(linter._parse_document("doc.cu", text)) == nodes(new_parser().parse(text))
