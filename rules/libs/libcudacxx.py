from hiplint import Impact, Severity

from ._whole import WholeLibraryRule


class Libcudacxx(WholeLibraryRule):
    """libcu++ (`cuda::std::`, `<cuda/atomic>`, `<cuda/barrier>`): only a preview port exists on AMD.

    ## What it does
    Reports the first libcu++ include (`<cuda/...>`, `cuda/std/...`) of a file, or in a file without
    one the first `cuda::` name (`cuda::std::atomic`, `cuda::barrier`, `cuda::memcpy_async`).
    `thrust::cuda::par` is not libcu++ and is not reported, nor, inside a `namespace` block, a
    `cuda::` name that libcu++ does not have (`cuda::IndexGlobal` in a project with its own `cuda`
    namespace, such as RAJA's), nor such a name in a file that brings another namespace in (`using
    namespace tim;` before `cuda::set_device`), nor anywhere a `cuda::` name other than libcu++'s in a file that opens its
    own `namespace cuda {` (a test with one namespace per backend), nor a `cuda::X::` name where the
    file opens that namespace itself (`namespace hpx::cuda::experimental {`). Once per file: the file's other libcu++ includes are not reported
    again by API002 (header-without-hip-equivalent) either.

    ## Why it breaks on AMD
    libcu++ ships with the CUDA toolkit (CCCL); a ROCm installation does not provide it and hipify
    leaves it alone. AMD's port, libhipcxx, keeps the `cuda::` / `cuda::std::` spellings and the
    `<cuda/...>` headers, but it is an early-access technology preview, is installed separately,
    needs `hip/hip_runtime.h` included first, and implements a subset: its documentation lists
    `<cuda/barrier>`, `<cuda/latch>`, `<cuda/semaphore>` (and their `cuda/std/` forms), `<cuda/pipeline>`,
    `<cuda/annotated_ptr>` and `<cuda/ptx>` as unsupported. When a file includes one of those, that
    include is the one reported, and the message says so. All targets.

    ## Example
    ```cuda
    #include <cuda/atomic>
    __device__ cuda::atomic<int, cuda::thread_scope_device> counter;
    ```

    ## Use instead
    ```cuda
    __device__ int counter;
    __device__ void bump() { atomicAdd(&counter, 1); }
    ```
    Or adopt libhipcxx after checking that each facility is implemented and tested for your targets.

    ## References
    - libhipcxx, what it is and its status: https://rocm.docs.amd.com/projects/libhipcxx/en/latest/what-is-libhipcxx.html
    - libhipcxx repository (early-access note, include order): https://github.com/ROCm/libhipcxx
    - libhipcxx, limitations and unsupported APIs: https://rocm.docs.amd.com/projects/libhipcxx/en/latest/reference/libhipcxx-limitations.html
    - libcu++ (CCCL) documentation: https://nvidia.github.io/cccl/libcudacxx/
    """

    code = "LIB011"
    name = "libcudacxx"
    summary = "libcu++ is not part of ROCm: libhipcxx is an early-access subset"
    severity = Severity.WARNING
    impact = Impact.COMPILE
    library = "libcudacxx"
    checklist = "Replace libcu++ facilities (cuda::std::atomic, cuda::barrier, memcpy_async) with HIP atomics and __syncthreads, or adopt libhipcxx after checking coverage."
    # Reported once per file here; API002 does not repeat each further `<cuda/...>` include of that file.
    covers = r'[<"]cuda/[^<>"]+[>"]'
