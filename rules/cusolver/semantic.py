"""cuSOLVER rules that follow values: info checks, workspaces, iterative refinement, Jacobi infos."""
from __future__ import annotations

import re

from hiplint import CudaRule, Impact, Severity
from hiplint.cparse import iter_nodes
from hiplint.rules._calls import NULLS, base_identifier, call_args, call_name
from hiplint.lazy import lazy_re

SOLVER_CALL = lazy_re(r"^(cusolverDn|hipsolverDn|hipsolver|rocsolver_)\w+$")
INFO_NAME = lazy_re(r"(?i)^(h_?|host_?|d_?|dev_?)?(dev_?)?info(_?(h|host|d|dev|gpu|cpu|out))?$|^(h|host)?_?(dev)?Info$")
IRS_CALL = lazy_re(r"^(cusolverDn|hipsolverDn|hipsolver)(SS|DD|CC|ZZ)(gesv|gels)$")
JACOBI_GETTER = lazy_re(r"^(cusolverDn|hipsolverDn|hipsolver)X(syevj|gesvdj)Get(Residual|Sweeps)$")
BATCHED_JACOBI = lazy_re(r"^(cusolverDn|hipsolverDn|hipsolver)[SDCZ](syevj|gesvdj)Batched$")


def _solver_calls(ctx, scope):
    return [c for c in iter_nodes(scope, frozenset({"call_expression"})) if SOLVER_CALL.match(call_name(ctx, c))]


def _status_used(call) -> bool:
    """Is the call's returned status read: passed on (`CHECK(call)`), stored, returned or tested?"""
    parent = call.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    return parent is not None and parent.type in (
        "argument_list", "init_declarator", "assignment_expression", "return_statement", "binary_expression",
        "condition_clause", "if_statement", "switch_statement")


def _is_negative_literal(ctx, node) -> bool:
    text = ctx.text(node).replace(" ", "")
    return bool(re.fullmatch(r"-\(?\d+\)?", text))


