import re

from hiplint import CudaRule, Edit, Fix, Impact, Severity
from hiplint.headers import MAX_HEADER_BYTES, amd_macros

# The HIP platform macro ROCm 6.0 removed, and the name hip_common.h defines in its place (from ROCm
# 4.1). ROCm 7.2's hip_common.h defines only __HIP_PLATFORM_AMD__ / __HIP_PLATFORM_NVIDIA__.
# `__HIP_PLATFORM_NVCC__` went too, but only HIP's NVIDIA platform ever defined it: an AMD build sees no
# difference, so it is not reported here.
OLD, NEW = "__HIP_PLATFORM_HCC__", "__HIP_PLATFORM_AMD__"
REMOVED_IN = (6, 0)
# Conditional directives, continuation lines included. Read from the text, not the tree: a call split
# across `#ifdef` / `#else` leaves the parser without the directive, and a fix that missed one test
# would leave the file half renamed.
_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef)\b((?:[^\n]*\\\r?\n)*[^\n]*)", re.M)
_OLD = re.compile(rb"\b" + OLD.encode() + rb"\b")
_DEFINES = re.compile(r"^[ \t]*#[ \t]*define[ \t]+" + OLD + r"\b", re.M)
_COMMENT = re.compile(rb"//|/\*")
# Names hip-clang defines in the host and the device pass of every HIP compile for AMD (clang's `-x hip`;
# hip_common.h's platform name): an alternative joined with `||` keeps the test true on current ROCm.
_DEFINED_ON_AMD = re.compile(rb"\b(?:__HIPCC__|__HIP__|__HIP_PLATFORM_AMD__)\b")


