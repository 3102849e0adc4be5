"""A small tokenizer for Makefiles and CMake files: words with byte offsets, `#` comments and
quotes respected, and whether a word sits inside a CMake link command's parentheses."""
from __future__ import annotations

import re
from dataclasses import dataclass

# Words; a backslash escapes the next character (`\#` in make is a literal #, not a comment).
MAKE_WORD = re.compile(rb"(?:\\.|[^\s#\"'\\])+")
CMAKE_WORD = re.compile(rb"(?:\\.|[^\s()#\"';\\])+")
LINK_COMMANDS = frozenset({"target_link_libraries", "link_libraries", "target_link_options", "add_link_options"})


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int
    in_link_command: bool  # CMake: inside target_link_libraries(...) and friends


def tokens(data: bytes, cmake: bool) -> list[Token]:
    out: list[Token] = []
    i, n = 0, len(data)
    depth = 0
    link_depth = -1  # depth at which the current link command's parenthesis opened
    last_word = ""
    while i < n:
        c = data[i:i + 1]
        if c == b"#":
            if cmake and data[i + 1:i + 2] == b"[":  # CMake bracket comment #[[ ... ]]
                m = re.compile(rb"#\[(=*)\[").match(data, i)
                if m:
                    close = data.find(b"]" + m.group(1) + b"]", m.end())
                    i = n if close == -1 else close + len(m.group(1)) + 2
                    continue
            nl = data.find(b"\n", i)
            i = n if nl == -1 else nl
            continue
        if c in (b'"', b"'") and (cmake is False or c == b'"'):
            close = i + 1
            while close < n and data[close:close + 1] != c:
                close += 2 if data[close:close + 1] == b"\\" else 1
            inner_start, inner_end = i + 1, min(close, n)
            for m in re.finditer(rb"[^\s;]+", data[inner_start:inner_end]):
                out.append(Token(m.group().decode("utf-8", "replace"), inner_start + m.start(), inner_start + m.end(),
                                 link_depth >= 0))
            i = close + 1
            continue
        if c == b"(" and cmake:
            depth += 1
            if last_word.lower() in LINK_COMMANDS and link_depth < 0:
                link_depth = depth
            i += 1
            continue
        if c == b")" and cmake:
            if depth == link_depth:
                link_depth = -1
            depth = max(0, depth - 1)
            i += 1
            continue
        m = (CMAKE_WORD if cmake else MAKE_WORD).match(data, i)
        if m:
            word = m.group().decode("utf-8", "replace")
            out.append(Token(word, m.start(), m.end(), link_depth >= 0))
            last_word = word
            i = m.end()
            continue
        i += 1
    return out
