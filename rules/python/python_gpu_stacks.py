from __future__ import annotations

from hiplint.lazy import libcst as cst

from hiplint import FileRule, Impact, Severity
from hiplint import pyparse

from ._embedded import cuda_findings, literal_source
from ._vendor import caught_in_try, handles_rocm

# Imported module -> (severity, message). Most specific first.
STACKS = (
    ("pycuda", Severity.ERROR,
     "PyCUDA has no ROCm backend: use HIP Python (`hip.hip`, `hip.hiprtc`; package hip-python)"),
    ("numba.cuda", Severity.ERROR,
     "Numba's CUDA target runs only on NVIDIA GPUs: on AMD use ROCm's Numba HIP backend (numba-hip, "
     "experimental, MI-series GPUs) or move the kernel to another stack"),
    ("cuda.pathfinder", Severity.WARNING,
     "cuda-pathfinder finds NVIDIA's libraries and tools (`load_nvidia_dynamic_lib('nvrtc')`, "
     "`find_nvidia_binary_utility('nvcc')`): on a ROCm machine there are none to find; look up ROCm's "
     "(hipRTC, hipcc; `ROCM_PATH`) on that path"),
    # NVIDIA's tile DSL (cuTile Python): kernels compile to NVIDIA's Tile IR only.
    ("cuda.tile", Severity.ERROR,
     "cuTile Python (`cuda.tile`) compiles kernels to NVIDIA's Tile IR and runs only on NVIDIA GPUs: there "
     "is no AMD backend; port the kernels to Triton (it has a ROCm backend) or to HIP"),
    ("cuda.lang", Severity.ERROR,
     "`cuda.lang` (cuTile's SIMT kernels) compiles to NVIDIA cubins only: port the kernels to Triton or HIP"),
    # CUTLASS's Python packages: the CuTe DSL (`cutlass.cute`) and the GEMM interface.
    ("cutlass", Severity.ERROR,
     "CUTLASS's Python packages (`cutlass`: the CuTe DSL `cutlass.cute`, or the older nvidia-cutlass interface) "
     "generate kernels for NVIDIA GPUs only (Ampere, Hopper, Blackwell tensor cores): port the kernels to Triton "
     "(it has a ROCm backend), or use hipBLASLt or Composable Kernel for GEMMs"),
    ("cutlass_cppgen", Severity.ERROR,
     "CUTLASS's Python interface (`cutlass_cppgen`) emits CUTLASS C++ for nvcc and NVIDIA GPUs only: use "
     "hipBLASLt or Composable Kernel for GEMMs on AMD"),
) + tuple(
    # CUDA Python components beyond the three modules AMD's interoperability layer aliases.
    (module, Severity.ERROR,
     f"`{module}` (NVIDIA CUDA Python) is not among the modules hip-python-as-cuda provides (`cuda.cuda`, "
     f"`cuda.cudart`, `cuda.nvrtc`): port these calls to HIP Python (`hip.hip`) or to PyTorch/CuPy operations")
    for module in ("cuda.core", "cuda.compute", "cuda.parallel", "cuda.cooperative", "cuda.coop", "cuda.cccl")
) + (
    ("cuda", Severity.WARNING,
     "CUDA Python (`cuda.cuda`, `cuda.cudart`, `cuda.nvrtc`, `cuda.bindings`) needs NVIDIA's driver: on ROCm "
     "install hip-python-as-cuda, which provides `cuda.cuda`/`cuda.cudart`/`cuda.nvrtc` as aliases of HIP Python "
     "(check each call you use is covered)"),
)
# An import in the body of a `try` that catches one of these is optional: where the package is
# missing (on ROCm) the handler's fallback runs.
IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
OPTIONAL_NOTE = (" (an optional import, inside `try` ... `except ImportError`: where the package is missing, as on "
                 "ROCm, the fallback runs; check that it works there)")
CUPY_KERNELS = frozenset({"cupy.RawKernel", "cupy.RawModule", "cp.RawKernel", "cp.RawModule"})


def _stack_of(module: str):
    for prefix, severity, message in STACKS:
        if module == prefix or module.startswith(prefix + "."):
            return severity, message
    return None


