from hiplint import CudaRule, Impact, Severity
from .._cuda import NamesRuleMixin

_COND = "`{}` (conditional graph nodes, CUDA 12.3+) has no HIP equivalent; branch on the host or in the kernel"
_PDL = "`{}` (programmatic dependent launch) has no HIP equivalent; rely on stream order instead"
_L2 = "`{}` (L2 persistence / access policy window) has no HIP equivalent"
_EX = "`{}` has no HIP equivalent before ROCm 7.0 (`hipLaunchKernelExC`); HIP supports fewer launch attributes"
_NAMES = {}
_NAMES.update({n: _COND.format(n) for n in (
    "cudaGraphConditionalHandleCreate", "cudaGraphSetConditional", "cudaGraphConditionalHandle",
    "cudaGraphCondTypeIf", "cudaGraphCondTypeWhile", "cudaGraphCondTypeSwitch", "cudaGraphNodeTypeConditional",
    "cudaGraphCondAssignDefault", "cudaConditionalNodeParams",
)})
_NAMES.update({n: _PDL.format(n) for n in (
    "cudaGridDependencySynchronize", "cudaTriggerProgrammaticLaunchCompletion",
    "cudaLaunchAttributeProgrammaticStreamSerialization", "cudaLaunchAttributeProgrammaticEvent",
    "cudaLaunchAttributeLaunchCompletionEvent",
)})
_NAMES.update({n: _L2.format(n) for n in (
    "cudaStreamAttributeAccessPolicyWindow", "cudaLimitPersistingL2CacheSize", "cudaCtxResetPersistingL2Cache",
    "cudaDevAttrMaxPersistingL2CacheSize", "cudaDevAttrMaxAccessPolicyWindowSize",
)})
_NAMES.update({n: _EX.format(n) for n in ("cudaLaunchKernelExC",)})
_NAMES.update({n: f"`{n}` has no HIP equivalent" for n in (
    "cudaLaunchAttributeMemSyncDomain", "cudaLaunchAttributeMemSyncDomainMap",
    "cudaLaunchAttributeSynchronizationPolicy", "cudaLaunchAttributePreferredSharedMemoryCarveout",
    "cudaStreamAttributeSynchronizationPolicy", "cudaStreamAttributeMemSyncDomain",
    "cudaLaunchAttributeDeviceUpdatableKernelNode",
)})
HIP_EX_SINCE = (7, 0)


class GraphAndLaunchAttributeGaps(NamesRuleMixin, CudaRule):
    """CUDA graph and launch features HIP lacks: conditional nodes, programmatic dependent launch,
    L2 access-policy windows, `cudaLaunchKernelExC` before ROCm 7.0.

    ## What it does
    Finds conditional graph nodes (`cudaGraphConditionalHandleCreate`, `cudaGraphSetConditional`,
    `cudaGraphCondType*`), programmatic dependent launch (`cudaGridDependencySynchronize`,
    `cudaTriggerProgrammaticLaunchCompletion`, `cudaLaunchAttributeProgrammaticStreamSerialization`,
    `cudaLaunchAttributeProgrammaticEvent`), L2 persistence (`cudaStreamAttributeAccessPolicyWindow`,
    `cudaLimitPersistingL2CacheSize`), other launch attributes with no HIP counterpart (memory
    synchronization domains, synchronization policy, shared-memory carveout) and, for ROCm
    versions before 7.0, `cudaLaunchKernelExC`. Cluster attributes are NV005.

    ## Why it breaks on AMD
    HIPIFY lists these as unsupported: there is no HIP name to rename them to, so the port does
    not compile. Conditional nodes and programmatic dependent launch are CUDA 12 features with no
    ROCm counterpart; AMD GPUs have no L2 set-aside for persisting accesses.
    `hipLaunchKernelExC` and `hipLaunchKernelEx` exist from HIP 7.0 (rule checks the configured
    `rocm-version`).

    ## Example
    ```cuda
    __global__ void consumer(float* d) {
        cudaGridDependencySynchronize();
        d[threadIdx.x] += 1.f;
    }
    ```

    ## Use instead
    ```cuda
    __global__ void consumer(float* d) {
        d[threadIdx.x] += 1.f;   // ordinary stream order already waits for the producer kernel
    }
    ```

    ## References
    - HIPIFY, CUDA runtime API support table (conditional nodes, programmatic launch attributes, access policy stream attribute unsupported): https://rocm.docs.amd.com/projects/HIPIFY/en/latest/reference/tables/CUDA_Runtime_API_functions_supported_by_HIP.html
    - HIP changelog, HIP 7.0 "New HIP APIs" (`hipLaunchKernelExC`, `hipLaunchKernelEx`): ROCm/rocm-systems `projects/clr/CHANGELOG.md`
    - CUDA C++ Programming Guide, "Programmatic Dependent Launch" and "Conditional Graph Nodes": https://docs.nvidia.com/cuda/cuda-c-programming-guide/
    """

    code = "SYN007"
    nvidia_feature = True
    name = "graph-launch-attribute-gaps"
    summary = "CUDA graph / launch-attribute feature without a HIP equivalent"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    checklist = "Replace conditional graph nodes with host-side control flow, drop programmatic dependent launch and L2 access-policy windows on AMD."
    NAMES = _NAMES
    NAME_NODES = ("identifier", "type_identifier")

    def accept(self, ctx, node, name):
        if name == "cudaLaunchKernelExC":
            return tuple(ctx.rocm_version) < HIP_EX_SINCE
        return True
