import re

from hiplint import CudaRule, Fix, Impact, Severity

from ._values import call_args, table
from .._calls import initializer_text
from .pointer_attributes import declared_type
from hiplint.cparse import defined_names
from hiplint.lazy import lazy_re


_OUTER_CAST = lazy_re(r"^\s*(?:reinterpret_cast|static_cast|const_cast)\s*<([^>]*)>")
_OUTER_CALL = lazy_re(r"^\s*([\w:]+)\s*[({]")


_CAST_TYPE = lazy_re(r"^\s*(?:reinterpret_cast|static_cast)\s*<\s*([^<>]*?)\s*\*\s*>|^\s*\(\s*([\w\s:]+?)\s*\*\s*\)")


def _pointee_type(ctx, scope, arg):
    """The element type an atomic's address argument points to: `p`, `p + i`, `&x`, `&a[i]`,
    `(T*)p`, `reinterpret_cast<T*>(p)`; None when unknown (a member, a template, `auto`)."""
    m = _CAST_TYPE.match(ctx.text(arg))
    if m:
        return " ".join((m.group(1) or m.group(2)).split())
    while True:
        if arg.type == "parenthesized_expression" and arg.named_children:
            arg = arg.named_children[0]
        elif arg.type == "pointer_expression" and ctx.text(arg).lstrip().startswith("&"):
            arg = arg.child_by_field_name("argument")
        elif arg.type == "subscript_expression":
            arg = arg.child_by_field_name("argument")
        elif arg.type == "binary_expression" and ctx.text(arg.child_by_field_name("operator")) in ("+", "-"):
            arg = arg.child_by_field_name("left")
        else:
            break
        if arg is None:
            return None
    if arg.type != "identifier":
        return None
    ty = declared_type(ctx, scope, ctx.text(arg))
    return None if ty is None or "auto" in ty.split() else ty


def _outer_type(init: str) -> str:
    """What the outermost cast or call of an initializer names: the cast's type, or the callee."""
    m = _OUTER_CAST.match(init) or _OUTER_CALL.match(init)
    return m.group(1) if m else ""


