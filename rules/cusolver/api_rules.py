"""Table-driven cuSOLVER rules: names from rules/cusolver/api.toml in CUDA and hipSOLVER spelling."""
from __future__ import annotations

from hiplint import Impact, Severity
from hiplint.rule import computed_once
from hiplint.rules._apitable import TableRule, VersionGate, any_of_query, load_table, names_with

FAMILY = "cusolver"
# Jacobi getters differ only for batched infos: SLV007 follows the info handle.
SEMANTIC = frozenset({"cusolverDnXgesvdjGetResidual", "cusolverDnXgesvdjGetSweeps",
                      "cusolverDnXsyevjGetResidual", "cusolverDnXsyevjGetSweeps"} |
                     # gesv/gels: SLV006 reports niters use and X != B
                     {f"cusolverDn{p}{f}" for p in ("SS", "DD", "CC", "ZZ") for f in ("gesv", "gels")})
REGULAR_API_HINT = "the regular hipSOLVER API (drop `Dn` from `hipsolverDn`) takes work/lwork explicitly"


def _versioned():
    return {n: r for n, r in load_table(FAMILY).by_name().items() if r.since}


class CusolverUnsupportedApi(TableRule, VersionGate):
    """A cuSOLVER API with no hipSOLVER equivalent, or one newer than the configured ROCm.

    ## What it does
    Reports every use of a cuSOLVER name that `rules/cusolver/api.toml` lists as `unsupported`:
    most of the 64-bit generic API (`cusolverDnXgesvd`, `cusolverDnXsyevd`, ...), the legacy 64-bit
    API (`cusolverDnPotrf`), the iterative-refinement (IRS) infrastructure and mixed-precision solvers,
    nearly all of `cusolverSp`, and all of `cusolverMg`. With `rocm-version` set, names hipSOLVER
    declares only from a later release are reported as well (`cusolverDnXgetrf` needs ROCm 6.2,
    `cusolverDnXpotrf` 6.3). Each name is reported once per file, its other uses related locations;
    the status codes hipSOLVER lacks (`CUSOLVER_STATUS_IRS_*`, `CUSOLVER_STATUS_INVALID_LICENSE`) once per
    file together, as they sit in one error-string switch.

    Not reported: a cuBLAS enumerator passed to a cuSOLVER call (`CUBLAS_FILL_MODE_LOWER` as the
    `uplo` of `cusolverDnSsyevd`, `CUBLAS_OP_T` as a `trans`). hipify renames it to
    `HIPBLAS_FILL_MODE_LOWER` / `HIPBLAS_OP_T`, and hipSOLVER's enums are aliases of hipBLAS's
    (ROCm 7.2 `hipsolver/internal/hipsolver-types.h`: `typedef hipblasFillMode_t hipsolverFillMode_t;`,
    likewise `hipsolverOperation_t` and `hipsolverSideMode_t`; `hipsolverDnSsyevd` takes a
    `hipblasFillMode_t`), so the port compiles and passes the same value.

    ## Why it breaks on AMD
    hipSOLVER (2.3.0, ROCm 6.3) offers of the 64-bit API only Xgetrf/Xgetrs (2.2.0, ROCm 6.2) and
    Xpotrf/Xpotrs/Xgeqrf (2.3.0, ROCm 6.3), as compatibility-only functions; its hipsolverSp API
    covers `csrlsvchol` and `csrlsvcholHost`, and `csrlsvqr` from 2.4.0 (ROCm 6.4; complex
    precisions from 3.0.0, ROCm 7.0; still so in ROCm 7.2's headers); there is no multi-GPU API. hipify leaves these names
    unconverted, so the port does not compile. Applies to every target.

    ## Example
    ```cuda
    cusolverMgHandle_t mg;
    cusolverMgCreate(&mg);
    cusolverDnXgesvd(handle, params, 'A', 'A', m, n, CUDA_R_64F, A, lda, CUDA_R_64F, S, CUDA_R_64F, U, ldu,
                     CUDA_R_64F, VT, ldvt, CUDA_R_64F, dwork, dsize, hwork, hsize, info);
    ```

    ## Use instead
    ```cuda
    // the typed 32-bit API when sizes fit in int
    cusolverDnDgesvd(handle, 'A', 'A', m, n, A, lda, S, U, ldu, VT, ldvt, work, lwork, rwork, info);
    ```

    ## References
    - hipSOLVER CHANGELOG (2.2.0, 2.3.0: compatibility-only 64-bit functions; 2.4.0, 3.0.0: csrlsvqr): https://github.com/ROCm/rocm-libraries/blob/develop/projects/hipsolver/CHANGELOG.md
    - hipSOLVER headers: https://github.com/ROCm/hipSOLVER/tree/develop/library/include
    - Using hipSOLVER: https://rocm.docs.amd.com/projects/hipSOLVER/en/latest/howto/usage.html
    - hipSOLVER data types (hipsolverFillMode_t and the other enums are aliases of hipBLAS's): https://rocm.docs.amd.com/projects/hipSOLVER/en/latest/reference/api/types.html
    - `rules/cusolver/api.toml` (one source per row)
    """

    code = "SLV001"
    report_in_hip_branches = True  # wrong on AMD wherever it is written
    name = "cusolver-unsupported-api"
    summary = "cuSOLVER API without a hipSOLVER equivalent"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    checklist = "Replace cuSOLVER APIs that hipSOLVER lacks (64-bit X API, IRS, cusolverSp, cusolverMg) with the typed 32-bit API, rocSOLVER/rocSPARSE, or hand-written multi-GPU code."
    family = FAMILY
    statuses = frozenset({"unsupported"})
    query = computed_once(lambda: any_of_query(set(names_with(FAMILY, frozenset({"unsupported"}))) | set(_versioned())))

    def table_names(self):
        return {**_versioned(), **names_with(FAMILY, self.statuses)}

    def report_row(self, ctx, node, text, row):
        # One task, one finding: the status codes hipSOLVER lacks sit together in one error-string switch
        # (one finding per file), and each other name once per file.
        group = "status codes" if text.startswith("CUSOLVER_STATUS_") else text
        if row.status == "unsupported":
            ctx.report(node, f"`{text}`: {row.note}", group=group)
        elif self.too_new(ctx, row):
            ctx.report(node, f"`{row.hip}` (hipSOLVER for `{row.cuda}`) exists only from ROCm {row.since}; "
                             f"configured rocm-version is {'.'.join(map(str, ctx.rocm_version))}", group=group)


