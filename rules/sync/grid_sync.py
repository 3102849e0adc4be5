import re

from hiplint import CudaRule, Impact, Severity
from hiplint.cparse import iter_nodes, strip_c_comments
from hiplint.headers import includers, project_headers
from ._cg import cg_namespace
from .._cuda import namespace_of
from hiplint.lazy import lazy_re

COOPERATIVE_LAUNCH = lazy_re(
    r"\b(cudaLaunchCooperativeKernel|cudaLaunchCooperativeKernelMultiDevice|hipLaunchCooperativeKernel|"
    r"hipLaunchCooperativeKernelMultiDevice|hipExtLaunchCooperativeKernel|cudaLaunchAttributeCooperative|"
    r"hipLaunchAttributeCooperative|cuLaunchCooperativeKernel|hipModuleLaunchCooperativeKernel|"
    r"CU_LAUNCH_ATTRIBUTE_COOPERATIVE)\b")


class GridSyncWithoutCooperativeLaunch(CudaRule):
    """Grid-wide `sync()` of cooperative groups in a file with no cooperative launch.

    ## What it does
    Finds `this_grid().sync()`, `grid.sync()` on a `grid_group` (declared as one, or set from
    `this_grid()`), and `cg::sync(grid)`, in files that never call `cudaLaunchCooperativeKernel`
    (or `hipLaunchCooperativeKernel`, or set `cudaLaunchAttributeCooperative`), nor include (with
    quotes) a project header that does (a launch macro that sets the attribute). Reported once per
    kernel (one launch to change), its other grid syncs as related locations.

    ## Why it breaks on AMD
    A grid barrier needs every block of the grid resident at once, which only a cooperative
    launch checks and guarantees. Launched with `<<<>>>`, `grid.sync()` is undefined on both
    vendors, but grids sized for NVIDIA residency often happened to fit; on AMD the residency
    rules differ (64 KiB LDS per workgroup on CDNA, 64-lane waves, a different number of compute
    units per device and partition), so blocks that are not resident never arrive and the kernel
    hangs. HIP's cooperative-groups documentation requires `hipLaunchCooperativeKernel` for grid
    synchronization, and HIP 7.0 added parameter validation to it. For a kernel in a header, a
    source beside it (or in the directory above) that includes it and launches cooperatively
    counts. A launch elsewhere: suppress with a reason, or check that file.

    ## Example
    ```cuda
    #include <cooperative_groups.h>
    namespace cg = cooperative_groups;
    __global__ void two_pass(float* d) {
        d[blockIdx.x] += 1.f;
        cg::this_grid().sync();
    }
    void run(float* d) { two_pass<<<1024, 256>>>(d); }
    ```

    ## Use instead
    ```cuda
    #include <cooperative_groups.h>
    namespace cg = cooperative_groups;
    __global__ void two_pass(float* d) {
        d[blockIdx.x] += 1.f;
        cg::this_grid().sync();
    }
    void run(float* d, int blocks) {
        void* args[] = {&d};
        cudaLaunchCooperativeKernel((void*)two_pass, blocks, 256, args, 0, 0);
    }
    ```
    Size `blocks` with `cudaOccupancyMaxActiveBlocksPerMultiprocessor` times the number of
    multiprocessors, and check `cudaDevAttrCooperativeLaunch`.

    ## References
    - HIP cooperative groups, "Grid group" and synchronization: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_runtime_api/cooperative_groups.html
    - HIP changelog, HIP 7.0 "Behavior changes" (`hipLaunchCooperativeKernel` validation): ROCm/clr `CHANGELOG.md`
    - CUDA C++ Programming Guide, "Grid Synchronization": https://docs.nvidia.com/cuda/cuda-c-programming-guide/
    """

    code = "SYN005"
    name = "grid-sync-without-cooperative-launch"
    summary = "grid-wide sync without a cooperative launch in this file"
    severity = Severity.WARNING
    impact = Impact.HANG
    checklist = "Launch kernels that call grid.sync() with hipLaunchCooperativeKernel and a grid sized from hipOccupancyMaxActiveBlocksPerMultiprocessor."
    query = """
    (call_expression function: (field_expression argument: (_) @obj field: (field_identifier) @m (#eq? @m "sync"))) @call
    (call_expression function: (qualified_identifier name: (identifier) @fn (#eq? @fn "sync")) arguments: (argument_list (identifier) @obj)) @call
    """

    def check(self, ctx, captures):
        call = captures["call"][0]
        obj = captures["obj"][0]
        if "fn" in captures and not cg_namespace(ctx, namespace_of(ctx, captures["fn"][0])):
            return
        if not self._is_grid(ctx, call, obj):
            return
        if self._has_cooperative_launch(ctx) or self._launched_by_includer(ctx) or self._header_launches(ctx):
            return
        # One launch to change per kernel: its grid syncs are one finding, the others related locations.
        scope = ctx.function_scope(call)
        ctx.report(call, f"`{ctx.text(call)}` needs a cooperative launch (all blocks resident); this file has "
                         f"no cudaLaunchCooperativeKernel: on AMD non-resident blocks never arrive and the kernel hangs",
                   group=f"kernel:{scope.start_byte if scope is not None else 0}")

    @staticmethod
    def _has_cooperative_launch(ctx) -> bool:
        """A cooperative launch named in code (not in a comment or string), macro bodies included."""
        found = ctx.cache.get("syn_coop_launch")
        if found is None:
            found = False
            for unit in ctx.units:
                for node in iter_nodes(unit.root, {"identifier"}):
                    if COOPERATIVE_LAUNCH.fullmatch(unit.text(node)):
                        found = True
                        break
                if found:
                    break
            ctx.cache["syn_coop_launch"] = found
        return found

    @staticmethod
    def _header_launches(ctx) -> bool:
        """A project header the file includes names a cooperative launch: a launch macro or helper
        (`SETUP_LAUNCH_CONFIG` setting `cudaLaunchAttributeCooperative`) that the file's launch uses."""
        # A launch named in a header's comment (`// see cudaLaunchCooperativeKernel`) launches nothing.
        return any(COOPERATIVE_LAUNCH.search(strip_c_comments(data.decode("utf-8", "replace")))
                   for _, data in project_headers(ctx))

    @staticmethod
    def _launched_by_includer(ctx) -> bool:
        """A kernel header: does a source beside it that includes it launch cooperatively?"""
        return any(COOPERATIVE_LAUNCH.search(data.decode("utf-8", "replace")) for _, data in includers(ctx))

    @staticmethod
    def _is_grid(ctx, call, obj) -> bool:
        text = ctx.text(obj)
        if re.search(r"\bthis_grid\s*\(\s*\)$", text):
            return True
        if obj.type != "identifier":
            return False
        scope = ctx.function_scope(call)
        name = re.escape(text)
        return re.search(r"\bgrid_group\s*&?\s*" + name + r"\b|\b" + name + r"\s*=\s*[\w:]*this_grid\s*\(",
                         ctx.text(scope)) is not None