class HalfIntrinsicGaps(CudaRule):
    """Half and bf16 intrinsics that HIP does not provide: `__hmax2`, `__hfma2_relu`, `__h*2_mask`, ...

    ## What it does
    Finds calls of CUDA fp16/bf16 intrinsics for which AMD's HIPIFY tables list no HIP equivalent:
    `__hmax2`, `__hmin2` (and `_nan`), `__hfma2_relu`, `__hfma_relu`, `__hadd_rn`/`__hsub_rn`/`__hmul_rn`
    (and `2` forms), the `__h{eq,ne,lt,le,gt,ge}[u]2_mask` comparisons, `__half2char_rz`,
    `__half2uchar_rz`, `__double2half`, `__double2bfloat16` (before ROCm 5.7) and `__hcmadd`.
    `__hmax2`/`__hmin2` on `__nv_bfloat162` / `__hip_bfloat162` values are left alone: HIP's
    `amd_hip_bf16.h` has those (the type is read from the declaration, or for `auto` from its
    initializer: `reinterpret_cast<__nv_bfloat162*>(...)`; elements of such arrays count). The `_rn` forms are warnings: ROCm 6.3's headers lack them, newer
    HIP declares them, and the first release that does is not pinned down.
    Also the cuda_bf16.h conversions HIP's `hip_bf16.h` lacks (ROCm 7.2 included): `__float2bfloat16_rn`
    (and `_rd`/`_ru`/`_rz`), `__float2bfloat162_rn`, `__floats2bfloat162_rn`, `make_bfloat162`,
    `__bfloat162{int,uint,ll,ull,short,ushort}_r{n,d,u,z}`, `__bfloat162{char,uchar}_rz` and the
    integer-to-bf16 forms HIP lacks (`__uint2bfloat16_rn`, `__ll2bfloat16_rn`, `__int2bfloat16_rz`, ...),
    with the HIP spelling to use; `atomicAdd` whose address points to `__half`, `__half2`,
    `__nv_bfloat16` or `__nv_bfloat162` (a parameter or variable of that type, `p + i`, `&a[i]`, a cast;
    not where the file or a project header it includes declares its own `atomicAdd` for that type
    outside branches the AMD build skips);
    `.x` of a variable or parameter declared `__half`, `half`, `__nv_bfloat16` or `__hip_bfloat16`
    (their bits; `__half_raw` and `__half2`, whose `.x` is a `__half`, are left alone);
    and a braced list assigned to a `__half2` (`h = {};`, `h2 = {a, b};`), which nvcc accepts and
    HIP finds ambiguous (the scalar `__half`/`__nv_bfloat16` forms fail with nvcc as well).
    Shuffles of `__half`/`__half2` are not reported: HIP defines `__shfl*` for them (ROCm 5.6 and
    later), and the `__shfl*_sync` forms forward to those. One finding per intrinsic and file: its
    other calls are listed with it as related locations.

    ## Why it breaks on AMD
    hipify warns about these names and leaves them; `hip_fp16.h` does not declare them (HIPIFY's
    device API table, ROCm 6.3 line, has no HIP column entry), so the port fails to compile, or, for
    `__hmax2` on `__half2`, may bind to the bf16 overload. Newer ROCm releases add fp16 functions:
    recheck the list against the `hip_fp16.h` of the oldest ROCm you support. Every target.

    ROCm 7.2 (checked against the headers of Debian's 7.2.4 packages and by compiling each case with
    clang 22 for gfx942 and gfx1100) still declares none of the bf16 conversions listed above
    ("use of undeclared identifier"), and `atomicAdd` only for `int`, `unsigned`, `unsigned long
    (long)`, `float` and `double` ("no matching function for call to 'atomicAdd'"). It has
    `unsafeAtomicAdd` for `__half2` and `__hip_bfloat162` (ROCm 6.3 already) and, in 7.2, for `__half`
    and `__hip_bfloat16`: hardware float atomics, which do not work on fine-grained host memory (see
    MEM006), or write a compare-and-swap loop. `__half` and `__hip_bfloat16` have `operator=`
    overloads for the type and for its `_raw` struct, so `h = {}` is "use of overloaded operator '='
    is ambiguous"; `h = __half2{}` compiles on both. `__half` and `__hip_bfloat16` keep their bits in a
    protected union member (`__x`), so `h.x` is "no member named 'x'"; nvcc 9 and later reject it as well
    (`__x` is protected there too), so real code has it only in a `#if CUDA_VERSION < 9000` branch, and
    hip-clang defines no `CUDA_VERSION`, so the HIP build compiles that branch. `__half_as_ushort`,
    `__ushort_as_half`, `__bfloat16_as_ushort` and `__ushort_as_bfloat16` exist on both.

    ## Example
    ```cuda
    #include <cuda_fp16.h>
    __device__ __half2 relu_max(__half2 a, __half2 b) { return __hmax2(a, b); }
    ```

    ## Use instead
    ```cuda
    #include <cuda_fp16.h>
    __device__ __half2 relu_max(__half2 a, __half2 b) {
        return __halves2half2(__hmax(__low2half(a), __low2half(b)), __hmax(__high2half(a), __high2half(b)));
    }
    ```
    Or compute in `float2` (`__half22float2`, `fmaxf`, `__float22half2_rn`).

    ## Fix
    A braced list assigned to a 16-bit float variable gets its type written before it:
    `h = {};` becomes `h = half2{};` (safe: value-initialization either way); a non-empty list
    (`h2 = __half2{a, b};`) is unsafe, since direct-list-initialization may choose an explicit
    constructor that copy-list-initialization skipped.

    ## References
    - HIPIFY, CUDA device API supported by HIP (fp16/bf16 rows without a HIP name): https://rocm.docs.amd.com/projects/HIPIFY/en/latest/reference/tables/CUDA_Device_API_supported_by_HIP.html
    - HIP headers `amd_hip_fp16.h` (half shuffles), `amd_hip_bf16.h` (`__hmax2` for `__hip_bfloat162`): https://github.com/ROCm/clr
    - ROCm 7.2 headers `hip/amd_detail/amd_hip_bf16.h`, `amd_hip_fp16.h` (`unsafeAtomicAdd` overloads, `operator=`), `amd_hip_atomic.h` (`atomicAdd` overloads): https://github.com/ROCm/rocm-systems/tree/develop/projects/clr/hipamd/include/hip/amd_detail
    - CUDA bf16 intrinsics (`__float2bfloat16_rn`, `make_bfloat162`, atomicAdd on `__nv_bfloat162`): https://docs.nvidia.com/cuda/cuda-math-api/cuda_math_api/group__CUDA__MATH__INTRINSIC__BFLOAT16.html
    - CUDA half-precision intrinsics: https://docs.nvidia.com/cuda/cuda-math-api/cuda_math_api/group__CUDA__MATH__INTRINSIC__HALF.html
    """

    code = "MEM011"
    name = "half-intrinsic-gaps"
    summary = "fp16/bf16 intrinsic without a HIP equivalent"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    fix_availability = "sometimes"
    checklist = "Replace fp16/bf16 intrinsics HIP lacks (__hmax2, __hfma2_relu, __h*2_mask, ...) with float math or helper functions guarded for AMD."
    query = """
    ((call_expression function: (identifier) @fn) @call
      (#match? @fn "^(__(h|half2|double2|hcmadd|bfloat162|float2bfloat16|floats2bfloat162|int2bfloat16|uint2bfloat16|ll2bfloat16|ull2bfloat16|short2bfloat16|ushort2bfloat16)|make_bfloat162$)"))
    ((call_expression function: (identifier) @atomic arguments: (argument_list) @args) @acall (#eq? @atomic "atomicAdd"))
    (assignment_expression left: (_) @lhs operator: "=" right: (initializer_list) @braces) @assign
    ((field_expression argument: (identifier) @obj field: (field_identifier) @bits) @member (#eq? @bits "x"))
    """
    # The brace assignment pattern has no predicate: it reports only where a variable of a 16-bit float
    # type is declared in the file, and each such type name contains one of these.
    triggers = ("half", "bfloat16")

    def check(self, ctx, captures):
        if "acall" in captures:
            self._atomic(ctx, captures["acall"][0])
            return
        if "assign" in captures:
            self._brace_assign(ctx, captures["lhs"][0], captures["braces"][0])
            return
        if "member" in captures:
            self._raw_bits(ctx, captures["member"][0], captures["obj"][0])
            return
        half = table()["half"]
        fn = ctx.text(captures["fn"][0])
        if fn in half["missing_bf16"]:
            hint = half["hints"].get(fn)
            use = f"use {hint}" if hint else "convert through float (`__bfloat162float`, `__float2bfloat16`)"
            ctx.report(captures["call"][0], f"`{fn}` is not declared by HIP's hip_bf16.h (ROCm 7.2 included): {use}",
                       group=fn)
            return
        if fn not in half["missing"]:
            return
        since = half["since"].get(fn)
        if since is not None and ctx.rocm_version >= tuple(since):
            return
        call = captures["call"][0]
        if fn in half["bf16_overloads"] and self._bf16_args(ctx, call):
            return
        if fn in half["newer_hip"]:
            ctx.report(call, f"`{fn}` is not declared by hip_fp16.h/hip_bf16.h of ROCm 6.3 and older (newer HIP "
                             f"adds it): check the oldest ROCm you support, or rewrite it with float math",
                       severity=Severity.WARNING, group=fn)
            return
        # One finding per intrinsic and file; its other calls are related locations (engine merge).
        ctx.report(call, f"`{fn}` has no HIP equivalent (hip_fp16.h/hip_bf16.h do not declare it); rewrite it with "
                         f"float math or a helper", group=fn)

    def _brace_assign(self, ctx, lhs, braces):
        target = lhs
        while target.type == "subscript_expression":
            target = target.child_by_field_name("argument")
        if target is None or target.type != "identifier":
            return
        ty = declared_type(ctx, ctx.function_scope(lhs), ctx.text(target))
        if ty is None or not re.match(table()["half_atomics"]["brace_assign_types"], ty):
            return
        base = re.sub(r"^(?:const\s+|volatile\s+)*", "", ty)
        if lhs.type != "identifier" and ctx.text(lhs).count("[") != 1:
            return  # `a[i][j]` of a 2-D array: the element type is still `base`, but keep to the plain cases
        edit = ctx.insert_before(braces, base)
        empty = not braces.named_children
        fix = (Fix.safe if empty else Fix.unsafe)(f"Write `{base}{ctx.text(braces)}`", edit)
        ctx.report(braces, f"assigning a braced list to a `{base}` is ambiguous in HIP (more than one operator= "
                           f"overload takes it, for the type and for its _raw struct: a compile error, ROCm 7.2 included); write "
                           f"`{base}{ctx.text(braces)}`", fix=fix)

    def _raw_bits(self, ctx, member, obj):
        ty = declared_type(ctx, ctx.function_scope(member), ctx.text(obj))
        if ty is None or not re.match(table()["half_atomics"]["raw_bits_types"], ty):
            return  # `__half_raw`, `__half2` (whose .x is a __half) and unknown types have an .x
        base = re.sub(r"^(?:const\s+|volatile\s+)*", "", ty)
        if base in defined_names(ctx):
            return  # the file's own `half` (`typedef struct { unsigned short x; } half;`), not CUDA's
        base = {"half": "__half", "nv_bfloat16": "__nv_bfloat16"}.get(base, base)  # the typedefs
        bf16 = "bfloat16" in base
        read, write = ("__bfloat16_as_ushort", "__ushort_as_bfloat16") if bf16 else ("__half_as_ushort", "__ushort_as_half")
        # nvcc 9 and later reject it too: it lives in `CUDA_VERSION < 9000` branches, which HIP takes.
        hip = "__hip_bfloat16" if bf16 else "__half"
        ctx.report(member, f"`.x` of a `{base}`: HIP's `{hip}` keeps its bits in a protected member (\"no member "
                           f"named 'x'\", ROCm 7.2 included; CUDA 9 and later hide them too, so this sits in a branch "
                           f"for CUDA before 9, which a HIP build takes since it defines no CUDA_VERSION); use "
                           f"`{read}(v)` / `{write}(u)` or a `{base}_raw`",
                   group=f"bits:{bf16}")

    def _atomic(self, ctx, call):
        args = call_args(call)
        if not args:
            return
        ty = _pointee_type(ctx, ctx.function_scope(call), args[0])
        if ty is None or not re.match(table()["half_atomics"]["types"], ty):
            return
        base = re.sub(r"^(?:const\s+|volatile\s+)*", "", ty)
        if _own_overload(ctx, base):
            return  # the project declares its own atomicAdd for the type where AMD compiles it
        hip = base.replace("__nv_", "__hip_").replace("nv_bfloat", "__hip_bfloat")
        if not hip.startswith("__"):
            hip = "__" + hip  # half2 -> __half2
        since = "ROCm 6.3 already" if hip.endswith("2") else "ROCm 7.2; ROCm 6.3 had it only for the pair types"
        ctx.report(call, f"`atomicAdd` on `{base}`: HIP declares no atomicAdd for 16-bit float types (a compile "
                         f"error, ROCm 7.2 included); use `unsafeAtomicAdd` (declared for `{hip}` in {since}; "
                         "hardware float atomics, not for fine-grained host memory) or a compare-and-swap loop",
                   group=f"atomicAdd:{base}")

    @staticmethod
    def _bf16_args(ctx, call) -> bool:
        scope = ctx.function_scope(call)
        for arg in call_args(call):
            while arg.type in ("subscript_expression", "pointer_expression", "parenthesized_expression"):
                inner = arg.child_by_field_name("argument") or (arg.named_children[0] if arg.named_children else None)
                if inner is None:
                    break
                arg = inner  # `values[k]`, `*p`: the variable's type says what the element is
            if arg.type == "identifier":
                ty = declared_type(ctx, scope, ctx.text(arg)) or ""
                if "auto" in ty.split() or ty.startswith("auto"):
                    # `auto v = __nv_bfloat162(...)`, `auto p = reinterpret_cast<__nv_bfloat162*>(...)`,
                    # `auto h = __float22bfloat162_rn(...)`: the outermost cast or call says the type (an
                    # argument's type does not: `__float2half2_rn(__bfloat162float(x))` is a half2).
                    ty += " " + _outer_type(initializer_text(ctx, scope, ctx.text(arg)))
                if "bfloat16" in ty or "bfloat16" in _alias_target(ctx, ty):
                    return True
        return False


