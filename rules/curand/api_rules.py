"""Table-driven cuRAND rules: names from rules/curand/api.toml in CUDA and hipRAND spelling."""
from __future__ import annotations

from hiplint import Fix, Impact, Severity
from hiplint.rule import computed_once
from hiplint.rules._apitable import TableRule, VersionGate, any_of_query, load_table, names_with
from hiplint.rules._calls import initializer_text

FAMILY = "curand"
# Names whose problems depend on arguments or state types; semantic rules of this family own them.
def _mtgp32_device() -> frozenset[str]:
    return frozenset(r.cuda for r in load_table(FAMILY).rows if r.cuda.startswith("curand_mtgp32_"))
SEMANTIC = frozenset({"curandGenerateNormal", "curandGenerateNormalDouble", "curandGenerateLogNormal",
                      "curandGenerateLogNormalDouble", "curand_init", "skipahead"})
# Orderings whose output rocRAND keeps stable across GPUs and releases.
STABLE_ORDERINGS = ("_ORDERING_PSEUDO_LEGACY", "_ORDERING_PSEUDO_DEFAULT", "_ORDERING_QUASI_DEFAULT")
REPRODUCIBLE_REPLACEMENT = {"CURAND_ORDERING_PSEUDO_DYNAMIC": "CURAND_ORDERING_PSEUDO_LEGACY",
                            "HIPRAND_ORDERING_PSEUDO_DYNAMIC": "HIPRAND_ORDERING_PSEUDO_LEGACY"}


def _versioned(family, exclude=frozenset()):
    return {n: r for n, r in load_table(family).by_name().items() if r.since and n not in exclude}


class CurandUnsupportedApi(TableRule, VersionGate):
    """A cuRAND API with no hipRAND equivalent, or one newer than the configured ROCm.

    ## What it does
    Reports every use (call, type, enumerator, argument) of a cuRAND name that
    `rules/curand/api.toml` lists as `unsupported`, in the CUDA spelling (`curandCreatePoissonDistribution`)
    and, where hipify renames it, the hipRAND spelling. With `rocm-version` set, names that hipRAND
    declares only from a later ROCm release (`since`) are reported too (e.g. the ordering API before 6.2).
    The MTGP32 device functions are `RND004`'s.

    ## Why it breaks on AMD
    hipRAND (hipRAND 2.11, ROCm 6.2/6.3) has no generation methods (`curandMethod_t`,
    `CURAND_KNUTH`, `curandGeneratePoissonMethod`), no binomial generation (`curandGenerateBinomial`),
    no `curandGetProperty`, no histogram/shift distribution types and none of cuRAND's internal device
    helpers (`curand_box_muller`, `curand_MRGmod`, `curand_Philox4x32_10`). hipify leaves these names alone, so the port stops compiling. The table
    was compiled from NVIDIA's CUDA 13.0 cuRAND headers and the AMD-side hipRAND headers.

    ## Example
    ```cuda
    int major = 0;
    curandGetProperty(MAJOR_VERSION, &major);
    ```

    ## Use instead
    ```cuda
    int version = 0;
    curandGetVersion(&version);
    ```

    ## References
    - hipRAND headers (AMD side): https://github.com/ROCm/hipRAND/tree/develop/library/include/hiprand
    - hipRAND CHANGELOG (2.11.0, ROCm 6.2: ordering API): https://github.com/ROCm/hipRAND/blob/develop/CHANGELOG.md
    - cuRAND host API: https://docs.nvidia.com/cuda/curand/host-api-overview.html
    - `rules/curand/api.toml` (one source per row)
    """

    code = "RND001"
    report_in_hip_branches = True  # wrong on AMD wherever it is written
    name = "curand-unsupported-api"
    summary = "cuRAND API without a hipRAND equivalent"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    checklist = "Replace cuRAND APIs that hipRAND lacks (discrete distributions, methods, MTGP32 device helpers) with rocRAND equivalents or your own code."
    family = FAMILY
    statuses = frozenset({"unsupported"})
    exclude = computed_once(_mtgp32_device)
    query = computed_once(lambda: any_of_query(set(names_with(FAMILY, frozenset({"unsupported"}), _mtgp32_device()))
                                               | set(_versioned(FAMILY))))

    def table_names(self):
        return {**_versioned(FAMILY), **names_with(FAMILY, self.statuses, self.exclude)}

    def report_row(self, ctx, node, text, row):
        if row.status == "unsupported":
            ctx.report(node, f"`{text}`: {row.note}")
        elif self.too_new(ctx, row):
            ctx.report(node, f"`{row.hip}` (hipRAND for `{row.cuda}`) exists only from ROCm {row.since}; "
                             f"configured rocm-version is {'.'.join(map(str, ctx.rocm_version))}")


