from __future__ import annotations

import os

from hiplint.lazy import libcst as cst

from hiplint import FileRule, Impact, Severity
from hiplint import pyparse

from ._vendor import caught_in_try, file_mentions, handles_rocm

# Caught around the use, the failure on ROCm takes the fallback: the GPU query is lost, nothing crashes.
IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
MISSING_PROGRAM_ERRORS = frozenset({"FileNotFoundError", "OSError", "EnvironmentError", "IOError", "Exception",
                                    "BaseException"})
CAUGHT_NOTE = " (caught here: on ROCm the `except` branch runs instead, so what this queries is silently lost)"

# Python packages that only talk to NVIDIA's driver (NVML or the nvidia-smi tool).
NVIDIA_PACKAGES = {
    "pynvml": "NVML bindings",
    "py3nvml": "NVML bindings",
    "nvidia_smi": "NVML bindings (nvidia-ml-py3)",
    "GPUtil": "a wrapper around the nvidia-smi tool",
}
RUNNERS = frozenset({"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
                     "subprocess.Popen", "subprocess.getoutput", "subprocess.getstatusoutput", "os.system",
                     "os.popen", "shutil.which", "run", "check_output", "check_call", "Popen", "getoutput"})
# pytest's test modules and fixtures (`test_gpu.py`, `gpu_test.py`, `conftest.py`).
_TEST_MODULE = __import__("re").compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test|conftest)\.py$")
_RUNNER_NAME = __import__("re").compile(r"(?i)(?:^|_)(?:run|exec|execute|cmd|command|shell|sh|popen|system|call)(?:_|$)")
# A file that mentions any of these already talks to AMD's tools.
# AMD's management tools, and its ways to find an AMD GPU (`rocminfo`, the `/dev/kfd` device node): a file
# that uses them already asks AMD's side.
AMD_TOOLS = ("amdsmi", "amd-smi", "rocm-smi", "rocm_smi", "rsmi", "rocminfo", "/dev/kfd")


def _command_word(py, node):
    """The first word of a command given as a string or a list/tuple literal."""
    if isinstance(node, (cst.List, cst.Tuple)) and node.elements:
        first = node.elements[0].value
        return first, pyparse.string_value(first)
    v = pyparse.string_value(node)
    if v is not None:
        return node, (v.split() or [""])[0]
    prefix = pyparse.fstring_prefix(node)
    if prefix:
        return node, (prefix.split() or [""])[0]
    return None, None


def _detects_nvidia_on_purpose(py, node) -> bool:
    """`/proc/driver/nvidia` where finding no NVIDIA driver on AMD is the right answer: in a function named
    for NVIDIA (`_has_usable_nvidia_gpu()`: AMD has its own probe), or in an `assert` about a script's
    text (a test that the probe keeps its fallback)."""
    for anc in py.ancestors(node):
        if isinstance(anc, cst.Assert):
            return True
        if isinstance(anc, cst.FunctionDef) and "nvidia" in anc.name.value.lower():
            return True
    return False


def _runner_catches(py, name: str) -> bool:
    """The file's own runner `name` runs its command inside a `try` that catches a missing program
    (`except (FileNotFoundError, OSError)`), or returns early when `shutil.which` finds none."""
    short = name.rsplit(".", 1)[-1]
    for fn in py.nodes(cst.FunctionDef):
        if fn.name.value != short:
            continue
        for call in py.nodes(cst.Call):
            func = pyparse.dotted(call.func) or ""
            if func in RUNNERS and any(a is fn for a in py.ancestors(call)):
                if func.endswith("which") or caught_in_try(py, call, MISSING_PROGRAM_ERRORS):
                    return True
    return False