class DevInfoNegativeCheck(CudaRule):
    """A host check of `info`/`devInfo` for negative values after a cuSOLVER call.

    ## What it does
    In a function that calls cuSOLVER/hipSOLVER (`cusolverDn*`, `hipsolver*`), finds comparisons of a
    variable named like an info output (`info`, `devInfo`, `h_info`, `info_h`, `info[i]`) with a
    negative value: `info < 0`, `info <= -1`, `info == -3`, `0 > info`.

    ## Why it breaks on AMD
    cuSOLVER reports an invalid i-th argument as `info = -i`. hipSOLVER's documentation: "rocSOLVER
    functions do not provide information on invalid arguments in the info parameter … info will always
    return a value >= 0", and where a rocSOLVER function has no info output hipSOLVER sets it to 0.
    The branch is dead on AMD: invalid arguments go unnoticed unless the returned status is checked.
    Every target and ROCm version. Not reported where every solver call of the function has its status
    read (`CHECK(cusolverDnDgetrf(...))`, `st = cusolverDn...`): the status reports invalid arguments
    there (`HIPSOLVER_STATUS_INVALID_VALUE`), and the negative branch is only dead code.

    ## Example
    ```cuda
    void solve(cusolverDnHandle_t h, int n, double* A, int* ipiv, double* work, int* devInfo) {
        int info = 0;
        cusolverDnDgetrf(h, n, n, A, n, work, ipiv, devInfo);
        cudaMemcpy(&info, devInfo, sizeof(int), cudaMemcpyDeviceToHost);
        if (info < 0) printf("parameter %d is wrong\\n", -info);
    }
    ```

    ## Use instead
    ```cuda
    void solve(cusolverDnHandle_t h, int n, double* A, int* ipiv, double* work, int* devInfo) {
        int info = 0;
        cusolverStatus_t st = cusolverDnDgetrf(h, n, n, A, n, work, ipiv, devInfo);
        if (st == CUSOLVER_STATUS_INVALID_VALUE) printf("invalid argument\\n");
        cudaMemcpy(&info, devInfo, sizeof(int), cudaMemcpyDeviceToHost);
        if (info > 0) printf("U(%d,%d) is zero\\n", info, info);
    }
    ```

    ## References
    - Using hipSOLVER, "Arguments not referenced by rocSOLVER": https://rocm.docs.amd.com/projects/hipSOLVER/en/latest/howto/usage.html
    - cuSOLVER `devInfo` convention: https://docs.nvidia.com/cuda/cusolver/index.html
    """

    code = "SLV004"
    report_in_hip_branches = True  # wrong on AMD wherever it is written
    name = "devinfo-negative-check"
    summary = "negative info check is dead code with rocSOLVER"
    severity = Severity.ERROR
    impact = Impact.SILENT
    checklist = "Check the returned hipsolverStatus_t (HIPSOLVER_STATUS_INVALID_VALUE) for invalid arguments; keep info > 0 checks for singularity/convergence."
    query = """(binary_expression operator: ["<" "<=" "==" ">" ">="]) @cmp"""
    triggers = ("cusolverDn", "hipsolver", "rocsolver_")  # a solver call in the same function (SOLVER_CALL)

    def check(self, ctx, captures):
        cmp = captures["cmp"][0]
        op = ctx.text(cmp.child_by_field_name("operator"))
        left, right = cmp.child_by_field_name("left"), cmp.child_by_field_name("right")
        if left is None or right is None:
            return
        # Normalise to `info OP value`.
        if INFO_NAME.match(ctx.text(base_identifier(right) or right) or ""):
            left, right = right, left
            op = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
        ident = base_identifier(left)
        if ident is None or not INFO_NAME.match(ctx.text(ident)):
            return
        rtext = ctx.text(right).replace(" ", "")
        negative = (op == "<" and rtext in ("0", "0L")) or (op in ("<", "<=", "==") and _is_negative_literal(ctx, right))
        if not negative:
            return
        scope = ctx.function_scope(cmp)
        calls = _solver_calls(ctx, scope) if scope is not ctx.unit.root else []
        if not calls:
            return
        if all(_status_used(c) for c in calls):
            return  # `CHECK(hipsolverDsyevj(...))`: the returned status catches invalid arguments; the branch is only dead
        ctx.report(cmp, f"`{ctx.text(cmp)}`: rocSOLVER never reports invalid arguments in info (always >= 0), so this "
                        f"branch is dead on AMD; check the returned status for INVALID_VALUE")


class NullWorkspace(CudaRule):
    """A NULL workspace (with a zero size) passed to a cuSOLVER/hipSOLVER function.

    ## What it does
    Finds calls of `cusolverDn*`/`hipsolverDn*`/`hipsolver*` where an argument is `NULL`/`nullptr`
    followed by a workspace size of `0` or one named like `lwork`, or `0` followed by a size named like
    `lwork`/`workspaceInBytes` (two plain zeros are index ranges, e.g. `syevdx`'s il/iu).

    ## Why it breaks on AMD
    Passing `work = NULL` (or `lwork = 0`) asks rocSOLVER to manage the workspace itself, which only
    the rocSOLVER backend does; hipSOLVER's documentation warns that it "does not guarantee a defined
    behavior when passing a null workspace to cuSOLVER functions that require one", and mixing user
    and automatic workspaces makes rocSOLVER reallocate. Code written this way on AMD breaks on
    NVIDIA; code that relied on it on NVIDIA was already undefined. All targets.

    ## Example
    ```cuda
    void f(hipsolverHandle_t h, int n, double* A, int* ipiv, int* info) {
        hipsolverDgetrf(h, n, n, A, n, nullptr, 0, ipiv, info);
    }
    ```

    ## Use instead
    ```cuda
    void f(hipsolverHandle_t h, int n, double* A, int* ipiv, int* info, double* work, int lwork) {
        hipsolverDgetrf(h, n, n, A, n, work, lwork, ipiv, info);  // lwork from hipsolverDgetrf_bufferSize
    }
    ```

    ## References
    - Using hipSOLVER, "Using rocSOLVER's memory model": https://rocm.docs.amd.com/projects/hipSOLVER/en/latest/howto/usage.html
    - rocSOLVER memory model: https://rocm.docs.amd.com/projects/rocSOLVER/en/latest/howto/memory.html
    """

    code = "SLV005"
    name = "null-workspace"
    summary = "NULL workspace is rocSOLVER-only behaviour"
    severity = Severity.WARNING
    impact = Impact.PORTABILITY
    checklist = "Query the workspace size with the bufferSize helper and pass a real work buffer on every backend."
    query = """((call_expression function: (identifier) @fn) @call (#match? @fn "^(cusolverDn|hipsolver)"))"""

    def check(self, ctx, captures):
        call = captures["call"][0]
        name = call_name(ctx, call)
        if name.endswith("_bufferSize"):
            return
        args = call_args(call)
        for work, lwork in zip(args, args[1:]):
            wtext = ctx.text(work).replace(" ", "")
            ltext = ctx.text(lwork).replace(" ", "")
            size_named = bool(re.search(r"(?i)lwork|worksize|work_?size|lwk|bufferSize|InBytes", ltext))
            null_pointer = wtext in NULLS and wtext not in ("0", "0L", "0UL")
            # `0L, 0L` are also index ranges (syevdx il/iu): a plain 0 counts only before a named size.
            if (null_pointer and (ltext in ("0", "0L") or size_named)) or (wtext in NULLS and size_named):
                ctx.report(work, f"NULL workspace for `{name}`: automatic workspace is rocSOLVER-backend behaviour; "
                                 f"hipSOLVER does not define it on cuSOLVER")
                return