class CusolverApiDiffers(TableRule, VersionGate):
    """A cuSOLVER API hipSOLVER supports with a documented difference on the rocSOLVER backend.

    ## What it does
    Reports uses of names `rules/cusolver/api.toml` marks `differs`, with the difference in the message:
    compatibility-API workspace handling (`gesvd_bufferSize` without jobu/jobv, `getrf` without
    lwork, `getrs`/`potrs`/`potrsBatched`/`potrfBatched` without work, gesv/gels `_bufferSize`),
    `gesvdaStridedBatched` (`hRnrmF` unused), `csrlsvchol` (RCM reordering replaced, single
    precision via double) and `csrlsvqr` (solved as a dense matrix). The gesv/gels solvers themselves are `SLV006`'s, the Jacobi getters `SLV007`'s.

    ## Why it breaks on AMD
    hipSOLVER's compatibility API keeps cuSOLVER's signatures, so where rocSOLVER needs more
    information it computes it again (bufferSize called twice, maximum workspace over all job
    combinations) or falls back to rocSOLVER's automatic workspace (device reallocations). rocSOLVER
    has no iterative refinement, so `niters` is not written. The results stay correct; the costs
    and some outputs differ. Every target and ROCm version the table lists.

    ## Example
    ```cuda
    cusolverDnDgetrf(handle, m, n, A, lda, work, ipiv, info);
    ```

    ## Use instead
    ```cuda
    // the regular hipSOLVER API passes lwork, so rocSOLVER uses the caller's workspace
    hipsolverDgetrf(handle, m, n, A, lda, work, lwork, ipiv, info);
    ```

    ## References
    - Using hipSOLVER, "Some considerations when using the hipsolverDn API" and "hipsolverSp API": https://rocm.docs.amd.com/projects/hipSOLVER/en/latest/howto/usage.html
    - `rules/cusolver/api.toml` (one source per row)
    """

    code = "SLV002"
    report_in_hip_branches = True  # wrong on AMD wherever it is written
    name = "cusolver-api-differs"
    summary = "cuSOLVER API supported by hipSOLVER with differences"
    severity = Severity.WARNING
    impact = Impact.PERFORMANCE
    checklist = "Review hipSOLVER compatibility-API calls with workspace or output differences; move hot paths to the regular hipsolver API."
    family = FAMILY
    statuses = frozenset({"differs"})
    exclude = SEMANTIC
    query = computed_once(lambda: any_of_query(names_with(FAMILY, frozenset({"differs"}), SEMANTIC)))

    def report_row(self, ctx, node, text, row):
        if not self.too_new(ctx, row):
            ctx.report(node, f"`{text}`: {row.note}")


