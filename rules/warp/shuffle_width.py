from hiplint import CudaRule, Fix, Impact, Severity

from ._lanes import SHUFFLE_ARGS_WITHOUT_WIDTH, function_is_32_based, guarded_up_step

# Shuffles whose result depends on the width when lanes 32-63 exist: an indexed broadcast reads
# lane `src` of the whole wave, and an up-shift lets lane 32 read lane 31. Xor and down trees with
# offsets below 32 stay inside each 32-lane half for the lanes that matter, so they are left alone.
WIDTH_SENSITIVE = frozenset({"__shfl_sync", "__shfl", "__shfl_up_sync", "__shfl_up"})


class ShuffleWithoutWidth(CudaRule):
    """A broadcast or scan shuffle without `width` in code whose lanes are numbered in 32s.

    ## What it does
    In a function whose lane or warp arithmetic is 32-based (`threadIdx.x & 31`, `tid / 32`,
    `% WARP_SIZE` with `WARP_SIZE` 32), finds `__shfl_sync` / `__shfl` (indexed broadcast) and
    `__shfl_up_sync` / `__shfl_up` (scans) called without the `width` argument. A scan step whose result
    the loop takes only `if (lane >= offset)`, with the offset a loop below 32, is left alone: no lane
    takes a value from the other half of a 64-lane wave.

    ## Why it breaks on AMD
    The default width is `warpSize`: 64 on gfx90a and gfx942. With 32-based lane numbering each
    64-lane wave holds two "warps", but a broadcast from lane 0 then reads lane 0 of the *wave* for
    both of them, and an inclusive scan carries lane 31's total into lane 32. The results are wrong
    without any error. On NVIDIA, and on wave32 targets, `width = 32` is the default, so adding it
    changes nothing there.

    ## Example
    ```cuda
    __global__ void k(float* out, const float* in) {
        int lane = threadIdx.x & 31;
        float v = in[threadIdx.x];
        float first = __shfl_sync(0xffffffffu, v, 0);
        out[threadIdx.x] = first + lane;
    }
    ```

    ## Use instead
    ```cuda
    __global__ void k(float* out, const float* in) {
        int lane = threadIdx.x & 31;
        float v = in[threadIdx.x];
        float first = __shfl_sync(0xffffffffu, v, 0, 32);
        out[threadIdx.x] = first + lane;
    }
    ```

    ## Fix
    Adds `, 32` as the width: exact on NVIDIA (it is the default there) and it keeps the function
    consistently 32 wide on AMD. Safe.

    ## References
    - HIP C++ language extensions, warp shuffle functions (`width`, default `warpSize`): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html#warp-shuffle-functions
    - CUDA C++ Programming Guide, warp shuffle functions (`width` default `warpSize`): https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#warp-shuffle-functions
    """

    code = "WRP008"
    name = "shuffle-without-width"
    summary = "broadcast/scan shuffle without width in 32-lane code: crosses the half-wave on wave64"
    severity = Severity.ERROR
    impact = Impact.SILENT
    wave_sizes = frozenset({64})
    fix_availability = "always"
    checklist = "Give every shuffle in 32-lane code an explicit width of 32, or make the whole function warpSize-generic."
    query = """
    ((call_expression function: (identifier) @fn arguments: (argument_list) @args) @call
      (#any-of? @fn "__shfl_sync" "__shfl" "__shfl_up_sync" "__shfl_up"))
    """

    def check(self, ctx, captures):
        call, args = captures["call"][0], captures["args"][0]
        fn = ctx.text(captures["fn"][0])
        if args.named_child_count != SHUFFLE_ARGS_WITHOUT_WIDTH[fn]:
            return
        scope = ctx.function_scope(call)
        if not function_is_32_based(ctx, scope):
            return
        last = args.named_children[-1]
        if fn.startswith("__shfl_up") and guarded_up_step(ctx, call, last):
            return  # `if (lane >= offset) x += y;`: no lane takes a value from the other half
        fix = Fix.safe("Add `width = 32`", ctx.insert_after(last, ", 32"))
        what = "broadcast" if fn in ("__shfl_sync", "__shfl") else "scan step"
        ctx.report(call, f"`{fn}` {what} without width in 32-lane code: on a 64-lane wave it reads across the half-wave", fix=fix)