class IterativeRefinementSolver(CudaRule):
    """Iterative-refinement solvers (`gesv`/`gels`) and their `niters` on rocSOLVER.

    ## What it does
    Finds `cusolverDn{SS,DD,CC,ZZ}{gesv,gels}` (and `hipsolverDn…`, `hipsolver…`). Reports when the
    `niters` output is read afterwards in the same function, and otherwise when `X` is not `B` (the
    extra copies). The mixed-precision variants (`DHgesv`, `SSgels`'s relatives `DSgesv`, ...) have no
    hipSOLVER equivalent and are `SLV001`'s.

    ## Why it breaks on AMD
    rocSOLVER has no iterative refinement: hipSOLVER solves with LU/QR directly and does not write
    `niters`, so a value read from it (logged, tested, used to pick a path) is whatever was there
    before. rocSOLVER's gesv/gels work in place, so with X != B hipSOLVER copies B to X around the
    call; on AMD pass X = B (not on cuSOLVER, where X = B is undefined). All targets.

    ## Example
    ```cuda
    void solve(cusolverDnHandle_t h, int n, double* A, int* ipiv, double* B, double* X, void* w, size_t lw, int* info) {
        int iters = 0;
        cusolverDnDDgesv(h, n, 1, A, n, ipiv, B, n, X, n, w, lw, &iters, info);
        printf("converged after %d refinement steps\\n", iters);
    }
    ```

    ## Use instead
    ```cuda
    void solve(cusolverDnHandle_t h, int n, double* A, int* ipiv, double* B, double* X, void* w, size_t lw, int* info) {
        int iters = 0;
        cusolverDnDDgesv(h, n, 1, A, n, ipiv, B, n, B, n, w, lw, &iters, info);
    }
    ```

    ## References
    - Using hipSOLVER, "Arguments not referenced by rocSOLVER" and "Using rocSOLVER's in-place functions": https://rocm.docs.amd.com/projects/hipSOLVER/en/latest/howto/usage.html
    """

    code = "SLV006"
    report_in_hip_branches = True  # wrong on AMD wherever it is written
    name = "iterative-refinement-solver"
    summary = "rocSOLVER has no iterative refinement"
    severity = Severity.WARNING
    impact = Impact.SILENT
    checklist = "Do not read niters from gesv/gels on AMD; pass X = B on the rocSOLVER backend to avoid copies."
    query = """((call_expression function: (identifier) @fn) @call (#match? @fn "^(cusolverDn|hipsolverDn|hipsolver)(SS|DD|CC|ZZ)(gesv|gels)$"))"""

    def check(self, ctx, captures):
        call = captures["call"][0]
        name = call_name(ctx, call)
        args = call_args(call)
        if len(args) < 12:
            return
        niters = base_identifier(args[-2])
        scope = ctx.function_scope(call)
        if niters is not None:
            var = ctx.text(niters)
            for ident in iter_nodes(scope, frozenset({"identifier"})):
                if ident.start_byte > call.end_byte and ctx.text(ident) == var:
                    line = ctx.source.line_of(ctx.file_range(ident)[0])
                    ctx.report(args[-2], f"`{name}`: rocSOLVER has no iterative refinement and never writes niters; "
                                         f"`{var}` read on line {line} is meaningless on AMD")
                    return
        b, x = ctx.text(args[6]).replace(" ", ""), ctx.text(args[8]).replace(" ", "")
        if b != x:
            ctx.report(call, f"`{name}` with X != B: rocSOLVER solves in place, so hipSOLVER copies B and X around "
                             f"the call; on AMD pass X = B")


