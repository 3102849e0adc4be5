from hiplint import Impact, Severity

from ._whole import WholeLibraryRule


class CudnnToMiopen(WholeLibraryRule):
    """cuDNN is used: MIOpen is the AMD library, and the port is not a rename.

    ## What it does
    Reports the first `#include <cudnn.h>` (or `cudnn_*.h`, `cudnn_frontend.h`) of a file, or, in a
    file without the include, the first `cudnn*` / `CUDNN_*` name. Once per file: the whole library
    needs a port, not each call.

    ## Why it breaks on AMD
    ROCm has no cuDNN. MIOpen is the AMD deep-learning primitives library, and its API is a different
    design: descriptors differ, convolutions go through a find step (`miopenFindConvolutionForward*`)
    or the immediate-mode API, and many cuDNN entries have no MIOpen counterpart. AMD's HIPIFY cuDNN
    table lists a MIOpen name for only about half of the cuDNN API (`cudnnGetConvolutionForwardAlgorithm_v7`
    and the backend/graph API among the gaps); hipify renames only with `--roc`/MIOpen support and
    leaves the rest for hand porting. All targets, every ROCm version.

    ## Example
    ```cuda
    #include <cudnn.h>
    void make(cudnnHandle_t* h) { cudnnCreate(h); }
    ```

    ## Use instead
    ```cuda
    #include <miopen/miopen.h>
    void make(miopenHandle_t* h) { miopenCreate(h); }
    ```
    Or route the operation through a framework (PyTorch, MIGraphX) that already targets MIOpen.

    ## References
    - HIPIFY, cuDNN API supported by HIP and MIOpen: https://rocm.docs.amd.com/projects/HIPIFY/en/latest/reference/tables/CUDNN_API_supported_by_HIP_and_MIOPEN.html
    - MIOpen documentation: https://rocm.docs.amd.com/projects/MIOpen/en/latest/
    - MIOpen, find and immediate mode: https://rocm.docs.amd.com/projects/MIOpen/en/latest/how-to/find-and-immediate.html
    """

    code = "LIB005"
    name = "cudnn-to-miopen"
    summary = "cuDNN has no HIP rename: port to MIOpen"
    severity = Severity.WARNING
    impact = Impact.COMPILE
    library = "cudnn"
    checklist = "Port cuDNN calls to MIOpen (different descriptors, find/immediate-mode convolution API), or route them through a framework op."
