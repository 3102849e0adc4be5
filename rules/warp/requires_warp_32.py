import re

from hiplint import CudaRule, Impact, Severity
from hiplint.lazy import lazy_re

# A call that stops the program when its argument is false (`assert(x)`, `CHECK(x)`,
# `FAISS_THROW_IF_NOT(x)`) or when it is true (`THROW_IF(x)`, `ABORT_IF(x)`).
ASSERTS_TRUE = lazy_re(r"(?i)(assert|check|require|ensure|verify|expect|_if_not|unless)")
FAILS_IF_TRUE = lazy_re(r"(?i)(throw|abort|fail|error|die|panic|fatal)_?if$")
# What a branch does when it gives up: throw, abort/exit, an assertion-like macro, an error return.
STOPS = lazy_re(r"(?i)^(std::)?(abort|exit|_exit|quick_exit|terminate)$|assert|throw|fatal|panic|_die$|^die$|fail")
ERROR_RETURN = lazy_re(r"^(false|-\s*\d+|[1-9]\d*|EXIT_FAILURE|nullptr|NULL|\w*(ERROR|Error|error|FAIL|Fail|fail)\w*)$")
OTHER_WIDTH = lazy_re(r"\b64\b")
EQUALITY_MACROS = lazy_re(r"(?i)^(ASSERT|EXPECT|CHECK|REQUIRE)_EQ$")


class RequiresWarp32(CudaRule):
    """A check that stops the program unless the GPU's warp size is 32.

    ## What it does
    Finds host code that compares a device property's `warpSize` with 32 and stops when it differs:
    `if (prop.warpSize != 32) throw ...` (or `exit`, `abort`, an error return), an assertion of
    `prop.warpSize == 32` (`assert`, `CHECK`, `..._THROW_IF_NOT`), `EXPECT_EQ(prop.warpSize, 32)`. A
    check that also accepts 64 (`prop.warpSize == 32 || prop.warpSize == 64`), and a comparison that
    only chooses a code path (`prop.warpSize == 32 ? a : b`), are left alone.

    ## Why it breaks on AMD
    `hipGetDeviceProperties` reports the wave size: 64 on every CDNA GPU (MI100 `gfx908`, MI200
    `gfx90a`, MI300X `gfx942`) and on GCN, 32 on RDNA (`gfx1100`). The check was written when every
    GPU had 32 lanes; on a wave64 GPU it refuses to run, or asserts, before any kernel starts. Such a
    check usually guards code that numbers lanes in 32s: make that code wave-size generic (or give
    it a 64-lane path) and then accept 64. Every ROCm version, wave64 targets.

    ## Example
    ```cuda
    #include <stdexcept>
    void require_warp_32(int device) {
        cudaDeviceProp prop;
        cudaGetDeviceProperties(&prop, device);
        if (prop.warpSize != 32) throw std::runtime_error("warp size 32 required");
    }
    ```

    ## Use instead
    ```cuda
    #include <stdexcept>
    void require_known_warp(int device) {
        cudaDeviceProp prop;
        cudaGetDeviceProperties(&prop, device);
        if (prop.warpSize != 32 && prop.warpSize != 64) throw std::runtime_error("unsupported warp size");
    }
    ```

    ## References
    - HIP programming guide, hardware implementation (wavefront size 64 on CDNA, 32 on RDNA): https://rocm.docs.amd.com/projects/HIP/en/latest/understand/hardware_implementation.html
    - HIP C++ language extensions, `warpSize` (do not assume 32 or 64): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html#warpsize
    - HIP runtime API, `hipDeviceProp_t::warpSize`: https://rocm.docs.amd.com/projects/HIP/en/latest/doxygen/html/structhip_device_prop__t.html
    """

    code = "WRP013"
    name = "requires-warp-32"
    summary = "the program stops unless the GPU's warp size is 32: it refuses every wave64 AMD GPU"
    severity = Severity.ERROR
    impact = Impact.RUNTIME
    wave_sizes = frozenset({64})
    checklist = "Accept a warp size of 64 once the code it guards is wave-size generic."
    query = """
    ((field_expression field: (field_identifier) @f) @member (#eq? @f "warpSize"))
    """

    def check(self, ctx, captures):
        member = captures["member"][0]
        if _in_device_code(ctx, member):
            return
        comparison, op = _compared_with_32(ctx, member)
        if comparison is None:
            equal_call = _equality_assertion(ctx, member)
            if equal_call is not None:
                self._report(ctx, member, equal_call, "asserts")
            return
        stop = _stopping_use(ctx, comparison, op)
        if stop is not None:
            self._report(ctx, member, *stop)

    def _report(self, ctx, member, condition, how):
        if OTHER_WIDTH.search(ctx.text(condition)):
            return  # the check accepts 64 too
        what = {"asserts": "asserts that", "stops": "stops the program unless"}[how]
        ctx.report(member, f"{what} `{ctx.text(member)}` is 32: every wave64 AMD GPU (gfx90a, gfx942) reports 64 "
                           "and is refused")


