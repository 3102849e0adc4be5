from __future__ import annotations

import os

from hiplint.lazy import libcst as cst

from hiplint import FileRule, Impact, Severity
from hiplint import pyparse

from ._vendor import caught_in_try, file_mentions, handles_rocm
from .nvml_nvidia_smi import RUNNERS

# A file that names one of these already handles ROCm's compiler (PyTorch's ROCm build variables,
# hipcc): its nvcc calls sit beside a HIP path.
ROCM_BUILD_WORDS = ("ROCM_HOME", "ROCM_PATH", "IS_HIP_EXTENSION", "HIP_HOME", "hipcc")
# A run inside `try` that catches one of these already copes with a missing nvcc.
MISSING_PROGRAM = frozenset({"FileNotFoundError", "OSError", "EnvironmentError", "Exception", "BaseException"})
# Finding the compiler (`shutil.which`) is not running it, and `os.system` raises nothing when the
# shell does not find nvcc: a nonzero status, often the probe itself (`if os.system("nvcc -V") == 0:`).
NOT_A_RUN = frozenset({"shutil.which", "which", "os.system"})


def _probed(py, call) -> bool:
    """Is the run inside an `if` whose test already asks about nvcc (`if shutil.which("nvcc"):`,
    `if nvcc_path is not None:`, `if os.system("nvcc --version") == 0:`)?"""
    child = call
    for anc in py.ancestors(call):
        if isinstance(anc, cst.If) and anc.body is child:
            for node in pyparse.descendants(anc.test):
                text = node.value if isinstance(node, cst.Name) else pyparse.string_value(node)
                if text and "nvcc" in text.lower():
                    return True
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        child = anc
    return False


def _literal_tail(node) -> str | None:
    """The literal text an expression ends with: a string, `dir + "/bin/nvcc"`,
    `os.path.join(home, "bin", "nvcc")`, `f"{home}/bin/nvcc"`."""
    value = pyparse.string_value(node)
    if value is not None:
        return value
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _literal_tail(node.right)
    if isinstance(node, cst.Call) and (pyparse.dotted(node.func) or "") in ("os.path.join", "join") and node.args:
        return _literal_tail(node.args[-1].value)
    if isinstance(node, cst.FormattedString) and node.parts and isinstance(node.parts[-1], cst.FormattedStringText):
        return node.parts[-1].value
    return None


def _program(node) -> str | None:
    """The program a command runs: the first word of a command string, or the first element of an
    argument list."""
    if isinstance(node, (cst.List, cst.Tuple)):
        return _literal_tail(node.elements[0].value) if node.elements else None
    # "nvcc --version", f"{home}/bin/nvcc -V" (the text after the last {}): the first word.
    words = (_literal_tail(node) or "").split()
    return words[0] if words else None


class NvccFromPython(FileRule):
    """Python that runs `nvcc` (a build script reading the CUDA version, a JIT step).

    ## What it does
    Finds `nvcc` run from Python through `subprocess` or `os.popen`: as a command string
    (`"nvcc --version"`), as the first element of an argument list (`["nvcc", "-V"]`), or built from
    a CUDA directory (`[cuda_home + "/bin/nvcc", "-V"]`, `os.path.join(CUDA_HOME, "bin", "nvcc")`,
    `f"{CUDA_HOME}/bin/nvcc"`). Not reported: `shutil.which("nvcc")` (finding the compiler is not
    running it), `os.system(...)` (a missing program is a nonzero status, not an exception), a run
    inside `try` that catches `FileNotFoundError`, `OSError` or `Exception`, or inside an `if` that
    already asks about nvcc (`if shutil.which("nvcc"):`, `if nvcc_path:`); nor in a file
    that already handles ROCm's compiler (it names `ROCM_HOME`, `IS_HIP_EXTENSION` or `hipcc`), inside
    a condition that names HIP/ROCm or `torch.version.cuda`, or after an early
    `if torch.version.hip: return`.

    ## Why it breaks on AMD
    A ROCm machine has no `nvcc`: the call raises `FileNotFoundError` (or the shell prints "command
    not found" and the version parse fails). On ROCm builds of PyTorch,
    `torch.utils.cpp_extension.CUDA_HOME` is None unless a CUDA toolkit is installed too, so
    `CUDA_HOME + "/bin/nvcc"` raises `TypeError` first. Build scripts typically ask nvcc for the CUDA
    version to choose flags or architectures; on ROCm the compiler is hipcc (PyTorch's
    `ROCM_HOME`, `IS_HIP_EXTENSION`), the version is `torch.version.hip`, and the architectures are
    gfx names. All ROCm versions.

    ## Example
    ```python
    import subprocess

    from torch.utils.cpp_extension import CUDA_HOME

    def cuda_version():
        out = subprocess.check_output([CUDA_HOME + "/bin/nvcc", "-V"], text=True)
        return out.split("release ")[1].split(",")[0]
    ```

    ## Use instead
    ```python
    import subprocess

    import torch
    from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME

    def toolkit_version():
        if torch.version.hip:
            return torch.version.hip  # hipcc under ROCM_HOME builds the extension
        out = subprocess.check_output([CUDA_HOME + "/bin/nvcc", "-V"], text=True)
        return out.split("release ")[1].split(",")[0]
    ```

    ## References
    - PyTorch C++ extensions (`CUDA_HOME`, `ROCM_HOME`, building with hipcc on ROCm): https://pytorch.org/docs/stable/cpp_extension.html
    - PyTorch HIP (ROCm) semantics (`torch.version.hip`): https://pytorch.org/docs/stable/notes/hip.html
    - HIP compiler driver hipcc: https://rocm.docs.amd.com/projects/HIPCC/en/latest/
    """

    code = "PY008"
    name = "nvcc-from-python"
    summary = "Python runs nvcc, which ROCm machines do not have (PyTorch's CUDA_HOME is None on ROCm builds)"
    severity = Severity.ERROR
    impact = Impact.RUNTIME
    languages = frozenset({"python"})
    triggers = ("nvcc",)
    checklist = "Branch build scripts on torch.version.hip: use hipcc under ROCM_HOME and torch.version.hip instead of nvcc -V."

    def check_file(self, ctx):
        py = pyparse.get(ctx)
        if py is None or file_mentions(py, ROCM_BUILD_WORDS):
            return
        for call in py.nodes(cst.Call):
            func = pyparse.dotted(call.func) or ""
            if func not in RUNNERS or func in NOT_A_RUN or not call.args:
                continue
            program = _program(call.args[0].value)
            if not program or os.path.basename(program) not in ("nvcc", "nvcc.exe"):
                continue
            if handles_rocm(py, call) or caught_in_try(py, call, MISSING_PROGRAM) or _probed(py, call):
                continue
            start, end = py.span(call.args[0].value)
            ctx.report_range(start, end,
                             "this runs `nvcc`, which ROCm machines do not have (and PyTorch's `CUDA_HOME` is "
                             "None on its ROCm builds): branch on `torch.version.hip` and use hipcc under "
                             "`ROCM_HOME` there")
