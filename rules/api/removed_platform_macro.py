import re

from hiplint import CudaRule, Fix, Impact, Severity
from hiplint.cparse import iter_nodes
from hiplint.headers import MAX_HEADER_BYTES, amd_macros

# The HIP platform macros ROCm 6.0 removed, and the names hip_common.h defines in their place (from
# ROCm 4.1). ROCm 7.2's hip_common.h defines only __HIP_PLATFORM_AMD__ / __HIP_PLATFORM_NVIDIA__.
REMOVED = {"__HIP_PLATFORM_HCC__": "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_NVCC__": "__HIP_PLATFORM_NVIDIA__"}
REMOVED_IN = (6, 0)
CONDITIONS = frozenset({"preproc_if", "preproc_elif", "preproc_ifdef", "preproc_elifdef"})
_DEFINES = {name: re.compile(r"^[ \t]*#[ \t]*define[ \t]+" + name + r"\b", re.M) for name in REMOVED}


def _header_text(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(MAX_HEADER_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


def _condition_of(node):
    """The `#if`/`#ifdef` whose condition holds `node`, or None when `node` is not in a condition."""
    child, up = node, node.parent
    while up is not None:
        if up.type in CONDITIONS:
            field = up.child_by_field_name("condition") or up.child_by_field_name("name")
            return up if field is not None and field.start_byte <= child.start_byte and child.end_byte <= field.end_byte \
                else None
        child, up = up, up.parent
    return None


class RemovedPlatformMacro(CudaRule):
    """`__HIP_PLATFORM_HCC__` or `__HIP_PLATFORM_NVCC__` tested in an `#if`: ROCm 6.0 removed both.

    ## What it does
    Finds `#ifdef __HIP_PLATFORM_HCC__`, `#if defined(__HIP_PLATFORM_HCC__)` and the same with
    `__HIP_PLATFORM_NVCC__`. A condition that also tests the current name (`__HIP_PLATFORM_AMD__`,
    `__HIP_PLATFORM_NVIDIA__`) is not reported, nor is a file whose own headers or whose project's
    AMD build define the old name. Reported once per file and name; the other tests are related
    locations.

    ## Why it breaks on AMD
    HIP renamed the platform macros in ROCm 4.1 (`__HIP_PLATFORM_AMD__`, `__HIP_PLATFORM_NVIDIA__`)
    and kept the old ones as deprecated aliases until ROCm 6.0 removed them: ROCm 7.2's
    `hip/hip_common.h` defines only the new names, and `hip::host` in CMake sets only
    `__HIP_PLATFORM_AMD__`. On current ROCm the test is false on AMD, so the branch written for AMD
    disappears without a word and AMD compiles the other one, which is usually the CUDA code: a
    compile error at best, at worst a warp size of 32 or a 32-bit lane mask that compiles and gives
    wrong results on 64-lane waves. Applies from ROCm 6.0 (the configured `rocm-version`), every target.

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
    Safe: every test of the old name in the file becomes a test of the new one. Both names have been
    defined together since ROCm 4.1, so the result is the same on ROCm 4.1 to 5.7, and on NVIDIA
    (where neither is defined unless HIP's NVIDIA platform defines both), and right on ROCm 6.0 and later.

    ## References
    - HIP porting guide, identifying the HIP target platform: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    - ROCm 7.2 `hip/hip_common.h` (defines `__HIP_PLATFORM_AMD__` and `__HIP_PLATFORM_NVIDIA__` only): https://github.com/ROCm/rocm-systems/blob/develop/projects/hip/include/hip/hip_common.h
    - PyTorch, "[ROCm] remove HCC references" (the symbols "will finally be removed in ROCm 6.0"): https://github.com/pytorch/pytorch/pull/111975
    """

    code = "API007"
    name = "removed-hip-platform-macro"
    summary = "__HIP_PLATFORM_HCC__ / __HIP_PLATFORM_NVCC__ are not defined from ROCm 6.0: the AMD branch vanishes"
    severity = Severity.ERROR
    impact = Impact.SILENT
    fix_availability = "always"
    in_macros = False
    report_in_hip_branches = True
    checklist = "Test __HIP_PLATFORM_AMD__ (and __HIP_PLATFORM_NVIDIA__) instead of the names ROCm 6.0 removed."
    query = """
    ((identifier) @old (#any-of? @old "__HIP_PLATFORM_HCC__" "__HIP_PLATFORM_NVCC__"))
    """

    def check(self, ctx, captures):
        if ctx.rocm_version < REMOVED_IN:
            return
        node = captures["old"][0]
        name = ctx.text(node)
        done = ctx.cache.setdefault(("api007", id(ctx.unit)), set())
        if name in done:
            return
        done.add(name)
        if name in ctx.build_facts.removed_names_defined or name in amd_macros(ctx) or \
                _DEFINES[name].search(ctx.source.text) or any(
                    _DEFINES[name].search(_header_text(h)) for h in ctx.cache.get("project_headers", ())):
            # The project defines the old name itself: in its build (`-D__HIP_PLATFORM_HCC__`, CuPy's
            # `define_macros`), this file or a header it includes (`#ifndef __HIP_PLATFORM_HCC__` /
            # `#define __HIP_PLATFORM_HCC__` before including hip_runtime.h).
            return
        new = REMOVED[name]
        places = []
        for ident in iter_nodes(ctx.unit.root, {"identifier"}):
            if ctx.unit.text(ident) != name:
                continue
            condition = _condition_of(ident)
            if condition is None:
                continue
            tested = condition.child_by_field_name("condition") or condition.child_by_field_name("name")
            if new in ctx.text(tested):
                continue  # `defined(__HIP_PLATFORM_HCC__) || defined(__HIP_PLATFORM_AMD__)`
            places.append(ident)
        if not places:
            return
        first = places[0]
        fix = Fix.safe(f"Test {new} instead of {name}", *(ctx.replace(p, new) for p in places))
        effect = ("the branch written for AMD is dropped and AMD compiles the other one" if name.endswith("HCC__") else
                  "HIP's NVIDIA platform no longer takes the branch written for it")
        finding = ctx.report(first, f"`{name}` is not defined from ROCm 6.0 (removed; use `{new}`): this test is false "
                                    f"on current ROCm, so {effect}", fix=fix)
        if finding is not None:
            for p in places[1:]:
                ctx.relate(finding, p, f"`{name}` tested here too")
