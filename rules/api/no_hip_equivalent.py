from hiplint import CudaRule, Impact, Severity
from hiplint.renames import load_table
from hiplint.cparse import defined_names, iter_nodes
from hiplint.lazy import lazy_re

from ._common import in_preproc_condition


class ApiWithoutHipEquivalent(CudaRule):
    """A CUDA API name that has no HIP equivalent.

    ## What it does
    Finds uses of CUDA runtime, driver, device and library names that the project's rename table
    (`rules/rename/*.toml`, section `[unsupported]`) lists as having no HIP counterpart: for example
    `cudaDeviceFlushGPUDirectRDMAWrites`, `cusolverDnDHgesv` (mixed-precision iterative refinement),
    the cuBLASXt multi-GPU API, the legacy cuBLAS API's own functions (`cublasInit`, `cublasAlloc`,
    `cublasGetError`: hipBLAS has only the handle-based API), the cuBLAS functions HIPIFY's table maps to
    nothing and ROCm 7.2's hipBLAS does not declare (`cublasSgemmEx`, `cublasCgemmEx`, the 3M complex
    GEMMs, grouped batched GEMM, mixed-precision batched GEMV, `matinvBatched`, most BLAS-1 `*Ex`,
    the 64-bit-size SetMatrix/GetVector forms), the cuSPARSE functions of the same kind (the legacy
    `csrsv_analysis`/`hybsv` families CUDA 11 removed, `cusparseSpMMOp`, logging, conversions and
    preconditioners hipSPARSE 7.2 lacks), cuFFT's plan properties (`cufftSetPlanPropertyInt64`),
    cuBLASLt's in-place descriptor setup
    (`cublasLtMatmulDescInit`, `cublasLtMatrixLayoutInit`: hipBLASLt 7.2 declares the `*Opaque_t`
    structs but only `*Create` functions), NVTX domains, `__nv_fp8_e4m3`, the SIMD video intrinsics (`__vadd4`,
    `__vmaxs4`, `__vabsdiffu4`, every `__v*2`/`__v*4` of CUDA's `device_functions.h`), the Hopper DPX
    intrinsics (`__viaddmax_s32`, `__vimax3_u32`, ...) and the address-space predicates (`__isGlobal`,
    `__isShared`, ...), none of which ROCm 7.2's HIP headers declare (checked by compiling them with
    clang 22 for gfx942). Math functions that CUDA declares device-only are not reported on the host:
    `rsqrtf` in host code compiles on ROCm 7.2 (clang's HIP math header declares it for both sides).
    One finding per name and file: its other uses there are related locations (24 calls of
    `nvtxRangePushEx` in one file are one decision). Only exact names are reported: a
    member `obj.cudaInitDevice`, a name in a comment or string, a name in an `#if` condition (a version
    test), code in an `#if` branch that only compiles for NVIDIA, and a name the file defines or
    declares itself (a project's stub or AMD shim: `cusolverStatus_t cusolverDnDHgesv(...) { return
    NOT_SUPPORTED; }`, and the file's calls to it; an enumerator of the file's own enum: a CPU stand-in's
    `CUFFT_LICENSE_ERROR = 15`) are not, nor one the file renames to a symbol of its
    own (`#define cudaInitDevice cudaInitDevice_oro`: Orochi's dynamically loaded wrappers; not CUDA's
    own versioned spellings such as `_v2` or `_ptds`). It is the fallback for
    names no specialist rule knows: when a RND, SLV, LIB, MEM or other rule reports the same name in
    the file, this rule stays quiet (unless that rule is not selected); for a family a specialist
    reports once per file (CUDA fp8: MEM009, on gfx940-gfx942 targets), it stays quiet on every
    name of the family in that file.

    ## Why it breaks on AMD
    The call does not compile against HIP (every ROCm version so far): `hiplint migrate` renames what
    has a HIP equivalent and leaves these names as they are, so each one is a compile error in the
    port until it is rewritten by hand or moved into an NVIDIA-only branch. The message says what to
    use instead.

    ## Example
    ```cuda
    void solve(cusolverDnHandle_t h) {
        cusolverDnDHgesv(h, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    }
    ```

    ## Use instead
    ```cuda
    void solve(hipsolverHandle_t h, int n, double* A, int* ipiv, double* B, double* work, int lwork, int* info) {
        hipsolverDnDgetrf(h, n, n, A, n, work, lwork, ipiv, info);
    }
    ```

    ## References
    - HIP runtime API reference: https://rocm.docs.amd.com/projects/HIP/en/latest/doxygen/html/modules.html
    - hipSOLVER, hipBLAS, hipRAND, hipFFT, hipSPARSE API references: https://rocm.docs.amd.com/en/latest/reference/api-libraries.html
    - CUDA Math API, SIMD intrinsics: https://docs.nvidia.com/cuda/cuda-math-api/cuda_math_api/group__CUDA__MATH__INTRINSIC__SIMD.html
    - The table and its sources: `rules/rename/*.toml` (`[family] source`)
    """

    code = "API001"
    name = "api-without-hip-equivalent"
    summary = "CUDA API without a HIP equivalent"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    checklist = "Rewrite each use by hand (the message names the replacement), or keep it in an NVIDIA-only `#if` branch."
    fallback = True  # the RND, SLV, LIB, MEM... rules say more about the names they know

    @property
    def query(self) -> str:
        # The table's names as one #any-of? predicate: matching every identifier and filtering in
        # Python made this rule the slowest of all.
        names = " ".join(f'"{n}"' for n in sorted(load_table().unsupported))
        return f"([(identifier) (type_identifier)] @name (#any-of? @name {names}))" if names else ""

    def check(self, ctx, captures):
        table = load_table()
        nodes = captures.get("name", ())
        # The project's own shim or stub of an API (CuPy defines `cusolverDnDHgesv` for ROCm): the
        # definition and the file's uses of it are the project's, not calls into CUDA.
        defined = defined_names(ctx) | _renamed_to_project(ctx) | _own_enumerators(ctx)
        for node in nodes:
            name = ctx.text(node)
            if name in defined:
                continue
            advice = table.unsupported.get(name)
            if advice is None or in_preproc_condition(node):
                continue  # `#if CUDART_VERSION >= 11000` is a version test, not a use
            family = table.family(name)
            where = f" ({family.title})" if family else ""
            ctx.report(node, f"`{name}`{where} has no HIP equivalent: {advice}", group=name)