class NvmlAndNvidiaSmi(FileRule):
    """NVIDIA-only GPU management from Python: NVML bindings and the nvidia-smi tool.

    ## What it does
    Finds imports of `pynvml`, `py3nvml`, `nvidia_smi` and `GPUtil`, `nvidia-smi` run through
    `subprocess` / `os.system` / `os.popen` (as a string or as the first element of an argument
    list) or through the project's own runner (a function named for running commands:
    `run_command(["nvidia-smi", ...])`, `exec_cmd("nvidia-smi -L")`; not in a pytest module, whose
    helpers print the environment of tests that skip off NVIDIA's GPUs),
    `shutil.which("nvidia-smi")` used as a GPU probe, and reads of `/proc/driver/nvidia` (not in a
    function named for NVIDIA, `_has_nvidia_gpu()`, whose answer on AMD is rightly "no", nor in an
    `assert` about a script's text).
    Not reported in a file that already uses AMD's tools (`amdsmi`, `amd-smi`, `rocm-smi`, `rocminfo`,
    the `/dev/kfd` device node) or inside a
    condition that names HIP/ROCm or `torch.version.cuda`, or that tests a CUDA switch whose HIP twin
    the file names too (`if env["USE_CUDA"] == "1":` beside `env["USE_HIP"]`: one backend per run). An import inside `try` ... `except
    ImportError`, or a run inside `try` ... `except FileNotFoundError` / `OSError` / `Exception` (or through
    the file's own runner that runs it so, or checks `shutil.which` first), is an
    info note: nothing fails on ROCm, but the fallback runs and what the code queried is lost.

    ## Why it breaks on AMD
    NVML and nvidia-smi come with NVIDIA's driver; on a ROCm machine `pynvml.nvmlInit()` raises
    (`NVMLError_LibraryNotFound`), `nvidia-smi` is not found, and a `which("nvidia-smi")` probe
    concludes that there is no GPU. Code that picks free GPUs, reads memory or sets clocks this way
    fails or silently falls back to the CPU. AMD's counterparts are the `amdsmi` Python package
    (`amdsmi_init()`, `amdsmi_get_processor_handles()`, ...) and the `amd-smi` tool (older:
    `rocm-smi`); their output formats differ, so this is a port, not a rename. All ROCm versions.

    ## Example
    ```python
    import subprocess

    import pynvml

    def free_memory(i):
        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(i)).free

    print(subprocess.check_output(["nvidia-smi", "--query-gpu=name", "--format=csv"]))
    ```

    ## Use instead
    ```python
    import torch

    def free_memory(i):
        free, total = torch.cuda.mem_get_info(i)  # works on CUDA and ROCm builds
        return free
    ```

    ## References
    - AMD SMI Python API (amdsmi_init, amdsmi_get_processor_handles): https://rocm.docs.amd.com/projects/amdsmi/en/latest/reference/amdsmi-py-api.html
    - AMD SMI command line tool (amd-smi): https://rocm.docs.amd.com/projects/amdsmi/en/latest/how-to/amdsmi-cli-tool.html
    - NVML API reference: https://docs.nvidia.com/deploy/nvml-api/index.html
    """

    code = "PY004"
    name = "nvml-and-nvidia-smi"
    summary = "NVIDIA-only GPU management (NVML, nvidia-smi); on ROCm use amdsmi / amd-smi or torch.cuda APIs"
    severity = Severity.ERROR
    impact = Impact.RUNTIME
    languages = frozenset({"python"})
    triggers = ("nvml", "nvidia", "GPUtil")  # pynvml/py3nvml, nvidia_smi, nvidia-smi, /proc/driver/nvidia, GPUtil
    checklist = "Replace NVML/nvidia-smi queries with torch.cuda APIs where they exist, else with amdsmi (Python) or amd-smi."

    def check_file(self, ctx):
        py = pyparse.get(ctx)
        if py is None or file_mentions(py, AMD_TOOLS):
            return
        for node in py.nodes(cst.Import, cst.ImportFrom):
            for mod, anchor in self._imported(py, node):
                top = mod.split(".")[0]
                if top in NVIDIA_PACKAGES and not handles_rocm(py, node):
                    start, end = py.span(anchor)
                    caught = caught_in_try(py, node, IMPORT_ERRORS)
                    ctx.report_range(start, end,
                                     f"`{top}` is {NVIDIA_PACKAGES[top]}, NVIDIA-only: on ROCm use the `amdsmi` "
                                     "package (or torch.cuda APIs such as mem_get_info)" + (CAUGHT_NOTE if caught else ""),
                                     severity=Severity.INFO if caught else None)
        in_test_module = _TEST_MODULE.search(ctx.path.replace("\\", "/")) is not None
        for call in py.nodes(cst.Call):
            func = pyparse.dotted(call.func) or ""
            if not call.args:
                continue
            if func not in RUNNERS and (not _RUNNER_NAME.search(func.rsplit(".", 1)[-1]) or in_test_module):
                # A project's own runner is named for it: `run_command(["nvidia-smi", ...])`. Not in a pytest
                # module, whose helpers print the environment of tests that skip off NVIDIA's GPUs.
                continue
            anchor, word = _command_word(py, call.args[0].value)
            if word and os.path.basename(word) == "nvidia-smi" and not handles_rocm(py, call):
                start, end = py.span(anchor)
                what = "probes for" if func.endswith("which") else "runs"
                caught = not func.endswith("which") and (caught_in_try(py, call, MISSING_PROGRAM_ERRORS)
                                                         or (func not in RUNNERS and _runner_catches(py, func)))
                ctx.report_range(start, end,
                                 f"this {what} `nvidia-smi`, which ROCm machines do not have: use `amd-smi` "
                                 "(output differs) or the `amdsmi` Python package" + (CAUGHT_NOTE if caught else ""),
                                 severity=Severity.INFO if caught else None)
        for s in py.nodes(cst.SimpleString):
            v = pyparse.string_value(s)
            if v and v.startswith("/proc/driver/nvidia") and not handles_rocm(py, s) \
                    and not _detects_nvidia_on_purpose(py, s):
                start, end = py.span(s)
                ctx.report_range(start, end, "`/proc/driver/nvidia` exists only with NVIDIA's driver; on ROCm "
                                             "query the GPU through amdsmi or torch.cuda")

    @staticmethod
    def _imported(py, node):
        if isinstance(node, cst.Import):
            for alias in node.names:
                yield pyparse.dotted(alias.name) or "", alias
        elif node.module is not None and not node.relative:
            yield pyparse.dotted(node.module) or "", node.module
