from hiplint import CudaRule, Edit, Fix, Impact, Severity
from hiplint.headers import amd_macros

from ..warp._lanes import top_level_ancestor

KEYWORD = "__grid_constant__"
# clang knows the attribute in CUDA and HIP mode (it checks that the parameter is a const kernel
# parameter, as nvcc does); ROCm 7.2's HIP headers do not define the keyword's macro. On NVIDIA the
# block does nothing: cuda_runtime.h defines the macro, and neither __HIP_PLATFORM_AMD__ nor __HIP__ is set.
DEFINE_BLOCK = f"""#if (defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)) && !defined({KEYWORD})
#define {KEYWORD} __attribute__((grid_constant))
#endif

"""


class GridConstant(CudaRule):
    """`__grid_constant__` kernel parameters: HIP does not define the keyword.

    ## What it does
    Finds `__grid_constant__` on kernel parameters (CUDA 11.7), once per file: the first use is the
    finding, the others are its related locations. Not reported when the file or a project header it
    includes defines `__grid_constant__` itself outside NVIDIA-only code.

    ## Why it breaks on AMD
    In CUDA, `__grid_constant__` is a macro of `cuda_runtime.h` (`crt/host_defines.h`) for
    `__attribute__((grid_constant))`: a `const` kernel parameter whose address the kernel may take
    without a per-thread copy. ROCm 7.2's HIP headers do not define the macro, so clang reads the
    word as a type name: "unknown type name '__grid_constant__'", and the kernel's parameters are
    lost ("use of undeclared identifier" for each use). Every AMD target, every ROCm version so far
    (checked with ROCm 7.2's headers and clang 22). clang itself knows the attribute in HIP mode:
    `__attribute__((grid_constant))` compiles for gfx90a, gfx942 and gfx1100, and clang checks, as
    nvcc does, that the parameter is a `const` kernel parameter.

    ## Example
    ```cuda
    struct Params { int v[1024]; };
    __global__ void sum(__grid_constant__ const Params p, int* out) { out[0] = p.v[threadIdx.x]; }
    ```

    ## Use instead
    ```cuda
    #if (defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)) && !defined(__grid_constant__)
    #define __grid_constant__ __attribute__((grid_constant))
    #endif

    struct Params { int v[1024]; };
    __global__ void sum(__grid_constant__ const Params p, int* out) { out[0] = p.v[threadIdx.x]; }
    ```

    ## Fix
    Inserts the definition above, before the first declaration that uses the keyword. Safe: nvcc
    reads none of it (`cuda_runtime.h` defines the macro, and the test names only HIP's macros),
    and on AMD the attribute is the one CUDA's macro stands for. The parameter is `const` on both
    vendors (both compilers reject the attribute otherwise), so every thread reads the same
    values; AMD passes kernel arguments in a read-only kernel-argument segment in any case, so
    the attribute only spares the copy a taken address would otherwise make.

    ## References
    - CUDA C++ Programming Guide, `__grid_constant__`: https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#grid-constant
    - Clang attribute reference, `__grid_constant__` (CUDA and HIP): https://clang.llvm.org/docs/AttributeReference.html#grid-constant
    - HIP programming guide, kernel arguments and function qualifiers: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html
    - AMDGPU backend, kernel argument segment (kernarg, read-only): https://llvm.org/docs/AMDGPUUsage.html#kernel-arguments
    """

    code = "NV011"
    name = "grid-constant"
    summary = "`__grid_constant__` is not defined by HIP: unknown type name on AMD"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    fix_availability = "always"
    report_in_hip_branches = True  # an error wherever AMD compiles it
    in_macros = False
    checklist = ("Define `__grid_constant__` as `__attribute__((grid_constant))` for HIP (ROCm's headers do not; "
                 "clang accepts the attribute).")
    query = f"""((type_qualifier) @q (#eq? @q "{KEYWORD}"))"""

    def check(self, ctx, captures):
        node = captures["q"][0]
        if KEYWORD in amd_macros(ctx):
            return  # the project defines it for AMD
        first = ctx.cache.get("nv011_first")
        if first is not None:
            ctx.relate(first, node, f"`{KEYWORD}` also here")
            return
        anchor = top_level_ancestor(node, ctx.unit.root)
        start = ctx.file_range(anchor)[0]
        line_start = ctx.source.byte_of_line(ctx.source.line_of(start))
        fix = Fix.safe(f"Define `{KEYWORD}` as `__attribute__((grid_constant))` for HIP",
                       Edit(line_start, line_start, DEFINE_BLOCK))
        ctx.cache["nv011_first"] = ctx.report(
            node, f"`{KEYWORD}`: HIP's headers do not define it (\"unknown type name '{KEYWORD}'\"); define it as "
                  "`__attribute__((grid_constant))` for HIP, which clang accepts", fix=fix)
