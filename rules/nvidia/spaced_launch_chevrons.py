import re

from hiplint import CudaRule, Edit, Fix, Impact, Severity
from hiplint.lazy import lazy_re

_SPACE = lazy_re(rb"\s")


class SpacedLaunchChevrons(CudaRule):
    """A kernel launch written `k << < grid, block >> > (args)`: nvcc accepts it, clang does not.

    ## What it does
    Finds kernel launches whose `<<<` or `>>>` has blanks inside (`<< <`, `< <<`, `>> >`), what some
    source formatters make of the chevrons (Rodinia's particlefilter is written so).

    ## Why it breaks on AMD
    nvcc's front end reads `<< <` and `>> >` as the launch chevrons (checked with CUDA 13.0's nvcc:
    the file compiles). clang, which compiles HIP, takes `<<<` and `>>>` only as single tokens: the
    spaced form is a shift followed by a comparison, and it stops with "expected expression" on every
    AMD target (ROCm 7.2's clang 22). hipify-perl rewrites such launches to `hipLaunchKernelGGL`, so
    hand ports made with it do not show the problem; `hiplint migrate` keeps the chevrons.

    ## Example
    ```cuda
    __global__ void scale(float* v, int n);
    void run(float* v, int n) {
        scale << < (n + 255) / 256, 256 >> > (v, n);
    }
    ```

    ## Use instead
    ```cuda
    __global__ void scale(float* v, int n);
    void run(float* v, int n) {
        scale<<<(n + 255) / 256, 256>>>(v, n);
    }
    ```

    ## Fix
    Safe: joins the chevrons (`<< <` becomes `<<<`, `>> >` becomes `>>>`). Only blanks are removed
    between the three characters of a chevron, which nvcc reads the same way, so the launch means the
    same on NVIDIA and compiles on AMD.

    ## References
    - CUDA C++ programming guide, execution configuration (`<<< Dg, Db, Ns, S >>>`): https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#execution-configuration
    - Clang's CUDA support (the `<<<`/`>>>` tokens): https://llvm.org/docs/CompileCudaWithLLVM.html
    """

    code = "NV010"
    name = "spaced-launch-chevrons"
    summary = "kernel launch with blanks inside `<<<`/`>>>`: nvcc accepts it, clang (HIP) does not"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    fix_availability = "always"
    report_in_hip_branches = True  # an error wherever AMD compiles it
    checklist = "Write kernel launches with `<<<` and `>>>` unbroken (clang does not read `<< <` / `>> >`)."
    triggers = ("<<", "< <")
    query = """(kernel_call_syntax) @launch"""

    def check(self, ctx, captures):
        launch = captures["launch"][0]
        if not launch.children:
            return
        data = ctx.source.data
        edits = []
        for token in (launch.children[0], launch.children[-1]):
            if token.type not in ("<<<", ">>>"):
                continue
            start, end = ctx.file_range(token)
            if _SPACE.search(data[start:end]):
                edits.append(Edit(start, end, token.type))
        if not edits:
            return
        ctx.report(launch, "kernel launch chevrons with blanks inside (`<< <`, `>> >`): nvcc reads them, clang stops "
                           "with \"expected expression\"; write `<<<` and `>>>`",
                   fix=Fix.safe("Join the launch chevrons", *edits))
