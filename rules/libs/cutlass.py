from hiplint import Impact, Severity

from ._whole import WholeLibraryRule


class CutlassCute(WholeLibraryRule):
    """CUTLASS or CuTe templates: NVIDIA-only, re-implemented (not renamed) on AMD.

    ## What it does
    Reports the first `cutlass/...` or `cute/...` include of a file, or in a file without one the
    first `cutlass::` / `cute::` name (not a namespace of that name the project defines itself, in the
    file or in a project header it includes, where no header includes CUTLASS or CuTe: TileLang's
    own `tl::cute`). Once per file, and once per directory in what is reported: the
    directory's other files are its related locations (a kernel's headers, one include each).

    ## Why it breaks on AMD
    CUTLASS and CuTe are header libraries written for NVIDIA tensor cores (mma.sync, ldmatrix, TMA,
    wgmma inline PTX) and NVIDIA's memory hierarchy; there is no HIP build of them and hipify has no
    mapping. On AMD the equivalents are Composable Kernel (`ck`, `ck_tile`: GEMM, attention,
    convolution templates for CDNA matrix cores) or the hipBLASLt library for plain GEMMs with
    epilogues. Tile shapes, layouts and pipelining are different designs: this is a re-implementation.
    All targets.

    ## Example
    ```cuda
    #include <cutlass/gemm/device/gemm.h>
    using Gemm = cutlass::gemm::device::Gemm<float, cutlass::layout::RowMajor, float,
                                             cutlass::layout::RowMajor, float, cutlass::layout::RowMajor>;
    ```

    ## Use instead
    ```cuda
    #include <hipblaslt/hipblaslt.h>
    ```
    hipBLASLt for GEMM plus epilogue, or a Composable Kernel device operation for fused kernels.

    ## References
    - Composable Kernel documentation: https://rocm.docs.amd.com/projects/composable_kernel/en/latest/
    - hipBLASLt documentation: https://rocm.docs.amd.com/projects/hipBLASLt/en/latest/
    - CUTLASS (NVIDIA): https://github.com/NVIDIA/cutlass
    """

    code = "LIB010"
    name = "cutlass-cute"
    summary = "CUTLASS/CuTe are NVIDIA-only: re-implement with Composable Kernel or hipBLASLt"
    severity = Severity.WARNING
    impact = Impact.COMPILE
    library = "cutlass"
    checklist = "Re-implement CUTLASS/CuTe kernels with Composable Kernel (ck/ck_tile) or hipBLASLt; budget tuning per target."
