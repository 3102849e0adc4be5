import re

from hiplint import CudaRule, Fix, Impact, Severity
from hiplint.cparse import iter_nodes
from hiplint.lazy import lazy_re

# Warp-level class templates and the 0-based position of LOGICAL_WARP_THREADS in their parameter
# lists (CUB and hipCUB agree). WarpLoad/WarpStore have the algorithm before it; its default is
# spelled out when the fix has to reach the warp-width parameter.
LOGICAL_WARP_PARAM = {"WarpReduce": 1, "WarpScan": 1, "WarpExchange": 2, "WarpLoad": 3, "WarpStore": 3}
DEFAULT_ALGORITHM = {"WarpLoad": "WARP_LOAD_DIRECT", "WarpStore": "WARP_STORE_DIRECT"}
NAMESPACES = ("cub", "hipcub")
PINNED_WIDTH = "32"
# Warp indices computed from the wave size: with the default width the code is consistent on both vendors.
WAVE_SIZED = lazy_re(r"[/%]\s*(warpSize|HIPCUB_WARP_THREADS|HIPCUB_DEVICE_WARP_THREADS|CUB_PTX_WARP_THREADS)\b")
THIRTY_TWO_BASED = lazy_re(r"/\s*32\b|%\s*32\b|&\s*31\b|>>\s*5\b")


