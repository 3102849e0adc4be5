"""Which rules can find anything in a file, decided from its text before any query runs.

Most files use none of a library's API, yet a query that tests every identifier against a table
(`#any-of?`, `#match?`) pays for every identifier of every file. So each query pattern gets a
*requirement*: strings of which at least one must occur in the file's text for the pattern to match.
The engine runs a pattern only on files that contain one of them.

A requirement is derived from the pattern itself, so it cannot be wrong: a positive text predicate
(`#eq?`, `#any-of?`, or a `#match?` whose regex starts with literal text) on a capture that every match
has (quantifier one) means that capture's text, and so the file, contains one of those strings.
A rule may also declare `triggers` for patterns and `check_unit` code that no predicate limits
(its author states that the rule cannot report in a file without one of them).
"""
from __future__ import annotations

import re
from typing import Iterable

try:  # the regex parser of the standard library (Python 3.11+: re._parser; before: sre_parse)
    from re import _parser as sre_parse
    from re import _constants as sre_constants
except ImportError:  # pragma: no cover
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

# A literal shorter than this matches almost every file: not worth a gate.
MIN_LITERAL = 3

_STRING = r'"((?:[^"\\]|\\.)*)"'
_PREDICATE = re.compile(r'\(\s*#(eq|any-of|match)\?\s+@([\w.-]+)((?:\s+' + _STRING + r')+)\s*\)')
_STRINGS = re.compile(_STRING)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}


def _unescape(s: str) -> str:
    # Tree-sitter query strings know \n, \t, \r, \0 and \<char> for the char itself.
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), s)


def regex_literals(regex: str) -> frozenset[str] | None:
    """Strings of which every match of `regex` contains one, or None when there are none to tell.

    The leading literal text of the regex, expanded over a first group of alternatives
    (`^(cusolver|hipsolver)Dn` gives cusolverDn and hipsolverDn; `tiled_partition$` itself).
    """
    try:
        parsed = sre_parse.parse(regex)
    except Exception:
        return None
    if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
        return None
    starts = _starts(list(parsed))
    if not starts or any(len(s) < MIN_LITERAL for s in starts):
        return None
    return frozenset(starts)


def _starts(seq) -> list[str]:
    """The literal strings a match of this parsed sequence can begin with ('' when unknown)."""
    return [text for text, _ in _literal_runs(seq)]


def _literal_runs(seq) -> list[tuple[str, bool]]:
    """(leading literal text, whether it is the whole match) for each way the sequence can match."""
    runs = [("", True)]
    for n, (op, av) in enumerate(seq):
        if op is sre_constants.AT and n == 0:
            continue  # ^ constrains nothing about the text
        if op is sre_constants.LITERAL:
            inner = [(chr(av), True)]
        elif op is sre_constants.SUBPATTERN:
            inner = _literal_runs(list(av[-1]))
        elif op is sre_constants.BRANCH:
            inner = [r for branch in av[1] for r in _literal_runs(list(branch))]
        elif op is sre_constants.IN and all(o is sre_constants.LITERAL for o, _ in av):
            inner = [(chr(c), True) for _, c in av]
        else:
            return [(text, False) for text, _ in runs]
        if len(runs) * len(inner) > 4096:
            return [(text, False) for text, _ in runs]
        # Extend only the runs still complete; a run that stopped keeps its text.
        runs = [(text + more, done) for text, complete in runs for more, done in (inner if complete else [("", False)])]
        if not any(complete for _, complete in runs):
            return runs
    return runs


def pattern_requirement(query, pattern_index: int, text: str) -> frozenset[str] | None:
    """The strings one of which a match of this pattern needs in the file, or None (always runs).

    `text` is the pattern's source; `query` the compiled Query it belongs to (for capture quantifiers).
    Of several usable predicates, the one with the fewest strings is the tightest gate.
    """
    best: frozenset[str] | None = None
    for kind, capture, args, _ in _PREDICATE.findall(text):
        if not _always_captured(query, pattern_index, capture):
            continue  # a predicate on a capture a match may lack is vacuously true
        strings = [_unescape(s) for s in _STRINGS.findall(args)]
        if kind == "match":
            if len(strings) != 1:
                continue
            req = regex_literals(strings[0])
        else:
            req = frozenset(strings) if strings and all(len(s) >= MIN_LITERAL for s in strings) else None
        if req and (best is None or len(req) < len(best)):
            best = req
    return best


def _always_captured(query, pattern_index: int, name: str) -> bool:
    for i in range(query.capture_count):
        if query.capture_name(i) == name:
            return query.capture_quantifier(pattern_index, i) == ""  # "" is exactly one; ? + * are not
    return False


class TextSearch:
    """Where any of many strings occur in a text, in one pass (Aho-Corasick, pyahocorasick): about
    0.2 ms for a 6 KB file and 700 strings, where testing each string with `in` took 0.6 ms."""

    def __init__(self, strings: Iterable[bytes]):
        self.strings = frozenset(strings)
        self._automaton = None
        if self.strings:
            import ahocorasick

            automaton = ahocorasick.Automaton()
            for s in self.strings:
                # latin-1 maps each byte to one character, so string offsets are byte offsets.
                automaton.add_word(s.decode("latin-1"), (len(s) - 1, s))
            automaton.make_automaton()
            self._automaton = automaton

    def occurrences(self, data: bytes) -> dict[bytes, list[int]]:
        """Each string found in `data` with the byte offsets where it starts (overlaps included)."""
        found: dict[bytes, list[int]] = {}
        if self._automaton is None:
            return found
        for end, (back, s) in self._automaton.iter(data.decode("latin-1")):
            found.setdefault(s, []).append(end - back)
        return found
