import re

from hiplint import CudaRule, Fix, Impact, Severity
from hiplint.cparse import iter_nodes, respell_operators, strip_c_comments
from hiplint.cudaversions import NEWEST_NVIDIA, as_on_cuda_12, same_code_as_cuda_12, value
from hiplint.headers import amd_macros
from hiplint.preproc import NVIDIA_BUILD_MARK, masked_on_amd, HIP, condition_truth, amd_truth, is_hip_macro
from hiplint.lazy import lazy_re

ARCH_MACROS = lazy_re(r"\b(__CUDA_ARCH__|__CUDA_ARCH_LIST__|__CUDA_ARCH_FEAT_SM\w+|__CUDA_ARCH_SPECIFIC__|"
                         r"__CUDA_ARCH_FAMILY_SPECIFIC__)\b")
VERSION_MACROS = lazy_re(r"\b(CUDART_VERSION|CUDA_VERSION|__CUDACC_VER_MAJOR__|__CUDACC_VER_MINOR__|"
                            r"__CUDACC_VER_BUILD__)\b")
IDENTIFIER = lazy_re(r"\b[A-Za-z_]\w*")


def reads_arch_or_version(name: str) -> bool:
    """A name ARC001 reads: an architecture or CUDA version macro."""
    return bool(ARCH_MACROS.fullmatch(name) or VERSION_MACROS.fullmatch(name))


NOT_DEFINED_ARCH = lazy_re(r"!\s*defined\s*\(?\s*__CUDA_ARCH__")
# `!defined(CUDA_VERSION)`: the branch for a build without the CUDA toolkit, which AMD's is.
# A test for particular CUDA releases (`__CUDACC_VER_MAJOR__ == 11`, `CUDA_VERSION >= 12020 &&
# CUDA_VERSION < 12051`) is a workaround for those releases: AMD, which is none of them, skips it rightly.
# `defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600`: a shim for old NVIDIA GPUs (a CAS-loop atomicAdd
# for double). AMD skips it and takes the path for current GPUs, which is what the shim stands in for.
ARCH_BELOW = lazy_re(r"__CUDA_ARCH__\s*<=?\s*\d|\d\s*>=?\s*__CUDA_ARCH__")
ARCH_FROM = lazy_re(r"__CUDA_ARCH__\s*>=?\s*\d|\d\s*<=?\s*__CUDA_ARCH__|__CUDA_ARCH__\s*[=!]=")
# `__CUDA_ARCH__ >= 900` (or `> 899`, `900 <= __CUDA_ARCH__`): a lower bound, with its number.
ARCH_LOWER_BOUND = lazy_re(r"__CUDA_ARCH__\s*(>=?)\s*(\d+)|(\d+)\s*(<=?)\s*__CUDA_ARCH__")
NEWEST_NVIDIA_ARCH = 900  # sm_90 (Hopper) and later: TMA, wgmma, thread-block clusters, tcgen05


def _newest_nvidia_only(text: str) -> bool:
    """Every architecture bound of the test is a lower bound at Hopper or later, and there is one."""
    bounds = []
    for m in ARCH_LOWER_BOUND.finditer(text):
        op, number = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        bounds.append(int(number) + (1 if op in (">", "<") else 0))
    return bool(bounds) and min(bounds) >= NEWEST_NVIDIA_ARCH and not ARCH_BELOW.search(text) \
        and not re.search(r"__CUDA_ARCH__\s*[=!]=", text)


DEFINED_ARCH = lazy_re(r"(?<!!)\bdefined\s*\(?\s*__CUDA_ARCH__")
_VERSION = r"\b(?:CUDART_VERSION|CUDA_VERSION|__CUDACC_VER_MAJOR__|__CUDACC_VER_MINOR__|__CUDACC_VER_BUILD__)\s*"
EXACT_RELEASE = lazy_re(_VERSION + r"==\s*\d")
LOWER_BOUND = lazy_re(_VERSION + r">=?\s*\d")
UPPER_BOUND = lazy_re(_VERSION + r"<=?\s*\d")
NOT_DEFINED_VERSION = lazy_re(r"!\s*defined\s*\(?\s*(CUDART_VERSION|CUDA_VERSION|__CUDACC_VER_MAJOR__|__CUDACC__|__NVCC__)\b")
# `defined(CUDA_VERSION) && ...`, `defined(__CUDACC__) && defined(__CUDA_ARCH__)`: the author tests for the
# CUDA toolkit or compiler before reading it, so the branch is meant for NVIDIA only and AMD's skipping it
# is on purpose.
DEFINED_TOOLKIT = lazy_re(r"(?<!!)\bdefined\s*\(?\s*(CUDART_VERSION|CUDA_VERSION|__CUDACC_VER_MAJOR__|__CUDACC__|__NVCC__)\b")
DEFINED_NAME = lazy_re(r"(?<!!)\bdefined\s*\(?\s*([A-Za-z_]\w*)")
# A macro body that is a test (a comparison, `defined`, a logical operator), not just the value.
TEST_LIKE = lazy_re(r"\bdefined\b|[<>]=?|[=!]=|&&|\|\|")
# `defined(__CUDA_ARCH__)` alone, possibly negated: the host/device split.
SPLIT = lazy_re(r"^\s*(!\s*)?(defined\s*\(\s*__CUDA_ARCH__\s*\)|defined\s+__CUDA_ARCH__)\s*$")
DEVICE_PASS = "(defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__))"


SYNC_WARP_CALL = lazy_re(r"\b__(shfl|shfl_up|shfl_down|shfl_xor|ballot|any|all)_sync\s*\(")


def _legacy_warp_fallback(ctx, node, cond, on_amd: bool) -> bool:
    """`#if CUDA_VERSION >= 9000` with `*_sync` warp calls and an `#else` with the same calls in their
    pre-CUDA-9 form (`__shfl_xor(v, lane, width)`), or the same the other way round (`#if CUDA_VERSION
    < 9000`): HIP implements the old forms natively, so the branch AMD takes is the right one for it."""
    alt = node.child_by_field_name("alternative")
    if alt is None or alt.type != "preproc_else":
        return False
    data = ctx.unit.data
    first = data[cond.end_byte:alt.start_byte].decode("utf-8", "replace")
    second = data[alt.start_byte:alt.end_byte].decode("utf-8", "replace")
    masked, legacy = (second, first) if on_amd else (first, second)
    names = {m.group(1) for m in SYNC_WARP_CALL.finditer(masked)}
    return bool(names) and all(re.search(rf"\b__{name}\s*\(", legacy) for name in names)


# A parenthesized group that opens with `!defined(__CUDA_ARCH__) ||` (no nested parentheses after it).
_HOST_DISJUNCTION = lazy_re(r"\(\s*!\s*defined\s*\(\s*__CUDA_ARCH__\s*\)\s*\|\|[^()]*\)|"
                               r"\(\s*!\s*defined\s+__CUDA_ARCH__\s*\|\|[^()]*\)")


def _arch_only_in_host_disjunctions(text: str) -> bool:
    """Is every mention of `__CUDA_ARCH__` inside a `(!defined(__CUDA_ARCH__) || ...)` group, which is
    true on AMD (no `__CUDA_ARCH__`) whatever the rest of the condition is?"""
    rest = _HOST_DISJUNCTION.sub("", text)
    return rest != text and "__CUDA_ARCH__" not in rest


def _taken_as_on_newest_nvidia(cond, data: bytes) -> bool:
    """Does AMD, where no CUDA macro is defined, take this branch as the newest NVIDIA build does?
    (Both skipping is no such comfort: `__CUDA_ARCH__ == 900` compiles a kernel body out on AMD.)"""
    on_amd, on_nvidia = value(cond, data, {}), value(cond, data, NEWEST_NVIDIA)
    return bool(on_amd) and bool(on_nvidia)


