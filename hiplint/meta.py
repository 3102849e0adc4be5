"""hiplint's own rules: problems with the input or with suppression comments, not with CUDA code."""
from __future__ import annotations

from hiplint.model import Impact, Severity
from hiplint.rule import Rule


class _Meta(Rule):
    languages = frozenset({"cuda", "python", "cmake", "make"})
    pack = "hiplint"


class ParseError(_Meta):
    """Part of the file could not be parsed.

    ## What it does
    Reports a file in which tree-sitter found syntax it could not parse (often an unexpanded macro
    used as a qualifier, or a macro invocation without a semicolon). Findings outside the broken
    region still count; inside it, hiplint may miss something.

    ## Why it breaks on AMD
    It does not by itself: this rule says where hiplint's view of the file is incomplete, so a clean
    result there is weaker evidence. It is off by default because about one real CUDA file in ten
    has a local parse error that does not matter; select `HL001` to see them.

    ## Example
    ```cuda
    __global__ void k(float* x) { x[0] = ; }
    ```

    ## Use instead
    ```cuda
    __global__ void k(float* x) { x[0] = 0.f; }
    ```

    ## References
    - tree-sitter error recovery: https://tree-sitter.github.io/tree-sitter/using-parsers
    """

    code = "HL001"
    name = "parse-error"
    summary = "part of this file could not be parsed; findings inside the unparsed region may be missed"
    severity = Severity.INFO
    impact = Impact.PORTABILITY
    default_enabled = False


class IoError(_Meta):
    """A file could not be read.

    ## What it does
    Reports a file that was found or named but could not be read (permissions, a vanished file,
    a device). The scan goes on with the other files.

    ## Why it breaks on AMD
    It does not; but a file hiplint cannot read is a file it did not check.

    ## Example
    A file with mode 000 in the scanned tree. (A broken symbolic link met in a directory walk, most
    often a link into a git submodule that is not checked out, is skipped with a note instead.)

    ## Use instead
    Make the file readable, or exclude it with `exclude = [...]`.

    ## References
    - ruff's E902 io-error, the model for this rule: https://docs.astral.sh/ruff/rules/io-error/
    """

    code = "HL002"
    name = "io-error"
    summary = "file could not be read"
    severity = Severity.ERROR


class UnusedSuppression(_Meta):
    """A suppression comment that suppresses nothing.

    ## What it does
    Reports `hiplint: ignore[...]`, `disable[...]` and `file-ignore[...]` comments whose codes
    matched no finding. Off by default; select `HL100` to find stale suppressions after a port.

    ## Why it breaks on AMD
    It does not; stale suppressions hide the next real problem on that line.

    ## Example
    ```cuda
    int x = 1; // hiplint: ignore[WRP001]
    ```

    ## Use instead
    ```cuda
    int x = 1;
    ```

    ## References
    - ruff's RUF100, the model for this rule: https://docs.astral.sh/ruff/rules/unused-noqa/
    """

    code = "HL100"
    name = "unused-suppression"
    summary = "suppression comment matches no finding"
    severity = Severity.INFO
    default_enabled = False


class BlanketSuppression(_Meta):
    """A suppression comment that names no codes.

    ## What it does
    Reports `hiplint: ignore`, `hiplint: disable` and friends without a `[CODE, ...]` list, and the
    `noqa` spelling. hiplint has no blanket suppression: a comment must say what it hides, so that a
    new problem on the same line is still reported.

    ## Why it breaks on AMD
    A blanket suppression written for one finding silently hides every later one on that line,
    including silent wrong results on wave64.

    ## Example
    ```cuda
    unsigned m = __ballot_sync(0xffffffff, p); // hiplint: ignore
    ```

    ## Use instead
    ```cuda
    unsigned long long m = __ballot_sync(0xffffffff, p); // hiplint: ignore[WRP004] masked below
    ```

    ## References
    - ruff's range suppressions, which also refuse blanket forms: https://docs.astral.sh/ruff/linter/#error-suppression
    """

    code = "HL101"
    name = "blanket-suppression"
    summary = "suppression comment without codes"
    severity = Severity.ERROR


class UnmatchedSuppressionRange(_Meta):
    """A `disable` without its `enable`, or an `enable` without its `disable`.

    ## What it does
    Reports `hiplint: disable[CODES]` comments that are never closed by a matching
    `hiplint: enable[CODES]` (same codes), and `enable` comments with no open `disable`.

    ## Why it breaks on AMD
    An unclosed range suppresses to the end of the file, usually far more than intended.

    ## Example
    ```cuda
    // hiplint: disable[WRP001]
    int lane = threadIdx.x & 31;
    ```

    ## Use instead
    ```cuda
    // hiplint: disable[WRP001]
    int lane = threadIdx.x & 31;
    // hiplint: enable[WRP001]
    ```

    ## References
    - clang-tidy's NOLINTBEGIN/NOLINTEND pairing: https://clang.llvm.org/extra/clang-tidy/#suppressing-undesired-diagnostics
    """

    code = "HL102"
    name = "unmatched-suppression-range"
    summary = "suppression range is not closed"
    severity = Severity.ERROR
