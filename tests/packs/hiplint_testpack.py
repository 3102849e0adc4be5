"""A test-only rule pack: rules with fixes of every kind, and rules whose fixes misbehave on purpose.

The CLI tests put this directory on PYTHONPATH; the `.dist-info` beside it registers the pack under
the `hiplint.rules` entry-point group, so `hiplint --select TST` loads it like any third-party pack.
The in-process tests import the classes and build a Linter with them directly.
"""
from hiplint import CudaRule, Edit, Fix, Impact, Severity

_DOC = """Test rule.

## What it does
Test only.
## Why it breaks on AMD
Test only.
## Example
```cuda
void f() { old_api(1); }
```
## Use instead
```cuda
void f() { new_api(1); }
```
## References
- none (test pack)
"""


def _calls(name):
    return f'((call_expression function: (identifier) @fn) @call (#eq? @fn "{name}"))'


class RenameOldApi(CudaRule):
    __doc__ = _DOC
    code = "TST001"
    name = "test-rename-old-api"
    summary = "old_api is gone: call new_api"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    fix_availability = "always"
    checklist = "Call new_api instead of old_api."
    query = _calls("old_api")

    def check(self, ctx, captures):
        fn = captures["fn"][0]
        ctx.report(fn, fix=Fix.safe("Rename to new_api", ctx.replace(fn, "new_api")))


class ModernRng(CudaRule):
    __doc__ = _DOC
    code = "TST002"
    name = "test-modern-rng"
    summary = "legacy_rng draws a different sequence on AMD"
    severity = Severity.WARNING
    impact = Impact.SILENT
    fix_availability = "always"
    query = _calls("legacy_rng")

    def check(self, ctx, captures):
        fn = captures["fn"][0]
        ctx.report(fn, fix=Fix.unsafe("Use modern_rng (a different sequence)", ctx.replace(fn, "modern_rng")))


class Mystery(CudaRule):
    __doc__ = _DOC
    code = "TST003"
    name = "test-mystery"
    summary = "mystery() has no AMD equivalent"
    severity = Severity.INFO
    impact = Impact.PORTABILITY
    fix_availability = "sometimes"
    query = _calls("mystery")

    def check(self, ctx, captures):
        fn = captures["fn"][0]
        ctx.report(fn, fix=Fix.display("Perhaps known()", ctx.replace(fn, "known")))


# Misbehaving fixes (selected by code in the in-process tests; never in the CLI pack by default) ---

class OverlappingWrap(CudaRule):
    """Two findings on `wrap(x)` whose fixes overlap: one rewrites the call, one its argument."""
    __doc__ = _DOC
    code = "TST010"
    name = "test-overlapping-wrap"
    summary = "wrap"
    query = '((call_expression function: (identifier) @fn arguments: (argument_list (identifier) @arg)) @call (#eq? @fn "wrap"))'

    def check(self, ctx, captures):
        call, arg = captures["call"][0], captures["arg"][0]
        ctx.report(call, "whole call", fix=Fix.safe("unwrap", ctx.replace(call, f"unwrapped({ctx.text(arg)})")))
        ctx.report(arg, "argument", fix=Fix.safe("rename arg", ctx.replace(arg, ctx.text(arg) + "_v2")))


class ArgV2(CudaRule):
    """Renames the argument of `unwrapped(x)` once (so the overlap resolves over two passes)."""
    __doc__ = _DOC
    code = "TST011"
    name = "test-arg-v2"
    summary = "argument"
    query = '((call_expression function: (identifier) @fn arguments: (argument_list (identifier) @arg)) (#eq? @fn "unwrapped"))'

    def check(self, ctx, captures):
        arg = captures["arg"][0]
        if not ctx.text(arg).endswith("_v2"):
            ctx.report(arg, fix=Fix.safe("rename arg", ctx.replace(arg, ctx.text(arg) + "_v2")))


class ParseBreaker(CudaRule):
    """Its fix for `break_me()` leaves unbalanced parentheses: it must be dropped and reported."""
    __doc__ = _DOC
    code = "TST020"
    name = "test-parse-breaker"
    summary = "break_me"
    query = _calls("break_me")

    def check(self, ctx, captures):
        call = captures["call"][0]
        ctx.report(call, fix=Fix.safe("break it", ctx.replace(call, "broken((")))


class PingPong(CudaRule):
    """ping -> pong -> ping ...: fixes that never converge."""
    __doc__ = _DOC
    code = "TST030"
    name = "test-ping-pong"
    summary = "ping pong"
    query = '((call_expression function: (identifier) @fn) (#match? @fn "^(ping|pong)$"))'

    def check(self, ctx, captures):
        fn = captures["fn"][0]
        other = "pong" if ctx.text(fn) == "ping" else "ping"
        ctx.report(fn, fix=Fix.safe("swap", ctx.replace(fn, other)))


class OutOfRange(CudaRule):
    """A buggy fix whose edit lies beyond the end of the file or runs backwards."""
    __doc__ = _DOC
    code = "TST040"
    name = "test-out-of-range"
    summary = "bad edit"
    query = _calls("bad_edit")

    def check(self, ctx, captures):
        call = captures["call"][0]
        n = len(ctx.source.data)
        ctx.report(call, fix=Fix.safe("beyond the end", Edit(n + 10, n + 20, "x")))
        s, e = ctx.file_range(call)
        ctx.report(captures["fn"][0], "backwards", fix=Fix.safe("backwards", Edit(e, s, "y")))


class AddLine(CudaRule):
    """Inserts a line with a newline in it (line endings must follow the file's)."""
    __doc__ = _DOC
    code = "TST050"
    name = "test-add-line"
    summary = "needs a note"
    query = _calls("needs_note")

    def check(self, ctx, captures):
        fn = captures["fn"][0]
        stmt = ctx.enclosing(fn, {"expression_statement"})
        ctx.report(fn, fix=Fix.safe("add a note line", ctx.insert_before(stmt, "noted();\n    "),
                                    ctx.replace(fn, "with_note")))


class OnePerPass(CudaRule):
    """step -> stepped, all fixes sharing one isolation key: one applied per pass."""
    __doc__ = _DOC
    code = "TST060"
    name = "test-one-per-pass"
    summary = "step one at a time"
    query = _calls("step")

    def check(self, ctx, captures):
        fn = captures["fn"][0]
        ctx.report(fn, fix=Fix.safe("stepped", ctx.replace(fn, "stepped"), isolation="one-per-pass"))


class Breeder(CudaRule):
    """grow() -> sprout(); grow(): a fix that never removes its own finding, and never repeats a result."""
    __doc__ = _DOC
    code = "TST070"
    name = "test-breeder"
    summary = "grows forever"
    query = _calls("grow")

    def check(self, ctx, captures):
        call = captures["call"][0]
        ctx.report(call, fix=Fix.safe("sprout", ctx.insert_before(call, "sprout(); ")))


PACK = [RenameOldApi, ModernRng, Mystery]
MISBEHAVING = [OverlappingWrap, ArgV2, ParseBreaker, PingPong, OutOfRange, AddLine, OnePerPass, Breeder]


def rules():
    return PACK