class JacobiBatchedGetter(CudaRule):
    """Jacobi residual/sweep getters on an info used by a batched Jacobi call.

    ## What it does
    Finds `cusolverDnX{syevj,gesvdj}Get{Residual,Sweeps}` (and the hipSOLVER names) whose info handle
    is passed to a `syevjBatched`/`gesvdjBatched` call in the same function.

    ## Why it breaks on AMD
    cuSOLVER itself does not support residual/sweeps for batched Jacobi; hipSOLVER's rocSOLVER backend
    returns `HIPSOLVER_STATUS_NOT_SUPPORTED` from the getters when the info was used by a batched
    call (it checks `is_batched`), leaving the output untouched. Reading the residual or sweep count
    then reports garbage. Every target.

    ## Example
    ```cuda
    void eig(cusolverDnHandle_t h, syevjInfo_t params, double* A, double* W, double* work, int lwork, int* info, int batch) {
        double residual = 0;
        cusolverDnDsyevjBatched(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, 8, A, 8, W, work, lwork, info, params, batch);
        cusolverDnXsyevjGetResidual(h, params, &residual);
    }
    ```

    ## Use instead
    ```cuda
    void eig(cusolverDnHandle_t h, syevjInfo_t params, double* A, double* W, double* work, int lwork, int* info, int batch) {
        cusolverDnDsyevjBatched(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, 8, A, 8, W, work, lwork, info, params, batch);
        // check info[i] per matrix; compute residuals yourself if needed
    }
    ```

    ## References
    - hipSOLVER rocSOLVER backend (`hipsolverXsyevjGetResidual`: `is_batched` -> NOT_SUPPORTED): https://github.com/ROCm/hipSOLVER/blob/develop/library/src/amd_detail/hipsolver.cpp
    - cuSOLVER syevjBatched: https://docs.nvidia.com/cuda/cusolver/index.html
    """

    code = "SLV007"
    report_in_hip_branches = True  # wrong on AMD wherever it is written
    name = "jacobi-batched-getter"
    summary = "Jacobi getter returns NOT_SUPPORTED for a batched info"
    severity = Severity.ERROR
    impact = Impact.RUNTIME
    checklist = "Do not query residual/sweeps of batched Jacobi infos; check each matrix's info instead."
    query = """((call_expression function: (identifier) @fn) @call (#match? @fn "^(cusolverDn|hipsolverDn|hipsolver)X(syevj|gesvdj)Get(Residual|Sweeps)$"))"""

    def check(self, ctx, captures):
        call = captures["call"][0]
        args = call_args(call)
        if len(args) < 2:
            return
        info = base_identifier(args[1])
        if info is None:
            return
        var = ctx.text(info)
        for other in iter_nodes(ctx.function_scope(call), frozenset({"call_expression"})):
            if BATCHED_JACOBI.match(call_name(ctx, other)) and any(ctx.text(a).strip() == var for a in call_args(other)):
                ctx.report(call, f"`{call_name(ctx, call)}` on `{var}`, which a batched Jacobi call uses: returns "
                                 f"NOT_SUPPORTED on the rocSOLVER backend (and on cuSOLVER) and leaves the output unset")
                return