def _own_enumerators(ctx) -> frozenset:
    """Enumerators the file declares itself (FFTX's cuFFT stand-in: `typedef enum cufftResult_t {
    CUFFT_SUCCESS = 0, ... CUFFT_LICENSE_ERROR = 15 } cufftResult;` in its own namespace): the project's
    names, not the library's."""
    found = ctx.cache.get("own_enumerators")
    if found is None:
        found = set()
        for unit in ctx.units:
            for node in iter_nodes(unit.root, {"enumerator"}):
                name = node.child_by_field_name("name")
                if name is not None:
                    found.add(unit.text(name))
        found = ctx.cache["own_enumerators"] = frozenset(found)
    return found


_RENAME_DEFINE = lazy_re(rb"(?m)^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([A-Za-z_]\w*)[ \t]*(?://[^\n]*)?$")


# CUDA's own versioned and per-thread-stream spellings (`cuMemAlloc_v2`, `cudaMemcpy_ptds`): still CUDA's API.
_CUDA_VARIANT = lazy_re(rb"_v\d+|_ptds|_ptsz")


def _renamed_to_project(ctx) -> frozenset:
    """`#define cudaInitDevice cudaInitDevice_oro`: names the file maps onto a project symbol of its own
    (Orochi's dynamic-loading wrappers), not onto a HIP or ROCm one. Its uses call the project's symbol."""
    found = ctx.cache.get("renamed_to_project")
    if found is None:
        found = ctx.cache["renamed_to_project"] = frozenset(
            m.group(1).decode() for m in _RENAME_DEFINE.finditer(ctx.source.data)
            if m.group(2).startswith(m.group(1)) and m.group(2) != m.group(1)
            and not m.group(2).lower().startswith((b"hip", b"roc"))
            and not _CUDA_VARIANT.fullmatch(m.group(2)[len(m.group(1)):]))
    return found


class HeaderWithoutHipEquivalent(CudaRule):
    """An `#include` of a CUDA header that has no HIP equivalent.

    ## What it does
    Finds `#include` lines naming a header that the rename table lists under `[unsupported_headers]`:
    WMMA's `<mma.h>`, libcu++ (`<cuda/atomic>`, `<cuda/barrier>`, `<cuda/pipeline>`), `<cuda_fp8.h>`,
    `<cooperative_groups/reduce.h>`, `<cublasXt.h>`. Includes inside NVIDIA-only `#if` branches are
    not reported.

    ## Why it breaks on AMD
    HIP ships no header of that name (every ROCm version so far), so the port stops at "file not found";
    the APIs behind it need a different library (rocWMMA for WMMA) or hand-written code. The message
    says which.

    ## Example
    ```cuda
    #include <mma.h>
    ```

    ## Use instead
    ```cuda
    #include <hip/hip_runtime.h>
    ```

    ## References
    - HIP C++ language extensions (no warp matrix functions): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html
    - rocWMMA: https://rocm.docs.amd.com/projects/rocWMMA/en/latest/
    - The table and its sources: `rules/rename/*.toml`
    """

    code = "API002"
    name = "header-without-hip-equivalent"
    summary = "CUDA header without a HIP equivalent"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    in_macros = False
    checklist = "Replace the header and the API behind it by hand (the message names the replacement)."
    fallback = True
    query = "(preproc_include path: [(system_lib_string) (string_literal)] @path)"

    def check(self, ctx, captures):
        table = load_table()
        for node in captures.get("path", ()):
            text = ctx.text(node)
            header = text[1:-1] if len(text) >= 2 else text
            advice = table.unsupported_headers.get(header)
            if advice is not None:
                ctx.report(node, f"<{header}> has no HIP equivalent: {advice}")
