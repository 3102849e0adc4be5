from hiplint import FileRule, Impact, Severity

from . import _nvcc, _options


class NvccOnlyFlags(FileRule):
    """nvcc-only compiler options in a build file.

    ## What it does
    Finds nvcc options in Makefiles and CMake files (compile-option commands, `CMAKE_CUDA_FLAGS`,
    `CUDA_NVCC_FLAGS`, Makefile variables and recipe lines): `--use_fast_math`,
    `--expt-relaxed-constexpr`, `--extended-lambda`, `-Xptxas`, `-Xcompiler`, `-lineinfo`,
    `-rdc=true`, `-maxrregcount`, `--default-stream`, `-ccbin`, `--ftz`/`--prec-div`/`--fmad`,
    `-Xcudafe`, `--keep`, `-res-usage`, `-x cu`, and, on nvcc lines only, `-G`, `-dc`, `-dlink`, `-t`.
    The message names what hipcc does with the option and the HIP counterpart. Not reported inside
    a conditional that names HIP/ROCm or whose own test keeps it to the CUDA build or an NVIDIA
    compiler (`if(GPU_RUNTIME STREQUAL "CUDA")`, `if(CMAKE_CUDA_COMPILER MATCHES "nvcc$")`,
    `if(C_COMPILER_FAMILY_IS_PGI)`), nor on an nvcc recipe line of a Makefile whose other rules run
    hipcc (one target per vendor: `stream_cuda:` runs nvcc, `stream_hip:` runs `$(HIPCC)`), nor
    (in CMake) options that only reach the CUDA language (`$<COMPILE_LANGUAGE:CUDA>`, also when the
    expression spans several arguments; `CMAKE_CUDA_FLAGS`) when the project also compiles HIP (the HIP
    language, `-xhip` through the C++ compiler, or an AMD build of the project that hiplint.amdbuild
    read elsewhere), or when no target of the file compiles a `.cu`
    source (NVRTC and driver-API samples build `.cpp` files only: their `CMAKE_CUDA_FLAGS` reach no
    compiler; a source list from a glob or another file counts as "may compile CUDA"). In a project
    that already builds for AMD (hiplint.amdbuild: its AMD build read, or backend switches for both
    vendors) only the build files that AMD build reads are checked: its working AMD build shows the
    options elsewhere reach nvcc alone (Kokkos's `-Xcompiler` list, Ginkgo's wrapper for HIP over nvcc).
    One finding per file (one for the options that break the build, one for those only
    misread); the other options are listed with it as related locations.
    `hiplint migrate` translates or drops each option (`NvccOption.port` in `rules/build/_nvcc.py`);
    those with no counterpart (`-rdc`, `-dc`, `-dlink`, `-maxrregcount`) are left and listed.

    ## Why it breaks on AMD
    hipcc hands options it does not know to ROCm's clang. Most of these are unknown to clang and
    stop the build (`clang: error: unknown argument: '--expt-relaxed-constexpr'`). Some are worse:
    clang reads `-use_fast_math` as `-u se_fast_math` (so no fast math, silently; hipcc only adds
    `-DHIP_FAST_MATH`), `-lineinfo` as the library `-l ineinfo` (a failed link; in compile-only
    options, `target_compile_options`, an ignored input and a warning), `-diag-suppress=N` with one
    dash as an unused option (a warning; its value apart, an input file), and `-G` as a MIPS option that
    swallows the next argument; `-dc` and `-dlink` are ignored, so no relocatable device code is
    built. Checked with clang 19 (`-x hip --offload-arch=gfx942`); hipcc behaves the same because it
    forwards these options unchanged. Applies to every ROCm version.

    ## Example
    ```cmake
    set(CUDA_NVCC_FLAGS "--use_fast_math --expt-relaxed-constexpr -Xptxas -v")
    ```

    ## Use instead
    ```cmake
    set(HIP_FLAGS "-ffast-math -Rpass-analysis=kernel-resource-usage")
    ```

    ## References
    - hipcc argument handling (`-use_fast_math` adds `-DHIP_FAST_MATH`, the rest goes to clang): https://github.com/ROCm/llvm-project/blob/amd-staging/amd/hipcc/src/hipBin_amd.h
    - HIP compiler options (`-fgpu-rdc`, `-ffast-math`, `--offload-arch`): https://rocm.docs.amd.com/projects/llvm-project/en/latest/reference/rocmcc.html
    - clang CUDA/HIP options (`-fgpu-default-stream`, `-fgpu-flush-denormals-to-zero`, `-fcuda-host-device-constexpr`): https://clang.llvm.org/docs/ClangCommandLineReference.html
    - nvcc options: https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html
    """

    code = "BLD005"
    name = "nvcc-only-flags"
    summary = "nvcc-only compiler option: hipcc/clang rejects or misreads it"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    languages = frozenset({"cmake", "make"})
    checklist = "Translate nvcc options for hipcc: --use_fast_math -> -ffast-math, -rdc=true -> -fgpu-rdc, -lineinfo -> -gline-tables-only; drop --expt-*, -Xptxas, -ccbin."

    def check_file(self, ctx):
        facts = ctx.build_facts
        if facts.project_builds_for_amd and not facts.amd_build_file:
            return  # the project's AMD build works and reads other build files: these options reach nvcc alone
        for use in _options.option_uses(ctx):
            if use.option.kind == "arch":
                continue
            breaks = use.option.breaks_in(use.compile_only)
            # One finding per file (per severity): the other options are its related locations.
            finding = ctx.report_range(use.start, use.end, _nvcc.describe(use),
                                       severity=None if breaks else Severity.WARNING,
                                       group="breaks" if breaks else "misread")
            if finding is not None and not breaks:
                finding.impact = Impact.PORTABILITY  # the build goes on (a clang warning): no compile error
