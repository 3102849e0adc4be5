import re

from hiplint import CudaRule, Impact, Severity
from .._cuda import NamesRuleMixin
from .async_copy import PTX_ADDRESS_HELPERS

_CLUSTER = "`{}`: AMD GPUs have no thread-block clusters or distributed shared memory"
_NAMES = {n: _CLUSTER.format(n) for n in (
    "__cluster_dims__", "cooperative_groups::this_cluster", "cooperative_groups::cluster_group",
    "cudaLaunchAttributeClusterDimension", "cudaLaunchAttributeClusterSchedulingPolicyPreference",
    "cudaFuncAttributeNonPortableClusterSizeAllowed", "cudaFuncAttributeRequiredClusterWidth",
    "cudaFuncAttributeRequiredClusterHeight", "cudaFuncAttributeRequiredClusterDepth",
    "cudaFuncAttributeClusterSchedulingPolicyPreference", "cudaOccupancyMaxActiveClusters",
    "cudaOccupancyMaxPotentialClusterSize", "cudaDevAttrClusterLaunch", "cudaClusterSchedulingPolicy",
    "CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION", "cuOccupancyMaxActiveClusters",
)}
CG_NAMESPACES = ("cooperative_groups",)


class Sm90Clusters(NamesRuleMixin, CudaRule):
    """Thread-block clusters and other Hopper/Blackwell-only features: `__cluster_dims__`,
    `this_cluster()`, cluster launch attributes, `wgmma`, `tcgen05`, `setmaxnreg`.

    ## What it does
    Finds `__cluster_dims__`, cooperative groups' `this_cluster()` and `cluster_group`, the
    cluster launch and function attributes (`cudaLaunchAttributeClusterDimension`,
    `cudaFuncAttributeNonPortableClusterSizeAllowed`, `cudaFuncAttributeRequiredCluster*`),
    `cudaOccupancyMaxActiveClusters`, `cudaDevAttrClusterLaunch`, and inline PTX with `wgmma.*`,
    `tcgen05.*`, `setmaxnreg`, `stmatrix`, `elect.sync`, `barrier.cluster`, `mapa`,
    `%cluster*` registers or `multimem.*`. The message says what each kind of PTX is for: matrix
    instructions (rocWMMA, MFMA), cluster addressing, `setmaxnreg`, `elect.sync`, and `multimem`
    (NVLink SHARP multicast, which has nothing to do with matrices: reduce with RCCL). One finding per
    name and per kind of PTX in a file; its other places are the finding's related locations (a file's
    `wgmma` kernels are re-tiled as one task, and a generated header may hold hundreds of them).

    ## Why it breaks on AMD
    Clusters, distributed shared memory and warpgroup MMA are features of NVIDIA sm_90 and later.
    AMD GPUs schedule one workgroup per compute unit's LDS with no cluster level; HIP's
    cooperative-groups header has no `cluster_group`, and HIPIFY marks the cluster APIs and
    attributes unsupported. The code does not compile on any AMD target.

    ## Example
    ```cuda
    __global__ void __cluster_dims__(2, 1, 1) k(float* out) {
        namespace cg = cooperative_groups;
        cg::this_cluster().sync();
    }
    ```

    ## Use instead
    ```cuda
    __global__ void k(float* out) {
        __syncthreads();  // one workgroup; exchange data through global memory between blocks
    }
    ```

    ## References
    - HIPIFY, CUDA runtime API support table (cluster attributes and `cudaOccupancyMaxActiveClusters` unsupported): https://rocm.docs.amd.com/projects/HIPIFY/en/latest/reference/tables/CUDA_Runtime_API_functions_supported_by_HIP.html
    - ROCm/clr `hipamd/include/hip/amd_detail/amd_hip_cooperative_groups.h` (no cluster group)
    - CUDA C++ Programming Guide, "Thread Block Clusters": https://docs.nvidia.com/cuda/cuda-c-programming-guide/
    """

    code = "NV005"
    nvidia_feature = True
    name = "sm90-clusters"
    summary = "thread-block clusters and sm_90+ instructions have no AMD equivalent"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    checklist = "Re-tile cluster kernels for one workgroup; replace wgmma/tcgen05 with rocWMMA, Composable Kernel or hipBLASLt."
    NAMES = _NAMES
    # A file whose wgmma/tcgen05 PTX is reported does not compile for AMD: the shared-memory address
    # conversions that feed it (`__cvta_generic_to_shared`) are not reported again (API001).
    covers = PTX_ADDRESS_HELPERS
    # One finding per name and per kind of PTX per file, the other places related: re-tiling a file's
    # wgmma kernels (or its cluster code) is one task, not one per instruction (a generated header holds
    # hundreds).
    GROUP_PER_FILE = True
    ASM_CATEGORY = "sm90"
    ASM_MESSAGE = "Hopper/Blackwell PTX (wgmma, tcgen05, clusters, setmaxnreg) has no AMD equivalent; use rocWMMA or MFMA builtins"
    # What each kind of sm_90+ PTX is for, and what to do instead (the first match wins).
    ASM_KINDS = (
        (re.compile(r"\bmultimem\."), "PTX `multimem` (NVLink SHARP multicast memory) has no AMD equivalent; "
                                       "reduce across GPUs with RCCL or peer-to-peer loads"),
        (re.compile(r"\bmapa\.|getctarank|%cluster|barrier\.cluster"),
         "thread-block cluster PTX has no AMD equivalent: AMD GPUs have no clusters or distributed shared memory"),
        (re.compile(r"\bsetmaxnreg\."), "PTX `setmaxnreg` has no AMD equivalent (registers are fixed per kernel); "
                                         "drop it and bound registers with `__launch_bounds__`"),
        (re.compile(r"\belect\.sync"), "PTX `elect.sync` has no AMD equivalent; pick the lowest active lane "
                                        "with `__ffsll(__ballot(1)) - 1`"),
    )

    def asm_message(self, template: str) -> str:
        for pattern, message in self.ASM_KINDS:
            if pattern.search(template):
                return message
        return self.ASM_MESSAGE

    def qualify(self, ctx, ns, name):
        from ..sync._cg import cg_namespace
        return f"cooperative_groups::{name}" if cg_namespace(ctx, ns) else super().qualify(ctx, ns, name)
