from hiplint import CudaRule, Fix, Impact, Severity
from .._cuda import NamesRuleMixin

_NAMES = {
    "__trap": "`__trap()` does not exist in HIP; `__builtin_trap()` / `abort()` compile, but on AMD they end "
              "the whole application, not only the kernel launch",
    "__brkpt": "`__brkpt()` does not exist in HIP; remove it or use a debugger breakpoint",
    "__prof_trigger": "`__prof_trigger()` is not supported by HIP; remove it or use rocprof counters",
}


class TrapBrkptProfTrigger(NamesRuleMixin, CudaRule):
    """`__trap()`, `__brkpt()`, `__prof_trigger()` and `asm("trap;")`.

    ## What it does
    Finds calls of `__trap()`, `__brkpt()` and `__prof_trigger(n)`, and inline PTX `trap;`,
    `brkpt;` and `pmevent`.

    ## Why it breaks on AMD
    HIP declares none of these functions and PTX does not assemble, so the code fails to compile
    on every AMD target. The HIP replacement for `__trap()` is `abort()`, implemented with
    `__builtin_trap()`, but its effect differs: HIP's documentation says it terminates the entire
    application, while in CUDA `asm("trap")` only terminates the dispatch and the application
    continues to run (with a sticky error). Error handling that relies on the process surviving
    (retry, report and continue) behaves differently. HIP also documents `__prof_trigger()` as not
    supported.

    ## Example
    ```cuda
    __device__ void check_index(int i, int n) {
        if (i >= n) __trap();
    }
    ```

    ## Use instead
    ```cuda
    __device__ void check_index(int i, int n) {
    #if defined(__HIP_PLATFORM_AMD__)
        if (i >= n) abort();  // ends the process on AMD
    #else
        if (i >= n) __trap();
    #endif
    }
    ```

    ## Fix
    Display only: `__builtin_trap()` compiles for both vendors, but the process ends on AMD where
    CUDA only ends the launch, so hiplint never applies it. Decide per call site, behind a platform
    check.

    ## References
    - HIP kernel language, "Assert" (`abort()` vs `asm("trap")`) and "Profiler Counter Function": https://rocm.docs.amd.com/projects/HIP/en/latest/reference/kernel_language.html
    - HIPIFY, CUDA device API support table (`__trap`, `__brkpt`, `__prof_trigger` unsupported): https://rocm.docs.amd.com/projects/HIPIFY/en/latest/reference/tables/CUDA_Device_API_supported_by_HIP.html
    """

    code = "NV007"
    nvidia_feature = True
    name = "trap-brkpt-prof-trigger"
    summary = "`__trap`/`__brkpt`/`__prof_trigger` do not exist in HIP"
    severity = Severity.WARNING
    impact = Impact.COMPILE
    fix_availability = "none"  # only a display-only suggestion: never applied
    checklist = "Replace `__trap()` with `abort()` behind a platform check (it ends the whole process on AMD); remove `__brkpt`/`__prof_trigger`."
    NAMES = _NAMES
    NAME_NODES = ("identifier",)
    ASM_CATEGORY = "trap"
    ASM_MESSAGE = "PTX `trap`/`brkpt` does not assemble for AMD; `abort()` compiles but ends the whole application on AMD"

    def _check_name(self, ctx, node):
        before = len(ctx.findings)
        super()._check_name(ctx, node)
        if len(ctx.findings) > before and ctx.text(node) == "__trap":
            call = node.parent
            if call is not None and call.type == "call_expression":
                ctx.findings[-1].fix = Fix.display(
                    "use `__builtin_trap()` (ends the whole process on AMD; review)",
                    ctx.replace(call.child_by_field_name("function"), "__builtin_trap"))