_STOPS_BUILD = lazy_re(r"\s*(?:#\s*error\b[^\n]*|static_assert\s*\([^;]*\)\s*;)\s*")


def _amd_branch_stops_build(ctx, node, on_amd) -> bool:
    """Is the branch AMD takes nothing but `#error` or a `static_assert` (`#else static_assert(false,
    "needs sm_90")`)? Then the decision is loud, not silent."""
    if on_amd is True and node.type == "preproc_if":
        body = node.child_by_field_name("condition")
        start = body.end_byte if body is not None else node.start_byte
        alt = node.child_by_field_name("alternative")
        end = alt.start_byte if alt is not None else node.end_byte
        text = ctx.unit.data[start:end].decode("utf-8", "replace")
        text = re.sub(r"#\s*endif\s*$", "", text.strip())
    elif on_amd is False:
        alt = node.child_by_field_name("alternative")
        if alt is None or alt.type != "preproc_else":
            return False
        text = ctx.text(alt).strip()
        text = re.sub(r"^#\s*else", "", text)
    else:
        return False
    text = strip_c_comments(text)
    return bool(text.strip()) and _STOPS_BUILD.fullmatch(text) is not None


_INTRINSIC = re.compile(r"\b__\w+\s*\(|\basm\b")


def _only_ldg_skipped(ctx, node) -> bool:
    """Is the branch AMD skips a read through `__ldg` alone, with an `#else` beside it
    (`#if __CUDA_ARCH__ >= 350 return __ldg(p); #else return *p; #endif`)? HIP's `__ldg` is an
    ordinary load on AMD, so the `#else` does the same: nothing is lost."""
    alt = node.child_by_field_name("alternative")
    if node.type != "preproc_if" or alt is None or alt.type != "preproc_else":
        return False
    cond = node.child_by_field_name("condition")
    body = ctx.unit.data[cond.end_byte:alt.start_byte].decode("utf-8", "replace")
    calls = {m.group(0).split("(")[0].strip() for m in _INTRINSIC.finditer(strip_c_comments(body))}
    return calls == {"__ldg"}


def _skipped_as_on_newest_nvidia(cond, data: bytes) -> bool:
    """Do AMD and the newest NVIDIA toolkit both skip this branch (a workaround for old toolkits,
    `defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ < 12`)? For version tests AMD then goes
    where every current CUDA build goes."""
    on_amd, on_nvidia = value(cond, data, {}), value(cond, data, NEWEST_NVIDIA)
    return on_amd == 0 and on_nvidia == 0



# Lines that only hint or silence: an unroll count or a diagnostic, which cannot change a result.
_HINT_LINE = re.compile(r"#\s*pragma\s+(unroll\b|nounroll\b|nv_diag\w*|diag_\w+|nv_diagnostic\b|"
                        r"(GCC|clang)\s+diagnostic\b|warning\b|message\b)|_Pragma\s*\(\s*\"(unroll|nounroll)\b")
_CHAIN_LINE = re.compile(r"#\s*(elif\w*|else|endif)\b")


def _only_hints(ctx, node) -> bool:
    """Are the branches of this `#if` chain nothing but unroll hints and diagnostic pragmas
    (`#if CUDART_VERSION < 8000 #pragma unroll #else #pragma unroll N #endif`)? Whichever AMD takes,
    the code is the same."""
    if node.type not in ("preproc_if", "preproc_ifdef"):
        return False
    head = node.child_by_field_name("condition") or node.child_by_field_name("name")
    if head is None:
        return False
    body = strip_c_comments(ctx.unit.data[head.end_byte:node.end_byte].decode("utf-8", "replace"))
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    hints = [line for line in lines if not _CHAIN_LINE.match(line)]
    return bool(hints) and all(_HINT_LINE.match(line) for line in hints)


# What only a GPU can run, in the branch AMD's device pass skips: intrinsics and builtin variables,
# warp and block collectives, atomics, shared memory, inline assembly, texture fetches.
_GPU_ONLY = re.compile(r"\b(?:__[a-z]\w*\s*\(|threadIdx|blockIdx|blockDim|gridDim|warpSize|atomic[A-Z]\w*|"
                       r"__shared__|__syncthreads|__syncwarp|asm\b|__asm__|tex[123]D|texFetch|surf[123]D|"
                       r"cooperative_groups|this_thread_block|__activemask|__ballot|__shfl|__ldg|clock64?\s*\()")
# A branch of `using std::exp;` declarations only (standard math AMD's device code has too).
_STD_USINGS = re.compile(r"(?:\s*using\s+(?:::)?std::\w+\s*;)+\s*")
# A branch of checks only: `assert(...)`, `static_assert(...)`, a project's `X_ASSERT(...)`.
_CHECKS_ONLY = re.compile(r"(?:\s*(?:assert|static_assert|[A-Z][A-Z0-9_]*ASSERT[A-Z0-9_]*)\s*\([^;]*\)\s*;)+\s*")
# What makes a skipped branch change the code after it silently: a macro (re)defined, or a template
# specialization the primary template would stand in for.
_CHANGES_LATER_CODE = re.compile(r"#\s*(?:define|undef)\b|\btemplate\s*<\s*>")
# Lines that declare nothing of the project's own: a library header (`<cuda_fp16.h>`; a quoted project
# header may define macros), a pragma, a nested test.
_DIRECTIVE_LINE = re.compile(r"\s*#\s*(?:include\s*<|(?:pragma|if|ifdef|ifndef|elif|else|endif)\b)")
_NESTED_BRANCH = re.compile(r"#\s*(?:if|ifdef|ifndef|elif|else|elifdef|elifndef)\b")


def _same_work_either_way(ctx, node, device_branch: bool) -> bool:
    """Two device/host splits whose sides do the same work, in a project that already builds for AMD:
    `#ifdef __CUDA_ARCH__` C math wrappers that use nothing only a GPU runs (`{ return ::expf(x); }`)
    beside `#else using std::exp;` (AMD's device code has the standard math), and `#ifndef
    __CUDA_ARCH__` around checks alone (`assert(pos < size);`), which AMD's device code runs too. A
    split whose sides compute different things (`return 0;` / `return 64;`) is still reported."""
    if node.type not in ("preproc_if", "preproc_ifdef"):
        return False
    alternative = node.child_by_field_name("alternative")
    if alternative is not None and alternative.type != "preproc_else":
        return False  # an #elif chain: not read here
    head = node.child_by_field_name("condition") or node.child_by_field_name("name")
    if head is None:
        return False
    data = ctx.unit.data
    end = alternative.start_byte if alternative is not None else node.end_byte
    first = strip_c_comments(data[head.end_byte:end].decode("utf-8", "replace"))
    first = re.sub(r"#\s*endif\s*$", "", first.rstrip())
    second = ""
    if alternative is not None:
        other_start = alternative.child(0).end_byte if alternative.child(0) is not None else alternative.start_byte
        second = strip_c_comments(data[other_start:alternative.end_byte].decode("utf-8", "replace"))
    device, host = (first, second) if device_branch else (second, first)
    if _NESTED_BRANCH.search(device) or _NESTED_BRANCH.search(host) or not host.strip():
        return False
    if alternative is None:
        return not device_branch and _CHECKS_ONLY.fullmatch(host) is not None
    return bool(device.strip()) and _GPU_ONLY.search(device) is None and _STD_USINGS.fullmatch(host) is not None


# An inline-asm statement's first template string.
_ASM_TEMPLATE = re.compile(r'\b(?:asm|__asm__|__asm)\b(?:\s+(?:volatile|__volatile__))?\s*\(\s*"((?:[^"\\]|\\.)*)"')
# Statements that stop the program: the device side's trap, the host side's abort. HIP's device code
# has `abort()` too (hip/amd_detail/hip_assert.h: `__builtin_trap()`), so both stop AMD's GPU alike.
_DEVICE_STOP = re.compile(r"\s*(?:__trap|__builtin_trap)\s*\(\s*\)\s*;\s*")
_HOST_STOP = re.compile(r"\s*(?:(?:std)?::)?(?:abort|__builtin_trap)\s*\(\s*\)\s*;\s*")


