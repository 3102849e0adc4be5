"""The data every part of hiplint shares: findings, fixes and their edits."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum, IntEnum


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 2, "warning": 1, "info": 0}[self.value]


class Applicability(IntEnum):
    """How safe a fix is, ruff's model: only SAFE fixes are applied by plain --fix."""

    DISPLAY_ONLY = 0  # shown, never applied
    UNSAFE = 1  # changes behaviour or a signature: needs --unsafe-fixes
    SAFE = 2  # exact and behaviour-preserving on both vendors

    @property
    def label(self) -> str:
        return {0: "display-only", 1: "unsafe", 2: "safe"}[int(self)]


class Impact(str, Enum):
    """What happens on AMD if the finding is left alone; orders the migration checklist."""

    COMPILE = "compile-error"
    SILENT = "silent-wrong-result"
    HANG = "hang"
    RUNTIME = "runtime-error"
    PERFORMANCE = "performance"
    PORTABILITY = "portability"

    @property
    def order(self) -> int:
        return list(Impact).index(self)

    @property
    def title(self) -> str:
        return {
            "compile-error": "Compile and build breaks",
            "silent-wrong-result": "Silent wrong results",
            "hang": "Hangs and deadlocks",
            "runtime-error": "Run-time failures",
            "performance": "Performance",
            "portability": "Portability and review",
        }[self.value]


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace bytes [start, end) of the file with `content` (UTF-8 byte offsets)."""

    start: int
    end: int
    content: str

    def to_json(self, src) -> dict:
        sl, sc = src.position(self.start)
        el, ec = src.position(self.end)
        return {"content": self.content, "location": {"line": sl, "column": sc},
                "end_location": {"line": el, "column": ec}}


@dataclass(frozen=True, slots=True)
class Fix:
    edits: tuple[Edit, ...]
    applicability: Applicability
    title: str
    # Fixes sharing an isolation key are applied once per pass (e.g. one inserted #define).
    isolation: str | None = None

    @staticmethod
    def safe(title: str, *edits: Edit, isolation: str | None = None) -> "Fix":
        return Fix(tuple(edits), Applicability.SAFE, title, isolation)

    @staticmethod
    def unsafe(title: str, *edits: Edit, isolation: str | None = None) -> "Fix":
        return Fix(tuple(edits), Applicability.UNSAFE, title, isolation)

    @staticmethod
    def display(title: str, *edits: Edit) -> "Fix":
        return Fix(tuple(edits), Applicability.DISPLAY_ONLY, title)


@dataclass(frozen=True, slots=True)
class RelatedLocation:
    """Another place a finding stands for (a use of the constant it reports, another call, another
    option of the same build file). Lines and columns are 1-based, columns count characters, like
    the finding's own. Related locations never enter the fingerprint (hiplint.fingerprint)."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str = ""

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "column": self.column, "end_line": self.end_line,
                "end_column": self.end_column, "message": self.message}


@dataclass(slots=True)
class Finding:
    code: str
    name: str
    message: str
    severity: Severity
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    start_byte: int = 0
    end_byte: int = 0
    fix: Fix | None = None
    impact: Impact = Impact.PORTABILITY
    checklist: str | None = None  # the manual step, for the migration checklist
    fingerprint: str = ""
    source_line: str = ""  # the text of the first reported line (code frames, fingerprints)
    related: tuple[RelatedLocation, ...] = field(default_factory=tuple)  # other places it stands for
    # Findings of one rule in one file with the same group key are merged by the engine after
    # suppressions: the first stays, the others become its related locations (hiplint.engine).
    group: str | None = None

    def sort_key(self):
        return (self.path, self.line, self.column, self.code)

    def add_related(self, *locations: RelatedLocation) -> None:
        """Append related locations, skipping the finding's own place and ones already listed."""
        have = {(r.path, r.line, r.column) for r in self.related}
        have.add((self.path, self.line, self.column))
        new = []
        for r in locations:
            if (r.path, r.line, r.column) not in have:
                have.add((r.path, r.line, r.column))
                new.append(r)
        if new:
            self.related = tuple(sorted(self.related + tuple(new), key=lambda r: (r.path, r.line, r.column)))
