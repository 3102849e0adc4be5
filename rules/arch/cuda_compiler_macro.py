import re

from hiplint import CudaRule, Fix, Impact, Severity
from hiplint.cparse import iter_nodes, strip_c_comments
from hiplint.model import Edit
from hiplint.preproc import NVIDIA_BUILD_MARK, _names_amd_twin, is_cuda_build_macro, is_hip_macro
from hiplint.lazy import lazy_re

MACROS = ("__CUDACC__", "__NVCC__")
_CHAIN = ("preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef", "preproc_else")
# The branches must hold GPU code, or what stands in for it on a host compiler: CUDA's function and
# variable qualifiers (or their empty stand-ins), kernel launches, built-in indices, or min/max helpers.
GPU_CODE = lazy_re(r"__(host|device|global|forceinline|shared|constant|managed|launch_bounds)__|<<<|"
                      r"\b(threadIdx|blockIdx|blockDim|__syncthreads)\b|(?<!::)(?<!\.)\b(min|max|fminf|fmaxf)\s*\(")


_STRING = lazy_re(r'"(?:[^"\\\n]|\\.)*"')
# nvcc's own builtins (`__nv_is_extended_device_lambda_closure_type`): a branch that calls them is for nvcc.
_NVCC_BUILTIN = lazy_re(r"\b__nv_\w+\s*\(")
# Names of HIP and ROCm libraries' APIs: a branch that uses them is written for AMD.
AMD_API = lazy_re(r"\b(?:hip[A-Z]\w*|hip(?:blas|sparse|fft|rand|solver|cub)_\w+|roc(?:blas|sparse|fft|rand|solver|prim|thrust)"
                  r"(?:_\w+|::)|__HIP_\w+|__hip_\w+|amd_\w+|__builtin_amdgcn_\w+)|"
                  r"#[ \t]*include[ \t]*[<\"](?:hip|hsa|roc)\w*/")
# `#define hipStream_t cudaStream_t`: a branch that spells HIP's names as CUDA's is the NVIDIA side of
# code written in HIP (a HIP-first project's compatibility header), not a GPU branch hip-clang should take.
MAPS_HIP_NAMES = lazy_re(r"(?m)^[ \t]*#[ \t]*define[ \t]+hip[A-Z]\w*[ \t]+cu\w+")


AMD_WORD_IN_COMMENT = lazy_re(r"(?://|/\*)[^\n]*\b(?:HIP|ROCm|ROCM|AMD|hip-clang|hipcc)\b")


