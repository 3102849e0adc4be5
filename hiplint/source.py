"""A file's bytes with line/column lookup. Columns are 1-based code points, as editors count."""
from __future__ import annotations

import bisect
import codecs
import os
import stat
import time
from dataclasses import dataclass


class Source:
    def __init__(self, path: str, data: bytes):
        self.path = path
        self.data = data
        starts = [0]
        find = data.find
        # A file whose lines all end in a lone `\r` (old Mac) has lines too (decode_input).
        nl = b"\r" if b"\n" not in data and b"\r" in data else b"\n"
        i = find(nl)
        while i != -1:
            starts.append(i + 1)
            i = find(nl, i + 1)
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


# Reading input: bounded in size and time, decoded to the UTF-8 the parser reads, and written back as
# it was found.
MAX_FILE_BYTES = 8 * 1024 * 1024  # beyond this a "source" is generated data: skipped, with a note
STREAM_TIMEOUT = float(os.environ.get("HIPLINT_STREAM_TIMEOUT", "30"))  # seconds a FIFO or device may take


class Skip(Exception):
    """Input hiplint does not read: the message says why (`<path>: skipped: <message>`)."""


def read_bounded(path: str, limit: int | None = None, timeout: float | None = None) -> bytes:
    """The bytes of `path`, reading at most `limit` + 1 (so `/dev/zero` ends): Skip when there are more.
    A FIFO or character device (`<(cmd)`, `/dev/stdin`) is read without blocking, until it ends or
    `timeout` seconds pass (then Skip): one whose writer never writes cannot hang the scan."""
    limit = MAX_FILE_BYTES if limit is None else limit
    timeout = STREAM_TIMEOUT if timeout is None else timeout
    st = os.stat(path)
    if stat.S_ISREG(st.st_mode):
        if st.st_size > limit:
            raise Skip(_too_large(st.st_size, limit))
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise Skip(_too_large(len(data), limit))
        return data
    if not (stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode)):
        raise Skip("not a regular file, FIFO or character device")
    import select

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        chunks, size, deadline = [], 0, time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise Skip(f"no end of input within {timeout:g} s (a FIFO or device that does not end)")
            try:
                chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            except BlockingIOError:
                continue
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise Skip(_too_large(size, limit, at_least=True))
    finally:
        os.close(fd)


def _too_large(size: int, limit: int, at_least: bool = False) -> str:
    mib = 1024 * 1024
    what = f"more than {limit // mib} MiB" if at_least else f"{size / mib:.1f} MiB"
    return f"{what} is larger than the {limit // mib} MiB limit (generated data?)"


@dataclass(frozen=True)
class Encoding:
    """How a file's bytes were turned into the UTF-8, `\\n`-separated text the parser reads."""
    codec: str | None = None  # "utf-16-le" / "utf-16-be" (behind a byte-order mark); None: as found
    lone_cr: bool = False  # old Mac line endings: every line ends in a lone `\r`

    @property
    def plain(self) -> bool:
        return self.codec is None and not self.lone_cr


_BOMS = ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def decode_input(data: bytes) -> tuple[bytes, Encoding]:
    """`data` as the parser reads it: UTF-16 (with a byte-order mark) decoded to UTF-8, lone-`\\r` line
    endings as `\\n` (same length: every offset holds). `restore` gives the exact bytes back; Skip
    when it could not (a UTF-16 file with broken surrogates)."""
    codec = None
    for bom, name in _BOMS:
        if data.startswith(bom) and not data.startswith(codecs.BOM_UTF32_LE):
            try:
                text = data[len(bom):].decode(name)
            except UnicodeDecodeError:
                raise Skip(f"not valid {name.upper()}") from None
            codec, data = name, text.encode("utf-8", "surrogatepass")
            break
    lone_cr = b"\r" in data and b"\n" not in data
    if lone_cr:
        data = data.replace(b"\r", b"\n")
    return data, Encoding(codec, lone_cr)


def restore(data: bytes, enc: Encoding) -> bytes:
    """The inverse of decode_input: `data` (fixed, perhaps) in the file's own encoding and line endings."""
    if enc.lone_cr:
        data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r")
    if enc.codec is not None:
        bom = dict((n, b) for b, n in _BOMS)[enc.codec]
        data = bom + data.decode("utf-8", "surrogatepass").encode(enc.codec, "surrogatepass")
    return data