class CusolverNotSupportedAtRuntime(TableRule):
    """A hipSOLVER function that compiles but returns HIPSOLVER_STATUS_NOT_SUPPORTED on AMD.

    ## What it does
    Reports calls of names `rules/cusolver/api.toml` marks `not-supported-at-runtime`: the batched
    refactorization calls (`cusolverRfBatchSetupHost`, `BatchAnalyze`, `BatchResetValues`,
    `BatchZeroPivot`, `BatchRefactor`, `BatchSolve`), the Rf parameter setters (`cusolverRfSetAlgs`,
    `SetMatrixFormat`, `SetNumericProperties`, `SetResetValuesFastMode`) and `cusolverDnSetAdvOptions`.

    ## Why it breaks on AMD
    hipify renames them and they link, but hipSOLVER's rocSOLVER backend implements each as
    `return HIPSOLVER_STATUS_NOT_SUPPORTED;`. Code that ignores the status continues with an
    unfactored matrix or default settings: a silent wrong result or a crash later. Every AMD target,
    hipSOLVER up to 2.3.0 (ROCm 6.3).

    ## Example
    ```cuda
    cusolverRfBatchRefactor(rf);
    cusolverRfSetAlgs(rf, CUSOLVERRF_FACTORIZATION_ALG0, CUSOLVERRF_TRIANGULAR_SOLVE_ALG1);
    ```

    ## Use instead
    ```cuda
    // one refactorization per system, and check every status
    for (int i = 0; i < batch; ++i) {
        CHECK(cusolverRfResetValues(n, nnz, rowPtr, colInd, vals[i], P, Q, rf));
        CHECK(cusolverRfRefactor(rf));
    }
    ```

    ## References
    - Using hipSOLVER, "Some considerations when using the hipsolverRf API": https://rocm.docs.amd.com/projects/hipSOLVER/en/latest/howto/usage.html
    - hipSOLVER rocSOLVER backend: https://github.com/ROCm/hipSOLVER/blob/develop/library/src/amd_detail/hipsolver_refactor.cpp
    """

    code = "SLV003"
    report_in_hip_branches = True  # wrong on AMD wherever it is written
    name = "cusolver-not-supported-at-runtime"
    summary = "returns HIPSOLVER_STATUS_NOT_SUPPORTED with the rocSOLVER backend"
    severity = Severity.ERROR
    impact = Impact.RUNTIME
    checklist = "Replace hipSOLVER calls that return NOT_SUPPORTED on rocSOLVER (Rf batch API, Rf setters, DnSetAdvOptions): loop over single systems, keep defaults."
    family = FAMILY
    statuses = frozenset({"not-supported-at-runtime"})
    query = computed_once(lambda: any_of_query(names_with(FAMILY, frozenset({"not-supported-at-runtime"}))))

    def report_row(self, ctx, node, text, row):
        ctx.report(node, f"`{text}` compiles, but hipSOLVER's rocSOLVER backend returns HIPSOLVER_STATUS_NOT_SUPPORTED")