class CudaCompilerMacroTest(CudaRule):
    """`#ifdef __CUDACC__` / `#ifdef __NVCC__` used to mean "compiled by the GPU compiler".

    ## What it does
    Finds `#ifdef`, `#ifndef`, `#if defined(...)` and `#elif defined(...)` tests of `__CUDACC__` or
    `__NVCC__` whose branches hold GPU code or its host stand-ins: `__host__ __device__` qualifiers
    (or macros defined empty for the host compiler), `__forceinline__`, kernel launches, `threadIdx`,
    `__syncthreads`, or `min`/`max` helpers. Not reported when the condition, or another branch of
    the same `#if` chain, tests a HIP macro (`__HIPCC__`, `__HIP__`, `__HIP_PLATFORM_AMD__`,
    `USE_ROCM`, ...) or a macro the project's AMD build defines (a Makefile's hipcc rule passing
    `-DALPAKA`, for `#if defined(ALPAKA) || defined(__CUDACC__)`): the project already says what AMD
    takes; nor when it tests the project's
    NVIDIA-build switch (`defined(__CUDACC__) && defined(AMREX_USE_CUDA)`, where the build files also
    name `AMREX_USE_HIP`: hiplint.amdbuild), or a CUDA switch whose HIP twin the same file tests
    (`defined(CAMP_ENABLE_CUDA) && defined(__CUDACC__)` beside a `CAMP_ENABLE_HIP` block), which keeps
    the branch to the NVIDIA build on purpose.
    Nor when the block stands beside one of its own for AMD that holds the HIP twins of its names
    (`#ifdef __CUDACC__` defining `apply_cuda`, then `#ifdef __HIPCC__` defining `apply_hip`).
    Nor when another branch of the chain is written for AMD: it uses HIP or ROCm APIs
    (`rocblas_double_complex`, `hipStream_t`, `__builtin_amdgcn_*`) or its comment says so ("For HIP,
    ..."); nor when the branch calls nvcc's own builtins (`__nv_is_extended_host_device_lambda_closure_type`).
    Strings and comments are not read as GPU code (`"__host__ __device__ lambdas..."` in a message), nor
    are calls of `std::min`/`std::max` (a min/max helper is an unqualified definition or call).
    Nor a branch that spells HIP's names as CUDA's (`#if defined(__NVCC__) / #define hipStream_t
    cudaStream_t`), or whose `#else` includes HIP's or HSA's headers (`#include <hip/hip_ext.h>`): that is
    code written in HIP, whose `__NVCC__` test means the NVIDIA platform on purpose.
    Nor, inside the body of a `__global__` or `__device__` (not `__host__`) function, a negated test or one
    with an `#else`: no host compiler reads that body, so `#if !defined(__CUDACC__)` (or the `#else`)
    there is the branch for a GPU compiler other than nvcc, written for hip-clang. A lone
    `#ifdef __CUDACC__` there is still reported: AMD drops its code silently. Nor a negated test joined
    by `||` to an nvcc version test (`!defined(__CUDACC__) || __CUDACC_VER_MAJOR__ != 9`): a workaround
    for one nvcc release, whose branch every other compiler, hip-clang too, is meant to take.
    `__CUDACC__` is not reported in a project whose AMD build is PyTorch's extension build
    (`CUDAExtension` in a `setup.py` that builds for ROCm) or whose build files run hipify: those
    compile hipified copies, and hipify turns `__CUDACC__` into `__HIPCC__`
    (`torch/utils/hipify/cuda_to_hip_mappings.py`). In any other project that builds for AMD, the
    code inside a `#ifdef __CUDACC__` branch is NVIDIA code that the other rules leave alone; this
    rule reports the test itself where the branch holds GPU code.
    Nor a block whose branches differ only in `__host__`/`__device__`/`__forceinline__` on a
    constexpr function (`#ifdef __NVCC__ / __device__ static constexpr int / #else / static constexpr
    int / #endif`, or a lone `#ifdef __CUDACC__ / __host__ __device__ / #endif` before one): clang
    treats constexpr functions as `__host__ __device__` (`-fcuda-host-device-constexpr`, on by
    default; checked with ROCm 7.2), so the HIP build loses nothing.
    Nor a test joined to a switch the project ships off (`defined __CUDACC__ && defined X_NSIGHT_DEBUG`,
    offered only as `//#define X_NSIGHT_DEBUG`), nor a branch that holds nothing but nested blocks no AMD
    compile takes (`#ifdef __CUDACC__ / #ifdef X_CUCXTYPE_THRUST ... #endif / #else ...`, where the
    project defines `X_CUCXTYPE_THRUST` only under `#ifdef __CUDACC__` in a file that gives `__HIPCC__`
    its own branch): hip-clang skipping it loses nothing.
    Tests of `__CUDACC_VER_MAJOR__` and the other version macros are ARC001's.

    ## Why it breaks on AMD
    hip-clang defines neither `__CUDACC__` nor `__NVCC__`: it defines `__HIPCC__` and `__HIP__`
    (checked with `clang++-19 -x hip -E -dM --offload-arch=gfx942`, host and device passes; ROCm's
    HIP headers do not define them either). hipify renames `__CUDACC__` to `__HIPCC__`, but a port by
    hand keeps the test, and a HIP build then takes the host-compiler branch:
    `#ifdef __CUDACC__ / #define HD __host__ __device__ / #else / #define HD / #endif` makes every
    `HD` helper host-only ("no matching function for call" from a kernel, checked with ROCm 7.2 and
    clang 22), and `#ifndef __CUDACC__ / inline int min(int, int)` redefines HIP's own `min`
    ("redefinition of 'min'"). Every AMD target, every ROCm version.

    ## Example
    ```cuda
    #ifdef __CUDACC__
    #define HD __host__ __device__
    #else
    #define HD
    #endif
    ```

    ## Use instead
    ```cuda
    #if defined(__CUDACC__) || defined(__HIPCC__)
    #define HD __host__ __device__
    #else
    #define HD
    #endif
    ```

    ## Fix
    Unsafe: `#ifdef __CUDACC__` becomes `#if defined(__CUDACC__) || defined(__HIPCC__)`, `#ifndef`
    its negation, and `defined(__CUDACC__)` in a condition `(defined(__CUDACC__) || defined(__HIPCC__))`.
    nvcc never defines `__HIPCC__`, so the NVIDIA build is unchanged; on AMD the GPU branch is
    taken from then on, and whatever CUDA-only code it holds must be ported too.

    ## References
    - HIP porting guide, compiler defines (`__HIPCC__`, `__HIP__`; `__CUDACC__` is nvcc's): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html#compiler-defines-summary
    - NVCC documentation, `__CUDACC__` and `__NVCC__`: https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#nvcc-identification-macro
    - clang treats unattributed constexpr functions as `__host__ __device__` (`CUDAHostDeviceConstexpr`, on by default; `-fno-cuda-host-device-constexpr` turns it off): https://reviews.llvm.org/D18380
    """

    code = "ARC006"
    name = "cuda-compiler-macro-test"
    summary = "__CUDACC__/__NVCC__ tested as the GPU build; hip-clang defines neither"
    severity = Severity.WARNING
    impact = Impact.COMPILE
    in_macros = False
    report_in_hip_branches = False
    fix_availability = "sometimes"
    checklist = "Test `defined(__CUDACC__) || defined(__HIPCC__)` where the code means the GPU compiler (hip-clang defines __HIPCC__, not __CUDACC__ or __NVCC__)."
    query = """
    ([(preproc_ifdef name: (identifier) @macro)
      (preproc_elifdef name: (identifier) @macro)
      (preproc_defined (identifier) @macro)] (#any-of? @macro "__CUDACC__" "__NVCC__"))
    """

    def check(self, ctx, captures):
        for node in captures.get("macro", ()):
            self._one(ctx, node)

    def _one(self, ctx, node):
        name = ctx.text(node)
        if name == "__CUDACC__" and ctx.build_facts.hipified_at_build:
            return  # the AMD build compiles hipified copies (PyTorch's extension build): `__CUDACC__` -> `__HIPCC__`
        directive = node.parent
        while directive is not None and directive.type not in _CHAIN:
            directive = directive.parent
        if directive is None:
            return
        if ctx.in_off_switch_branch(ctx.file_range(directive.child_by_field_name("condition") or node)[1]):
            return  # `defined __CUDACC__ && defined X_NSIGHT_DEBUG`, X shipped off: no build takes the branch
        top = directive
        while top.parent is not None and top.type in ("preproc_elif", "preproc_elifdef", "preproc_else") \
                and top.parent.type in _CHAIN:
            top = top.parent
        chain = list(_chain(top))
        hip = ctx.hip_macros
        facts = ctx.build_facts
        for d in chain:
            test = d.child_by_field_name("condition") or d.child_by_field_name("name")
            names = [ctx.text(i) for i in [*iter_nodes(test, {"identifier"}), *_self(test)]] if test is not None else []
            if any(is_hip_macro(n, hip) for n in names):
                return  # AMD has its own branch, or is tested with it
            if any(n in facts.both_defines or n in facts.amd_defines for n in names if n not in MACROS):
                return  # `defined(ALPAKA) || defined(__CUDACC__)` where the hipcc rule passes `-DALPAKA` too
            if any(NVIDIA_BUILD_MARK + n in hip for n in names if n not in MACROS):
                return  # `defined(__CUDACC__) && defined(AMREX_USE_CUDA)`: the project's NVIDIA backend (hiplint.amdbuild)
            if any(n not in MACROS and is_cuda_build_macro(n, hip) and _names_amd_twin(ctx.source.data, n)
                   for n in names):
                return  # `defined(CAMP_ENABLE_CUDA) && ...` in a file that also tests `CAMP_ENABLE_HIP`: the HIP block is its own
        if _after_amd_taken_branch(ctx, top, facts.both_defines | facts.amd_defines):
            return  # in the `#else` of `#ifdef ALPAKA`, where the hipcc rule passes `-DALPAKA`: AMD never gets here
        if any(_tests_hip(ctx, sibling) and _twin_names(ctx, top, sibling)
               for sibling in (top.prev_named_sibling, top.next_named_sibling)):
            return  # `#ifdef __CUDACC__ apply_cuda() #endif` beside `#ifdef __HIPCC__ apply_hip() #endif`
        test_text = ctx.text(directive.child_by_field_name("condition") or node)
        if _negated(ctx, node, directive) and "||" in test_text and _NVCC_VERSION.search(test_text):
            # `!defined(__CUDACC__) || __CUDACC_VER_MAJOR__ != 9 || ...`: every compiler but one nvcc release
            # takes the branch, hip-clang among them, as written (a workaround for that release).
            return
        if _in_gpu_only_function(ctx, top) and (len(chain) > 1 or _negated(ctx, node, directive)):
            # Inside a `__global__`/`__device__` body only GPU compilers read, the "not nvcc" side is
            # another GPU compiler's: written for hip-clang. (A lone `#ifdef __CUDACC__` there still drops
            # its code on AMD silently: reported.)
            return
        if not _negated(ctx, node, directive) and _only_nvidia_blocks(ctx, directive):
            return  # `#ifdef __CUDACC__ / #ifdef X_CUCXTYPE_THRUST ... #endif / #else`: nothing AMD would compile
        code = strip_c_comments(_STRING.sub('""', ctx.text(top)))
        if _constexpr_qualifiers_only(ctx, top, code):
            return  # `#ifdef __NVCC__ __device__ static constexpr int #else static constexpr int #endif f()`
        if not GPU_CODE.search(code):
            return  # `#ifdef __NVCC__ / #pragma nv_diag_suppress`: about the compiler, not the GPU build
        if not _negated(ctx, node, directive) and MAPS_HIP_NAMES.search(ctx.text(directive)):
            return  # `#if defined(__NVCC__) / #define hipStream_t cudaStream_t`: HIP code's NVIDIA mapping
        if _NVCC_BUILTIN.search(code):
            return  # `static_assert(__nv_is_extended_host_device_lambda_closure_type(F))`: nvcc's own checks
        if len(chain) > 1 and any(AMD_API.search(strip_c_comments(_STRING.sub('""', ctx.text(d))))
                                  or AMD_WORD_IN_COMMENT.search(ctx.text(d)) for d in chain[1:]):
            # `#ifdef __NVCC__ ... cuDoubleComplex ... #else ... rocblas_double_complex`, or an `#else`
            # whose comment says "For HIP, use our implementation": the author wrote it for AMD.
            return
        defined = node.parent if node.parent is not None and node.parent.type == "preproc_defined" else None
        negated = _negated(ctx, node, directive)
        fix = None
        if defined is not None:
            fix = Fix.unsafe(f"Test `__HIPCC__` with `{name}`",
                             ctx.replace(defined, f"(defined({name}) || defined(__HIPCC__))"))
        elif directive.type == "preproc_ifdef":
            start = ctx.file_range(directive.children[0])[0]
            end = ctx.file_range(node)[1]
            text = f"#if !defined({name}) && !defined(__HIPCC__)" if negated else \
                f"#if defined({name}) || defined(__HIPCC__)"
            fix = Fix.unsafe(f"Test `__HIPCC__` with `{name}`", Edit(start, end, text))
        ctx.report(node, f"`{name}` is nvcc's: hip-clang defines neither __CUDACC__ nor __NVCC__ (it defines "
                         f"__HIPCC__), so a HIP build {'takes' if negated else 'skips'} this branch meant for "
                         f"{'host compilers' if negated else 'the GPU compiler'}; test `__HIPCC__` too",
                   fix=fix)


