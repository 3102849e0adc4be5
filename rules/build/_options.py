"""nvcc options found in a CMake file or Makefile, computed once per file for BLD005 and BLD006."""
from __future__ import annotations

from . import _cmake, _make, _nvcc

# CMake commands whose arguments are compiler or linker options.
OPTION_COMMANDS = ("set", "list", "string", "target_compile_options", "add_compile_options", "target_link_options",
                   "add_link_options", "set_property", "set_target_properties", "set_source_files_properties",
                   "cuda_add_executable", "cuda_add_library", "cuda_compile")
CUDA_ONLY_VARIABLES = ("CMAKE_CUDA_FLAGS", "CUDA_NVCC_FLAGS")
# Their options reach compile steps only (`-lineinfo` there is an unused linker input, not a failed link).
COMPILE_ONLY_COMMANDS = ("target_compile_options", "add_compile_options")


def _cmake_uses(ctx):
    commands = _cmake.get(ctx)
    hip_language = _cmake.enables_hip_language(commands)
    out = []
    for cmd in commands:
        if cmd.aware or cmd.name not in OPTION_COMMANDS:
            continue
        tokens = cmd.tokens()
        names = [t.text for t in tokens[:2]]
        cuda_variable = any(n.startswith(CUDA_ONLY_VARIABLES) for n in names)
        nvcc_variable = any(_make.NVCC_VAR.search(n) for n in names)
        for use in _nvcc.scan([(t.text, t.start, t.end) for t in tokens], nvcc_context=True):
            genex = next((t.genex for t in tokens if t.start == use.start), "")
            cuda_only = cuda_variable or "CUDA" in genex
            if hip_language and cuda_only:
                continue  # the project has a HIP language path; this option only reaches nvcc
            if use.option.generic and not (nvcc_variable or "CUDA" in genex):
                continue
            use.compile_only = cmd.name in COMPILE_ONLY_COMMANDS
            out.append(use)
    return out


def _make_uses(ctx):
    out = []
    for line in _make.get(ctx):
        if line.aware:
            continue
        out.extend(_nvcc.scan(line.command_tokens(), line.nvcc_context))
    return out


def option_uses(ctx) -> list:
    if "nvcc_options" not in ctx.cache:
        ctx.cache["nvcc_options"] = _cmake_uses(ctx) if ctx.language == "cmake" else _make_uses(ctx)
    return ctx.cache["nvcc_options"]