def _in_device_code(ctx, node) -> bool:
    fn = ctx.enclosing_function(node)
    if fn is None:
        return False
    head = ctx.source.text[fn.start_byte:fn.child_by_field_name("body").start_byte] \
        if fn.child_by_field_name("body") is not None else ""
    return "__device__" in head or "__global__" in head


def _is_32(ctx, node) -> bool:
    while node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node is not None and node.type == "number_literal" and re.fullmatch(r"32[uUlL]*", ctx.text(node)) is not None


def _compared_with_32(ctx, member):
    """The `== 32` / `!= 32` comparison `member` is one side of, and its operator."""
    node = member
    while node.parent is not None and node.parent.type == "parenthesized_expression":
        node = node.parent
    cmp = node.parent
    if cmp is None or cmp.type != "binary_expression":
        return None, None
    op = cmp.child_by_field_name("operator")
    op = ctx.text(op) if op is not None else ""
    if op not in ("==", "!="):
        return None, None
    other = cmp.child_by_field_name("right") if cmp.child_by_field_name("left") == node else cmp.child_by_field_name("left")
    if not _is_32(ctx, other):
        return None, None
    return cmp, op


def _stopping_use(ctx, comparison, op):
    """(the whole condition, how) when the comparison's outcome for a warp size of 64 stops the program."""
    negated = False
    node = comparison
    while node.parent is not None:
        parent = node.parent
        if parent.type == "parenthesized_expression":
            node = parent
            continue
        if parent.type == "unary_expression" and ctx.text(parent).lstrip().startswith("!"):
            negated = not negated
            node = parent
            continue
        if parent.type == "binary_expression" and ctx.text(parent.child_by_field_name("operator")) in ("&&", "||"):
            node = parent
            continue
        break
    parent = node.parent
    true_on_64 = (op == "!=") != negated
    if parent is not None and parent.type == "argument_list" and parent.named_children and parent.named_children[0] == node:
        call = parent.parent
        name = ctx.text(call.child_by_field_name("function")) if call is not None and call.type == "call_expression" else ""
        name = name.rsplit("::", 1)[-1]
        if FAILS_IF_TRUE.search(name):
            return (node, "stops") if true_on_64 else None
        if ASSERTS_TRUE.search(name):
            return (node, "asserts") if not true_on_64 else None
        return None
    if parent is not None and parent.type == "condition_clause" and parent.parent is not None \
            and parent.parent.type == "if_statement":
        branch = parent.parent.child_by_field_name("consequence" if true_on_64 else "alternative")
        if branch is not None and _stops(ctx, branch):
            return parent, "stops"
    return None


def _stops(ctx, branch) -> bool:
    stack = [branch]
    while stack:
        n = stack.pop()
        if n.type == "throw_statement":
            return True
        if n.type == "call_expression":
            fn = n.child_by_field_name("function")
            if fn is not None and STOPS.search(ctx.text(fn)):
                return True
        if n.type == "return_statement" and n.named_child_count == 1 and \
                ERROR_RETURN.match(ctx.text(n.named_children[0]).strip()):
            return True
        if n.type in ("lambda_expression", "function_definition"):
            continue
        stack.extend(n.named_children)
    return False


def _equality_assertion(ctx, member):
    """`EXPECT_EQ(prop.warpSize, 32)` / `ASSERT_EQ(32, prop.warpSize)`: the call, or None."""
    args = member.parent
    if args is None or args.type != "argument_list" or args.named_child_count != 2:
        return None
    call = args.parent
    fn = call.child_by_field_name("function") if call is not None and call.type == "call_expression" else None
    if fn is None or not EQUALITY_MACROS.match(ctx.text(fn)):
        return None
    other = args.named_children[1] if args.named_children[0] == member else args.named_children[0]
    return call if _is_32(ctx, other) else None
