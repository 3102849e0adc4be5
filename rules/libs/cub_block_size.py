from hiplint import CudaRule, Impact, Severity

from ..memory._values import const_value

# Block-level CUB algorithms whose warp-transposing variants rocPRIM builds from whole hardware waves.
# The block size is the second template argument (BlockLoad<T, BLOCK_DIM_X, ITEMS, ALGORITHM>, BlockStore
# the same); the algorithm the fourth.
TRANSPOSING = {"BlockLoad": ("BLOCK_LOAD_WARP_TRANSPOSE", "BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED"),
               "BlockStore": ("BLOCK_STORE_WARP_TRANSPOSE", "BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED")}
NAMESPACES = ("cub", "hipcub")


class CubWarpTransposeBlockSize(CudaRule):
    """A CUB block load or store that transposes through warps, with a block that is not whole waves.

    ## What it does
    Finds `cub::BlockLoad<T, N, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>` and `BlockStore` with
    `BLOCK_STORE_WARP_TRANSPOSE` (and the `_TIMESLICED` variants, and the `hipcub::` spellings hipify
    produces) whose block size N, a constant hiplint can compute, is not a multiple of the widest wave
    of the selected targets: 64 with gfx90a or gfx942 selected (a block of 32 or 96 threads), 32 with
    wave32 targets alone. Block sizes given by a template parameter the rule cannot resolve are not
    reported.

    ## Why it breaks on AMD
    CUB's warp-transposing algorithms need the block to be whole 32-thread warps, so CUDA code uses
    blocks of 32, 96 or 160 threads with them. hipCUB's rocPRIM backend builds them from hardware waves
    and asserts it at compile time: `static_assert(BlockSize % wavefront::min_size() == 0, "BlockSize
    must be a multiple of hardware warpsize")` (rocprim/block/block_load.hpp, ROCm 7.2). A block of 32
    does not compile for gfx90a or gfx942 (64-lane waves); it does for gfx1100 (checked with ROCm 7.2's
    clang 22). Every ROCm version with rocPRIM's check.

    ## Example
    ```cuda
    #include <cub/cub.cuh>
    __global__ void k(const float* in, float* out) {
        using Load = cub::BlockLoad<float, 32, 4, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
        __shared__ typename Load::TempStorage tmp;
        float v[4];
        Load(tmp).Load(in, v);
        out[threadIdx.x] = v[0];
    }
    ```

    ## Use instead
    ```cuda
    // A block of whole wave64 waves (or, keeping the block, BLOCK_LOAD_TRANSPOSE, which needs none)
    using Load = cub::BlockLoad<float, 64, 4, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    ```

    ## References
    - rocPRIM block_load (the block-size assertion): https://github.com/ROCm/rocPRIM/blob/develop/rocprim/include/rocprim/block/block_load.hpp
    - CUB BlockLoadAlgorithm: https://nvidia.github.io/cccl/cub/api/enum_namespacecub_1adc1e4c2dce1bf2b3da5f47fd2bd67c8b.html
    """

    code = "LIB013"
    name = "cub-warp-transpose-block-size"
    summary = "CUB warp-transposing block load/store with a block that is not whole AMD waves: does not compile"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    wave_sizes = frozenset({64, 32})
    checklist = "Make blocks that use BLOCK_LOAD/STORE_WARP_TRANSPOSE whole waves (multiples of 64 on gfx90a/gfx942), or use the plain TRANSPOSE algorithm."
    _classes = " ".join(f'"{c}"' for c in sorted(TRANSPOSING))
    query = f"""
    ((template_type
      name: (type_identifier) @cls
      arguments: (template_argument_list) @args) @tmpl (#any-of? @cls {_classes}))
    """

    def check(self, ctx, captures):
        tmpl, cls = captures["tmpl"][0], ctx.text(captures["cls"][0])
        parent = tmpl.parent
        if parent is not None and parent.type == "qualified_identifier" and parent.child_by_field_name("name") == tmpl:
            scope = parent.child_by_field_name("scope")
            if scope is None or ctx.text(scope).lstrip(":") not in NAMESPACES:
                return
        args = [a for a in captures["args"][0].named_children if a.type != "comment"]
        if len(args) < 4 or not any(ctx.text(args[3]).endswith(a) for a in TRANSPOSING[cls]):
            return
        threads = const_value(ctx, args[1])
        wave = max(ctx.settings.wave_sizes)
        if threads is None or threads <= 0 or threads % wave == 0:
            return
        targets = "gfx90a, gfx942" if wave == 64 else "gfx1100"
        ctx.report(args[1], f"`{cls}` with {ctx.text(args[3]).split('::')[-1]} and a block of {threads} threads: "
                            f"rocPRIM builds it from whole waves and static_asserts that the block is a multiple "
                            f"of the wave, {wave} lanes on {targets}: the build fails there; use a block of "
                            f"whole waves, or the TRANSPOSE algorithm")