class CubLogicalWarpWidth(CudaRule):
    """CUB warp primitive without an explicit logical warp width: 32 on CUDA, 64 with hipCUB on CDNA.

    ## What it does
    Finds `cub::WarpReduce<T>`, `WarpScan<T>`, `WarpExchange<T, N>`, `WarpLoad<T, N>` and
    `WarpStore<T, N>` (and the `hipcub::` spellings hipify produces) whose `LOGICAL_WARP_THREADS`
    template argument is left to its default. With a wave32 target selected (gfx1100), also a width
    given above 32 (`hipcub::WarpReduce<float, 64>`, written for CDNA's 64-lane waves): rocPRIM requires
    a logical warp to fit the hardware wave, and the build fails for that target (an error). Not reported when the surrounding function computes
    its warp indices from `warpSize` (and nowhere in 32s): the default width then matches the
    indexing on both vendors. Nor a `hipcub::` spelling in a project that builds for AMD (not through
    hipify at build time) where the function numbers nothing in 32s: the author wrote it for hipCUB,
    whose default is the wave (GauXC sizes its storage with its own AMD warp size; WRP012 reports a
    warp size of 64 that wave32 targets break).

    ## Why it breaks on AMD
    In CUB the default logical warp is 32 threads (`CUB_PTX_WARP_THREADS`). hipify renames `cub::` to
    `hipcub::`, and in hipCUB's rocPRIM backend the default is the hardware wave:
    `HIPCUB_WARP_THREADS` for WarpReduce/WarpScan and `HIPCUB_DEVICE_WARP_THREADS` for
    WarpLoad/WarpStore/WarpExchange, 64 on gfx90a, gfx942 and gfx950. Code written for CUB sizes
    `TempStorage temp[THREADS / 32]` and indexes it with `threadIdx.x / 32`; with 64-lane logical
    warps two "warps" share one TempStorage and each reduction covers 64 values instead of 32:
    silent wrong results and races, no compile error. Applies to wave64 targets, every ROCm version;
    on wave32 targets (gfx1100) both defaults are 32.

    ## Example
    ```cuda
    #include <cub/cub.cuh>
    __global__ void k(const float* in, float* out) {
        using WarpReduce = cub::WarpReduce<float>;
        __shared__ WarpReduce::TempStorage temp[8];
        int warp = threadIdx.x / 32;
        float s = WarpReduce(temp[warp]).Sum(in[threadIdx.x]);
        if (threadIdx.x % 32 == 0) out[warp] = s;
    }
    ```

    ## Use instead
    ```cuda
    #include <cub/cub.cuh>
    __global__ void k(const float* in, float* out) {
        using WarpReduce = cub::WarpReduce<float, 32>;
        __shared__ WarpReduce::TempStorage temp[8];
        int warp = threadIdx.x / 32;
        float s = WarpReduce(temp[warp]).Sum(in[threadIdx.x]);
        if (threadIdx.x % 32 == 0) out[warp] = s;
    }
    ```

    ## Fix
    Adds the width: `cub::WarpReduce<float>` becomes `cub::WarpReduce<float, 32>`; for WarpLoad and
    WarpStore the default algorithm is written out first (`cub::WarpLoad<T, N, cub::WARP_LOAD_DIRECT, 32>`).
    The result is valid CUDA and exactly CUB's default there, and on AMD it restores the 32-thread
    logical warps the code was written for (hipCUB supports any power of two up to the wave size).
    The fix is safe for the `cub::` spelling in a function that visibly works in 32s (`threadIdx.x / 32`,
    `TempStorage temp[THREADS / 32]`). Elsewhere it is unsafe: a kernel that is one logical warp with no
    numbering may be launched with the wave size on AMD, where the default is right and 32 would halve
    the reduction; and `hipcub::` code may be hand-written for AMD with 64-lane logical warps in mind
    (sizes or offsets that the rule cannot see). A person must confirm the width.

    ## References
    - CUB `WarpReduce` (default `LOGICAL_WARP_THREADS` = 32): https://nvidia.github.io/cccl/cub/api/classcub_1_1WarpReduce.html
    - hipCUB rocPRIM backend: hipcub/include/hipcub/backend/rocprim/warp/warp_reduce.hpp, warp_scan.hpp, warp_load.hpp, warp_store.hpp, warp_exchange.hpp (defaults `HIPCUB_WARP_THREADS` / `HIPCUB_DEVICE_WARP_THREADS`): https://github.com/ROCm/hipCUB
    - hipify: `cub::` -> `hipcub::` (HIPIFY CUB table): https://rocm.docs.amd.com/projects/HIPIFY/en/latest/reference/tables/CUB_API_supported_by_HIP.html
    """

    code = "LIB001"
    name = "cub-logical-warp-width"
    summary = "CUB warp primitive uses the default logical warp width: 32 on CUDA, 64 in hipCUB on wave64"
    severity = Severity.ERROR
    impact = Impact.SILENT
    wave_sizes = frozenset({64, 32})  # the default width matters on wave64; a width above 32 on wave32
    fix_availability = "always"
    checklist = "Give every cub::/hipcub:: Warp* primitive an explicit LOGICAL_WARP_THREADS (32 for code written for CUDA) and size TempStorage arrays to match."
    _classes = " ".join(f'"{c}"' for c in sorted(LOGICAL_WARP_PARAM))
    query = f"""
    ((template_type
      name: (type_identifier) @cls
      arguments: (template_argument_list) @args) @tmpl (#any-of? @cls {_classes}))
    ((template_function
      name: (identifier) @cls
      arguments: (template_argument_list) @args) @tmpl (#any-of? @cls {_classes}))
    """

    def _namespace(self, ctx, tmpl):
        node, parent = tmpl, tmpl.parent
        # `Warp<T>::TempStorage`: the template is the scope of an inner qualified name.
        if parent is not None and parent.type == "qualified_identifier" and parent.child_by_field_name("scope") == tmpl:
            node, parent = parent, parent.parent
        if parent is not None and parent.type == "qualified_identifier" and parent.child_by_field_name("name") == node:
            scope = parent.child_by_field_name("scope")
            return ctx.text(scope) if scope is not None else ""
        # Unqualified: only when the file opened the namespace with a using-directive.
        for ns in NAMESPACES:
            if self._using_namespace(ctx, ns):
                return ns
        return None

    @staticmethod
    def _using_namespace(ctx, ns):
        key = ("lib001_using", ns)
        if key not in ctx.cache:
            found = False
            for unit in ctx.units:
                for node in iter_nodes(unit.root, {"using_declaration"}):
                    words = unit.text(node).replace(";", " ").split()
                    if words[:2] == ["using", "namespace"] and words[2:] in ([ns], ["::" + ns]):
                        found = True
            ctx.cache[key] = found
        return ctx.cache[key]

    @staticmethod
    def _function_text(ctx, node) -> str:
        fn = ctx.enclosing_function(node)
        return ctx.text(fn) if fn is not None else ctx.unit.text(ctx.unit.root)

    def _wave_sized(self, ctx, node) -> bool:
        """Does the surrounding function index its warps by warpSize (and never in 32s)?"""
        text = self._function_text(ctx, node)
        return bool(WAVE_SIZED.search(text)) and not THIRTY_TWO_BASED.search(text)

    def _thirty_two_based(self, ctx, node) -> bool:
        return bool(THIRTY_TWO_BASED.search(self._function_text(ctx, node)))

    @staticmethod
    def _check_given_width(ctx, tmpl, ns, cls, arg):
        """A logical warp wider than the wave of a selected wave32 target does not compile there: rocPRIM
        requires the logical warp to fit the hardware wave (`hipcub::WarpReduce<float, 64>` for gfx1100)."""
        from ..memory._values import const_value

        width = const_value(ctx, arg)
        if width is None or width <= 32 or 32 not in ctx.settings.wave_sizes:
            return
        ctx.report(arg, f"`{ns}::{cls}` with a logical warp of {width} threads: rocPRIM requires a logical warp "
                        f"to fit the hardware wave, and wave32 targets (gfx1100) run 32-lane waves: the build "
                        f"fails there; use at most 32 on them (`HIPCUB_WARP_THREADS` is the wave of the target)",
                   severity=Severity.ERROR)

    def check(self, ctx, captures):
        tmpl = captures["tmpl"][0]
        cls = ctx.text(captures["cls"][0])
        if cls not in LOGICAL_WARP_PARAM:
            return
        ns = self._namespace(ctx, tmpl)
        if ns is None or ns.lstrip(":") not in NAMESPACES:
            return
        ns = ns.lstrip(":")
        args_node = captures["args"][0]
        args = [a for a in args_node.named_children if a.type != "comment"]
        position = LOGICAL_WARP_PARAM[cls]
        if len(args) > position:
            self._check_given_width(ctx, tmpl, ns, cls, args[position])
            return
        if self._wave_sized(ctx, tmpl):
            return
        if ns == "hipcub" and ctx.build_facts.builds_for_amd and not self._thirty_two_based(ctx, tmpl) \
                and not ctx.build_facts.hipified_at_build:
            return  # hipCUB written for AMD by a project that builds for it: its default width is the author's choice
        if not args or 64 not in ctx.settings.wave_sizes:
            return  # not a use we understand; or wave32 targets alone, where both defaults are 32
        additions = []
        if len(args) < position:
            if cls not in DEFAULT_ALGORITHM or len(args) != position - 1:
                return
            additions.append(f"{ns}::{DEFAULT_ALGORITHM[cls]}")
        additions.append(PINNED_WIDTH)
        edit = ctx.insert_after(args[-1], "".join(", " + a for a in additions))
        title = f"pin the logical warp width: {ns}::{cls}<..., {PINNED_WIDTH}>"
        # Safe only where the code visibly works in 32s (`threadIdx.x / 32`, `temp[THREADS / 32]`): a kernel
        # that is one logical warp with no numbering (launched with the wave size on AMD) is right with
        # the wave-wide default, and pinning 32 would halve its reduction there.
        fix = Fix.safe(title, edit) if ns == "cub" and self._thirty_two_based(ctx, tmpl) else Fix.unsafe(title, edit)
        ctx.report(tmpl, f"`{ns}::{cls}` without LOGICAL_WARP_THREADS: CUB's default is 32 threads, hipCUB's is the "
                         f"wave (64 on gfx90a/gfx942/gfx950); pin `{PINNED_WIDTH}` (or the width the code sizes its storage for)",
                   fix=fix)