def _branch_texts(ctx, node) -> tuple[str, str | None]:
    """The first branch's text of an `#if`/`#ifdef` and its `#else` branch's (None without one; "" for an
    `#elif`, not read here), comments removed."""
    head = node.child_by_field_name("condition") or node.child_by_field_name("name")
    alternative = node.child_by_field_name("alternative")
    data = ctx.unit.data
    end = alternative.start_byte if alternative is not None else node.end_byte
    first = strip_c_comments(data[head.end_byte:end].decode("utf-8", "replace"))
    first = re.sub(r"#\s*endif\s*$", "", first.rstrip())
    if alternative is None:
        return first, None
    if alternative.type != "preproc_else":
        return first, ""
    start = alternative.child(0).end_byte if alternative.child(0) is not None else alternative.start_byte
    second = strip_c_comments(data[start:alternative.end_byte].decode("utf-8", "replace"))
    return first, re.sub(r"#\s*endif\s*$", "", second.rstrip())


def _device_side_is_nvidia_only(ctx, node, device_branch: bool) -> bool:
    """`#ifdef __CUDA_ARCH__` at file scope around a definition holding PTX (a `__device__` helper reading
    `%dynamic_smem_size`): AMD's device pass must skip it whatever the test says, `__HIP_DEVICE_COMPILE__`
    added would not assemble, and a use of what it defines fails to compile, not silently. Or
    the two sides only stop the program (`__trap();` / `abort();`), which AMD's device code does alike; or
    a device branch of checks alone, with no `#else`."""
    if node.type not in ("preproc_if", "preproc_ifdef"):
        return False
    first, second = _branch_texts(ctx, node)
    device, host = (first, second) if device_branch else (second, first)
    if device and not _NESTED_BRANCH.search(device) and ctx.enclosing_function(node) is None:
        # Definitions at file scope only: a helper AMD lacks fails where it is used, never silently. Inside
        # a function body AMD would lose the statements (a kernel emptied on AMD): still reported.
        from .._cuda import is_ptx
        if any(is_ptx(m.group(1)) for m in _ASM_TEMPLATE.finditer(device)):
            return True
    if device_branch and host is None and _CHECKS_ONLY.fullmatch(device) is not None:
        return True  # `#ifdef __CUDA_ARCH__ assert(...) #endif`: AMD loses a check, never a result
    if device_branch and host is None and device and ctx.enclosing_function(node) is None \
            and not _CHANGES_LATER_CODE.search(device):
        # Outside any function, with no `#else`: CUDA headers (`<cuda.h>`, `<cuda_fp16.h>`) at file scope,
        # or class members over CUDA's types. AMD's device pass skips them (the AMD build compiles only
        # so: `<cuda.h>` is not ROCm's); a use of what they declare fails to compile, never silently.
        if ctx.enclosing(node, {"field_declaration_list"}) is not None:
            return True
        if all(_DIRECTIVE_LINE.match(line) for line in device.splitlines() if line.strip()):
            return True
    return bool(device) and bool(host) and _DEVICE_STOP.fullmatch(device) is not None \
        and _HOST_STOP.fullmatch(host) is not None


# CPU vector instruction sets a chain of `#elif` may pick a tuning value by (alpaka's vector widths).
_CPU_ISA_TEST = re.compile(r"\b__(?:AVX\w*|SSE\w*|ARM_NEON\w*|ARM_FEATURE_SVE\w*|ALTIVEC|VSX|MMX|FMA)__\b")
_BARE_NUMBER = re.compile(r"\s*\(?\s*[0-9][0-9a-fA-FxX.]*[uUlLfF]*\s*\)?\s*[;,]?\s*")


def _isa_tuning_value(ctx, node) -> bool:
    """`#elif defined(__CUDA_ARCH__)` holding a bare number, in a chain that picks the number by CPU vector
    instruction set (`#if defined(__AVX2__) 32u; #elif defined(__SSE2__) 16u; #elif defined(__CUDA_ARCH__)
    4u; #else 1u;`): a width per instruction set, where AMD's device pass takes the chain's default like
    any machine the chain does not name. No code is lost, only a tuning number."""
    if node.type not in ("preproc_elif", "preproc_elifdef"):
        return False
    top = node
    while top.parent is not None and top.parent.type in ("preproc_elif", "preproc_elifdef", "preproc_if",
                                                          "preproc_ifdef") and \
            top.parent.child_by_field_name("alternative") == top:
        top = top.parent
    data = ctx.unit.data
    conditions, arm = [], top
    while arm is not None and arm.type != "preproc_else":
        head = arm.child_by_field_name("condition") or arm.child_by_field_name("name")
        if head is not None:
            conditions.append(data[head.start_byte:head.end_byte].decode("utf-8", "replace"))
        arm = arm.child_by_field_name("alternative")
    if arm is None or not any(_CPU_ISA_TEST.search(c) for c in conditions):
        return False  # no default for AMD to take, or not a choice by instruction set
    head = node.child_by_field_name("condition") or node.child_by_field_name("name")
    alternative = node.child_by_field_name("alternative")
    end = alternative.start_byte if alternative is not None else node.end_byte
    body = strip_c_comments(data[head.end_byte:end].decode("utf-8", "replace"))
    return _BARE_NUMBER.fullmatch(body) is not None


# What in the device branch has an effect beyond computing a value: memory shared between threads,
# atomics, synchronisation, thread indices, warp collectives, assembly, textures.
_GPU_EFFECTS = re.compile(r"\b(?:threadIdx|blockIdx|blockDim|gridDim|warpSize|atomic\w*|__shared__|__sync\w*|"
                          r"__threadfence\w*|asm\b|__asm__|tex[123]D\w*|surf[123]D\w*|cooperative_groups|"
                          r"__activemask|__ballot\w*|__shfl\w*|__any\w*|__all\w*|__match\w*|__reduce\w*|clock64?)\b")
# The host branch: local declarations, `if (...)` and `return` of arithmetic, calls to clang's
# `__builtin_*` and the standard math only (AMD's device code has them: `__builtin_ctz`, `std::isnan`).
# `std::isnan(x)`: HIP's device headers (__clang_hip_cmath.h) give device code the standard math too.
_CALL = re.compile(r"(?<![\w:])((?:::)?(?:std::)?[A-Za-z_]\w*)\s*\(")
_PURE_CALLS = re.compile(r"__builtin_\w+|sizeof|alignof|if|return|static_cast|decltype|noexcept|"
                         r"std::(?:isnan|isinf|isfinite|signbit|abs|fabs|sqrt|cbrt|exp|exp2|log|log2|log10|pow|"
                         r"floor|ceil|trunc|round|fmin|fmax|min|max|copysign|fma|sin|cos|tan|tanh|erf)")
_KEYWORDS = frozenset({"return", "if", "else", "const", "constexpr", "sizeof", "auto", "int", "unsigned", "long",
                       "float", "double", "bool", "char", "short", "signed", "static_cast", "std"})
_DECLARATION = re.compile(r"^(?:const\s+|constexpr\s+)*[A-Za-z_][\w:<>, ]*[\s*&]+[A-Za-z_]\w*\s*=[^=].*$", re.S)


