"""A file's bytes with line/column lookup. Columns are 1-based code points, as editors count."""
from __future__ import annotations

import bisect


class Source:
    def __init__(self, path: str, data: bytes):
        self.path = path
        self.data = data
        starts = [0]
        find = data.find
        i = find(b"\n")
        while i != -1:
            starts.append(i + 1)
            i = find(b"\n", i + 1)
        self.line_starts = starts
        self._text: str | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self.data.decode("utf-8", "replace")
        return self._text

    def line_of(self, byte: int) -> int:
        """1-based line containing byte offset `byte`."""
        return bisect.bisect_right(self.line_starts, byte)

    def position(self, byte: int) -> tuple[int, int]:
        byte = max(0, min(byte, len(self.data)))
        line = bisect.bisect_right(self.line_starts, byte)
        start = self.line_starts[line - 1]
        col = len(self.data[start:byte].decode("utf-8", "replace")) + 1
        return line, col

    def line_text(self, line: int) -> str:
        if line < 1 or line > len(self.line_starts):
            return ""
        start = self.line_starts[line - 1]
        end = self.line_starts[line] if line < len(self.line_starts) else len(self.data)
        return self.data[start:end].decode("utf-8", "replace").rstrip("\r\n")

    def line_count(self) -> int:
        return len(self.line_starts)

    def byte_of_line(self, line: int) -> int:
        return self.line_starts[line - 1]
