"""Suppression comments.

    x = f(m);            // hiplint: ignore[WRP004]        this line
    // hiplint: ignore[WRP004, WRP003] reason...         the next statement
    // hiplint: disable[WRP001]  ...  // hiplint: enable[WRP001]    a range
    // hiplint: file-ignore[RND101]                       the whole file

Codes, prefixes and rule names are accepted; text after `]` is a free-form reason. There is no
blanket form: `// hiplint: ignore` without codes is itself reported (HL101), so a suppression always
says what it hides. Other tools' comments (NOLINT, nosemgrep) are not honoured on purpose.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

DIRECTIVE = re.compile(r"hiplint:\s*(?P<kind>ignore|disable|enable|file-ignore|noqa)\b(?P<codes>\s*\[[^\]]*\])?")


@dataclass
class Comment:
    line: int  # 1-based line the comment starts on
    end_line: int
    text: str
    own_line: bool  # nothing but whitespace before it on its line
    start_byte: int
    end_byte: int


@dataclass
class Suppression:
    kind: str
    codes: tuple[str, ...]
    first_line: int
    last_line: int
    comment: Comment
    used: set = field(default_factory=set)


@dataclass
class Problem:
    code: str  # HL101 / HL102
    message: str
    comment: Comment


def parse_directives(comments: list[Comment], next_statement_lines, last_line: int):
    """Turn comments into suppressions plus problems with the comments themselves."""
    sups: list[Suppression] = []
    problems: list[Problem] = []
    open_ranges: list[Suppression] = []
    for c in comments:
        for m in DIRECTIVE.finditer(c.text):
            kind = m.group("kind")
            raw = m.group("codes")
            codes = tuple(x.strip() for x in raw.strip()[1:-1].split(",") if x.strip()) if raw else ()
            if kind == "noqa":
                problems.append(Problem("HL101", "`hiplint: noqa` is not a suppression form: use `hiplint: ignore[CODE]`", c))
                continue
            if not codes:
                problems.append(Problem("HL101", f"`hiplint: {kind}` needs the codes it suppresses, e.g. `hiplint: {kind}[WRP001]`", c))
                continue
            if kind == "ignore":
                if c.own_line:
                    first, last = next_statement_lines(c.end_line)
                else:
                    first, last = c.line, c.end_line
                sups.append(Suppression(kind, codes, first, last, c))
            elif kind == "file-ignore":
                sups.append(Suppression(kind, codes, 1, last_line, c))
            elif kind == "disable":
                s = Suppression(kind, codes, c.line, last_line, c)
                sups.append(s)
                open_ranges.append(s)
            elif kind == "enable":
                match = next((s for s in reversed(open_ranges) if set(s.codes) == set(codes)), None)
                if match is None:
                    problems.append(Problem("HL102", f"`hiplint: enable[{', '.join(codes)}]` has no matching `disable` above it", c))
                else:
                    match.last_line = c.line
                    open_ranges.remove(match)
    for s in open_ranges:
        problems.append(Problem("HL102", f"`hiplint: disable[{', '.join(s.codes)}]` is never closed by `hiplint: enable[{', '.join(s.codes)}]`", s.comment))
    return sups, problems


def selector_matches(selector: str, code: str, name: str) -> bool:
    s = selector.strip()
    return s == name or code.startswith(s.upper())


def is_suppressed(finding, sups: list[Suppression]) -> bool:
    return is_suppressed_at(finding, finding.line, sups)


def is_suppressed_at(finding, line: int, sups: list[Suppression]) -> bool:
    """Whether a directive covering `line` names the finding's rule (marks the directive used)."""
    hit = False
    for s in sups:
        if s.first_line <= line <= s.last_line:
            for sel in s.codes:
                if selector_matches(sel, finding.code, finding.name):
                    s.used.add(sel)
                    hit = True
    return hit


# Comment collection ----------------------------------------------------------------------------

def c_comments(root, source) -> list[Comment]:
    from hiplint.cparse import iter_nodes

    out = []
    data = source.data
    for node in iter_nodes(root, {"comment"}):
        start, end = node.start_byte, node.end_byte
        text = data[start:end].decode("utf-8", "replace")
        if "hiplint:" not in text:
            continue
        line = node.start_point[0] + 1
        line_start = source.line_starts[line - 1]
        own = data[line_start:start].strip() == b""
        out.append(Comment(line, node.end_point[0] + 1, text, own, start, end))
    return out


def c_next_statement(root, source):
    """For an own-line `ignore`: the lines of the statement that starts on the next code line."""

    def lines(after_line: int):
        line = after_line + 1
        total = source.line_count()
        while line <= total:
            t = source.line_text(line).strip()
            if t and not t.startswith("//") and not t.startswith("/*") and not t.startswith("*"):
                break
            line += 1
        if line > total:
            return after_line + 1, after_line + 1
        start = source.line_starts[line - 1] + (len(source.line_text(line).encode()) - len(source.line_text(line).lstrip().encode()))
        node = root.descendant_for_byte_range(start, start)
        best = None
        while node is not None and node.start_byte == start and node.type not in ("translation_unit",):
            best = node
            node = node.parent
        if best is None:
            return line, line
        if best.type in ("function_definition", "compound_statement", "namespace_definition", "class_specifier",
                         "struct_specifier", "template_declaration", "linkage_specification", "preproc_if",
                         "preproc_ifdef", "declaration_list"):
            return line, line
        return line, best.end_point[0] + 1

    return lines


def hash_comment_at(text: str) -> int | None:
    """Where a line's `#` comment starts, outside quoted strings (Python, CMake, Make, Meson), or None."""
    quote = None
    for j, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return j
    return None


def hash_comments(source) -> list[Comment]:
    """`#` comments of Python, CMake and Makefiles (a quote-aware scan; no tokenizer needed for this)."""
    out = []
    for i in range(1, source.line_count() + 1):
        text = source.line_text(i)
        if "hiplint:" not in text:
            continue
        j = hash_comment_at(text)
        if j is not None:
            lb = source.line_starts[i - 1]
            prefix = text[:j].encode()
            out.append(Comment(i, i, text[j:], not text[:j].strip(), lb + len(prefix), lb + len(text.encode())))
    return out


def hash_next_statement(source):
    def lines(after_line: int):
        line = after_line + 1
        while line <= source.line_count() and (not source.line_text(line).strip() or source.line_text(line).lstrip().startswith("#")):
            line += 1
        return line, line
    return lines
