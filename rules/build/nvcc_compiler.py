import os

from hiplint import FileRule, Impact, Severity

from . import _make


HIP_COMPILERS = frozenset({"hipcc", "hipcc.pl", "amdclang++"})


class NvccCompiler(FileRule):
    """A Makefile compiles with nvcc.

    ## What it does
    Finds `nvcc` used as the compiler in a Makefile: in a variable (`NVCC = nvcc`,
    `NVCC ?= $(CUDA_HOME)/bin/nvcc`, `CXX = nvcc`) or at the start of a recipe command. Lines in a
    conditional that names HIP/ROCm (`ifeq ($(BACKEND),hip)`) or whose own test picks the CUDA build
    (`ifeq ($(GPU_RUNTIME),CUDA)`) are not reported, nor `$(shell nvcc ...)` probes, nor an nvcc
    variable used only in such branches (`COMPILER := $(CUDACXX)` under the CUDA test), or never used
    outside them in a Makefile that also names a HIP compiler (`HIPCXX ?= hipcc` beside it), nor nvcc
    recipes and the `NVCC ?= nvcc` variable in a Makefile with a rule that runs hipcc, itself or through
    a variable holding it (`${HIPCC} ...`, `$(call quiet,HIPCC)`): the NVIDIA targets of a Makefile that
    builds for both.
    One finding per file; the other places that run nvcc are listed with it as related locations.
    `hiplint migrate` writes `hipcc` for `nvcc`, and `$(ROCM_PATH)` for the toolkit's path
    variables (`CUDA_PATH`, `CUDA_HOME`, ...).

    ## Why it breaks on AMD
    nvcc only produces code for NVIDIA GPUs and is not installed on ROCm systems. HIP sources are
    compiled with `hipcc` (or `amdclang++ -x hip`) and AMD targets chosen with `--offload-arch`.
    nvcc's options differ too (see BLD005 and BLD006), so the flag variables usually need a HIP
    variant as well. Applies to every ROCm version.

    ## Example
    ```make
    NVCC ?= nvcc
    saxpy: saxpy.cu
    	$(NVCC) -O3 -o $@ $<
    ```

    ## Use instead
    ```make
    HIPCC ?= hipcc
    saxpy: saxpy.cu
    	$(HIPCC) -O3 --offload-arch=gfx942 -o $@ $<
    ```

    ## References
    - HIP porting guide (hipcc, compiling ported code): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    - hipcc: https://rocm.docs.amd.com/projects/HIPCC/en/latest/
    """

    code = "BLD007"
    name = "nvcc-compiler"
    summary = "the build compiles with nvcc; on ROCm compile with hipcc (or amdclang++ -x hip)"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    languages = frozenset({"make"})
    checklist = "Compile the GPU sources with hipcc on AMD (a HIPCC variable beside NVCC, selected by a make variable)."

    def check_file(self, ctx):
        lines = _make.get(ctx)
        # An nvcc variable is the NVIDIA choice when only code that already handles AMD uses it
        # (`COMPILER := $(CUDACXX)` under `ifeq ($(GPU_RUNTIME),CUDA)`), or when the Makefile also names a
        # HIP compiler (`HIPCXX ?= hipcc`) and nothing else uses it.
        offers_hip = any(line.variable is not None and line.value_tokens() and
                         os.path.basename(line.value_tokens()[0][0]) in HIP_COMPILERS for line in lines)
        # A Makefile with a rule that runs hipcc builds for AMD there: its nvcc rules are the NVIDIA targets.
        # So does one whose rules run a variable holding hipcc (`${HIPCC} ...`, `$(call quiet,HIPCC)`).
        runs_hip = any(line.recipe and any(os.path.basename(t[0].lstrip("@-+")) in HIP_COMPILERS for t in line.tokens)
                       for line in lines) or _make.runs_hip_compiler(lines)
        used = {False: set(), True: set()}  # aware -> the words of those lines
        for line in lines:
            used[line.aware].update(line.words())
        for line in lines:
            if line.aware or not line.tokens or (line.recipe and runs_hip):
                continue
            if line.variable is not None and runs_hip and line.value_tokens() \
                    and os.path.basename(line.value_tokens()[0][0]) == "nvcc":
                continue  # `NVCC ?= nvcc` beside rules that run hipcc: the NVIDIA targets' compiler
            if line.variable is not None:
                refs = {f"$({line.variable})", f"${{{line.variable}}}"}
                if not refs & used[False] and (refs & used[True] or offers_hip):
                    continue
            if line.variable is not None:
                # NVCC = nvcc / NVCC ?= $(CUDA_HOME)/bin/nvcc: the first word after the assignment operator.
                candidates = line.value_tokens()[:1]
            elif line.recipe:
                # The command word of each shell command on the line (`cd out && nvcc ...`).
                candidates = [t for i, t in enumerate(line.tokens)
                              if i == 0 or line.tokens[i - 1][0] in ("&&", "||", ";", "|")]
            else:
                candidates = []
            for text, start, end in candidates:
                word = text.lstrip("@-+")
                if os.path.basename(word) == "nvcc":
                    ctx.report_range(start + (len(text) - len(word)), end,
                                     "nvcc builds for NVIDIA GPUs only; on ROCm compile with `hipcc` (or "
                                     "`amdclang++ -x hip`) and choose targets with `--offload-arch=gfxNNN`",
                                     group="nvcc")