_DIRECTIVE = lazy_re(r"^\s*#\s*(\w+)")
_HD_QUALIFIER = lazy_re(r"\b__(?:host|device|forceinline)__\b")
_CONSTEXPR = lazy_re(r"\bconstexpr\b")
_DECLARATION_HEAD = lazy_re(r"[^;{}()]*")


def _constexpr_qualifiers_only(ctx, top, code: str) -> bool:
    """Branches that differ only in `__host__`/`__device__`/`__forceinline__` on a constexpr function
    (`#ifdef __NVCC__ / __device__ static constexpr int / #else / static constexpr int / #endif`, or a
    lone `#ifdef __NVCC__ / __device__ / #endif` before `static constexpr int f()`): clang treats a
    constexpr function as `__host__ __device__` (-fcuda-host-device-constexpr, on by default), so the
    HIP build loses nothing."""
    branches, current, lines, after = [], None, code.splitlines(), ""
    for i, line in enumerate(lines):
        m = _DIRECTIVE.match(line)
        if m is None:
            if current is None:
                return False
            current.append(line)
            continue
        word = m.group(1)
        if word in ("if", "ifdef", "ifndef") and current is not None:
            return False  # a nested block: not read
        if word in ("if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else"):
            current = []
            branches.append(current)
        elif word == "endif":
            # The parser may take the declaration after `#endif` into the block: that is what follows it.
            after = "\n".join(lines[i + 1:])
            break
        elif current is not None:
            return False  # a #define, #pragma, ... inside: more than qualifiers
    if not branches:
        return False
    bodies = [" ".join(" ".join(b).split()) for b in branches]
    plain = {" ".join(_HD_QUALIFIER.sub(" ", body).split()) for body in bodies}
    if len(plain) != 1 or not any(_HD_QUALIFIER.search(b) for b in bodies):
        return False
    rest = plain.pop()
    if rest:
        # Two spellings of one declaration's head (`__device__ static constexpr int` / `static constexpr
        # int`): no statement or body in them (a whole class under `#ifdef __CUDACC__` is GPU code).
        return len(branches) > 1 and _DECLARATION_HEAD.fullmatch(rest) is not None \
            and _CONSTEXPR.search(rest) is not None
    # Only qualifiers in the block: the declaration after `#endif` decides.
    if not after.strip():
        end = ctx.file_range(top)[1]
        after = strip_c_comments(ctx.source.data[end:end + 400].decode("utf-8", "replace"))
    head = _DECLARATION_HEAD.match(after)
    return head is not None and _CONSTEXPR.search(head.group(0)) is not None


