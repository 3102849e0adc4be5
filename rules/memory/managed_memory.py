import os
import re

from hiplint import CudaRule, Impact, Severity
from hiplint.cparse import strip_c_comments
from hiplint.lazy import lazy_re

ALLOCATIONS = frozenset({"cudaMallocManaged", "hipMallocManaged", "cuMemAllocManaged"})
HINTS = frozenset({"cudaMemAdvise", "hipMemAdvise", "cudaMemPrefetchAsync", "hipMemPrefetchAsync",
                   "cudaMemAdvise_v2", "cudaMemPrefetchAsync_v2", "cuMemAdvise", "cuMemPrefetchAsync"})


# AMD's own advice values: coherence and caching of the range, whatever XNACK says (HIP runtime API).
AMD_ADVICE = lazy_re(r"\bhipMemAdvise(Set|Unset)CoarseGrain\b")
# A file that looks at XNACK or page migration itself knows what managed memory does on AMD.
XNACK_AWARE = lazy_re(r"HSA_XNACK|\bxnack\b|hipDeviceAttributePageableMemoryAccess\b|"
                         r"hipDeviceAttributeConcurrentManagedAccess\b", re.I)


_AMD_DIR = frozenset({"hip", "rocm", "amd"})
_NVIDIA_DIR = frozenset({"cuda", "nvidia"})


def _beside_cuda_backend(path: str) -> bool:
    """Is `path` under a `hip/` (`rocm/`, `amd/`) directory whose parent holds a `cuda/` (`nvidia/`) one?"""
    parts = os.path.abspath(path).split(os.sep)
    for i in range(len(parts) - 1, 0, -1):
        if parts[i].lower() in _AMD_DIR:
            parent = os.sep.join(parts[:i]) or os.sep
            try:
                return any(e.lower() in _NVIDIA_DIR and os.path.isdir(os.path.join(parent, e))
                           for e in os.listdir(parent))
            except OSError:
                return False
    return False


def _knows_xnack(ctx) -> bool:
    """In the code (not its comments)."""
    known = ctx.cache.get("xnack_aware")
    if known is None and ctx.source.data.isascii():
        # What XNACK_AWARE finds contains one of these (case aside; ASCII text: re.I cases no other
        # letter to them): a file without either is not searched (a search with re.I costs ms).
        low = ctx.source.data.lower()
        if b"xnack" not in low and b"hipdeviceattribute" not in low:
            known = ctx.cache["xnack_aware"] = False
    if known is None:
        code = strip_c_comments(ctx.source.data.decode("utf-8", "replace"))
        known = ctx.cache["xnack_aware"] = bool(XNACK_AWARE.search(code))
    return known


