from hiplint import Impact, Severity

from ._whole import WholeLibraryRule


class NvshmemToRocshmem(WholeLibraryRule):
    """NVSHMEM is used: hipify leaves it alone; AMD's counterpart is rocSHMEM, a subset with its own names.

    ## What it does
    Reports the first NVSHMEM include (`nvshmem.h`, `nvshmemx.h`) of a file, or in a file without one
    the first `nvshmem_*` / `nvshmemx_*` / `NVSHMEM_*` name (a header of the project may include it).
    Once per file, and once per directory in what is reported (its other files are related locations).

    ## Why it breaks on AMD
    NVSHMEM (GPU-initiated puts, gets, atomics and barriers on a symmetric heap across GPUs and nodes)
    exists only for NVIDIA GPUs, and HIPIFY has no table for it: the includes and every `nvshmem_*`
    call survive hipify and the build fails. AMD's library is rocSHMEM (`rocshmem/rocshmem.hpp`,
    `rocshmem_init`, `rocshmem_malloc`, `rocshmem_putmem`...): OpenSHMEM-like as NVSHMEM is, but
    another API surface. It needs ROCm 6.4 or later, relocatable device code (`-fgpu-rdc` to compile,
    `--hip-link -fgpu-rdc` to link), `librocshmem` and a ROCm-aware MPI; AMD tests it on MI250X,
    MI300X and (ROCm 7.0+) MI350X. NVSHMEM extensions without a counterpart (`nvshmemx_*` collective
    launches, InfiniBand GPUDirect Async transports) need a redesign. All targets.

    ## Example
    ```cuda
    #include <nvshmem.h>
    __global__ void ring(int* dst, int v, int pe) { nvshmem_int_p(dst, v, pe); }
    ```

    ## Use instead
    ```cuda
    #include <rocshmem/rocshmem.hpp>
    __global__ void ring(int* dst, int v, int pe) { rocshmem_int_p(dst, v, pe); }
    ```
    after checking each call in rocSHMEM's API reference, and building with `-fgpu-rdc`.

    ## References
    - rocSHMEM documentation (API reference, install requirements): https://rocm.docs.amd.com/projects/rocSHMEM/en/latest/
    - rocSHMEM, compiling and running applications (`-fgpu-rdc`, MPI): https://rocm.docs.amd.com/projects/rocSHMEM/en/latest/compile_and_run.html
    - NVSHMEM API: https://docs.nvidia.com/nvshmem/api/
    - HIPIFY support tables (no NVSHMEM table): https://rocm.docs.amd.com/projects/HIPIFY/en/latest/reference/supported_apis.html
    """

    code = "LIB012"
    name = "nvshmem-to-rocshmem"
    summary = "NVSHMEM is not renamed by hipify: port to rocSHMEM"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    library = "nvshmem"
    checklist = "Port NVSHMEM calls to rocSHMEM (rocshmem/rocshmem.hpp) one by one against its API reference; build with -fgpu-rdc and link librocshmem plus a ROCm-aware MPI."
