import re

from hiplint import CudaRule, Impact, Severity

from ._values import call_args, table
from .._calls import initializer_text
from .pointer_attributes import declared_type


_OUTER_CAST = re.compile(r"^\s*(?:reinterpret_cast|static_cast|const_cast)\s*<([^>]*)>")
_OUTER_CALL = re.compile(r"^\s*([\w:]+)\s*[({]")


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
    Shuffles of `__half`/`__half2` are not reported: HIP defines `__shfl*` for them (ROCm 5.6 and
    later), and the `__shfl*_sync` forms forward to those. One finding per intrinsic and file: its
    other calls are listed with it as related locations.

    ## Why it breaks on AMD
    hipify warns about these names and leaves them; `hip_fp16.h` does not declare them (HIPIFY's
    device API table, ROCm 6.3 line, has no HIP column entry), so the port fails to compile, or, for
    `__hmax2` on `__half2`, may bind to the bf16 overload. Newer ROCm releases add fp16 functions:
    recheck the list against the `hip_fp16.h` of the oldest ROCm you support. Every target.

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

    ## References
    - HIPIFY, CUDA device API supported by HIP (fp16/bf16 rows without a HIP name): https://rocm.docs.amd.com/projects/HIPIFY/en/latest/reference/tables/CUDA_Device_API_supported_by_HIP.html
    - HIP headers `amd_hip_fp16.h` (half shuffles), `amd_hip_bf16.h` (`__hmax2` for `__hip_bfloat162`): https://github.com/ROCm/clr
    - CUDA half-precision intrinsics: https://docs.nvidia.com/cuda/cuda-math-api/cuda_math_api/group__CUDA__MATH__INTRINSIC__HALF.html
    """

    code = "MEM011"
    name = "half-intrinsic-gaps"
    summary = "fp16/bf16 intrinsic without a HIP equivalent"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    checklist = "Replace fp16/bf16 intrinsics HIP lacks (__hmax2, __hfma2_relu, __h*2_mask, ...) with float math or helper functions guarded for AMD."
    query = """
    ((call_expression function: (identifier) @fn) @call (#match? @fn "^__(h|half2|double2|hcmadd)"))
    """

    def check(self, ctx, captures):
        half = table()["half"]
        fn = ctx.text(captures["fn"][0])
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
                if "bfloat16" in ty:
                    return True
        return False
