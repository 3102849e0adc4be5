from hiplint import FileRule, Impact, Severity

from . import _cmake


class CMakeCudaLanguage(FileRule):
    """CMake project enables the CUDA language and has no HIP language path.

    ## What it does
    Finds `project(... LANGUAGES ... CUDA)`, `project(name CXX CUDA)` and `enable_language(CUDA)`
    in CMake files that never enable the HIP language. Code inside an `if()`/`elseif()` chain whose
    condition names HIP or ROCm (`if(USE_HIP)`, `if(HIP_FOUND)`), or in a branch kept to the CUDA build (see
    BLD003: `if(Kokkos_ENABLE_CUDA)`), is not reported, nor is a file that
    also has `enable_language(HIP)`, `project(... HIP)` or compiles HIP through the C++ compiler
    (`-xhip`, `-x hip`). Each file is judged on its own: a
    CUDA-only backend directory kept beside a HIP one (ggml's `ggml-cuda/` and `ggml-hip/`) is still
    reported; exclude it in the configuration or with `# hiplint: file-ignore[BLD]`.
    One finding per file; other places that enable CUDA are listed with it as related locations.
    `hiplint migrate` ports it (docs/migrate.md): `CUDA` becomes `HIP` in `project()` and
    `enable_language()`, `.cu` sources get `LANGUAGE HIP` (or are renamed `.hip` with `--hip-extension`),
    and `cmake_minimum_required` is raised to 3.21.

    ## Why it breaks on AMD
    CMake's CUDA language runs nvcc (or clang for NVIDIA targets); it cannot build for AMD GPUs.
    With CMake 3.21 or newer, HIP is a first-class language: `enable_language(HIP)` uses ROCm's
    clang, `.cu` sources are compiled as HIP once they are marked
    `set_source_files_properties(... PROPERTIES LANGUAGE HIP)`, and the targets come from
    `CMAKE_HIP_ARCHITECTURES`. A port that keeps `LANGUAGES CUDA` fails at configure time on a machine
    without the CUDA toolkit. Applies to every ROCm version and AMD target.

    ## Example
    ```cmake
    cmake_minimum_required(VERSION 3.24)
    project(saxpy LANGUAGES CXX CUDA)
    add_executable(saxpy saxpy.cu)
    ```

    ## Use instead
    ```cmake
    cmake_minimum_required(VERSION 3.24)
    project(saxpy LANGUAGES CXX)
    option(USE_HIP "Build for AMD GPUs" ON)
    if(USE_HIP)
      enable_language(HIP)
      set_source_files_properties(saxpy.cu PROPERTIES LANGUAGE HIP)
    else()
      enable_language(CUDA)
    endif()
    add_executable(saxpy saxpy.cu)
    ```

    ## References
    - ROCm, "Using CMake" (HIP language support needs CMake 3.21+): https://rocm.docs.amd.com/en/latest/conceptual/cmake-packages.html
    - CMake `enable_language` and the HIP language: https://cmake.org/cmake/help/latest/command/enable_language.html
    - CMake `CMAKE_HIP_ARCHITECTURES`: https://cmake.org/cmake/help/latest/variable/CMAKE_HIP_ARCHITECTURES.html
    """

    code = "BLD001"
    name = "cmake-cuda-language"
    summary = "CMake enables the CUDA language only; AMD GPUs need CMake's HIP language (enable_language(HIP), CMake >= 3.21)"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    languages = frozenset({"cmake"})
    checklist = "Add a HIP language path to the CMake project: enable_language(HIP), LANGUAGE HIP on .cu sources, CMAKE_HIP_ARCHITECTURES."

    def check_file(self, ctx):
        commands = _cmake.get(ctx)
        if _cmake.enables_hip_language(commands):
            return
        for cmd in commands:
            if cmd.aware or cmd.name not in ("project", "enable_language"):
                continue
            args = cmd.args[1:] if cmd.name == "project" else cmd.args
            if cmd.name == "project":
                args = _project_languages(args)
            for arg in args:
                if arg.text == "CUDA":
                    ctx.report_range(arg.start, arg.end,
                                     f"`{cmd.name}(... CUDA)` enables only the CUDA language: add a HIP path "
                                     "(`enable_language(HIP)` with CMake >= 3.21, `LANGUAGE HIP` on the .cu sources)",
                                     group="language")


_PROJECT_KEYWORDS = {"VERSION", "DESCRIPTION", "HOMEPAGE_URL", "LANGUAGES"}


def _project_languages(args):
    """The language arguments of project(): after LANGUAGES, or positional when no keyword is used."""
    texts = [a.text for a in args]
    if "LANGUAGES" in texts:
        out = []
        for a in args[texts.index("LANGUAGES") + 1:]:
            if a.text in _PROJECT_KEYWORDS:
                break
            out.append(a)
        return out
    if any(t in _PROJECT_KEYWORDS for t in texts):
        return []
    return list(args)
