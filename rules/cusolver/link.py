from hiplint.rules._linkrule import LinkLibraryRule


class CusolverLinkLibrary(LinkLibraryRule):
    """cuSOLVER linked in a Makefile or CMake file: the HIP build links hipSOLVER (and rocSOLVER).

    ## What it does
    Finds `-lcusolver`, `-lcusolver_static`, `-lcusolverMg`, `CUDA::cusolver`, `${CUDA_cusolver_LIBRARY}`,
    `libcusolver.so`/`.a`, and a bare `cusolver` inside `target_link_libraries(...)`, outside comments. Lines
    in a branch that already handles the HIP build (`if(USE_HIP) ... else()`, `ifeq ($(BACKEND),hip)`) or
    that its own test keeps to the CUDA build (`if(GPU_RUNTIME STREQUAL "CUDA")`) are not reported. Nor `unset(CUDA_cusolver_LIBRARY CACHE)`, which links nothing, nor a CMake module that stops without HIP
    (`find_package(hip REQUIRED)` at its top level: QUICK's `FindHipCUDA.cmake` sets `CUDA_cusolver_LIBRARY` to
    `roc::rocsolver`): only an AMD build runs it, and its CUDA names are that build's own mapping.

    ## Why it breaks on AMD
    hipify rewrites includes, not build files. A HIP build links `hipsolver` (CMake:
    `find_package(hipsolver)`, target `roc::hipsolver`, which links rocSOLVER and rocBLAS); code that
    calls rocSOLVER directly links `rocsolver` (`roc::rocsolver`). cusolverMg has no AMD library.

    ## Example
    ```cmake
    target_link_libraries(solver PRIVATE cusolver cublas)
    ```
    In a Makefile: `LDLIBS += -lcusolver -lcublas`.

    ## Use instead
    ```cmake
    find_package(hipsolver REQUIRED)
    target_link_libraries(solver PRIVATE roc::hipsolver)
    ```
    In a Makefile: `LDLIBS += -lhipsolver`.

    ## References
    - hipSOLVER CMake export (`roc::hipsolver`): https://github.com/ROCm/hipSOLVER/blob/develop/library/src/CMakeLists.txt
    - Using CMake with ROCm: https://rocm.docs.amd.com/en/latest/conceptual/cmake-packages.html
    """

    code = "SLV008"
    name = "cusolver-link-library"
    summary = "link hipSOLVER instead of cuSOLVER"
    checklist = "Link hipsolver (CMake: find_package(hipsolver) and roc::hipsolver; rocSOLVER users: roc::rocsolver) instead of cusolver; cusolverMg has no AMD library."
    LIBRARIES = {
        "cusolver": "link hipSOLVER on AMD: -lhipsolver (CMake: find_package(hipsolver), target roc::hipsolver); "
                    "rocSOLVER users link -lrocsolver / roc::rocsolver",
        "cusolverMg": "cusolverMg has no AMD library (no hipSOLVER multi-GPU API): drop it and distribute by hand",
    }
