from hiplint import CudaRule, Impact, Severity
from .._cuda import NamesRuleMixin

_LIBCU = "`{}` (libcu++ barrier) has no HIP equivalent; use `__syncthreads()` or an explicit shared-memory counter"
_SEMAPHORE = "`{}` (libcu++ semaphore) has no HIP equivalent; use an atomic counter (`atomicCAS` / `atomicAdd`)"
_NAMES = {n: _LIBCU.format(n) for n in ("cuda::barrier", "cuda::std::barrier", "cuda::std::latch", "cuda::latch")}
_NAMES.update({n: _SEMAPHORE.format(n) for n in (
    "cuda::binary_semaphore", "cuda::counting_semaphore", "cuda::std::binary_semaphore", "cuda::std::counting_semaphore",
)})
_NAMES["__barrier_sync"] = "`__barrier_sync` (named barrier) has no HIP equivalent; HIP has only the whole-block `__syncthreads()`"
# Their `<cuda/...>` headers are libcu++'s: LIB011 reports the first one a file includes (with what
# libhipcxx lacks), so this rule reports the names only.
_HEADERS: dict = {}


class NamedBarrier(NamesRuleMixin, CudaRule):
    """Partial and named barriers: PTX `bar.sync id, count`, `bar.arrive`, `barrier.sync`, and
    libcu++ `cuda::barrier`, `cuda::latch`, `cuda::counting_semaphore`.

    ## What it does
    Finds inline PTX whose template holds `bar.sync`, `bar.arrive`, `bar.red`, `barrier.sync`
    or `barrier.arrive` (named barriers 0 to 15 with a thread count, used for producer/consumer
    warp specialisation), the libcu++ types `cuda::barrier`, `cuda::std::barrier`, `cuda::latch`
    and semaphores (their `<cuda/...>` headers are LIB011's, which reports a file's libcu++ include once).

    ## Why it breaks on AMD
    HIP offers only the whole-workgroup barrier `__syncthreads()` (and its `_count/_and/_or`
    forms); there is no named or counted barrier in HIP and no libcu++ (`<cuda/...>`) on ROCm.
    The code does not compile for any AMD target. Emulating a partial barrier with a spin on a
    shared-memory counter runs into SYN001 (waves cannot wait on lanes of their own wave).

    ## Example
    ```cuda
    __device__ void producer_done() {
        asm volatile("bar.arrive 1, 128;");
    }
    ```

    ## Use instead
    ```cuda
    __device__ void producer_done() {
        __syncthreads();   // all threads of the block take part
    }
    ```

    ## References
    - HIP kernel language, "Synchronization functions": https://rocm.docs.amd.com/projects/HIP/en/latest/reference/kernel_language.html
    - PTX ISA, `bar`, `barrier`: https://docs.nvidia.com/cuda/parallel-thread-execution/
    - libcu++ `cuda::barrier`: https://nvidia.github.io/cccl/libcudacxx/extended_api/synchronization_primitives/barrier.html
    """

    code = "SYN003"
    nvidia_feature = True
    name = "named-partial-barrier"
    summary = "named/partial barriers and libcu++ barriers have no HIP equivalent"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    checklist = "Replace named barriers (bar.sync id,count / bar.arrive / cuda::barrier) with __syncthreads() and restructure warp specialisation."
    NAMES = _NAMES
    HEADERS = _HEADERS
    NAME_NODES = ("identifier", "type_identifier")
    ASM_CATEGORY = "barrier"
    ASM_MESSAGE = "PTX named/partial barrier (`bar.sync`/`bar.arrive` with an id and count) has no AMD equivalent; HIP has only `__syncthreads()`"
