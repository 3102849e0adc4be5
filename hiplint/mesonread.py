"""What a Meson build keeps to NVIDIA (hiplint.amdbuild reads CMake, Makefiles and Python builds).

Meson has no HIP language: a project builds for AMD through options of its own (lc0's `-Dsycl=amd`
with hipBLAS, an ONNX Runtime ROCm provider), and compiles its CUDA sources with an nvcc
`custom_target` inside `if cu_dart.found() and nvcc_ok` / `if get_option('cudnn')` blocks. Where the
Meson files name AMD (hip, ROCm, gfx targets), what only such NVIDIA blocks list is the NVIDIA
build's: its sources, and the definitions those blocks make (`conf.set('USE_ONNX_CUDART', true)`,
`add_project_arguments('-DUSE_CUDNN')`), undefined in every AMD compile.

Read line by line, as Meson's grammar allows: `if`/`elif`/`else`/`endif` and `foreach`/`endforeach`
open and close blocks on lines of their own; `#` starts a comment outside strings.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from hiplint.lazy import lazy_re
from hiplint.suppress import hash_comment_at

MAX_FILES = 400  # meson.build files read per project
MAX_BYTES = 1024 * 1024
_SKIP = frozenset({"subprojects", ".git", "node_modules", "build", "builddir"})  # `subprojects/`: vendored (wraps)
# An NVIDIA condition: it names CUDA, cuDNN, nvcc, NVTX, TensorRT or CUTLASS (a variable, an option, a value).
_NVIDIA_TEST = lazy_re(r"(?i)(?<![a-z])(?:cuda\w*|cudnn|cu_\w+|nvcc\w*|nvtx|nvidia|tensorrt|trt|cutlass|cublas\w*)(?![a-z])")
_AMD_WORD = lazy_re(rb"(?i)(?<![a-z])(?:hip\w*|rocm\w*|amdgpu|amd_gpu\w*|gfx\d+|migraphx)(?![a-z])")
_SOURCE = lazy_re(r"""['"]([^'"\n]+\.(?:cu|cuh|cc|cpp|cxx|c|h|hpp|hh|inc|inl))['"]""")
_DEFINE = lazy_re(r"""(?:\.set(?:10|_quoted)?\s*\(\s*['"](\w+)['"]|['"]-D(\w+))""")
_OPEN = lazy_re(r"^\s*(if|elif|else|endif|foreach|endforeach)\b(.*)$")


@dataclass
class MesonFacts:
    amd: bool = False  # the Meson files name an AMD path
    nvidia_files: set = field(default_factory=set)  # listed only inside NVIDIA blocks
    nvidia_defines: set = field(default_factory=set)  # set only inside NVIDIA blocks


def _code(line: str) -> str:
    """The line without its `#` comment (a `#` inside a string stays)."""
    at = hash_comment_at(line)
    return line if at is None else line[:at]


def _meson_files(root: str) -> list[str]:
    out = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.startswith("."))
        if "meson.build" in files:
            out.append(os.path.join(directory, "meson.build"))
            if len(out) >= MAX_FILES:
                break
    return out


def read(root: str) -> MesonFacts:
    facts = MesonFacts()
    paths = _meson_files(root)
    if not paths:
        return facts
    texts = {}
    for p in paths + [os.path.join(root, "meson_options.txt"), os.path.join(root, "meson.options")]:
        try:
            with open(p, "rb") as fh:
                texts[p] = fh.read(MAX_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
    facts.amd = any(_AMD_WORD.search("\n".join(_code(line) for line in t.splitlines()).encode()) for t in texts.values())
    if not facts.amd:
        return facts
    nvidia_named: set[str] = set()
    other_named: set[str] = set()
    nvidia_defs: set[str] = set()
    other_defs: set[str] = set()
    for path in paths:
        text = texts.get(path)
        if text is None:
            continue
        here = os.path.dirname(path)
        stack: list[bool] = []  # per open block: is this branch NVIDIA's?
        for raw in text.splitlines():
            line = _code(raw)
            m = _OPEN.match(line)
            if m:
                word, rest = m.group(1), m.group(2)
                if word in ("if", "foreach"):
                    stack.append(word == "if" and _nvidia_condition(rest))
                elif word == "elif" and stack:
                    stack[-1] = _nvidia_condition(rest)
                elif word == "else" and stack:
                    stack[-1] = False
                elif word in ("endif", "endforeach") and stack:
                    stack.pop()
                continue
            nvidia = any(stack)
            for s in _SOURCE.findall(line):
                full = os.path.normpath(os.path.join(here, s))
                (nvidia_named if nvidia else other_named).add(full)
            for a, b in _DEFINE.findall(line):
                (nvidia_defs if nvidia else other_defs).add(a or b)
    facts.nvidia_files = {p for p in nvidia_named - other_named if os.path.isfile(p)}
    facts.nvidia_defines = nvidia_defs - other_defs
    return facts


def _nvidia_condition(test: str) -> bool:
    """`cu_dart.found() and nvcc_ok`, `get_option('cudnn')`, `trace_lib == 'nvtx'`: a test only an NVIDIA
    toolkit passes. One that names AMD too (`get_option('gpu') in ['cuda', 'hip']`) is no such test."""
    return _NVIDIA_TEST.search(test) is not None and _AMD_WORD.search(test.encode()) is None and \
        re.search(r"\bnot\b", test) is None
