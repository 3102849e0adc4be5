import os

from hiplint import CudaRule, Edit, Fix, Impact, Severity
from hiplint.amdbuild import root_of
from hiplint.headers import includers_define, project_defines
from hiplint.includers import library_of_header, library_users
from hiplint.cparse import iter_nodes
from hiplint.preproc import is_hip_macro
from hiplint.renames import load_table

# The include guards of the HIP headers that stand for a CUDA header, the same in HIP 5.2 and ROCm 7.2
# (hip/hip_runtime.h, hip/driver_types.h; hip_runtime.h includes driver_types.h). Testing one says what
# testing the CUDA guard said: the header was included before this point.
HIP_GUARDS = {
    "cuda_runtime.h": "HIP_INCLUDE_HIP_HIP_RUNTIME_H",
    "driver_types.h": "HIP_INCLUDE_HIP_DRIVER_TYPES_H",
}


class CudaHeaderGuardTest(CudaRule):
    """`#ifdef` on the include guard of a CUDA header: the code inside vanishes on HIP.

    ## What it does
    Finds `#ifdef X`, `#ifndef X`, `#if defined(X)` and `#elif defined(X)` where `X` is the include
    guard of a CUDA header (`__CUDA_RUNTIME_H__`, `__DRIVER_TYPES_H__`, `CUBLAS_API_H_`, `_CUFFT_H_`,
    `CURAND_H_`, `CUSOLVER_COMMON_H_`; the table's `[header_guards]`). Helper headers use the trick to
    define error-checking helpers only when the matching CUDA header was included first. A condition
    that also tests a HIP macro (`|| defined(__HIP_PLATFORM_AMD__)`) is not reported. Nor is a guard the
    project defines itself (a header that stands in for the CUDA runtime on other back ends, defining
    `__DRIVER_TYPES_H__`: in the file, a project header it includes, or, for a header, in what every
    includer the AMD build compiles includes first, angle-bracket project includes too), nor a library's
    guard (`CUBLAS_API_H_`, `_CUFFT_H_`, `CURAND_H_`, `CUSOLVER_COMMON_H_`) in a project where no other
    file names that library: the block, typically the error-string helper of a copied `helper_cuda.h`,
    is dead on NVIDIA as well.

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

    ## Fix
    Safe, for the guards of `cuda_runtime.h` and `driver_types.h`: the test also asks for the guard of
    the HIP header that replaces it (`HIP_INCLUDE_HIP_HIP_RUNTIME_H`, `HIP_INCLUDE_HIP_DRIVER_TYPES_H`,
    the same in HIP 5.2 and ROCm 7.2): `#ifdef __CUDA_RUNTIME_H__` becomes
    `#if defined(__CUDA_RUNTIME_H__) || defined(HIP_INCLUDE_HIP_HIP_RUNTIME_H)`, `#ifndef` becomes
    `#if !defined(...) && !defined(...)`, and `defined(X)` in a longer condition becomes
    `(defined(X) || defined(G))`. Both tests mean "the runtime header was included before this line",
    so the code means the same on NVIDIA (no CUDA header defines the HIP guard) and on AMD (where the
    HIP header is what the port includes). `hiplint migrate` applies it, so cuda-samples'
    `helper_cuda.h` keeps `checkCudaErrors` and `findCudaDevice`. The other guards (`CUBLAS_API_H_`,
    `CURAND_H_`, ...) have no fix.

    ## References
    - HIP porting guide, identifying HIP target platform (`__HIP_PLATFORM_AMD__`): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    - The table: `rules/rename/*.toml`, `[header_guards]`
    - HIP's include guards: `hip/hip_runtime.h` (`HIP_INCLUDE_HIP_HIP_RUNTIME_H`) and `hip/driver_types.h` (`HIP_INCLUDE_HIP_DRIVER_TYPES_H`), https://github.com/ROCm/rocm-systems/tree/develop/projects/hip/include/hip
    """

    code = "API004"
    name = "cuda-header-guard-test"
    summary = "tests a CUDA header's include guard; false on HIP, so the code inside vanishes"
    severity = Severity.WARNING
    impact = Impact.COMPILE
    fix_availability = "sometimes"
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
            if header is None or self._hip_also_tested(ctx, node):
                continue
            if project_defines(ctx, name) or includers_define(ctx, name):
                continue  # the project defines the guard itself (cupla's own driver_types emulation)
            if self._library_unused(ctx, header):
                continue  # `#ifdef CUBLAS_API_H_` in a project that uses no cuBLAS: dead on NVIDIA too
            ctx.report(node, f"`{name}` is the include guard of CUDA's <{header}>: never defined in a HIP "
                             f"build, so this branch is dropped on AMD; test __HIP_PLATFORM_AMD__ too",
                       fix=self._fix(ctx, node, name, HIP_GUARDS.get(header)))

    @staticmethod
    def _library_unused(ctx, header: str) -> bool:
        """The guard is a library's (cuBLAS, cuFFT, cuRAND, cuSPARSE, cuSOLVER) and no other file of the
        project names that library: the block (an error-string helper of a copied `helper_cuda.h`)
        serves a library the project does not use, and is dead on NVIDIA as on AMD."""
        library = library_of_header(header)
        if library is None or not ctx.fs_path:
            return False
        full = os.path.abspath(ctx.fs_path)
        return not (library_users(root_of(full), library) - {full})

    @staticmethod
    def _fix(ctx, node, name: str, hip_guard: str | None):
        """Test the HIP header's guard too (see Fix)."""
        if hip_guard is None:
            return None
        parent = node.parent
        if parent is not None and parent.type in ("preproc_ifdef", "preproc_elifdef"):
            directive = parent.children[0]
            word = ctx.text(directive)
            negated = word.endswith("ndef")
            keyword = "#elif" if word.startswith("#elif") else "#if"
            text = (f"{keyword} !defined({name}) && !defined({hip_guard})" if negated else
                    f"{keyword} defined({name}) || defined({hip_guard})")
            start, end = ctx.file_range(directive)[0], ctx.file_range(node)[1]
        elif parent is not None and parent.type == "preproc_defined":
            text = f"(defined({name}) || defined({hip_guard}))"
            start, end = ctx.file_range(parent)
        else:
            return None
        return Fix.safe(f"Test {hip_guard} too", Edit(start, end, text))

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