def _host_side_computes_on_gpu(ctx, node, device_branch: bool) -> bool:
    """`#ifdef __CUDA_ARCH__ return __ffs(x) - 1; #else return __builtin_ctz(x); #endif`: both sides
    compute a value from the arguments, and the host side uses only arithmetic and clang builtins, which
    AMD's device code runs with the same result (SPH-EXA's `countTrailingZeros`). A device side with an
    effect (an `atomicOr` beside a plain `|=`) is still reported."""
    if node.type not in ("preproc_if", "preproc_ifdef"):
        return False
    alternative = node.child_by_field_name("alternative")
    if alternative is None or alternative.type != "preproc_else":
        return False
    head = node.child_by_field_name("condition") or node.child_by_field_name("name")
    if head is None:
        return False
    data = ctx.unit.data
    first = strip_c_comments(data[head.end_byte:alternative.start_byte].decode("utf-8", "replace"))
    other_start = alternative.child(0).end_byte if alternative.child(0) is not None else alternative.start_byte
    second = strip_c_comments(data[other_start:alternative.end_byte].decode("utf-8", "replace"))
    second = re.sub(r"#\s*endif\s*$", "", second.rstrip())
    device, host = (first, second) if device_branch else (second, first)
    if _NESTED_BRANCH.search(device) or _NESTED_BRANCH.search(host) or "return" not in device \
            or "return" not in host or _GPU_EFFECTS.search(device) or _GPU_EFFECTS.search(host):
        return False
    calls = [m.group(1) for m in _CALL.finditer(host)]
    if any(not _PURE_CALLS.fullmatch(c) for c in calls):
        return False
    if not any(c.startswith(("__builtin_", "std::")) for c in calls) and not any(
            _DECLARATION.match(st.strip()) for st in host.split(";")):
        return False  # `return *p;`, `return 0;`: nothing computed that needs the GPU's intrinsic
    words = lambda text: set(re.findall(r"\b[a-z_]\w*\b", text)) - _KEYWORDS
    if not words(device) & words(host):
        return False  # the sides share no argument: not the same computation (`return 64;`)
    for statement in (st.strip() for st in host.split(";")):
        if not statement or statement.startswith("return ") or re.match(r"if\s*\(.*\)\s*return\b", statement, re.S):
            continue
        if not _DECLARATION.match(statement) or re.search(r"[-+*/%&|^]=|\+\+|--", statement):
            return False
    return True


_STD_QUALIFIER = re.compile(r"(?<![\w:])(?:::)?(?:std::)?(?=[A-Za-z_])")


def _same_but_std(ctx, node) -> bool:
    """`#ifdef __CUDA_ARCH__ / #define IS_NAN(x) isnan(x) / #else / #define IS_NAN(x) std::isnan(x)`: the
    two branches differ only in `std::` (or `::`) qualifiers, and AMD's device code has the standard math
    (__clang_hip_cmath.h), so whichever branch AMD's device pass takes does the same."""
    if node.type not in ("preproc_if", "preproc_ifdef"):
        return False
    alternative = node.child_by_field_name("alternative")
    head = node.child_by_field_name("condition") or node.child_by_field_name("name")
    if alternative is None or alternative.type != "preproc_else" or head is None:
        return False
    data = ctx.unit.data
    first = strip_c_comments(data[head.end_byte:alternative.start_byte].decode("utf-8", "replace"))
    other_start = alternative.child(0).end_byte if alternative.child(0) is not None else alternative.start_byte
    second = re.sub(r"#\s*endif\s*$", "", strip_c_comments(
        data[other_start:alternative.end_byte].decode("utf-8", "replace")).rstrip())
    if _NESTED_BRANCH.search(first) or _NESTED_BRANCH.search(second) or first.strip() == second.strip():
        return False
    normal = lambda text: " ".join(_STD_QUALIFIER.sub("", text).split())
    return bool(normal(first)) and normal(first) == normal(second)


# In a function's head: what may make it device code (`__device__`, `constexpr`, which hip-clang and
# nvcc's relaxed constexpr let device code call) or a project macro that may expand to it (KOKKOS_FUNCTION).
_DEVICE_HEAD = re.compile(r"__device__|__global__|\bconstexpr\b|\bconsteval\b|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b")


def _in_host_only_function(ctx, node) -> bool:
    """Is `node` inside a function that no device pass compiles: a function definition whose head (up
    to its body) has no `__device__`/`__global__`, no `constexpr`, and no macro that could add them,
    and no lambda between? ArborX's host `visit()` tests `__CUDA_ARCH__` only to quiet nvcc."""
    fn = ctx.enclosing(node, {"function_definition", "lambda_expression"})
    if fn is None or fn.type != "function_definition":
        return False
    body = fn.child_by_field_name("body")
    if body is None:
        return False
    head = ctx.unit.data[fn.start_byte:body.start_byte].decode("utf-8", "replace")
    parent = fn.parent
    if parent is not None and parent.type == "template_declaration":
        head = ctx.unit.data[parent.start_byte:body.start_byte].decode("utf-8", "replace")
    return _DEVICE_HEAD.search(head) is None

