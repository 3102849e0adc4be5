from hiplint.rules._linkrule import LinkLibraryRule


class CurandLinkLibrary(LinkLibraryRule):
    """cuRAND linked in a Makefile or CMake file: the HIP build links hipRAND (and rocRAND).

    ## What it does
    Finds `-lcurand`, `-lcurand_static`, `CUDA::curand`, `CUDA::curand_static`, `${CUDA_curand_LIBRARY}`,
    `libcurand.so`/`.a`, and a bare `curand` inside `target_link_libraries(...)`, outside comments. Lines
    in a branch that already handles the HIP build (`if(USE_HIP) ... else()`, `ifeq ($(BACKEND),hip)`) or
    that its own test keeps to the CUDA build (`if(GPU_RUNTIME STREQUAL "CUDA")`) are not reported. Nor `unset(CUDA_curand_LIBRARY CACHE)`, which links nothing, nor a CMake module that stops without HIP
    (`find_package(hip REQUIRED)` at its top level: QUICK's `FindHipCUDA.cmake` sets `CUDA_curand_LIBRARY` to
    `roc::rocrand`): only an AMD build runs it, and its CUDA names are that build's own mapping.

    ## Why it breaks on AMD
    hipify rewrites includes, not build files. A HIP build links `hiprand` (CMake: `find_package(hiprand)`,
    target `hip::hiprand`, which brings `roc::rocrand`); code that calls rocRAND directly links
    `rocrand` (`roc::rocrand`). Left as is, the AMD link fails. Every target.

    ## Example
    ```cmake
    find_package(CUDAToolkit REQUIRED)
    target_link_libraries(pricer PRIVATE CUDA::cudart CUDA::curand)
    ```
    In a Makefile: `LDLIBS += -lcudart -lcurand`.

    ## Use instead
    ```cmake
    find_package(hiprand REQUIRED)
    target_link_libraries(pricer PRIVATE hip::hiprand)
    ```
    In a Makefile: `LDLIBS += -lamdhip64 -lhiprand`.

    ## References
    - hipRAND CMake export (`hip::hiprand`, links `roc::rocrand`): https://github.com/ROCm/hipRAND/blob/develop/library/CMakeLists.txt
    - Using CMake with ROCm: https://rocm.docs.amd.com/en/latest/conceptual/cmake-packages.html
    """

    code = "RND008"
    name = "curand-link-library"
    summary = "link hipRAND instead of cuRAND"
    checklist = "Link hiprand (CMake: find_package(hiprand) and hip::hiprand; rocRAND users: roc::rocrand) instead of curand."
    LIBRARIES = {"curand": "link hipRAND on AMD: -lhiprand (CMake: find_package(hiprand), target hip::hiprand, "
                           "which brings roc::rocrand); rocRAND users link -lrocrand / roc::rocrand"}
