from hiplint import CudaRule, Impact, Severity
from hiplint.cparse import iter_nodes
from hiplint.preproc import is_hip_macro
from hiplint.renames import load_table


class CudaHeaderGuardTest(CudaRule):
    """`#ifdef` on the include guard of a CUDA header: the code inside vanishes on HIP.

    ## What it does
    Finds `#ifdef X`, `#ifndef X`, `#if defined(X)` and `#elif defined(X)` where `X` is the include
    guard of a CUDA header (`__CUDA_RUNTIME_H__`, `__DRIVER_TYPES_H__`, `CUBLAS_API_H_`, `_CUFFT_H_`,
    `CURAND_H_`, `CUSOLVER_COMMON_H_`; the table's `[header_guards]`). Helper headers use the trick to
    define error-checking helpers only when the matching CUDA header was included first. A condition
    that also tests a HIP macro (`|| defined(__HIP_PLATFORM_AMD__)`) is not reported.

    ## Why it breaks on AMD
    A HIP build includes `hip/hip_runtime.h`, `hipblas/hipblas.h`, ... whose guards have other names,
    so the test is false and everything inside disappears without a word: the port then fails with
    "use of undeclared identifier" far away (for example `checkCudaErrors`), or, in an `#ifndef`,
    compiles a fallback nobody meant for AMD. Applies to every ROCm version.

    ## Example
    ```cuda
    #ifdef __CUDA_RUNTIME_H__
    inline void check(cudaError_t e) { if (e != cudaSuccess) abort(); }
    #endif
    ```

    ## Use instead
    ```cuda
    #if defined(__CUDA_RUNTIME_H__) || defined(__HIP_PLATFORM_AMD__)
    inline void check(cudaError_t e) { if (e != cudaSuccess) abort(); }
    #endif
    ```
    Or include the header the code needs and drop the test.

    ## References
    - HIP porting guide, identifying HIP target platform (`__HIP_PLATFORM_AMD__`): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    - The table: `rules/rename/*.toml`, `[header_guards]`
    """

    code = "API004"
    name = "cuda-header-guard-test"
    summary = "tests a CUDA header's include guard; false on HIP, so the code inside vanishes"
    severity = Severity.WARNING
    impact = Impact.COMPILE
    in_macros = False
    checklist = ("Replace the include-guard test with `__HIP_PLATFORM_AMD__` or a project macro, "
                 "or include the header the code needs and drop the test.")
    query = """
    [(preproc_ifdef name: (identifier) @guard)
     (preproc_elifdef name: (identifier) @guard)
     (preproc_defined (identifier) @guard)]
    """

    def check(self, ctx, captures):
        guards = load_table().header_guards
        for node in captures.get("guard", ()):
            name = ctx.text(node)
            header = guards.get(name)
            if header is not None and not self._hip_also_tested(ctx, node):
                ctx.report(node, f"`{name}` is the include guard of CUDA's <{header}>: never defined in a HIP "
                                 f"build, so this branch is dropped on AMD; test __HIP_PLATFORM_AMD__ too")

    @staticmethod
    def _hip_also_tested(ctx, node) -> bool:
        """`#if defined(__CUDA_RUNTIME_H__) || defined(__HIP_PLATFORM_AMD__)` already covers AMD."""
        n = node.parent
        while n is not None and n.type not in ("preproc_if", "preproc_elif", "preproc_ifdef", "preproc_elifdef"):
            n = n.parent
        cond = n.child_by_field_name("condition") if n is not None else None
        if cond is None:
            return False
        return any(is_hip_macro(ctx.text(i), ctx.hip_macros) for i in iter_nodes(cond, {"identifier"}))