class ManagedMemoryXnack(CudaRule):
    """Managed (unified) memory: on AMD, page migration needs XNACK, which is off by default.

    ## What it does
    Finds `cudaMallocManaged` / `hipMallocManaged` allocations, `__managed__` variables, and the
    migration hints `cudaMemAdvise` / `cudaMemPrefetchAsync` (and `hip` spellings). Not reported in a
    file that checks XNACK or page migration itself (`HSA_XNACK`, `hipDeviceAttributePageableMemoryAccess`,
    `hipDeviceAttributeConcurrentManagedAccess`), nor for AMD's own advice values
    (`hipMemAdviseSetCoarseGrain` and its unset: coherence and caching, with or without XNACK).
    In a project that keeps an NVIDIA and an AMD build (backend switches for both), a `hip` spelling
    is the project's own choice for AMD, not a port of NVIDIA code: not reported there (reviewers
    judged every such finding on five dual-target trees advisory or false: opt-in managed pools, hook
    tests), nor in a `hip/` (or `rocm/`) directory beside a `cuda/` one (an AMD backend written by hand
    next to the NVIDIA one). HIP code of a project with no NVIDIA build (hipify's output) is still checked.
    One finding per file and kind (allocations, `__managed__` variables, hints): the first place, with
    the file's other places as related locations (deciding where managed memory stays is one task).

    ## Why it breaks on AMD
    On NVIDIA, managed memory migrates pages on demand between host and GPU. On AMD that needs
    XNACK (GPU page-fault retry) enabled in the driver and the process (`HSA_XNACK=1`), a kernel
    with HMM support, and code objects built for an `xnack+` or `xnack`-any target. Without it
    (the default on most systems), kernels do not page-fault managed memory over to the GPU: correct but
    far slower. Explicit prefetch and advice then depend on the driver: with HMM support the runtime can
    still move a range when asked; without it `hipMallocManaged` "behaves the same as `hipMallocHost`"
    (HIP API reference), pinned host memory that no hint moves.
    With XNACK enabled, the first touch page-faults. Oversubscribing GPU memory only works with
    XNACK. MI300A (an APU) shares memory physically and behaves differently again. gfx90a and gfx942
    support XNACK; RDNA targets (gfx1100) do not. Every ROCm version.

    ## Example
    ```cuda
    __global__ void scale(float* x, int n);
    void run(int n) {
        float* x;
        cudaMallocManaged(&x, n * sizeof(float));
        scale<<<(n + 255) / 256, 256>>>(x, n);
    }
    ```

    ## Use instead
    ```cuda
    __global__ void scale(float* x, int n);
    void run(const float* host, int n) {
        float* x;
        cudaMalloc(&x, n * sizeof(float));
        cudaMemcpy(x, host, n * sizeof(float), cudaMemcpyHostToDevice);
        scale<<<(n + 255) / 256, 256>>>(x, n);
    }
    ```
    Or keep managed memory, document the `HSA_XNACK=1` requirement, build `xnack+` code objects, and
    check `hipDeviceAttributeManagedMemory` and `hipDeviceAttributeConcurrentManagedAccess` at run time.

    ## References
    - HIP unified memory management (XNACK, HMM, behaviour without XNACK): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_runtime_api/memory_management/unified_memory.html
    - ROCm, GPU memory and XNACK: https://rocm.docs.amd.com/en/latest/conceptual/gpu-memory.html
    - HIP runtime API, Managed Memory (`hipMallocManaged`: without HMM "behaves the same as hipMallocHost"): https://rocm.docs.amd.com/projects/HIP/en/latest/doxygen/html/group___memory_m.html
    - CUDA unified memory programming: https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#unified-memory-programming
    """

    code = "MEM005"
    name = "managed-memory-xnack"
    summary = "managed memory migrates only with XNACK enabled on AMD"
    severity = Severity.WARNING
    impact = Impact.PERFORMANCE
    checklist = "For each managed allocation: switch hot data to explicit device memory, or require HSA_XNACK=1 with xnack+ code objects and check hipDeviceAttributeManagedMemory/ConcurrentManagedAccess."
    query = """
    ((call_expression function: (identifier) @fn) @call (#match? @fn "^(cuda|hip|cu)(Mem|MallocManaged)"))
    ((declaration (type_qualifier) @q) @decl (#eq? @q "__managed__"))
    """

    def check(self, ctx, captures):
        if "decl" in captures:
            if any(ctx.text(q) == "__managed__" for q in captures["q"]):
                ctx.report(captures["decl"][0], "`__managed__` variable: on AMD it migrates only with XNACK enabled "
                                                "(HSA_XNACK=1, xnack+ build); otherwise every access crosses the interconnect",
                           group="managed")
            return
        fn = ctx.text(captures["fn"][0])
        call = captures["call"][0]
        facts = ctx.build_facts
        if fn.startswith("hip") and facts.builds_for_amd and facts.nvidia_switches:
            return  # written for AMD by a project that builds for both vendors: its choice there
        if fn.startswith("hip") and _beside_cuda_backend(ctx.path):
            return  # `interfaces/hip/` beside `interfaces/cuda/`: the project's AMD backend, written for AMD
        if _knows_xnack(ctx):
            return  # the file checks XNACK itself (HSA_XNACK, xnack, page-migration attribute): already handled
        if fn in HINTS and AMD_ADVICE.search(ctx.text(call)):
            return  # hipMemAdviseSetCoarseGrain: a coherence setting of AMD's, not a migration hint
        if fn in ALLOCATIONS:
            ctx.report(call, f"`{fn}`: on AMD managed memory migrates only with XNACK enabled (HSA_XNACK=1, xnack+ "
                             f"build); otherwise it is host memory accessed over the interconnect", group="allocation")
        elif fn in HINTS:
            ctx.report(call, f"`{fn}`: on AMD managed memory migrates on access only with XNACK enabled (HSA_XNACK=1); "
                             f"without it whether this hint moves data depends on HMM support in the driver (none: "
                             f"managed memory is pinned host memory)", severity=Severity.INFO, group="hint")