class CudaArchMacro(CudaRule):
    """`#if` tests of `__CUDA_ARCH__` and of CUDA version macros (`CUDART_VERSION`, `__CUDACC_VER_MAJOR__`).

    ## What it does
    Reports the condition of each `#if`, `#elif`, `#ifdef` and `#ifndef` that tests
    `__CUDA_ARCH__` (or `__CUDA_ARCH_LIST__`, `__CUDA_ARCH_FEAT_SM*`), `CUDART_VERSION`,
    `CUDA_VERSION` or `__CUDACC_VER_MAJOR__/MINOR__` (once per condition, not per line inside).
    A `#define` whose body tests them (`#define HAS_TC (__CUDA_ARCH__ >= 800)`) is reported where
    it is defined, with the lines that use it (also as related locations); the uses are not reported again (a define that only
    passes the value on, or sits inside an `#if` on the same macro, is left to that `#if`).

    Not reported, because AMD's build already takes the branch meant for it:
    - conditions that also test a HIP macro (`__HIP_PLATFORM_AMD__`, `__HIP_DEVICE_COMPILE__`,
      `USE_ROCM`, ...), and conditions inside a branch only NVIDIA compiles;
    - conditions that test a switch of the project's own that it sets only for NVIDIA builds, in the
      file or a header it includes (`#if defined(__HIP_PLATFORM_AMD__)` / `#define LIB_DEVICE_HIP` /
      `#else` / `#define LIB_DEVICE_CUDA`, then `defined(LIB_DEVICE_CUDA) && __CUDA_ARCH__ >= 900`);
    - a condition AMD fails when a later `#elif` of its chain tests a HIP macro (AMD goes on to it), or a
      device-pass `#if defined(__CUDA_ARCH__) ... #endif` followed at once by an `#if` of AMD's
      (`#if defined(__HIP_DEVICE_COMPILE__)`, or a project name for it): one split for both vendors;
    - a condition inside a branch AMD never enters (the outer test is the one reported), unless
      `report-nvidia-branches` is on;
    (When the branch AMD takes is only an `#error` or a `static_assert`, the message says the build
    stops there rather than calling the decision silent.)
    - a condition AMD settles without the CUDA macros (`defined(__NVCC__) && CUDART_VERSION >= 12000`;
      for an architecture test, in the device pass, which is always clang: `defined(__GNUC__) &&
      !defined(__clang__) && !defined(__CUDA_ARCH__)`);
    - a branch written for a build without the CUDA toolkit (`#ifndef CUDART_VERSION`,
      `!defined(CUDA_VERSION) || ...`), which AMD's build is;
    - a test AMD decides as a CUDA 12.0 build does (`(CUDA_VERSION / 1000) >= 13`, `CUDART_VERSION >=
      12080`), or a chain from which AMD compiles the very code a CUDA 12.0 build compiles (`#if
      defined(__CUDACC_VER_MAJOR__)` around a CUDA 11.0 workaround, `#else` the CUDA 12 call): AMD
      compiles the CUDA 12 code, whose runtime API HIP follows (`hipMemPrefetchAsync` and
      `hipMemAdvise` take a device, as before CUDA 13's `cudaMemLocation`). What only newer toolkits
      compile is not reported by any rule;
    - a workaround for particular CUDA releases, which AMD skips (`__CUDACC_VER_MAJOR__ == 11 &&
      __CUDACC_VER_MINOR__ == 2`, `CUDA_VERSION >= 12020 && CUDA_VERSION < 12051`), or for old
      toolkits, skipped by AMD as by the newest CUDA (`defined(__CUDACC_VER_MAJOR__) &&
      (__CUDACC_VER_MAJOR__ < 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ <= 8))`);
    - the host/device split inside a function no device pass compiles (no `__device__`, no `constexpr`,
      no macro in its head that could add them): both vendors take the host branch there (ArborX's host
      `visit()` tests `__CUDA_ARCH__` only to quiet nvcc's host/device warning);
    - a shim for old NVIDIA GPUs, which AMD skips for the code for current GPUs
      (`defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600`, also `&& (__CUDA_ARCH__ < 600 ||
      CUDA_VERSION < 8000)`: every test an upper bound);
    - an `#if` of these macros alone that AMD, where none is defined, takes as the newest NVIDIA GPU
      and toolkit do (`!(defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800)`, `CUDA_VERSION >= 12020 ||
      CUDA_VERSION < 9000`): AMD compiles what every current NVIDIA build compiles. A branch both skip
      is still reported (`__CUDA_ARCH__ == 900` compiles a kernel body out on AMD);
    - a choice between the `*_sync` warp calls and their pre-CUDA-9 forms (`#if CUDA_VERSION >= 9000`
      / `__shfl_xor_sync(...)` / `#else` / `__shfl_xor(...)`): AMD takes the old forms, which HIP
      implements natively (the other branch is NVIDIA code then: every CUDA from 11.0 on takes it);
    - a macro that a project header the file includes defines in AMD builds (ggml's HIP vendor header
      sets `#define __CUDA_ARCH__ 1300`): the definition is reported instead, once; `__CUDA_ARCH__`
      counts only when defined for AMD alone, not as a host-pass default;
    - in a project that already builds for AMD (hiplint.amdbuild: an AMD build read, or backend
      switches for both vendors), every test whose AMD branch does not stop the build: that build
      compiles the branch it takes, by the project's choice and under its own tests on AMD, so the
      test is no news to it (judged on twelve such projects, these findings were false or advisory:
      docs/accuracy.md). What such a branch holds is not reported either (hiplint.context).
      `report-nvidia-branches` brings them back; code never ported keeps every finding below.
      The host/device split (`#ifdef __CUDA_ARCH__`, `#if !defined(__CUDA_ARCH__)`) is still reported
      there, as a warning: which code AMD's GPU runs is worth a look, but the build works. Not when
      both sides do the same work: C math wrappers that use nothing only a GPU runs beside `#else
      using std::exp;` (AMD's device code has the standard math), or `#ifndef __CUDA_ARCH__` around
      checks alone (`assert(pos < size);`, a project's `X_ASSERT(...)`), which AMD's device code runs;
    - anywhere, a host/device split whose sides both return a value computed from the arguments, the
      host side with arithmetic and clang's `__builtin_*` alone (`__ffs(x) - 1` beside
      `__builtin_ctz(x)`, `::abs(a)` beside a two's-complement mask): AMD's device code runs the host
      side with the same result. A device side with an effect (`atomicOr` beside `|=`) is reported;
    - anywhere, a split whose two sides differ only in `std::` or `::` qualifiers (`#define IS_NAN(x)
      isnan(x)` beside `std::isnan(x)`): AMD's device code has the standard math;
    - in such a project, also a conjunction that first makes sure of the CUDA toolkit
      or compiler (`defined(CUDA_VERSION) && CUDA_VERSION >= 13000`, `defined(__CUDACC__) &&
      defined(__CUDA_ARCH__)`) or tests the project's NVIDIA-build switch
      (`defined(GKO_COMPILING_CUDA) && CUDA_VERSION >= 11040`): AMD is kept out on purpose. In code
      never ported the same guard is for host compilers, and it is reported;
    - in such a project, too, code for Hopper or later alone (`defined(__CUDA_ARCH__) && __CUDA_ARCH__
      >= 900`, every bound a lower bound from 900): TMA, wgmma, thread-block clusters and tcgen05 have
      no HIP spelling, and AMD runs what every older NVIDIA GPU runs, as the authors meant. In code
      never ported such a branch is still reported: a port may want an AMD path of its own;
    - a read through `__ldg` beside an `#else` with the plain read (`#if __CUDA_ARCH__ >= 350 return
      __ldg(p); #else return *p;`): HIP's `__ldg` is an ordinary load on AMD, so nothing is lost;
    - a chain whose later branch every clang takes (`#elif defined(__clang__)`, hip-clang included);
    - a chain that only `#define`s macros the file reads in NVIDIA-only code alone (PTX load strings
      per architecture, used in the `#else` of `#ifdef USE_ROCM`);
    - `#ifdef __CUDA_ARCH__` at file scope around definitions holding inline PTX (AMD's device pass must
      skip it, and a use of what it defines fails to compile, not silently; adding
      `__HIP_DEVICE_COMPILE__` would not assemble), around checks alone with no `#else` (AMD loses an
      assert, never a result), or `__trap();` beside an `#else` of `abort();` (HIP's device `abort()`
      traps as well); also, with no `#else` and no `#define` or `template <>` inside, around library
      includes and pragmas alone at file scope (`#include <cuda.h>`, not ROCm's) or around class members
      (conversions to CUDA's `half`): what AMD's device pass skips there fails to compile if used, never
      silently;
    - an `#elif defined(__CUDA_ARCH__)` that holds a bare number in a chain choosing the number by CPU
      vector instruction set (`__AVX2__`, `__SSE2__`, `__ARM_NEON__`, ...) with an `#else` default: a
      vector width per instruction set, where AMD's device pass takes the default like any machine the
      chain does not name.

    Still reported: `#ifdef CUDART_VERSION` (AMD skips code its build may need), an unguarded
    `__CUDA_ARCH__ < 700` (AMD's device pass reads 0 and takes the shim), and lower bounds.

    ## Why it breaks on AMD
    HIP-Clang defines none of these macros, and nothing fails: the preprocessor silently picks a
    branch. `#ifdef __CUDA_ARCH__` (device pass) is false in AMD's device pass, so host code is
    compiled for the GPU; `#if __CUDA_ARCH__ >= 800` evaluates `0 >= 800` and takes the oldest
    fallback; `#if CUDART_VERSION >= 11000` takes the path for old CUDA. The AMD equivalents are
    `__HIP_DEVICE_COMPILE__` for the device pass, feature macros (`__HIP_ARCH_HAS_*__`) or
    architecture macros (`__gfx942__`, `__GFX9__`, `__GFX11__`) for features, and `HIP_VERSION`
    for versions. Every AMD target and ROCm version.

    ## Example
    ```cuda
    __device__ float fast_exp(float x) {
    #if __CUDA_ARCH__ >= 750
        return __expf(x);
    #else
        return expf(x);
    #endif
    }
    ```

    ## Use instead
    ```cuda
    __device__ float fast_exp(float x) {
    #if (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750) || defined(__HIP_DEVICE_COMPILE__)
        return __expf(x);
    #else
        return expf(x);
    #endif
    }
    ```

    ## Fix
    Unsafe, only for the plain host/device split: `#ifdef __CUDA_ARCH__` becomes
    `#if (defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__))` (and the negated forms
    likewise). It is exact for nvcc, which never defines `__HIP_DEVICE_COMPILE__`, but on AMD it
    changes which code is compiled, so review it. No fix where the device branch holds inline PTX,
    which AMD's assembler would then meet.

    ## References
    - HIP porting guide, "Compiler defines" and "Identifying HIP target platform / device code": https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    - HIP porting guide, feature macros `__HIP_ARCH_HAS_*__`: same page, "HIP-Clang feature macros"
    - CUDA C++ Programming Guide, `__CUDA_ARCH__`: https://docs.nvidia.com/cuda/cuda-c-programming-guide/
    """

    code = "ARC001"
    # Every finding tests or defines one of ARCH_MACROS or VERSION_MACROS.
    triggers = ("__CUDA_ARCH", "CUDART_VERSION", "CUDA_VERSION", "__CUDACC_VER_")
    name = "cuda-arch-macro"
    summary = "`#if` on a CUDA architecture/version macro: undefined on AMD, the preprocessor silently picks a branch"
    severity = Severity.ERROR
    impact = Impact.SILENT
    fix_availability = "sometimes"
    checklist = "Replace __CUDA_ARCH__/CUDART_VERSION tests with __HIP_DEVICE_COMPILE__, __HIP_ARCH_HAS_*__/__gfx*__ and HIP_VERSION where the code is meant to run on AMD."
    in_macros = False
    query = ""

    def check_unit(self, ctx):
        if ctx.unit.is_macro:
            return
        root = ctx.unit.root
        arch_defines: dict[str, object] = {}
        for node in iter_nodes(root, {"preproc_def", "preproc_function_def"}):
            value = node.child_by_field_name("value")
            name = node.child_by_field_name("name")
            if value is None or name is None:
                continue
            text = ctx.text(value)
            if (ARCH_MACROS.search(text) or VERSION_MACROS.search(text)) and not _mentions_hip(ctx, text) \
                    and TEST_LIKE.search(text) and not self._inside_arch_branch(ctx, node):
                if ctx.text(name) in ("__CUDA_ARCH__", "CUDART_VERSION", "CUDA_VERSION"):
                    continue  # a sentinel define, reported below with its own message
                arch_defines[ctx.text(name)] = node
        uses = self._uses(ctx, root, arch_defines)
        lines = ctx.source.text.splitlines()
        for name, node in arch_defines.items():
            where = sorted(uses.get(name, ()))
            used = f"; used on line{'s' if len(where) > 1 else ''} {', '.join(map(str, where))}" if where else ""
            macro = self._macro_in(ctx.text(node.child_by_field_name("value")))
            in_code = [n for n in where if not DIRECTIVE_LINE.match(lines[n - 1])]
            if in_code:
                # Outside #if an undefined macro is no 0: the name stays, an undeclared identifier.
                in_if = [n for n in where if n not in in_code]
                also = (f"; in the `#if` on line{'s' if len(in_if) > 1 else ''} {', '.join(map(str, in_if))} it "
                        "reads as 0") if in_if else ""
                finding = ctx.report(node, f"macro `{name}` uses `{macro}`, which AMD never defines: in code (line"
                                           f"{'s' if len(in_code) > 1 else ''} {', '.join(map(str, in_code))}) it is "
                                           f"an undeclared identifier, a compile error on AMD{also}")
                self._relate_uses(ctx, finding, name, where, lines)
                continue
            finding = ctx.report(node, f"macro `{name}` tests `{macro}`, which AMD never defines: every use of "
                                       f"`{name}` takes the non-CUDA value{used}")
            self._relate_uses(ctx, finding, name, where, lines)
        for node in iter_nodes(root, {"preproc_def"}):
            name = node.child_by_field_name("name")
            if name is not None and ctx.text(name) in ("__CUDA_ARCH__",):
                ctx.report(node, "defining `__CUDA_ARCH__` by hand makes CUDA-only branches compile for AMD; "
                                 "test `__HIP_DEVICE_COMPILE__` or `__gfx*__` macros instead")
        for node in iter_nodes(root, {"preproc_if", "preproc_elif", "preproc_ifdef", "preproc_elifdef"}):
            self._check_condition(ctx, node)

    def _check_condition(self, ctx, node):
        if node.type in ("preproc_ifdef", "preproc_elifdef"):
            cond = node.child_by_field_name("name")
            negated = node.child(0) is not None and ctx.text(node.child(0)) in ("#ifndef", "#elifndef")
        else:
            cond = node.child_by_field_name("condition")
            negated = False
        if cond is None:
            return
        shown = ctx.text(cond)
        text = respell_operators(shown)  # the tests below read `!` `&&` `||`
        m = ARCH_MACROS.search(text) or VERSION_MACROS.search(text)
        if m is None or _mentions_hip(ctx, text):
            return
        macro = m.group(1)
        if macro in self._defined_here(ctx):
            return  # the project defines it itself (a version constant of its own)
        if self._defined_for_amd(ctx, macro, ctx.file_range(node)[0] if node is not None else None):
            return  # a project header (or the file, before the test) defines it in AMD builds: reported there
        directive = node.child(0)
        if ctx.platform is not None and ctx.unit.delta == 0 and not ctx.settings.report_nvidia_branches \
                and ctx.platform.off_on_amd(ctx.file_range(directive)[0]):
            return  # inside a branch AMD never enters (`#if CUDA_VERSION >= 12080 ... #if __CUDA_ARCH__ ...`): the outer test is reported
        if node.type in ("preproc_elif", "preproc_elifdef") and ctx.platform is not None \
                and ctx.platform_kind(ctx.file_range(cond)[1]) == "nvidia" and not ctx.settings.report_nvidia_branches:
            return  # an #elif after a HIP branch: AMD never evaluates it
        if _only_hints(ctx, node):
            return  # `#pragma unroll` or `#pragma unroll N`: the same code whichever branch AMD takes
        head_end = cond.end_byte
        split = macro == "__CUDA_ARCH__" and (node.type in ("preproc_ifdef", "preproc_elifdef") or SPLIT.match(text))
        dual = ctx.build_facts.builds_for_amd and not ctx.settings.report_nvidia_branches
        if dual and not split and not _amd_branch_stops_build(ctx, node, self._amd_value(ctx, cond, negated)):
            # The project already builds this code for AMD: its AMD build compiles the branch it takes,
            # by the project's choice and under its tests. Only a branch that stops that build is news.
            return
        if split:
            device_branch = not negated and not text.lstrip().startswith("!")
            if _in_host_only_function(ctx, node):
                return  # no device pass compiles the function: both vendors take the host branch
            if device_branch and self._hip_branch_follows(ctx, node):
                return  # `#elif defined(__CUDA_ARCH__) ... #elif defined(__HIP_DEVICE_COMPILE__)`: AMD's comes next
            if device_branch and node.type in ("preproc_if", "preproc_ifdef") and self._hip_sibling_follows(ctx, node):
                return  # `#if defined(__CUDA_ARCH__) ... #endif` then `#if defined(__HIP_DEVICE_COMPILE__) ... #endif`
            if _device_side_is_nvidia_only(ctx, node, device_branch):
                return  # PTX AMD skips either way, or `__trap();` / `abort();`: the same stop on AMD's GPU
            if device_branch and _isa_tuning_value(ctx, node):
                return  # `#elif defined(__CUDA_ARCH__) 4u;` among `__AVX2__`/`__SSE2__` widths: AMD takes the default
            what = ("the device-code branch is skipped in AMD's device pass (host code compiles for the GPU)"
                    if device_branch else "AMD's device pass takes this host-only branch")
            if dual and _same_work_either_way(ctx, node, device_branch):
                return  # `::expf(x)` on NVIDIA's GPU, `using std::exp;` on AMD's: the same work, built already
            if _host_side_computes_on_gpu(ctx, node, device_branch):
                return  # `__ffs(x) - 1` on NVIDIA's GPU, `__builtin_ctz(x)` on AMD's: the same value
            if _same_but_std(ctx, node):
                return  # `#define IS_NAN(x) isnan(x)` / `#else` `std::isnan(x)`: the same call, spelled for each pass
            if dual:
                # The AMD build compiles and runs this already: which code AMD's GPU runs is a choice to
                # check (often speed alone), not a break.
                ctx.report_range(ctx.file_range(directive)[0], ctx.file_range(cond)[1],
                                 f"`{ctx.text(directive)} {shown.strip()}`: {what}; the AMD build compiles it so "
                                 f"already: if the GPU code is meant for AMD too, use `__HIP_DEVICE_COMPILE__` too",
                                 fix=self._split_fix(ctx, node, directive, cond, device_branch),
                                 severity=Severity.WARNING)
                return
            ctx.report_range(ctx.file_range(directive)[0], ctx.file_range(cond)[1],
                             f"`{ctx.text(directive)} {shown.strip()}`: {what}; use `__HIP_DEVICE_COMPILE__` too",
                             fix=self._split_fix(ctx, node, directive, cond, device_branch))
            return
        kind = "architecture" if macro.startswith("__CUDA_ARCH") else "CUDA version"
        switches = ctx.platform.derived if ctx.platform is not None else None
        on_amd = condition_truth(cond, ctx.source.data, HIP, ctx.hip_macros, switches) if ctx.unit.delta == 0 else None
        if negated and on_amd is not None:
            on_amd = not on_amd  # `#ifndef X`: cond is the name alone
        if on_amd is True and NOT_DEFINED_ARCH.search(text):
            return  # `!defined(__CUDA_ARCH__) || ...`: AMD takes it like nvcc's host pass, which compiles it too
        if kind == "architecture" and _arch_only_in_host_disjunctions(text):
            # `X_ENABLE_HALF && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 530)`: the architecture part is
            # true on AMD whatever the rest says, as in nvcc's host pass; the other conjuncts decide.
            return
        if kind == "CUDA version" and (negated or (on_amd is True and NOT_DEFINED_VERSION.search(text))):
            return  # `#ifndef CUDART_VERSION`, `!defined(CUDA_VERSION) || ...`: written for "no CUDA", as AMD is
        if on_amd is False and "||" not in text and (
                (DEFINED_TOOLKIT.search(text) and ctx.build_facts.builds_for_amd)
                or any(NVIDIA_BUILD_MARK + n in ctx.hip_macros for n in DEFINED_NAME.findall(text))):
            # In a project that already builds for AMD, `defined(CUDA_VERSION) && CUDA_VERSION >= 13000` and
            # `defined(GKO_COMPILING_CUDA) && ...` keep AMD out on purpose. (In code never ported, the guard
            # is for host compilers, and AMD silently losing the branch is the finding.)
            return
        if kind == "architecture" and on_amd is False and DEFINED_ARCH.search(text) and ARCH_BELOW.search(text) \
                and not ARCH_FROM.search(text) and not LOWER_BOUND.search(text) and not EXACT_RELEASE.search(text):
            # Old GPUs, or old GPUs or an old toolkit (`&& (__CUDA_ARCH__ < 600 || CUDA_VERSION < 8000)`):
            # every test an upper bound, behind the guard that keeps AMD out.
            return  # a shim for old NVIDIA GPUs: AMD goes on to the code for current ones
        if kind == "architecture" and on_amd is False and "||" not in text and ctx.build_facts.builds_for_amd \
                and _newest_nvidia_only(text):
            # `defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900`: Hopper-or-later code (TMA, wgmma, clusters,
            # tcgen05: none of it HIP's), in a project that already builds for AMD. AMD runs what every older
            # NVIDIA GPU runs, as the authors meant.
            return
        if kind == "architecture" and on_amd is False and _only_ldg_skipped(ctx, node):
            return  # `__ldg` is a plain load on AMD: the `#else` loads the same
        if node.type == "preproc_if" and ctx.unit.delta == 0 and _taken_as_on_newest_nvidia(cond, ctx.source.data):
            # `!(defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800)`: AMD takes what every current GPU takes.
            return
        if kind == "CUDA version" and node.type == "preproc_if" and ctx.unit.delta == 0 \
                and _skipped_as_on_newest_nvidia(cond, ctx.source.data):
            return  # only old toolkits take it (`__CUDACC_VER_MAJOR__ < 12 || ...`): AMD skips it as CUDA 13 does
        if kind == "CUDA version" and node.type in ("preproc_if", "preproc_elif") and ctx.unit.delta == 0 \
                and "__CUDA_ARCH" not in text and as_on_cuda_12(cond, ctx.source.data):
            return  # only CUDA 13 and later take it (`(CUDA_VERSION / 1000) >= 13`): AMD goes CUDA 12's way
        if kind == "CUDA version" and node.type in ("preproc_if", "preproc_ifdef", "preproc_ifndef") \
                and ctx.unit.delta == 0 and same_code_as_cuda_12(ctx.unit.data[node.start_byte:node.end_byte]):
            return  # the branch AMD takes holds the very code CUDA 12 compiles (a workaround for CUDA 11.0 only)
        if kind == "CUDA version" and on_amd is False and "||" not in text and (
                EXACT_RELEASE.search(text) or (LOWER_BOUND.search(text) and UPPER_BOUND.search(text))):
            return  # a workaround for particular CUDA releases, which AMD rightly skips
        if on_amd is not None and kind == "CUDA version" and _legacy_warp_fallback(ctx, node, cond, on_amd):
            return  # `__shfl_xor_sync` from CUDA 9, `__shfl_xor` before: AMD takes the form HIP has natively
        if on_amd is False and self._hip_branch_follows(ctx, node):
            return  # `#if CUDART_VERSION >= 11000 ... #elif defined(USE_ROCM)`: AMD goes on to its own branch
        if ctx.unit.delta == 0 and masked_on_amd(cond, ctx.source.data, reads_arch_or_version, ctx.hip_macros, switches):
            return  # `defined(__EDG__) || (defined(__NVCC__) && defined(__CUDA_ARCH__))`: its value cannot matter on AMD
        if ctx.unit.delta == 0 and self._defines_only_for_nvidia_code(ctx, node):
            return  # `#if __CUDA_ARCH__ >= 350 / #define LD_NC "ld.global.nc"`, read only by the NVIDIA branch
        if ctx.unit.delta == 0 and amd_truth(cond, ctx.source.data, ctx.hip_macros, unknown=_cuda_macro,
                                             device_pass=kind == "architecture", derived=switches) is not None:
            # Settled on AMD without the CUDA macros (`defined(__NVCC__) && CUDART_VERSION >= ...`). An
            # architecture matters only in the device pass, which is clang (`!defined(__clang__) && ...`);
            # host passes see no __CUDA_ARCH__ on either side.
            return
        if kind == "architecture":
            taken = {True: "takes this branch", False: "skips this branch"}.get(on_amd, "decides this branch")
            taken += " as if the architecture were 0"
        else:
            taken = {True: "takes this branch", False: "skips this branch"}.get(on_amd, "decides this branch")
            taken += " as for an old or absent CUDA"
        how = "silently "
        if _amd_branch_stops_build(ctx, node, on_amd):
            how, taken = "", taken + ", and the branch AMD compiles stops the build (`#error` / `static_assert`)"
        ctx.report_range(ctx.file_range(directive)[0], head_end + ctx.unit.delta,
                         f"`{ctx.text(directive)} {shown.strip()}` tests the {kind} macro `{macro}`, undefined on AMD: "
                         f"the preprocessor {how}{taken}")

    @staticmethod
    def _amd_value(ctx, cond, negated):
        switches = ctx.platform.derived if ctx.platform is not None else None
        on_amd = condition_truth(cond, ctx.source.data, HIP, ctx.hip_macros, switches) if ctx.unit.delta == 0 else None
        return (not on_amd) if negated and on_amd is not None else on_amd

    @staticmethod
    def _defines_only_for_nvidia_code(ctx, node) -> bool:
        """Does the chain only #define macros that the file uses in NVIDIA-only code alone (Faiss's PTX
        load strings, chosen per architecture and used in the `#else` of `#ifdef USE_AMD_ROCM`)?"""
        top = node
        while top.parent is not None and top.type in ("preproc_elif", "preproc_elifdef", "preproc_else"):
            top = top.parent
        names, arm = set(), top
        while arm is not None:
            fields = (arm.child_by_field_name(f) for f in ("condition", "name", "alternative"))
            skip = {(f.start_byte, f.end_byte) for f in fields if f is not None}
            for child in arm.named_children:
                if (child.start_byte, child.end_byte) in skip or child.type == "comment":
                    continue
                if child.type not in ("preproc_def", "preproc_function_def"):
                    return False
                name = child.child_by_field_name("name")
                if name is not None:
                    names.add(ctx.text(name))
            arm = arm.child_by_field_name("alternative")
        if not names or ctx.platform is None:
            return False
        data = ctx.source.data
        uses = [m.start() for m in re.finditer(rb"\b(?:%s)\b" % b"|".join(re.escape(n.encode()) for n in names), data)
                if not top.start_byte <= m.start() < top.end_byte]
        return bool(uses) and all(ctx.platform.kind_at(u) == "nvidia" for u in uses)

    @staticmethod
    def _hip_branch_follows(ctx, node) -> bool:
        """Does a later `#elif` of the same chain test a HIP macro?"""
        alt = node.child_by_field_name("alternative")
        while alt is not None and alt.type in ("preproc_elif", "preproc_elifdef"):
            cond = alt.child_by_field_name("condition") or alt.child_by_field_name("name")
            if cond is not None and (_mentions_hip(ctx, ctx.text(cond)) or _clang_disjunct(ctx.text(cond))):
                return True  # AMD's own branch, or one every clang takes (hip-clang defines __clang__)
            alt = alt.child_by_field_name("alternative")
        return False

    @staticmethod
    def _hip_sibling_follows(ctx, node) -> bool:
        """Is the next directive after this `#if ... #endif` (nothing but comments between) an `#if` of AMD's
        device pass (`#if defined(__HIP_DEVICE_COMPILE__)`, a project name such as EIGEN_HIP_DEVICE_COMPILE)?
        The pair is one split written for both vendors."""
        sibling = node.next_named_sibling
        while sibling is not None and sibling.type == "comment":
            sibling = sibling.next_named_sibling
        if sibling is None or sibling.type not in ("preproc_if", "preproc_ifdef"):
            return False
        between = ctx.unit.data[node.end_byte:sibling.start_byte]
        if between.strip():
            return False
        cond = sibling.child_by_field_name("condition") or sibling.child_by_field_name("name")
        negated = sibling.child(0) is not None and ctx.text(sibling.child(0)) == "#ifndef"
        return cond is not None and not negated and "!" not in ctx.text(cond) and _mentions_hip(ctx, ctx.text(cond))

    def _split_fix(self, ctx, node, directive, cond, device_branch):
        if node.type not in ("preproc_ifdef", "preproc_if"):
            return None
        first, second = _branch_texts(ctx, node)
        device = first if device_branch else second
        if device:
            from .._cuda import is_ptx
            if any(is_ptx(m.group(1)) for m in _ASM_TEMPLATE.finditer(device)):
                return None  # AMD's device pass would get PTX it cannot assemble: the port is by hand
        replacement = "#if " + (DEVICE_PASS if device_branch else "!" + DEVICE_PASS)
        start = ctx.file_range(directive)[0]
        end = ctx.file_range(cond)[1]
        from hiplint.model import Edit
        return Fix.unsafe("also test __HIP_DEVICE_COMPILE__ (AMD device pass)", Edit(start, end, replacement))

    @staticmethod
    def _inside_arch_branch(ctx, node) -> bool:
        """Is `node` inside an #if that already tests a CUDA arch/version macro (reported there)?"""
        n = node.parent
        while n is not None:
            if n.type in ("preproc_if", "preproc_elif", "preproc_ifdef", "preproc_elifdef", "preproc_else"):
                cond = n.child_by_field_name("condition") or n.child_by_field_name("name")
                if cond is not None and (ARCH_MACROS.search(ctx.text(cond)) or VERSION_MACROS.search(ctx.text(cond))):
                    return True
            n = n.parent
        return False

    @staticmethod
    def _defined_for_amd(ctx, macro: str, at: int | None = None) -> bool:
        """A project header the file includes defines `macro` in AMD builds (ggml's vendors/hip.h has
        `#define __CUDA_ARCH__ 1300`), so the test is not of an undefined macro; so does the file itself
        in a HIP-only branch before the test at byte `at` (MegEngine's half.hpp: `#if defined(__HIPCC__)`
        / `#define __CUDA_ARCH__ __HIP_DEVICE_COMPILE__`). `__CUDA_ARCH__` counts only when defined for
        AMD alone: a host-pass default (`#ifndef __CUDA_ARCH__` / `#define __CUDA_ARCH__ 0`) leaves AMD's
        device pass at 0 too."""
        found = amd_macros(ctx).get(macro)
        if found is None:
            return False
        if found.header is None:
            return found.hip_only and at is not None and 0 <= found.byte < at
        return found.hip_only or macro != "__CUDA_ARCH__"

    @staticmethod
    def _defined_here(ctx) -> set[str]:
        names = ctx.cache.get("arc_defined_macros")
        if names is None:
            names = set()
            for node in iter_nodes(ctx.units[0].root, {"preproc_def", "preproc_function_def"}):
                name = node.child_by_field_name("name")
                if name is not None and ctx.units[0].text(name) != "__CUDA_ARCH__":
                    names.add(ctx.units[0].text(name))
            ctx.cache["arc_defined_macros"] = names
        return names

    @staticmethod
    def _macro_in(text: str) -> str:
        m = ARCH_MACROS.search(text) or VERSION_MACROS.search(text)
        return m.group(1) if m else ""

    @staticmethod
    def _relate_uses(ctx, finding, name: str, where: list[int], lines: list[str]) -> None:
        """The uses of a reported macro (the lines its message names) as related locations."""
        if finding is None:
            return
        pattern = re.compile(r"\b" + re.escape(name) + r"\b")
        for n in where:
            code = lines[n - 1].split("//", 1)[0]
            m = pattern.search(code)
            if m is None:
                continue
            start = ctx.source.byte_of_line(n) + len(code[:m.start()].encode())
            loc = ctx.related_range(start, start + len(name.encode()), f"`{name}` used here")
            if loc is not None:
                finding.add_related(loc)

    @staticmethod
    def _uses(ctx, root, names) -> dict[str, set[int]]:
        if not names:
            return {}
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
        uses: dict[str, set[int]] = {}
        defined_at = {ctx.source.position(ctx.file_range(n)[0])[0] for n in names.values()}
        for lineno, line in enumerate(ctx.source.text.splitlines(), start=1):
            if lineno in defined_at:
                continue
            code = line.split("//", 1)[0]
            for m in pattern.finditer(code):
                uses.setdefault(m.group(1), set()).add(lineno)
        return uses


DIRECTIVE_LINE = lazy_re(r"\s*#")


_CLANG_TEST = lazy_re(r"\s*\(?\s*(defined\s*\(?\s*__clang__\s*\)?|__clang__)\s*\)?\s*")


def _clang_disjunct(text: str) -> bool:
    """`defined(__clang__)` alone or as one alternative of `||`: true for hip-clang whatever else holds."""
    return any(_CLANG_TEST.fullmatch(part) for part in respell_operators(text).split("||"))


def _mentions_hip(ctx, text: str) -> bool:
    """The condition already names the HIP build (`|| defined(USE_AMD_ROCM)`, `__HIP_PLATFORM_*`)."""
    return any(name.startswith("__HIP") or is_hip_macro(name, ctx.hip_macros)
               for name in IDENTIFIER.findall(text))


def _cuda_macro(name: str) -> bool:
    return bool(ARCH_MACROS.fullmatch(name) or VERSION_MACROS.fullmatch(name))