def _after_amd_taken_branch(ctx, node, defined) -> bool:
    """Is `node` inside a later branch (`#elif`/`#else`) of a chain an earlier branch of which tests a
    macro the AMD build defines (`#ifdef ALPAKA` ... `#else` ... here)? The AMD build takes that one."""
    if not defined:
        return False
    child, anc = node, node.parent
    while anc is not None:
        if anc.type in ("preproc_elif", "preproc_elifdef", "preproc_else") and child != anc.child_by_field_name("condition"):
            head = anc
            while head.parent is not None and head.type in ("preproc_elif", "preproc_elifdef", "preproc_else") \
                    and head.parent.type in _CHAIN:
                head = head.parent
            for d in _chain(head):
                if d == anc:
                    break
                test = d.child_by_field_name("condition") or d.child_by_field_name("name")
                if test is None or ctx.text(d).startswith("#ifndef") or "!" in ctx.text(test):
                    continue
                names = {ctx.text(i) for i in [*iter_nodes(test, {"identifier"}), *_self(test)]} - {"defined"}
                if len(names) == 1 and names <= defined:
                    return True
        child, anc = anc, anc.parent
    return False


def _nvidia_only_branch(ctx, d) -> bool:
    """Is `d` (an `#if`/`#ifdef`/`#elif` of a nested chain) a branch no AMD compile takes: on a switch the
    project ships off, or a positive test of names defined only where nvcc compiles (`__CUDACC__`, the
    project's aliases of it: NVIDIA_BUILD_MARK among the file's HIP macros)?"""
    test = d.child_by_field_name("condition") or d.child_by_field_name("name")
    if test is None or d.type == "preproc_else":
        return False
    if ctx.in_off_switch_branch(ctx.file_range(test)[1]):
        return True
    if ctx.text(d).startswith("#ifndef") or "!" in ctx.text(test):
        return False
    names = {ctx.text(i) for i in [*iter_nodes(test, {"identifier"}), *_self(test)]} - {"defined"}
    return bool(names) and all(n in MACROS or NVIDIA_BUILD_MARK + n in ctx.hip_macros for n in names)


