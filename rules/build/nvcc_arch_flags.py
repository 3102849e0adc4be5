from hiplint import FileRule, Impact, Severity

from . import _options


class NvccArchFlags(FileRule):
    """NVIDIA architecture options (`-arch=sm_XX`, `-gencode`) in a build file.

    ## What it does
    Finds `-arch=sm_80`, `-arch sm_80`, `--gpu-architecture=compute_90`, `-gencode arch=...,code=...`,
    `--generate-code` and `-code=sm_XX` in Makefiles and CMake files, where the value names an
    NVIDIA architecture (`sm_*`, `compute_*`, `lto_*`, `native`, `all`). `-arch x86_64` (Apple's
    option) is not reported, nor code inside a conditional that names HIP/ROCm.
    One finding per file; the other architecture options are listed with it as related locations.
    `hiplint migrate` writes one `--offload-arch` per configured target in place of a line's
    (or command's) first architecture option and drops the others.

    ## Why it breaks on AMD
    clang has no `-arch=sm_XX` for HIP (`clang: error: unknown argument '-arch=sm_80'`) and no
    `-gencode`. AMD targets are named with `--offload-arch=gfxNNN`, repeated once per target
    (`--offload-arch=gfx90a --offload-arch=gfx942`), optionally with target-ID features such as
    `gfx90a:xnack+`. The NVIDIA numbers carry no information about AMD targets: choose the gfx
    targets you ship (see the GPU specification table). Applies to every ROCm version.

    ## Example
    ```cmake
    set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -gencode arch=compute_80,code=sm_80")
    ```

    ## Use instead
    ```cmake
    set(CMAKE_HIP_FLAGS "${CMAKE_HIP_FLAGS} --offload-arch=gfx90a --offload-arch=gfx942")
    ```

    ## References
    - HIP porting guide, compiler options (`--offload-arch`): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    - ROCm compiler reference (`--offload-arch`, target IDs): https://rocm.docs.amd.com/projects/llvm-project/en/latest/reference/rocmcc.html
    - AMD GPU specifications (gfx names per product): https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html
    """

    code = "BLD006"
    name = "nvcc-arch-flags"
    summary = "NVIDIA architecture option; AMD targets are selected with --offload-arch=gfxNNN"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    languages = frozenset({"cmake", "make"})
    checklist = "Replace -arch/-gencode with one --offload-arch=gfxNNN per AMD target you ship (e.g. gfx90a, gfx942)."

    def check_file(self, ctx):
        targets = " ".join(f"--offload-arch={t}" for t in ctx.settings.targets)
        for use in _options.option_uses(ctx):
            if use.option.kind != "arch":
                continue
            shown = use.token if not use.value or "=" in use.token else f"{use.token} {use.value}"
            ctx.report_range(use.start, use.end,
                             f"`{shown}` selects an NVIDIA architecture, which clang rejects for HIP; "
                             f"name AMD targets instead: {targets}", group="arch")
