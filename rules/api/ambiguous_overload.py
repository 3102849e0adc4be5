import re

from hiplint import CudaRule, Fix, Impact, Severity
from hiplint.cparse import defined_names

from ..warp._lanes import declared_types, file_constants

# HIP declares these for two integer types each (amd_device_functions.h, ROCm 7.2):
#   __ffs(unsigned int), __ffs(int); __ffsll(unsigned long long), __ffsll(long long).
# An argument of another integer type converts equally well to both: "call to '__ffsll' is ambiguous".
# CUDA declares one of each (`int __ffs(int)`, `int __ffsll(long long)`), so nvcc accepts it.
# The cast is CUDA's own implicit conversion, written out: the same value reaches the same bits.
OVERLOADS = {"__ffsll": "unsigned long long", "__ffs": "unsigned int"}
# `long` and its aliases on LP64 Linux (int64_t, size_t, ...); for __ffsll also 32-bit and narrower types
# (a conversion to either overload, none a promotion). Checked with ROCm 7.2 / clang 22 for each kind.
AMBIGUOUS = {
    "__ffsll": frozenset({"long", "long int", "signed long", "unsigned long", "unsigned long int", "int64_t",
                          "uint64_t", "size_t", "ssize_t", "ptrdiff_t", "intptr_t", "uintptr_t", "std::int64_t",
                          "std::uint64_t", "std::size_t", "int", "unsigned", "unsigned int", "int32_t", "uint32_t",
                          "short", "unsigned short", "char", "unsigned char", "bool"}),
    "__ffs": frozenset({"long", "long int", "unsigned long", "unsigned long int", "int64_t", "uint64_t", "size_t",
                        "ssize_t", "ptrdiff_t", "std::int64_t", "std::uint64_t", "std::size_t", "long long",
                        "unsigned long long"}),  # short, char, bool promote to int: exact enough, not ambiguous
}


class AmbiguousIntrinsicOverload(CudaRule):
    """`__ffsll` / `__ffs` called with an integer HIP has no exact overload for: ambiguous on AMD.

    ## What it does
    Finds `__ffsll(x)` whose argument is a variable, parameter or cast of a type other than `long long`
    or `unsigned long long` (`int64_t`, `uint64_t`, `size_t`, `long`, `int`, `unsigned` and the like),
    and `__ffs(x)` with a 64-bit argument (`long`, `int64_t`, `size_t`, `long long`). `__ffs` of a
    `short`, `char` or `bool` is not ambiguous: those promote to `int`.

    ## Why it breaks on AMD
    CUDA declares one function each, `int __ffsll(long long)` and `int __ffs(int)`, so any integer
    converts. HIP declares two overloads each (`amd_device_functions.h`: `__ffsll(unsigned long long)`
    and `__ffsll(long long)`, `__ffs(unsigned int)` and `__ffs(int)`), and an argument of another
    type, such as `int64_t` (`long` on Linux), converts to both equally well: "call to '__ffsll' is
    ambiguous", a compile error (checked with ROCm 7.2 and clang 22 for gfx942, for `int64_t`,
    `uint64_t`, `long` and `size_t`). Every AMD target, every ROCm version with these overloads.

    ## Example
    ```cuda
    #include <cstdint>
    __device__ int first_set(int64_t bits) { return __ffsll(bits); }
    ```

    ## Use instead
    ```cuda
    #include <cstdint>
    __device__ int first_set(int64_t bits) { return __ffsll((unsigned long long)bits); }
    ```

    A 64-bit lane mask passed to `__ffs` (a ballot result) is left to WRP005, which makes it `__ffsll`.

    ## Fix
    `__ffsll`: a cast to `unsigned long long`, safe: the position of the first set bit is the same for
    the signed and the unsigned type, and CUDA converts the argument the same way implicitly (to
    `long long`, the same bits). Not reported in `.c` files (C has no overloads; a C file never
    sees HIP's) nor where the file defines the function itself (a host helper of the same name). `__ffs` of a 64-bit value: a cast to `unsigned int`, unsafe: it is
    what nvcc does implicitly (keeps the low 32 bits), but a value with bits above 31 may have
    meant `__ffsll`.

    ## References
    - HIP `amd_device_functions.h` (the `__ffs`/`__ffsll` overloads): https://github.com/ROCm/rocm-systems/blob/develop/projects/clr/hipamd/include/hip/amd_detail/amd_device_functions.h
    - CUDA Math API, integer intrinsics `__ffsll(long long int)`: https://docs.nvidia.com/cuda/cuda-math-api/cuda_math_api/group__CUDA__MATH__INTRINSIC__INT.html
    """

    code = "API005"
    name = "ambiguous-intrinsic-overload"
    summary = "__ffsll/__ffs argument type has no exact HIP overload: ambiguous call"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    fix_availability = "sometimes"
    checklist = "Cast the argument of __ffsll to unsigned long long (of __ffs to unsigned int): HIP overloads both for signed and unsigned."
    query = """((call_expression function: (identifier) @fn arguments: (argument_list) @args) @call (#any-of? @fn "__ffsll" "__ffs"))"""

    def check(self, ctx, captures):
        call, args = captures["call"][0], captures["args"][0]
        fn = ctx.text(captures["fn"][0])
        params = [a for a in args.named_children if a.type != "comment"]
        if len(params) != 1:
            return
        if ctx.path.lower().endswith(".c") or fn in defined_names(ctx):
            return  # C has no overloads, and a file's own `__ffs` (Open MPI's memheap) is the one it calls
        arg = params[0]
        ty = self._type(ctx, arg, ctx.function_scope(call))
        if ty is None or ty not in AMBIGUOUS[fn]:
            return
        if fn == "__ffs" and arg.type == "identifier" and _holds_lane_mask(ctx, ctx.function_scope(call), ctx.text(arg)):
            return  # a ballot kept in 64 bits: WRP005 turns __ffs into __ffsll, the right call on wave64
        to = OVERLOADS[fn]
        make = Fix.unsafe if fn == "__ffs" else Fix.safe
        fix = make(f"Cast the argument to `{to}`", ctx.replace(arg, f"({to})({ctx.text(arg)})"
                                                                   if arg.type not in ("identifier", "parenthesized_expression")
                                                                   else f"({to}){ctx.text(arg)}"))
        wide = " (or `__ffsll` if the value has set bits above bit 31)" if fn == "__ffs" else ""
        ctx.report(arg, f"`{fn}` of an argument of type `{ty}`: HIP overloads `{fn}` for two types and `{ty}` converts to both "
                        f"(\"call to '{fn}' is ambiguous\"); cast it to `{to}`{wide}", fix=fix)

    @staticmethod
    def _type(ctx, arg, scope):
        if arg.type == "cast_expression":
            t = arg.child_by_field_name("type")
            return " ".join(ctx.text(t).split()) if t is not None else None
        if arg.type == "identifier":
            name = ctx.text(arg)
            return declared_types(ctx, scope).get(name) or file_constants(ctx).get(name)
        return None


def _holds_lane_mask(ctx, scope, name: str) -> bool:
    """Is `name` given a ballot or another lane mask in the function (`m = __ballot_sync(...)`)?"""
    return re.search(rf"\b{re.escape(name)}\s*=[^;]*\b__(ballot|activemask|match_any|lanemask)", ctx.text(scope)) is not None