def _only_nvidia_blocks(ctx, directive) -> bool:
    """Does the branch hold nothing but nested blocks no AMD compile takes (`#ifdef __CUDACC__ / #ifdef
    X_CUCXTYPE_THRUST ... #elif defined X_CUCXTYPE_CUCOMPLEX ... #endif / #else`, where nvcc alone defines
    the one and the other is shipped off)? Then hip-clang skipping it loses nothing."""
    alternative = directive.child_by_field_name("alternative")
    head = directive.child_by_field_name("condition") or directive.child_by_field_name("name")
    blocks = 0
    for child in directive.named_children:
        if child == head or (alternative is not None and child == alternative) or child.type == "comment":
            continue
        if child.type not in ("preproc_if", "preproc_ifdef"):
            return False
        if not all(_nvidia_only_branch(ctx, d) for d in _chain(child)):
            return False
        blocks += 1
    return blocks > 0


_NVCC_VERSION = lazy_re(r"\b(?:__CUDACC_VER_(?:MAJOR|MINOR|BUILD)__|__CUDACC_VER__|CUDART_VERSION|CUDA_VERSION)\b")


def _negated(ctx, node, directive) -> bool:
    """`#ifndef __CUDACC__` or `!defined(__CUDACC__)`."""
    defined = node.parent if node.parent is not None and node.parent.type == "preproc_defined" else None
    return (defined is not None and defined.parent is not None and defined.parent.type == "unary_expression"
            and ctx.text(defined.parent).lstrip().startswith("!")) or \
        (defined is None and ctx.text(directive).startswith("#ifndef"))