def _alias_target(ctx, type_text: str) -> str:
    """What a project alias names (`using bf16_2 = __hip_bfloat162;`, `typedef __nv_bfloat162 bf16x2;`), in
    the file or a project header it includes; "" where the type is no alias found there."""
    words = re.findall(r"[A-Za-z_]\w*", type_text)
    name = next((w for w in reversed(words) if w not in ("const", "volatile", "struct", "class")), None)
    if name is None:
        return ""
    from hiplint.headers import project_headers

    e = re.escape(name.encode())
    # ... or a project macro that declares it per vendor (ark's `ARCH_ALIAS_TYPE(bf16x2, __nv_bfloat162,
    # __hip_bfloat162);`): the types after the name
    pattern = re.compile(rb"\busing\s+" + e + rb"\s*=\s*([^;]+);|\btypedef\s+([^;]+?)\s+" + e + rb"\s*;|"
                         rb"\b[A-Z][A-Z0-9_]*\s*\(\s*" + e + rb"\s*,([^;()]+)\)\s*;")
    for data in [ctx.source.data] + [d for _, d in project_headers(ctx)]:
        m = pattern.search(data)
        if m:
            return (m.group(1) or m.group(2) or m.group(3)).decode("utf-8", "replace")
    return ""


def _own_overload(ctx, type_name: str) -> bool:
    """Does the file, or a project header it includes, define `atomicAdd(<type>* ...)` outside branches
    the AMD build skips (AutoGPTQ's `compat.cuh`: `#if ... || defined(USE_ROCM)` /
    `__device__ void atomicAdd(half2* address, half2 val)`)?"""
    from hiplint.headers import project_headers
    from hiplint.preproc import HIP, HIP_MACROS, _Eval, excluded_when

    bare = type_name.removeprefix("__")
    pattern = re.compile(rb"\b(?:__device__|inline|__forceinline__|void|static)\b[^;{}()=]*\batomicAdd\s*\(\s*"
                         rb"(?:const\s+)?(?:__)?" + re.escape(bare.encode()) + rb"\s*\*")
    texts = [(ctx.fs_path, ctx.source.data)] + project_headers(ctx)
    for path, data in texts:
        for m in pattern.finditer(data):
            ev = _Eval(data, HIP_MACROS | ctx.build_facts.macros())
            if not excluded_when(m.start(), data, lambda name: ev.defined(name, HIP)):
                return True
    return False
