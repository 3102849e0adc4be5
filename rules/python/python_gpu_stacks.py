from __future__ import annotations

from hiplint.lazy import libcst as cst

from hiplint import FileRule, Impact, Severity
from hiplint import pyparse

from ._embedded import cuda_findings, literal_source
from ._vendor import handles_rocm

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
    ("cuda", Severity.WARNING,
     "CUDA Python (`cuda.cuda`, `cuda.cudart`, `cuda.nvrtc`, `cuda.bindings`) needs NVIDIA's driver: on ROCm "
     "install hip-python-as-cuda, which provides `cuda.cuda`/`cuda.cudart`/`cuda.nvrtc` as aliases of HIP Python "
     "(check each call you use is covered)"),
)
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
    bindings (`from cuda import cudart`, `from cuda.bindings import runtime`), NVIDIA's library finder
    (`from cuda.pathfinder import load_nvidia_dynamic_lib`), and CuPy raw kernels
    (`cupy.RawKernel`, `cupy.RawModule`) whose CUDA C source must also compile for HIP. A kernel
    source that the file spells out (a string literal, or a name the file assigns one once) is
    checked by the enabled C-family rules, as a `.cu` file would be: one finding at the call lists
    what they found (`NV001 at kernel line 4: inline PTX ...`), and a clean source is not reported.
    A source built at run time gets an info note to check it by hand. Not reported inside a
    condition that names HIP/ROCm or `torch.version.cuda`.

    ## Why it breaks on AMD
    - PyCUDA binds NVIDIA's driver API and has no ROCm backend; AMD's HIP Python (`hip-python`) is
      the closest replacement (`hip.hip`, `hip.hiprtc`).
    - Numba's CUDA target compiles through NVVM for NVIDIA GPUs only; its old ROC target was removed.
      ROCm offers an experimental HIP backend for Numba (`numba-hip`, MI-series GPUs on Linux).
    - NVIDIA's CUDA Python needs `libcuda`; AMD ships `hip-python-as-cuda`, an interoperability layer
      that provides `cuda.cuda`, `cuda.cudart` and `cuda.nvrtc` whose names alias HIP Python.
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
    - cuda.pathfinder API (loads NVIDIA dynamic libraries, finds NVIDIA headers and tools): https://nvidia.github.io/cuda-python/cuda-pathfinder/latest/api.html
    - Numba HIP backend for ROCm (numba-hip): https://github.com/ROCm/numba-hip
    - Numba's CUDA target (NVIDIA GPUs): https://numba.readthedocs.io/en/stable/cuda/overview.html
    - CuPy on AMD GPUs (ROCm): https://docs.cupy.dev/en/stable/install.html#using-cupy-on-amd-gpu-experimental
    """

    code = "PY006"
    name = "python-gpu-stacks"
    summary = "Python GPU stack that is NVIDIA-only or needs its ROCm variant (PyCUDA, Numba CUDA, CUDA Python, CuPy raw kernels)"
    severity = Severity.ERROR
    impact = Impact.RUNTIME
    languages = frozenset({"python"})
    triggers = ("cuda", "RawKernel", "RawModule")  # pycuda, numba.cuda, cuda.*, CuPy raw kernels
    checklist = "Move PyCUDA/Numba-CUDA/CUDA-Python code to HIP Python (hip-python, hip-python-as-cuda) or numba-hip; check CuPy raw kernels compile with hipRTC."

    def check_file(self, ctx):
        py = pyparse.get(ctx)
        if py is None:
            return
        for node in py.nodes(cst.Import, cst.ImportFrom):
            if handles_rocm(py, node):
                continue
            for module, anchor in self._modules(node):
                found = _stack_of(module)
                if found:
                    severity, message = found
                    start, end = py.span(anchor)
                    ctx.report_range(start, end, message, severity=severity)
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
            ctx.report_range(start, end,
                             "CuPy raw-kernel source is compiled with hipRTC on ROCm builds of CuPy: inline PTX, "
                             "32-lane warp assumptions and CUDA-only headers fail there (hiplint could not read or "
                             "check this source: check it by hand)", severity=Severity.INFO)
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
        if _stack_of(base):
            yield base, node.module
            return
        # from numba import cuda / from cuda import cudart
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                name = pyparse.dotted(alias.name) or ""
                if _stack_of(f"{base}.{name}"):
                    yield f"{base}.{name}", alias
