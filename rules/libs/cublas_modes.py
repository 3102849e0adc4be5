import re

from hiplint import CudaRule, Impact, Severity

from ._scan import Library, first_use, is_last_unit, load_table, span

HIPBLAS_3 = (7, 0)  # hipBLAS 3.0 ships with ROCm 7.0


class CublasComputeTypesAndMathModes(CudaRule):
    """cuBLAS math modes, TF32 and GEMM compute types that change meaning or break on hipBLAS.

    ## What it does
    Reports, in both spellings (`cublas*`/`CUBLAS_*` and the `hipblas*`/`HIPBLAS_*` names hipify
    produces):
    - math modes and algorithm selectors without an AMD meaning: `CUBLAS_TENSOR_OP_MATH`,
      `CUBLAS_TF32_TENSOR_OP_MATH`, `CUBLAS_PEDANTIC_MATH`, `CUBLAS_GEMM_DEFAULT_TENSOR_OP`;
    - TF32 and reduced-precision compute types (`CUBLAS_COMPUTE_32F_FAST_TF32`, `..._FAST_16F`, `..._FAST_16BF`);
    - the compute-type argument of `cublasGemmEx`, `cublasGemmBatchedEx`, `cublasGemmStridedBatchedEx`
      (and `hipblasGemm*Ex[_v2]`) when it is a data type (`CUDA_R_32F`): hipBLAS 3.0 (ROCm 7.0)
      takes a `hipblasComputeType_t` there; and, for ROCm 6.x targets, a `*_COMPUTE_*` compute type,
      which hipBLAS 2.x accepts only with `-DHIPBLAS_V2`;
    - the first `cublasLt.h` include of a file (once): hipBLASLt renames the API, with different
      kernel coverage per architecture.

    ## Why it breaks on AMD
    rocBLAS, hipBLAS's AMD backend, has no TF32: `HIPBLAS_COMPUTE_32F_FAST_TF32` returns
    `HIPBLAS_STATUS_NOT_SUPPORTED` there, and the tensor-op math modes have no hipBLAS equivalent
    (hipify warns and leaves them), so a `cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH)` port
    either fails to compile or asks hipBLAS for a mode its header marks "not supported in rocBLAS"
    (expect `HIPBLAS_STATUS_NOT_SUPPORTED`, which a checked call turns into a stop); code that ignores
    the status runs its GEMMs in full FP32 (different speed and rounding than the NVIDIA run). The GEMM-Ex compute type moved from `hipblasDatatype_t` to `hipblasComputeType_t`:
    hipBLAS 2.x (ROCm 6.x) needs `-DHIPBLAS_V2` for the new form, and hipBLAS 3.0 (ROCm 7.0) removed
    the old one, so code compiles on one ROCm line and not on the other. All targets.

    ## Example
    ```cuda
    #include <cublas_v2.h>
    void setup(cublasHandle_t h) { cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH); }
    ```

    ## Use instead
    ```cuda
    #include <cublas_v2.h>
    void setup(cublasHandle_t h) { cublasSetMathMode(h, CUBLAS_DEFAULT_MATH); }
    ```
    Pass a `CUBLAS_COMPUTE_*` compute type to GEMM-Ex (hipify maps it to `HIPBLAS_COMPUTE_*`); on
    ROCm 6.x build with `-DHIPBLAS_V2`, or wrap the call in a `HIP_VERSION`-guarded helper. Decide
    TF32 explicitly: FP32 on AMD, or a lower precision with a documented tolerance.

    ## References
    - hipBLAS deprecations ("Removed in hipBLAS 3.0": compute type of GEMM functions is `hipblasComputeType_t`): https://rocm.docs.amd.com/projects/hipBLAS/en/latest/reference/deprecation.html
    - ROCm/hipBLAS#753 (TF32 compute type returns HIPBLAS_STATUS_NOT_SUPPORTED with rocBLAS): https://github.com/ROCm/hipBLAS/issues/753
    - HIPIFY, cuBLAS API supported by HIP (math modes, GEMM algorithms): https://rocm.docs.amd.com/projects/HIPIFY/en/latest/reference/tables/CUBLAS_API_supported_by_HIP.html
    - hipBLASLt documentation: https://rocm.docs.amd.com/projects/hipBLASLt/en/latest/
    """

    code = "LIB003"
    # check_unit reports the cuBLASLt include; the query patterns gate themselves on their predicates.
    triggers = Library.from_table("cublaslt", load_table("libraries.toml")["libraries"]["cublaslt"]).triggers()
    name = "cublas-compute-types-and-math-modes"
    summary = "cuBLAS math mode or compute type without the same meaning on hipBLAS"
    severity = Severity.WARNING
    impact = Impact.COMPILE
    checklist = "Decide TF32 and tensor-op math modes explicitly for AMD (FP32 or a lower precision with a tolerance); pass hipblasComputeType_t to GEMM-Ex (HIPBLAS_V2 on ROCm 6.x); review cuBLASLt calls against hipBLASLt's coverage."
    query = """
    ((identifier) @id (#match? @id "^(CUBLAS|HIPBLAS)_"))
    ((call_expression function: (identifier) @fn arguments: (argument_list) @args) @call
     (#match? @fn "^(cu|hip)blas(Lt)?(Gemm|MatmulDesc)"))
    """

    def check(self, ctx, captures):
        table = load_table("libraries.toml")["cublas"]
        if "id" in captures:
            node = captures["id"][0]
            name = ctx.text(node)
            note = table["enumerators"].get(name)
            if note is not None and not _is_member_or_definition(node) and not _is_gemm_compute_arg(ctx, node, table):
                ctx.report(node, f"`{name}`: {note}")
            return
        fn = ctx.text(captures["fn"][0])
        index = table["gemm_ex"].get(fn)
        if index is None:
            return
        args = [a for a in captures["args"][0].named_children if a.type != "comment"]
        if len(args) <= index:
            return
        arg = args[index]
        text = ctx.text(arg).strip()
        if re.fullmatch(table["datatype_pattern"], text):
            ctx.report(arg, f"`{fn}` compute type given as the data type `{text}`: hipBLAS 3.0 (ROCm 7.0) takes a "
                            f"hipblasComputeType_t here; use the matching CUBLAS_COMPUTE_* value",
                       severity=Severity.ERROR)
            return
        # One finding per argument: the HIPBLAS_V2 note and the compute type's own note together.
        notes = []
        if re.fullmatch(r"(CUBLAS|HIPBLAS)_COMPUTE_[A-Z0-9_]+", text) and ctx.rocm_version < HIPBLAS_3 \
                and not fn.endswith("_v2") and fn.startswith(("cublasGemm", "hipblasGemm")):
            notes.append(f"on ROCm {ctx.rocm_version[0]}.{ctx.rocm_version[1]} hipBLAS 2.x accepts a "
                         f"hipblasComputeType_t only when built with -DHIPBLAS_V2")
        if text in table["enumerators"]:
            notes.append(table["enumerators"][text])
        if notes:
            ctx.report(arg, f"`{fn}` with compute type `{text}`: " + "; ".join(notes))

    def check_unit(self, ctx):
        if not is_last_unit(ctx):
            return
        lib = Library.from_table("cublaslt", load_table("libraries.toml")["libraries"]["cublaslt"])
        found = first_use(ctx, lib)
        if found is None or found[0] != "include":
            return
        inc = found[1]
        ctx.report_range(*span(inc), f"`#include <{inc.path}>`: hipify maps cuBLASLt to hipBLASLt by name, but "
                                             f"supported types, epilogues and algorithms differ per architecture: review each matmul",
                         severity=Severity.INFO)


def _is_gemm_compute_arg(ctx, node, table) -> bool:
    """The compute-type argument of a GEMM-Ex call: reported by the call check, with its context."""
    args = node.parent
    call = args.parent if args is not None and args.type == "argument_list" else None
    if call is None or call.type != "call_expression":
        return False
    fn = call.child_by_field_name("function")
    index = table["gemm_ex"].get(ctx.text(fn)) if fn is not None else None
    named = [a for a in args.named_children if a.type != "comment"]
    return index is not None and index < len(named) and named[index] == node


def _is_member_or_definition(node) -> bool:
    parent = node.parent
    if parent is None:
        return False
    if parent.type in ("enumerator", "preproc_def", "preproc_function_def") and parent.child_by_field_name("name") == node:
        return True
    return False