class CurandApiDiffers(TableRule, VersionGate):
    """A cuRAND API hipRAND supports with a documented difference (ordering).

    ## What it does
    Reports uses of cuRAND/hipRAND names that `rules/curand/api.toml` marks `differs`, with the
    difference in the message: `CURAND_ORDERING_PSEUDO_DYNAMIC` anywhere, and
    `curandSetGeneratorOrdering` with an ordering other than LEGACY/DEFAULT (those are stable).
    Normal generation, `curand_init` and `skipahead` differ only for some arguments and are
    reported by `RND005`, `RND003` and `RND004`.

    ## Why it breaks on AMD
    hipRAND supports generator ordering from hipRAND 2.11 (ROCm 6.2) and maps each cuRAND ordering
    to rocRAND's. rocRAND documents `ROCRAND_ORDERING_PSEUDO_DYNAMIC` as free to change the output
    order per GPU model and rocRAND version, and not supported for host generators; `DEFAULT`
    is the same as `LEGACY` and `BEST`. Code that relied on DYNAMIC or SEEDED output being stable
    (tests, checkpoints) sees different numbers on AMD. All targets, ROCm >= 6.2.

    ## Example
    ```cuda
    curandSetGeneratorOrdering(gen, CURAND_ORDERING_PSEUDO_DYNAMIC);
    ```

    ## Use instead
    ```cuda
    curandSetGeneratorOrdering(gen, CURAND_ORDERING_PSEUDO_LEGACY);
    ```

    ## Fix
    Unsafe: `*_ORDERING_PSEUDO_DYNAMIC` becomes `*_ORDERING_PSEUDO_LEGACY` in the same spelling. It
    changes the order of the random stream (and on NVIDIA possibly the speed).

    ## References
    - rocRAND programmer's guide, Ordering: https://rocm.docs.amd.com/projects/rocRAND/en/latest/conceptual/programmers-guide.html
    - hipRAND CHANGELOG 2.11.0 (ROCm 6.2.0): https://github.com/ROCm/hipRAND/blob/develop/CHANGELOG.md
    - hipRAND AMD backend (ordering mapping): https://github.com/ROCm/hipRAND/blob/develop/library/src/amd_detail/hiprand.cpp
    """

    code = "RND002"
    report_in_hip_branches = True  # wrong on AMD wherever it is written
    name = "curand-api-differs"
    summary = "cuRAND API supported by hipRAND with differences"
    severity = Severity.WARNING
    impact = Impact.SILENT
    fix_availability = "sometimes"
    checklist = "Use LEGACY ordering where results must be reproducible; expect different random streams on AMD."
    family = FAMILY
    statuses = frozenset({"differs"})
    exclude = SEMANTIC
    query = computed_once(lambda: any_of_query(names_with(FAMILY, frozenset({"differs"}), SEMANTIC)))

    def report_row(self, ctx, node, text, row):
        if self.too_new(ctx, row):
            return  # RND001 reports it as unavailable
        fix = None
        if text in REPRODUCIBLE_REPLACEMENT:
            fix = Fix.unsafe("use the LEGACY ordering", ctx.replace(node, REPRODUCIBLE_REPLACEMENT[text]))
        elif row.cuda == "curandSetGeneratorOrdering":
            call = node.parent
            args = call.child_by_field_name("arguments") if call is not None and call.type == "call_expression" else None
            named = [a for a in args.named_children if a.type != "comment"] if args is not None else []
            if len(named) >= 2:
                arg = ctx.text(named[1])
                if named[1].type == "identifier":  # `curandOrdering_t order = CURAND_ORDERING_PSEUDO_LEGACY;`
                    arg = initializer_text(ctx, ctx.function_scope(node), arg) or arg
                if arg.endswith(STABLE_ORDERINGS) or arg.endswith("_DYNAMIC"):
                    return  # stable choice, or the enumerator reports itself
        ctx.report(node, f"`{text}`: {row.note}", fix=fix)
