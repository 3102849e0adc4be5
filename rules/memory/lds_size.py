import re

from hiplint import CudaRule, Impact, Severity
from hiplint.cparse import iter_nodes

from ._values import call_args, call_name, const_value, exceeded_targets, kib, limits_text, type_size

# Attribute setters and the position of (attribute, value) in their arguments.
SET_ATTRIBUTE = {"cudaFuncSetAttribute": (1, 2), "hipFuncSetAttribute": (1, 2), "cuFuncSetAttribute": (1, 2)}
MAX_DYNAMIC_ATTRIBUTES = frozenset({"cudaFuncAttributeMaxDynamicSharedMemorySize",
                                    "hipFuncAttributeMaxDynamicSharedMemorySize",
                                    "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES"})
# Launch APIs and the index of their dynamic shared memory argument.
LAUNCH_SMEM_ARG = {"hipLaunchKernelGGL": 3, "cudaLaunchKernel": 4, "hipLaunchKernel": 4,
                   "cudaLaunchCooperativeKernel": 4, "hipLaunchCooperativeKernel": 4, "hipExtLaunchKernelGGL": 3}


class LdsAbove64K(CudaRule):
    """Shared memory (LDS) sizes above what the target GPUs give one workgroup: 64 KiB on most AMD GPUs.

    ## What it does
    Finds, for each configured target (`targets`), sizes hiplint can compute that exceed the LDS a
    workgroup may use there:
    - `cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, v)` (and the `hip`
      spelling) with a constant `v` above the limit;
    - kernel launches `k<<<g, b, smem>>>` (and `hipLaunchKernelGGL`, `cudaLaunchKernel`) with a
      constant dynamic size above the limit;
    - static `__shared__` arrays in one kernel whose constant sizes add up to more than the limit;
    the dynamic sizes above count the kernel's static `__shared__` too when the kernel is defined in
    the same file.
    Sizes may be literals, `#define`s, `const`/`constexpr` integers, `sizeof` of basic types and
    locals initialised once from those.

    ## Why it breaks on AMD
    NVIDIA GPUs let a block opt in to more shared memory (99 KiB on Ampere consumer parts, 163 KiB on
    A100, 227 KiB on Hopper), and CUDA code tuned for them asks for it. AMD's LDS per workgroup is
    64 KiB on gfx90a (MI200), gfx942 (MI300) and RDNA3 (gfx1100), and 160 KiB on gfx950 (MI350).
    `hipFuncSetAttribute` returns `hipErrorInvalidValue` when the value exceeds the available LDS
    minus the kernel's static use, a launch asking for more fails, and static `__shared__` above the
    limit does not compile ("local memory limit exceeded"). Every ROCm version.

    ## Example
    ```cuda
    __global__ void gemm(const float* a, float* c);
    void run(const float* a, float* c) {
        cudaFuncSetAttribute(gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, 98304);
        gemm<<<1024, 256, 98304>>>(a, c);
    }
    ```

    ## Use instead
    ```cuda
    __global__ void gemm(const float* a, float* c);
    void run(const float* a, float* c, int max_smem) {
        int smem = max_smem < 98304 ? max_smem : 98304;   // from hipDeviceAttributeMaxSharedMemoryPerBlock
        gemm<<<1024, 256, smem>>>(a, c);
    }
    ```
    Re-tile for 64 KiB (smaller tiles or fewer pipeline stages), and choose the size at run time
    from `cudaDevAttrMaxSharedMemoryPerBlockOptin` / `hipDeviceAttributeMaxSharedMemoryPerBlock`.

    ## References
    - AMD GPU specifications (LDS per CU / workgroup, per architecture): https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html
    - HIP runtime, `hipFuncSetAttribute` (value checked against available LDS): ROCm/clr hipamd/src/hip_module.cpp, https://github.com/ROCm/clr
    - CUDA programming guide, shared memory opt-in per architecture: https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#features-and-technical-specifications
    """

    code = "MEM001"
    name = "lds-over-64k"
    summary = "shared memory request above the LDS available to a workgroup on an AMD target"
    severity = Severity.ERROR
    impact = Impact.RUNTIME
    checklist = "Re-tile kernels that use more than 64 KiB of shared memory (160 KiB on gfx950) and pick the size at run time from hipDeviceAttributeMaxSharedMemoryPerBlock."
    # Only kernels with static __shared__ arrays, launches and the calls that take a dynamic size.
    query = f"""
    ((function_definition body: (compound_statement) @body) @fn (#match? @body "__shared__"))
    ((call_expression (kernel_call_syntax) @config) @call (#match? @config "^<<<"))
    ((call_expression function: (_) @name) @call (#match? @name "{'|'.join(sorted({*SET_ATTRIBUTE, *LAUNCH_SMEM_ARG}))}"))
    """

    def check(self, ctx, captures):
        if "fn" in captures:
            self._static(ctx, captures["fn"][0])
            return
        call = captures["call"][0]
        scope = ctx.function_scope(call)
        config = next((c for c in call.children if c.type == "kernel_call_syntax"), None)
        name = call_name(ctx, call)
        if config is not None:
            exprs = [c for c in config.named_children if c.type != "comment"]
            if len(exprs) >= 3:
                self._dynamic(ctx, exprs[2], scope, f"launch of `{name}`", kernel=name)
            return
        args = call_args(call)
        if name in SET_ATTRIBUTE:
            attr_i, value_i = SET_ATTRIBUTE[name]
            if len(args) > value_i and ctx.text(args[attr_i]).split("::")[-1] in MAX_DYNAMIC_ATTRIBUTES:
                self._dynamic(ctx, args[value_i], scope, f"`{name}(..., MaxDynamicSharedMemorySize, ...)`",
                              note="the runtime rejects it with an invalid-value error", kernel=_kernel_name(ctx, args[0]))
        elif name in LAUNCH_SMEM_ARG:
            i = LAUNCH_SMEM_ARG[name]
            if len(args) > i:
                self._dynamic(ctx, args[i], scope, f"`{name}`", kernel=_kernel_name(ctx, args[0]))

    def _dynamic(self, ctx, node, scope, what, note="the launch fails", kernel=None):
        value = const_value(ctx, node, scope)
        if value is None:
            return
        # HIP checks the dynamic size against the LDS left after the kernel's static __shared__ use.
        static = _static_bytes_by_kernel(self, ctx).get(kernel, 0) if kernel else 0
        if value <= 0:
            return
        # Targets where the static part alone is too big are reported at the kernel's declarations.
        over = [a for a in exceeded_targets(ctx.settings, value + static) if a not in exceeded_targets(ctx.settings, static)]
        if over:
            plus = f" plus {static} bytes of static __shared__ in `{kernel}`" if static else ""
            ctx.report(node, f"{what} asks for {value} bytes ({kib(value)}) of dynamic shared memory{plus}: above the "
                             f"LDS per workgroup ({limits_text(over)}); {note}")

    def _static(self, ctx, fn):
        total = 0
        for decl, size in self._static_decls(ctx, fn):
            total += size
            over = exceeded_targets(ctx.settings, total)
            if over:
                ctx.report(decl, f"static __shared__ memory in this kernel reaches {total} bytes ({kib(total)}): above "
                                 f"the LDS per workgroup ({limits_text(over)}); the kernel does not compile for these targets")
                return

    def _static_decls(self, ctx, fn):
        """(declaration, bytes) for each static __shared__ declaration of `fn` whose size is known.
        Remembered per function: the kernel's check and the launches' checks both ask."""
        memo = ctx.cache.setdefault("mem001_decls", {})
        key = (id(ctx.unit), fn.start_byte, fn.end_byte)
        if key not in memo:
            memo[key] = list(self._find_static_decls(ctx, fn))
        return memo[key]

    def _find_static_decls(self, ctx, fn):
        body = fn.child_by_field_name("body")
        data = ctx.unit.data
        if body is None or b"__shared__" not in data[body.start_byte:body.end_byte]:
            return  # `Packed() = default;` is a function definition without a body
        for decl in iter_nodes(body, {"declaration"}):
            if b"__shared__" not in data[decl.start_byte:decl.end_byte]:
                continue
            words = [ctx.text(c) for c in decl.children if c.type in ("type_qualifier", "storage_class_specifier")]
            if "__shared__" not in words or "extern" in words:
                continue
            size = self._decl_bytes(ctx, decl, fn)
            if size is not None:
                yield decl, size

    def _decl_bytes(self, ctx, decl, scope):
        ty = decl.child_by_field_name("type")
        if ty is None:
            return None
        elem = type_size(ctx.text(ty))
        if elem is None:
            return None
        total = 0
        for d in decl.children_by_field_name("declarator"):
            if d.type == "init_declarator":
                d = d.child_by_field_name("declarator")
            count = 1
            while d is not None and d.type == "array_declarator":
                size = d.child_by_field_name("size")
                if size is None:
                    return None
                n = const_value(ctx, size, scope)
                if n is None:
                    return None
                count *= n
                d = d.child_by_field_name("declarator")
            total += count * elem
        return total


def _kernel_name(ctx, node) -> str | None:
    """`k`, `k<T>`, `(const void*)k`, `reinterpret_cast<void*>(k)`: the kernel a launch names."""
    text = ctx.text(node)
    names = re.findall(r"[A-Za-z_]\w*", text.split("<")[0] if "cast" not in text else text.split("(")[-1])
    return names[-1] if names else None


def _static_bytes_by_kernel(rule, ctx) -> dict[str, int]:
    cached = ctx.cache.get("mem001_static")
    if cached is None:
        cached = {}
        unit = ctx.units[0]
        saved, ctx.unit = ctx.unit, unit
        for fn in iter_nodes(unit.root, {"function_definition"}):
            d = fn.child_by_field_name("declarator")
            while d is not None and d.type not in ("identifier", "qualified_identifier"):
                d = d.child_by_field_name("declarator")
            if d is not None:
                cached[ctx.text(d)] = sum(size for _, size in rule._static_decls(ctx, fn))
        ctx.unit = saved
        ctx.cache["mem001_static"] = cached
    return cached