def _header_text(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(MAX_HEADER_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


def tests_of_old_name(data: bytes) -> list[tuple[int, int, str]]:
    """(start, end, replacement) of each `__HIP_PLATFORM_HCC__` in a conditional directive that does not
    also test `__HIP_PLATFORM_AMD__`. `#ifdef X` and `defined(X)` take the new name; a value test
    (`#if X`) takes `defined(...)`: hip_common.h defines the new name with no value."""
    out = []
    for m in _DIRECTIVE.finditer(data):
        kind, body = m.group(1), m.group(2)
        comment = _COMMENT.search(body)
        if comment is not None:
            body = body[:comment.start()]
        if NEW.encode() in body:
            continue  # `defined(__HIP_PLATFORM_HCC__) || defined(__HIP_PLATFORM_AMD__)`
        if b"||" in body and b"&&" not in body and _DEFINED_ON_AMD.search(body):
            continue  # `defined(__HIP_PLATFORM_HCC__) || defined(__HIPCC__)`: true on every ROCm all the same
        for name in _OLD.finditer(body):
            start = m.start(2) + name.start()
            before = body[:name.start()].rstrip()
            plain = kind in (b"ifdef", b"ifndef", b"elifdef", b"elifndef") or before.endswith((b"defined", b"defined("))
            out.append((start, start + len(OLD), NEW if plain else f"defined({NEW})"))
    return out


class RemovedPlatformMacro(CudaRule):
    """`__HIP_PLATFORM_HCC__` tested in an `#if`: ROCm 6.0 removed it.

    ## What it does
    Finds `#ifdef __HIP_PLATFORM_HCC__` and `#if defined(__HIP_PLATFORM_HCC__)`. A condition that
    also tests the current name (`__HIP_PLATFORM_AMD__`), or that joins a name every HIP compile defines
    with `||` (`defined(__HIP_PLATFORM_HCC__) || defined(__HIPCC__)`), is not reported, nor is a file whose own
    headers or whose project's build define the old name (`-D__HIP_PLATFORM_HCC__`, a Python build's
    `define_macros`). Reported once per file; the other tests are related locations.
    `__HIP_PLATFORM_NVCC__`, removed at the same time, is not reported: only HIP's NVIDIA platform
    defined it, so an AMD build is not affected.

    ## Why it breaks on AMD
    HIP renamed the platform macros in ROCm 4.1 (`__HIP_PLATFORM_AMD__`, `__HIP_PLATFORM_NVIDIA__`)
    and kept the old ones as deprecated aliases until ROCm 6.0 removed them: ROCm 7.2's
    `hip/hip_common.h` defines only the new names, `hip::host` in CMake sets only
    `__HIP_PLATFORM_AMD__`, and neither hipcc nor the legacy `FindHIP.cmake` defines the old one
    (only `hipconfig --cpp_config` still prints it, and a build that uses that is not reported). On
    current ROCm the test is false on AMD, so the code written for AMD under it disappears without a
    word: with an `#else`, AMD compiles that branch instead, usually the CUDA code; with an `#elif` or
    nothing, AMD gets neither. Most often the result does not compile (a missing declaration, a
    `thrust::cuda` policy rocThrust lacks); sometimes it compiles and is wrong (a warp size of 32, a
    device function left without its `return`). Applies from ROCm 6.0 (the configured
    `rocm-version`), every target.

    ## Example
    ```cuda
    #ifdef __HIP_PLATFORM_HCC__
    #define WARP_SIZE warpSize
    #else
    #define WARP_SIZE 32
    #endif
    ```

    ## Use instead
    ```cuda
    #ifdef __HIP_PLATFORM_AMD__
    #define WARP_SIZE warpSize
    #else
    #define WARP_SIZE 32
    #endif
    ```

    ## Fix
    Safe: every test of the old name in the file's conditional directives (found in the text, so a
    directive the parser lost inside a split call is fixed too) tests the new one: `#ifdef` and
    `defined(...)` take the new name, a value test (`#if __HIP_PLATFORM_HCC__`) becomes
    `defined(__HIP_PLATFORM_AMD__)`, since `hip_common.h` defines the new name with no value. Both
    names were defined together from ROCm 4.1 to 5.7 on AMD, and neither by nvcc, so every build that
    took the branch still does, and on ROCm 6.0 and later the code written for AMD is compiled again.

    ## References
    - ROCm 7.2 `hipconfig --cpp_config` (still prints `-D__HIP_PLATFORM_HCC__=`), `hip-config-amd.cmake` (`__HIP_PLATFORM_AMD__=1` only): Debian's ROCm 7.2 packages, as in hiplint's compile oracle
    - HIP porting guide, identifying the HIP target platform: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    - ROCm 7.2 `hip/hip_common.h` (defines `__HIP_PLATFORM_AMD__` and `__HIP_PLATFORM_NVIDIA__` only): https://github.com/ROCm/rocm-systems/blob/develop/projects/hip/include/hip/hip_common.h
    - PyTorch, "[ROCm] remove HCC references" (the symbols "will finally be removed in ROCm 6.0"): https://github.com/pytorch/pytorch/pull/111975
    """

    code = "API007"
    name = "removed-hip-platform-macro"
    summary = "__HIP_PLATFORM_HCC__ is not defined from ROCm 6.0: the branch written for AMD vanishes"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    fix_availability = "always"
    in_macros = False
    report_in_hip_branches = True
    checklist = "Test __HIP_PLATFORM_AMD__ instead of __HIP_PLATFORM_HCC__, which ROCm 6.0 removed."
    query = """
    ((identifier) @old (#eq? @old "__HIP_PLATFORM_HCC__"))
    """

    def check(self, ctx, captures):
        if ctx.rocm_version < REMOVED_IN or ctx.unit.delta != 0:
            return
        done = ctx.cache.setdefault("api007", set())
        if id(ctx.unit) in done:
            return
        done.add(id(ctx.unit))
        if OLD in ctx.build_facts.removed_names_defined or OLD in amd_macros(ctx) or \
                _DEFINES.search(ctx.source.text) or any(
                    _DEFINES.search(_header_text(h)) for h in ctx.cache.get("project_headers", ())):
            # The project defines the old name itself: in its build (`-D__HIP_PLATFORM_HCC__`, CuPy's
            # `define_macros`, `hipconfig --cpp_config`), this file or a header it includes
            # (`#ifndef __HIP_PLATFORM_HCC__` / `#define __HIP_PLATFORM_HCC__` before hip_runtime.h).
            return
        places = tests_of_old_name(ctx.source.data)
        if not places:
            return
        fix = Fix.safe(f"Test {NEW} instead of {OLD}", *(Edit(a, b, text) for a, b, text in places))
        first = places[0]
        finding = ctx.report_range(first[0], first[1],
                                   f"`{OLD}` is not defined from ROCm 6.0 (removed; test `{NEW}`): this test is "
                                   f"false on current ROCm, so the code written for AMD under it is dropped", fix=fix)
        if finding is not None:
            for a, b, _ in places[1:]:
                loc = ctx.related_range(a, b, f"`{OLD}` tested here too")
                if loc is not None:
                    finding.add_related(loc)
