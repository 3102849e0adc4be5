from hiplint import CudaRule, Impact, Severity
from hiplint.renames import API_NAME, declared_names, load_table

from ._common import in_preproc_condition

# `hiplint migrate` puts the names the whole project declares here (Settings.extra), so a type declared
# in one header and used in another file is known to be the user's.
PROJECT_DECLARED_KEY = "migrate.declared_names"


class UnknownCudaApiName(CudaRule):
    """A name shaped like a CUDA API that hiplint's rename table does not know.

    ## What it does
    Finds identifiers shaped like NVIDIA API names (`cudaX`, `cuX`, `CU_X`, `CUDA_X`, `cublasX`,
    `curandX`, `cusolverX`, `cusparseX`, `cufftX`, `nvtxX`, `nvrtcX`) that are neither in the rename
    table (`rules/rename/*.toml`: renamed, or reported by API001) nor declared by the code itself.
    A project's own `cudaHelper_t`, a variable `cudaOk`, a macro `CUDA_CHECK` are declared by the
    project and never reported; neither are names in comments, strings, member accesses, or
    NVIDIA-only `#if` branches.

    ## Why it breaks on AMD
    `hiplint migrate` renames only the names its table lists. A CUDA API it does not know stays as
    it is in the HIP tree and fails to compile (or, if a macro of that name exists on the HIP side,
    means something else). Each one needs a look: HIP may have it under another name, or not at all.
    Opt-in for `hiplint scan` (one file cannot see declarations in the project's other files);
    always on in `hiplint migrate`, which knows every name the project declares.

    ## Example
    ```cuda
    void f(cudaKernel_t k, int device) {
        cudaKernelSetAttributeForDevice(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536, device);
    }
    ```

    ## Use instead
    ```cuda
    void f(const void* kernel, int device) {
        cudaSetDevice(device);
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
    }
    ```

    ## References
    - HIP runtime API reference: https://rocm.docs.amd.com/projects/HIP/en/latest/doxygen/html/modules.html
    - HIP porting guide: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    - The table and its sources: `rules/rename/*.toml`
    """

    code = "API003"
    name = "unknown-cuda-api-name"
    summary = "CUDA-style API name that hiplint's rename table does not know"
    severity = Severity.WARNING
    impact = Impact.COMPILE
    default_enabled = False
    checklist = ("Look each name up in the HIP API reference: rename it by hand if HIP has it, "
                 "or rewrite the code (and tell hiplint: rules/rename/*.toml).")
    query = "[(identifier) (type_identifier)] @name"

    def check(self, ctx, captures):
        declared = ctx.cache.get(PROJECT_DECLARED_KEY)
        if declared is None:
            declared = declared_names(ctx.units) | set(ctx.settings.extra.get(PROJECT_DECLARED_KEY, ()))
            ctx.cache[PROJECT_DECLARED_KEY] = declared
        table = load_table()
        for node in captures.get("name", ()):
            name = ctx.text(node)
            if not API_NAME.match(name) or name in table.names or name in table.unsupported or name in declared:
                continue
            if in_preproc_condition(node):
                continue  # `#ifdef CUDART_VERSION`: a version test, not a use
            ctx.report(node, f"`{name}` looks like a CUDA API but is not in hiplint's rename table: "
                             f"check the HIP API reference and port it by hand")
