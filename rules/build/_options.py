"""nvcc options found in a CMake file or Makefile, computed once per file for BLD005 and BLD006."""
from __future__ import annotations

import re

from . import _cmake, _make, _nvcc
from hiplint.lazy import lazy_re

# CMake commands whose arguments are compiler or linker options.
OPTION_COMMANDS = ("set", "list", "string", "target_compile_options", "add_compile_options", "target_link_options",
                   "add_link_options", "set_property", "set_target_properties", "set_source_files_properties",
                   "cuda_add_executable", "cuda_add_library", "cuda_compile")
# The list() and string() forms that build an option list; the others search, remove or replace.
LIST_BUILDS = frozenset({"APPEND", "PREPEND", "INSERT"})
STRING_BUILDS = frozenset({"APPEND", "PREPEND", "CONCAT", "JOIN"})
CUDA_ONLY_VARIABLES = ("CMAKE_CUDA_FLAGS", "CUDA_NVCC_FLAGS")
_CUDA_NAMED = re.compile(r"(?:^|_)(?:NVCC|CUDA)(?:_|$)", re.I)
_HIP_NAMED = re.compile(r"HIP|ROCM|AMD", re.I)
# Their options reach compile steps only (`-lineinfo` there is an unused linker input, not a failed link).
COMPILE_ONLY_COMMANDS = ("target_compile_options", "add_compile_options")


SOURCE_COMMANDS = ("add_executable", "add_library", "target_sources", "cuda_add_executable", "cuda_add_library")
_NOT_SOURCES = frozenset({"STATIC", "SHARED", "MODULE", "OBJECT", "INTERFACE", "IMPORTED", "ALIAS", "GLOBAL",
                          "EXCLUDE_FROM_ALL", "WIN32", "MACOSX_BUNDLE", "PRIVATE", "PUBLIC"})
_CUDA_SOURCE = (".cu", ".cuh", ".CU")
_VARIABLE = lazy_re(r"\$\{(\w+)\}")


def compiles_no_cuda(commands) -> bool:
    """Is it certain that no target of this CMake file compiles a CUDA source? Then CUDA-only flags
    (`CMAKE_CUDA_FLAGS`, `$<COMPILE_LANGUAGE:CUDA>` options) reach no compiler: NVIDIA's NVRTC and
    driver-API samples set them for targets of `.cpp` files only. Unknown (a variable set elsewhere, a
    glob, a generator expression, no target at all) counts as "may compile CUDA"."""
    variables: dict[str, list[str]] = {}
    for cmd in commands:
        if cmd.name == "set" and cmd.args:
            variables.setdefault(cmd.args[0].text, []).extend(t.text for t in cmd.tokens()[1:])
        elif cmd.name in ("file", "aux_source_directory"):
            return False  # a glob may collect .cu files
    targets = [cmd for cmd in commands if cmd.name in SOURCE_COMMANDS]
    if not targets:
        return False

    def may_be_cuda(text: str, depth: int = 0) -> bool:
        if text.endswith(_CUDA_SOURCE) or "$<" in text:
            return True
        for name in _VARIABLE.findall(text):
            values = variables.get(name)
            if values is None or depth > 3 or any(may_be_cuda(v, depth + 1) for v in values):
                return True
        return False

    for cmd in targets:
        for tok in cmd.tokens()[1:]:
            if tok.text not in _NOT_SOURCES and may_be_cuda(tok.text):
                return False
    return True


def _cmake_uses(ctx):
    commands = _cmake.get(ctx)
    # The CUDA language's options never reach an AMD build: the HIP language here, or the project's
    # AMD build elsewhere (hiplint.amdbuild: `if(X_HIP)` with hip::device, a HIP directory, hipcc rules).
    hip_language = _cmake.enables_hip_language(commands) or ctx.build_facts.project_builds_for_amd
    dead_cuda_flags = compiles_no_cuda(commands)
    out = []
    for cmd in commands:
        if cmd.aware or cmd.name not in OPTION_COMMANDS:
            continue
        sub = cmd.arg_texts()[0].upper() if cmd.args else ""
        if (cmd.name == "list" and sub not in LIST_BUILDS) or (cmd.name == "string" and sub not in STRING_BUILDS):
            continue  # `list(REMOVE_ITEM flags "-Xcompiler")`, `string(FIND ...)`: about an option, not passing one
        tokens = cmd.tokens()
        names = [t.text for t in tokens[:2]]
        # `CMAKE_CUDA_FLAGS`, and a project's variable named for nvcc or CUDA (`RAJA_EXTRA_NVCC_FLAGS`)
        cuda_variable = any(n.startswith(CUDA_ONLY_VARIABLES) or (_CUDA_NAMED.search(n) and not _HIP_NAMED.search(n))
                            for n in names)
        nvcc_variable = any(_make.NVCC_VAR.search(n) for n in names)
        for use in _nvcc.scan([(t.text, t.start, t.end) for t in tokens], nvcc_context=True):
            genex = next((t.genex for t in tokens if t.start == use.start), "")
            cuda_only = cuda_variable or "CUDA" in genex
            if hip_language and cuda_only:
                continue  # the project has a HIP language path; this option only reaches nvcc
            if dead_cuda_flags and cuda_only:
                continue  # no target here compiles a .cu: the option reaches no compiler
            if use.option.generic and not (nvcc_variable or "CUDA" in genex):
                continue
            use.compile_only = cmd.name in COMPILE_ONLY_COMMANDS
            out.append(use)
    return out


# `$(filter-out -ccbin=mpicxx --expt-extended-lambda,$(FLAGS))`: the first argument lists options to remove.
_FILTER_OUT = re.compile(rb"\$[({](?:filter-out|subst|patsubst)\s+([^,]*),")


def _make_uses(ctx):
    out = []
    data = ctx.source.data
    for line in _make.get(ctx):
        if line.aware:
            continue
        tokens = line.command_tokens()
        if tokens and b"$(" in data[tokens[0][1]:tokens[-1][2]] or tokens and b"${" in data[tokens[0][1]:tokens[-1][2]]:
            removed = [m.span(1) for m in _FILTER_OUT.finditer(data, tokens[0][1], tokens[-1][2])]
            tokens = [t for t in tokens if not any(s <= t[1] < e for s, e in removed)]
        out.extend(_nvcc.scan(tokens, line.nvcc_context))
    return out


def option_uses(ctx) -> list:
    if "nvcc_options" not in ctx.cache:
        ctx.cache["nvcc_options"] = _cmake_uses(ctx) if ctx.language == "cmake" else _make_uses(ctx)
    return ctx.cache["nvcc_options"]