_GPU_ONLY_QUALIFIER = lazy_re(r"\b__(?:global|device)__\b")
_HOST_QUALIFIER = lazy_re(r"\b__host__\b")


def _in_gpu_only_function(ctx, node) -> bool:
    """Is `node` in the body of a kernel or a `__device__` function without `__host__`? No host compiler
    reads that body, so `#if !defined(__CUDACC__)` there means "not nvcc": the branch for hip-clang
    (`__syncthreads()` where nvcc's branch has `__syncwarp()`), written so on purpose."""
    fn = ctx.enclosing_function(node)
    if fn is None or fn.type != "function_definition":
        return False
    body = fn.child_by_field_name("body")
    head = " ".join(ctx.text(c) for c in fn.children if body is None or c.end_byte <= body.start_byte)
    return bool(_GPU_ONLY_QUALIFIER.search(head)) and not _HOST_QUALIFIER.search(head)


def _tests_hip(ctx, node) -> bool:
    """Is `node` an `#if`/`#ifdef` whose own test names a HIP macro (`#ifdef __HIPCC__`)?"""
    if node is None or node.type not in ("preproc_if", "preproc_ifdef"):
        return False
    test = node.child_by_field_name("condition") or node.child_by_field_name("name")
    if test is None or ctx.text(node).startswith("#ifndef"):
        return False
    names = [ctx.text(i) for i in [*iter_nodes(test, {"identifier"}), *_self(test)]]
    return any(is_hip_macro(n, ctx.hip_macros) for n in names)


_CUDA_NAMED = lazy_re(r"\b\w*(?:cuda|Cuda|CUDA)\w*\b")


def _twin_names(ctx, cuda_block, hip_block) -> bool:
    """Does the HIP block name a twin of a CUDA-named identifier of the CUDA block (`apply_cuda` ->
    `apply_hip`)? Then each block holds its own compiler's version of the same functions."""
    hip_text = ctx.text(hip_block)
    body = strip_c_comments(ctx.text(cuda_block)).split("\n", 1)[-1]  # not the test's own `__CUDACC__`
    for name in set(_CUDA_NAMED.findall(body)) - set(MACROS):
        for cuda, amd in (("cuda", "hip"), ("Cuda", "Hip"), ("CUDA", "HIP")):
            twin = name.replace(cuda, amd)
            if twin != name and re.search(rf"\b{re.escape(twin)}\b", hip_text):
                return True
    return False


def _self(node):
    return {node} if node.type == "identifier" else set()


def _chain(top):
    """The directive and its #elif/#else alternatives."""
    d = top
    while d is not None:
        yield d
        d = d.child_by_field_name("alternative")