class PythonGpuStacks(FileRule):
    """Python GPU stacks that are NVIDIA-only or need their ROCm variant.

    ## What it does
    Finds imports of PyCUDA (`import pycuda.driver`, `from pycuda.compiler import SourceModule`),
    Numba's CUDA target (`from numba import cuda`, `import numba.cuda`), NVIDIA's CUDA Python
    bindings (`from cuda import cudart`, `from cuda.bindings import runtime`) and its other components
    (`cuda.core`, `cuda.compute`, `cuda.coop`), cuTile Python (`import cuda.tile`), CUTLASS's Python
    DSL (`import cutlass.cute as cute`), NVIDIA's library finder
    (`from cuda.pathfinder import load_nvidia_dynamic_lib`), and CuPy raw kernels
    (`cupy.RawKernel`, `cupy.RawModule`) whose CUDA C source must also compile for HIP. A kernel
    source that the file spells out (a string literal, or a name the file assigns one once) is
    checked by the enabled C-family rules, as a `.cu` file would be: one finding at the call lists
    what they found (`NV001 at kernel line 4: inline PTX ...`), and a clean source is not reported.
    A source built at run time cannot be checked; with the rule option `unchecked-kernels = true`
    (`[tool.hiplint.rule-options.PY006]`) it gets an info note to check it by hand, once per file (the
    other such kernels are its related locations). Off by default: in projects that already run their
    kernels on ROCm (CuPy's own tree) every such note was judged noise. Each stack is reported once per
    file, at its first import; the message counts the file's other imports of it. A file whose only
    imports of a stack are optional (inside `try` with an `except ImportError`, `ModuleNotFoundError`
    or `Exception`) gets an info note instead: where the package is missing, its fallback runs. Not reported inside a
    condition that names HIP/ROCm or `torch.version.cuda`. In a project whose Python build builds for
    ROCm too, a module that imports the CuTe DSL or cuTile at its top level (and a module of the
    project that imports such a module, its tests) is that project's NVIDIA backend: no Python rule
    reports in it (`--report-nvidia-branches` shows it).

    ## Why it breaks on AMD
    - PyCUDA binds NVIDIA's driver API and has no ROCm backend; AMD's HIP Python (`hip-python`) is
      the closest replacement (`hip.hip`, `hip.hiprtc`).
    - Numba's CUDA target compiles through NVVM for NVIDIA GPUs only; its old ROC target was removed.
      ROCm offers an experimental HIP backend for Numba (`numba-hip`, MI-series GPUs on Linux).
    - NVIDIA's CUDA Python needs `libcuda`; AMD ships `hip-python-as-cuda`, an interoperability layer
      that provides `cuda.cuda`, `cuda.cudart` and `cuda.nvrtc` whose names alias HIP Python. CUDA
      Python's other components (`cuda.core`, `cuda.compute`, `cuda.coop`) have no such alias.
    - cuTile Python (`cuda.tile`) is a tile DSL for NVIDIA GPUs: its kernels compile to NVIDIA's Tile IR
      and need NVIDIA's driver; nothing runs them on AMD (Triton, which has a ROCm backend, is the
      nearest portable DSL).
    - CUTLASS's Python packages (the CuTe DSL, `import cutlass.cute as cute`, and `cutlass_cppgen`)
      target NVIDIA's tensor cores (Ampere, Hopper, Blackwell) and compile with NVIDIA's toolchain.
    - `cuda.pathfinder` locates NVIDIA's dynamic libraries, headers and tools (nvrtc, cuBLAS, nvcc);
      on a ROCm machine it finds none, and the code needs ROCm's counterparts (hipRTC, hipcc) instead.
    - CuPy has ROCm builds, but `RawKernel`/`RawModule` sources are compiled with hipRTC there:
      inline PTX, warp-size assumptions and CUDA-only headers fail, as in any HIP source.

    ## Example
    ```python
    import numpy as np
    from numba import cuda

    @cuda.jit
    def scale(x, a):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= a
    ```

    ## Use instead
    ```python
    import numpy as np
    import torch

    def scale(x, a):
        return torch.as_tensor(x, device="cuda") * a  # the same code runs on CUDA and ROCm builds
    ```

    ## References
    - HIP Python and its CUDA Python interoperability layer (hip-python-as-cuda): https://rocm.docs.amd.com/projects/hip-python/en/latest/
    - cuTile Python (NVIDIA GPUs, Tile IR): https://docs.nvidia.com/cuda/cutile-python
    - CUTLASS documentation, CuTe DSL (NVIDIA Ampere, Hopper, Blackwell): https://docs.nvidia.com/cutlass/
    - cuda.pathfinder API (loads NVIDIA dynamic libraries, finds NVIDIA headers and tools): https://nvidia.github.io/cuda-python/cuda-pathfinder/latest/api.html
    - Numba HIP backend for ROCm (numba-hip): https://github.com/ROCm/numba-hip
    - Numba's CUDA target (NVIDIA GPUs): https://numba.readthedocs.io/en/stable/cuda/overview.html
    - CuPy on AMD GPUs (ROCm): https://docs.cupy.dev/en/stable/install.html#using-cupy-on-amd-gpu-experimental
    """

    code = "PY006"
    name = "python-gpu-stacks"
    summary = "Python GPU stack that is NVIDIA-only or needs its ROCm variant (PyCUDA, Numba CUDA, CUDA Python, cuTile, CUTLASS DSL, CuPy raw kernels)"
    severity = Severity.ERROR
    impact = Impact.RUNTIME
    languages = frozenset({"python"})
    triggers = ("cuda", "cutlass", "RawKernel", "RawModule")  # pycuda, numba.cuda, cuda.*, CUTLASS, CuPy raw kernels
    checklist = "Move PyCUDA/Numba-CUDA/CUDA-Python code to HIP Python (hip-python, hip-python-as-cuda) or numba-hip, cuTile and CuTe DSL kernels to Triton or HIP; check CuPy raw kernels compile with hipRTC."

    def check_file(self, ctx):
        py = pyparse.get(ctx)
        if py is None:
            return
        # One finding per stack and file, at its first import: a file of CuTe DSL kernels imports
        # `cutlass` five ways, and it is one port task. Only optional imports: an info note.
        imports: dict[tuple, list] = {}
        for node in py.nodes(cst.Import, cst.ImportFrom):
            if handles_rocm(py, node):
                continue
            optional = caught_in_try(py, node, IMPORT_ERRORS)
            for module, anchor in self._modules(node):
                found = _stack_of(module)
                if found:
                    imports.setdefault(found, []).append((optional, py.span(anchor)))
        for (severity, message), places in imports.items():
            optional, span = min(places)  # the first required import, else the first optional one
            more = len(places) - 1
            if more:
                message += f" ({more} more import{'s' if more > 1 else ''} of it in this file)"
            if optional:
                message, severity = message + OPTIONAL_NOTE, Severity.INFO
            ctx.report_range(*span, message, severity=severity)
        for call in py.nodes(cst.Call):
            if py.names(call.func) & CUPY_KERNELS and not handles_rocm(py, call):
                self._check_kernel(ctx, py, call)

    @staticmethod
    def _check_kernel(ctx, py, call):
        """A kernel source the file spells out is checked by the C-family rules; one built at run time
        gets a note to check it by hand."""
        start, end = py.span(call.func)
        code = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "code"),
                    call.args[0].value if call.args and call.args[0].keyword is None else None)
        source = literal_source(py, code) if code is not None else None
        found = cuda_findings(ctx, source) if source is not None else None
        if found is None:
            if not ctx.options().get("unchecked-kernels", False):
                return  # a source built at run time cannot be checked; the note is opt-in (rule option)
            ctx.report_range(start, end,
                             "CuPy raw-kernel source is compiled with hipRTC on ROCm builds of CuPy: inline PTX, "
                             "32-lane warp assumptions and CUDA-only headers fail there (hiplint could not read or "
                             "check this source: check it by hand)", severity=Severity.INFO,
                             group="unchecked-kernel")  # once per file; the other kernels are related locations
            return
        if not found:
            return
        listed = "; ".join(f"{f.code} at kernel line {f.line}: {f.message}" for f in found[:3])
        more = f"; {len(found) - 3} more" if len(found) > 3 else ""
        ctx.report_range(start, end, f"CuPy raw-kernel source, compiled with hipRTC on ROCm builds, has "
                                     f"{len(found)} problem{'s' if len(found) > 1 else ''} for AMD: {listed}{more}",
                         severity=max((f.severity for f in found), key=lambda s: s.rank))

    @staticmethod
    def _modules(node):
        if isinstance(node, cst.Import):
            for alias in node.names:
                yield pyparse.dotted(alias.name) or "", alias
            return
        if node.relative or node.module is None:
            return
        base = pyparse.dotted(node.module) or ""
        base_stack = _stack_of(base)
        # from numba import cuda / from cuda import cudart / from cuda import compute (a more specific entry)
        rest = isinstance(node.names, cst.ImportStar)
        if not rest:
            for alias in node.names:
                full = f"{base}.{pyparse.dotted(alias.name) or ''}"
                stack = _stack_of(full)
                if stack is not None and stack != base_stack:
                    yield full, alias
                else:
                    rest = True
        if base_stack and rest:
            yield base, node.module
