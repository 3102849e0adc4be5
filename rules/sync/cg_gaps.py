from hiplint import CudaRule, Impact, Severity
from hiplint.config import wave_size_of
from ._cg import cg_namespace
from .._cuda import NamesRuleMixin, namespace_of
from ..warp._lanes import int_literal

_MISSING = "cooperative groups `{}` does not exist in HIP's cooperative_groups; use hipCUB/rocPRIM warp and block primitives"
_NAMES = {f"cooperative_groups::{n}": _MISSING.format(n) for n in (
    "reduce", "inclusive_scan", "exclusive_scan", "memcpy_async", "wait", "wait_prior", "labeled_partition",
    "invoke_one", "invoke_one_broadcast", "reduce_update_async", "reduce_store_async",
)}
_NAMES["cooperative_groups::this_multi_grid"] = ("`this_multi_grid()` (multi-device grid groups) is deprecated in "
                                                 "ROCm since 5.0 (ROCm 7.2 still compiles it); launch per device "
                                                 "and synchronise on the host")
_HEADERS = {h: f"<{h}> has no HIP counterpart (HIP ships only <hip/hip_cooperative_groups.h>)" for h in (
    "cooperative_groups/reduce.h", "cooperative_groups/memcpy_async.h", "cooperative_groups/scan.h",
)}
TILE_NAMES = ("tiled_partition", "thread_block_tile")


class CooperativeGroupsGaps(NamesRuleMixin, CudaRule):
    """Cooperative-groups features HIP lacks: `cg::reduce`, `cg::memcpy_async`, `labeled_partition`,
    `invoke_one`, and tile sizes HIP rejects.

    ## What it does
    Finds `#include <cooperative_groups/reduce.h>`, `<cooperative_groups/memcpy_async.h>` and
    `<cooperative_groups/scan.h>`; calls of `cg::reduce`, `cg::inclusive_scan`,
    `cg::exclusive_scan`, `cg::memcpy_async`, `cg::wait`, `cg::wait_prior`,
    `cg::labeled_partition`, `cg::invoke_one` and the deprecated `this_multi_grid()`; and
    `tiled_partition<N>` / `thread_block_tile<N>` / `tiled_partition(g, N)` with a literal N that
    is not a power of two or exceeds 64, or equals 64 when a wave32 target (gfx10/gfx11/gfx12)
    is configured. `this_cluster()` is NV005.
    A local variable or parameter of such a name (`float reduce = 0.f;` under
    `using namespace cooperative_groups;`) shadows it and is not reported.

    ## Why it breaks on AMD
    HIP's `amd_hip_cooperative_groups.h` implements thread groups, tiles, coalesced groups and
    grid groups, but none of the reduce, scan, asynchronous-copy, labeled-partition or
    invoke-one headers: the code does not compile. A tile size "must be a power of 2 and not
    larger than warp (wavefront) size": a compile-time `static_assert` for
    `thread_block_tile<N>`, and a device-side `__hip_assert(false && "invalid tile size")` for
    the runtime form. 64 is valid on wave64 targets (gfx90a, gfx942, gfx950) but not on wave32
    (gfx1100). Multi-grid groups have been deprecated since ROCm 5.0; ROCm 7.2's header still
    declares `this_multi_grid()`, so that one is a warning about the future, not a compile error.

    ## Example
    ```cuda
    #include <cooperative_groups.h>
    #include <cooperative_groups/reduce.h>
    namespace cg = cooperative_groups;
    __device__ float tile_sum(float v) {
        auto tile = cg::tiled_partition<128>(cg::this_thread_block());
        return cg::reduce(tile, v, cg::plus<float>());
    }
    ```

    ## Use instead
    ```cuda
    #include <cooperative_groups.h>
    namespace cg = cooperative_groups;
    __device__ float tile_sum(float v) {
        auto tile = cg::tiled_partition<32>(cg::this_thread_block());
        for (int o = tile.size() / 2; o > 0; o /= 2) v += tile.shfl_down(v, o);
        return v;
    }
    ```

    ## References
    - HIP cooperative groups: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_runtime_api/cooperative_groups.html
    - ROCm/clr `hipamd/include/hip/amd_detail/amd_hip_cooperative_groups.h` (tile `static_assert` and "invalid tile size")
    - CUDA C++ Programming Guide, "Cooperative Groups" (`reduce`, `memcpy_async`, `labeled_partition`, `invoke_one`): https://docs.nvidia.com/cuda/cuda-c-programming-guide/
    """

    code = "SYN006"
    name = "cooperative-groups-gaps"
    summary = "cooperative-groups feature that HIP lacks"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    checklist = "Replace cg::reduce/scan/memcpy_async/labeled_partition with hipCUB/rocPRIM or explicit code; keep tile sizes powers of two no larger than the wave."
    NAMES = _NAMES
    HEADERS = _HEADERS
    # Deprecated, not missing: ROCm 7.2's amd_hip_cooperative_groups.h still declares it.
    NAME_SEVERITY = {"cooperative_groups::this_multi_grid": (Severity.WARNING, Impact.PORTABILITY)}
    NAME_NODES = ("identifier",)
    EXTRA_QUERY = """
    ((template_function name: (identifier) @tile arguments: (template_argument_list (number_literal) @size)) (#match? @tile "^(tiled_partition)$"))
    ((template_type name: (type_identifier) @tile arguments: (template_argument_list (number_literal) @size)) (#match? @tile "^(thread_block_tile)$"))
    ((call_expression function: [(identifier) (qualified_identifier)] @tilefn arguments: (argument_list (_) (number_literal) @size)) (#match? @tilefn "tiled_partition$"))
    """

    def qualify(self, ctx, ns, name):
        return f"cooperative_groups::{name}" if cg_namespace(ctx, ns) else None

    def check(self, ctx, captures):
        super().check(ctx, captures)
        size = captures.get("size", [None])[0]
        tile = (captures.get("tile") or captures.get("tilefn") or [None])[0]
        if size is None or tile is None:
            return
        ident = tile if tile.type in ("identifier", "type_identifier") else tile.child_by_field_name("name")
        ns = namespace_of(ctx, ident) if ident is not None else ""
        if ns and not cg_namespace(ctx, ns):
            return
        lit = int_literal(ctx.text(size))
        if lit is None:
            return
        n = lit[0]
        problem = ""
        if n == 0 or n & (n - 1):
            problem = f"tile size {n} is not a power of two"
        elif n > 64:
            problem = f"tile size {n} is larger than any AMD wave (64)"
        elif n == 64 and 32 in ctx.settings.wave_sizes:
            wave32 = [t for t in ctx.settings.targets if wave_size_of(t) == 32]
            problem = f"tile size 64 is larger than the 32-lane waves of {', '.join(wave32)}"
        if problem:
            ctx.report(size, f"{problem}: HIP's cooperative groups reject it (power of two, at most the wavefront size)")
