from hiplint.lazy import lazy_re

from hiplint import CudaRule, Fix, Impact, Severity
from hiplint.cparse import iter_nodes

# Symbol APIs and the index of their symbol argument.
SYMBOL_ARG = {"MemcpyToSymbol": 0, "MemcpyToSymbolAsync": 0, "MemcpyFromSymbol": 1, "MemcpyFromSymbolAsync": 1,
              "GetSymbolAddress": 1, "GetSymbolSize": 1}
WRAPPER = "HIP_SYMBOL"


def _split(fn):
    for prefix in ("cuda", "hip"):
        if fn.startswith(prefix) and fn[len(prefix):] in SYMBOL_ARG:
            return prefix, fn[len(prefix):]
    return None, None


# The file builds for HIP's NVIDIA platform too: it tests the platform macro, or a project macro
# named for it (`X_HIP_PLATFORM_NVIDIA`).
_NVIDIA_PLATFORM = lazy_re(rb"\b\w*HIP_PLATFORM_(?:NVIDIA|NVCC)\w*")


def _builds_for_hip_nvidia(ctx) -> bool:
    found = ctx.cache.get("mem008_hip_nvidia")
    if found is None:
        found = ctx.cache["mem008_hip_nvidia"] = _NVIDIA_PLATFORM.search(ctx.source.data) is not None
    return found


def _device_symbols(ctx):
    return _declared_symbols(ctx)[0]


def _array_symbols(ctx):
    return _declared_symbols(ctx)[1]


def _declared_symbols(ctx):
    """(every __constant__/__device__/__managed__ variable of the file, those declared as arrays)."""
    cached = ctx.cache.get("mem008_symbols")
    if cached is None:
        cached = (set(), set())
        unit = ctx.units[0]
        for decl in iter_nodes(unit.root, {"declaration"}):
            words = {unit.text(c) for c in decl.children if c.type in ("type_qualifier", "storage_class_specifier", "__device__")}
            if words & {"__constant__", "__device__", "__managed__"}:
                for d in decl.children_by_field_name("declarator"):
                    ident = d
                    array = False
                    while ident is not None and ident.type != "identifier":
                        array = array or ident.type == "array_declarator"
                        ident = ident.child_by_field_name("declarator")
                    if ident is not None:
                        cached[0].add(unit.text(ident))
                        if array:
                            cached[1].add(unit.text(ident))
        ctx.cache["mem008_symbols"] = cached
    return cached


class MemcpySymbolForms(CudaRule):
    """Symbol copies: string symbol names (removed), and HIP symbol calls without `HIP_SYMBOL`.

    ## What it does
    Finds `cudaMemcpyToSymbol`, `cudaMemcpyFromSymbol` (and `Async`), `cudaGetSymbolAddress` and
    `cudaGetSymbolSize` whose symbol is a string literal (`"coeffs"`), and the `hip*` versions whose
    symbol is a bare name instead of `HIP_SYMBOL(name)`.

    ## Why it breaks on AMD
    Passing the symbol's name as a string was removed in CUDA 5.0 and HIP never supported it: the
    call fails to compile or returns an invalid-symbol error. In hand-written HIP, `hipMemcpyToSymbol(sym, ...)`
    works on AMD (where `HIP_SYMBOL(X)` is just `X`) but not when the same HIP source is built for
    the NVIDIA platform, where `hipMemcpyToSymbol` takes `const void*` and `HIP_SYMBOL(X)` is `&X`;
    hipify inserts it for that reason. That bare-symbol case is reported only in a file that builds
    for HIP's NVIDIA platform too (it tests `__HIP_PLATFORM_NVIDIA__`, `__HIP_PLATFORM_NVCC__` or a
    project macro named for them), or everywhere with the rule option `hip-on-nvidia = true`
    (`[tool.hiplint.rule-options.MEM008]`): on AMD, ROCm's template overloads take the symbol itself,
    so an AMD-only HIP backend is right as written. An array symbol declared in the file is not reported: its name
    decays to that same address (`hipMemcpyToSymbol(c_weights, ...)` with `__constant__ float
    c_weights[64]`). Every ROCm version.

    ## Example
    ```cuda
    __constant__ float coeffs[16];
    void upload(const float* h) { cudaMemcpyToSymbol("coeffs", h, sizeof(coeffs)); }
    ```

    ## Use instead
    ```cuda
    __constant__ float coeffs[16];
    void upload(const float* h) { cudaMemcpyToSymbol(coeffs, h, sizeof(coeffs)); }
    ```
    In HIP sources: `hipMemcpyToSymbol(HIP_SYMBOL(coeffs), h, sizeof(coeffs))`.

    ## Fix
    A string naming a `__constant__` / `__device__` variable declared in the same file becomes that
    variable (`"coeffs"` -> `coeffs`): the only form CUDA 5+ and HIP accept, identical in meaning. In
    `hip*` calls a bare symbol is wrapped as `HIP_SYMBOL(sym)`, which expands to `sym` on AMD and to
    the right form on NVIDIA. Both safe. Strings naming something not declared in the file are
    reported without a fix.

    ## References
    - HIP porting guide, `hipMemcpyToSymbol` and `HIP_SYMBOL`: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    - HIP headers, `#define HIP_SYMBOL(X) X` (amd_hip_runtime.h): https://github.com/ROCm/clr
    - CUDA 5.0 release notes (string symbol names removed from the runtime API): https://docs.nvidia.com/cuda/archive/5.0/
    """

    code = "MEM008"
    name = "memcpy-to-symbol-forms"
    summary = "symbol copy with a string name, or a HIP symbol call without HIP_SYMBOL"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    fix_availability = "sometimes"
    checklist = "Pass symbols, not strings, to the symbol APIs; wrap them in HIP_SYMBOL() in HIP sources."
    query = """
    ((call_expression function: (identifier) @fn arguments: (argument_list) @args) @call
     (#match? @fn "^(cuda|hip)(MemcpyToSymbol|MemcpyFromSymbol|GetSymbol)"))
    """

    def check(self, ctx, captures):
        fn = ctx.text(captures["fn"][0])
        prefix, api = _split(fn)
        if prefix is None:
            return
        args = [a for a in captures["args"][0].named_children if a.type != "comment"]
        i = SYMBOL_ARG[api]
        if len(args) <= i:
            return
        sym = args[i]
        if sym.type in ("string_literal", "concatenated_string"):
            name = "".join(ctx.text(c) for c in sym.named_children if c.type == "string_content")
            fix = None
            if name in _device_symbols(ctx):
                replacement = f"{WRAPPER}({name})" if prefix == "hip" else name
                fix = Fix.safe(f"pass the symbol {replacement}", ctx.replace(sym, replacement))
            ctx.report(sym, f"`{fn}` with the symbol name as a string ({ctx.text(sym)}): removed in CUDA 5 and not "
                            f"supported by HIP; pass the symbol itself", fix=fix)
        elif prefix == "hip" and sym.type == "identifier":
            name = ctx.text(sym)
            if name in _array_symbols(ctx):
                return  # an array decays to the symbol's address: the NVIDIA platform's `const void*` form
            if not (ctx.options().get("hip-on-nvidia", False) or _builds_for_hip_nvidia(ctx)):
                return  # on AMD the bare symbol is right (template overload, HIP_SYMBOL(X) is X)
            ctx.report(sym, f"`{fn}({name}, ...)` without `{WRAPPER}({name})`: needed when this HIP code builds for "
                            f"the NVIDIA platform", severity=Severity.WARNING,
                       fix=Fix.safe(f"wrap in {WRAPPER}()", ctx.replace(sym, f"{WRAPPER}({name})")))
