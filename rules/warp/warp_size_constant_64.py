import re
from pathlib import PurePosixPath

from hiplint import CudaRule, Impact, Severity
from hiplint.config import wave_size_of
from hiplint.cparse import iter_nodes
from hiplint.lazy import lazy_re

from ._lanes import (NOT_WARP_CONSTANT, WARP_COLLECTIVE, WARP_SIZE_DEFINITIONS, WARP_SIZE_NAME, does_warp_work,
                     literal_value, relate_uses)

# A condition that chooses by architecture or wave size: the 64 under it is meant for wave64 targets.
WAVE_CHOOSING = lazy_re(r"WAVEFRONT_?SIZE|__GFX\d|__gfx\d|wave_?(size|32|64)|WAVE_?(SIZE|32|64)|CDNA|RDNA|"
                        r"__AMDGCN_|MI[123]\d\d|ARCH", re.I)
# Files that only the AMD build compiles: `.hip` sources, a `hip/` or `rocm/` directory, `*_hip.h`.
HIP_PATH_PART = lazy_re(r"^(hip|rocm|amd)([_-].*)?$|(^|[_.-])(hip|rocm)([_.-]|$)", re.I)
WARP_TEMPLATE = lazy_re(r"(?i)warp|wave")
CONDITIONAL = frozenset({"preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef"})


def _chooses_by_wave(ctx, node) -> bool:
    """Does an `#if` around `node` (or the chain it belongs to) test an architecture or the wave size?"""
    parent = node.parent
    while parent is not None:
        if parent.type in CONDITIONAL:
            cond = parent.child_by_field_name("condition") or parent.child_by_field_name("name")
            if cond is not None and WAVE_CHOOSING.search(ctx.text(cond)):
                return True
        parent = parent.parent
    return False


def _used_for_warp_work(ctx, name: str, after: int) -> bool:
    """Is the constant used where the wave's width matters: in a function that uses warp collectives
    (directly or through a helper), as a template argument of a warp primitive
    (`rocprim::warp_reduce<T, WARP_SIZE>`), beside `warpSize`, or in a macro of a file that uses
    collectives? A block size or a divisor in code with no warp work is right on any wave. A
    constant the file does not use (a header's), or uses only to define another at file scope,
    counts: its uses are in other files."""
    unit = ctx.unit
    used = False
    for ident in iter_nodes(unit.root, {"identifier", "type_identifier"}):
        if ctx.file_range(ident)[0] < after or unit.text(ident) != name:
            continue
        parent = ident.parent
        if parent is not None and parent.type in ("init_declarator", "enumerator", "preproc_def") and \
                parent.child_by_field_name("declarator" if parent.type == "init_declarator" else "name") == ident:
            continue  # the other branch's definition (`#else constexpr int kWarpSize = 32;`), not a use
        used = True
        up = ident.parent
        while up is not None and up.type not in ("template_argument_list", "compound_statement", "translation_unit"):
            up = up.parent
        if up is not None and up.type == "template_argument_list" and up.parent is not None:
            head = up.parent.child_by_field_name("name")
            if head is not None and WARP_TEMPLATE.search(unit.text(head)):
                return True
        if ident.parent is not None and ident.parent.type == "binary_expression" and \
                "warpSize" in unit.text(ident.parent):
            return True
        function = ctx.enclosing_function(ident)
        if function is None:
            declarator = ctx.enclosing(ident, ("init_declarator",))
            declared = declarator.child_by_field_name("declarator") if declarator is not None else None
            if declared is not None and NOT_WARP_CONSTANT.search(ctx.text(declared)) and \
                    not WARP_TEMPLATE.search(ctx.text(declared)):
                continue  # `constexpr int block_size_x = warp_size;`: a block shape (not `kWarpsPerBlock`)
            return True  # `constexpr int kWarps = 1024 / WARPSIZE;`: a constant of its own, used out of sight
        if does_warp_work(ctx, function):
            return True
    text = ctx.source.text
    for d in iter_nodes(unit.root, {"preproc_def", "preproc_function_def"}):
        value = d.child_by_field_name("value")
        if value is not None and ctx.file_range(d)[0] >= after and \
                re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", unit.text(value)):
            used = True
            if WARP_COLLECTIVE.search(text):
                return True
    # Defined in a header and used elsewhere: the uses are out of sight, so the definition is reported.
    return not used


def _amd_only_file(path: str) -> bool:
    p = PurePosixPath(path)
    if p.suffix == ".hip":
        return True
    return any(HIP_PATH_PART.search(part) for part in list(p.parts[:-1]) + [p.stem])


class WarpSizeConstant64(CudaRule):
    """A warp-size macro or constant defined as 64 in code written for AMD.

    ## What it does
    Finds `#define WARP_SIZE 64`, `constexpr int kWarpSize = 64;` and similar definitions whose
    name says "warp size" (or "threads per warp") in code that only the AMD build compiles: the HIP
    branch of an `#if` (`__HIP_PLATFORM_AMD__`, `USE_ROCM`, the project's own HIP switch) or a HIP
    source (`.hip`, a `hip/` directory, `*_hip.h`). The uses are listed with the finding as related
    locations. A definition under an `#if` that chooses by architecture or wave size (`__GFX9__`,
    `__gfx942__`, `__AMDGCN_WAVEFRONT_SIZE`, a `WAVE64` switch) is not reported: it is meant for wave64
    targets. Runs only when the selected targets include a wave32 one (the default targets do).

    ## Why it breaks on AMD
    Not every AMD GPU runs 64-lane waves. HIP compiles for RDNA GPUs (gfx10, gfx11, gfx12: Radeon
    RX 7900 XTX, Radeon PRO W7900 `gfx1100`) in wave32 mode unless `-mwavefrontsize64` is given, and
    `warpSize` is 32 there. A 64 written for CDNA (MI200, MI300) then describes two waves: a reduction
    that starts with `__shfl_down(v, 32)` reads its own lane back and counts it twice, lanes 32-63 of
    a 64-bit mask never vote, warps are numbered `threadIdx.x / 64` over two real waves. The results
    are silently wrong; nothing fails to compile. Applies to wave32 targets, every ROCm version.

    ## Example
    ```cuda
    #if defined(__HIP_PLATFORM_AMD__)
    #define WARP_SIZE 64
    #else
    #define WARP_SIZE 32
    #endif
    ```

    ## Use instead
    ```cuda
    #if defined(__HIP_PLATFORM_AMD__)
    #if defined(__GFX10__) || defined(__GFX11__) || defined(__GFX12__)
    #define WARP_SIZE 32
    #else
    #define WARP_SIZE 64
    #endif
    #else
    #define WARP_SIZE 32
    #endif
    ```
    In device code `warpSize` is simplest, `hipDeviceAttributeWarpSize` on the host. The macros
    `__GFX10__`, `__GFX11__` and `__GFX12__` are set in the device pass only (the host pass keeps
    the 64), so a host-side size comes from the device attribute, or a `template <int WarpSize>`
    kernel is chosen on the host. A project that never builds for RDNA can say so
    with `targets = ["gfx90a", "gfx942"]` in its hiplint configuration.

    ## Fix
    None automatic: whether a run-time `warpSize` can replace a compile-time constant depends on
    the uses.

    ## References
    - HIP documentation, hardware implementation (wave32 on RDNA, wave64 on CDNA): https://rocm.docs.amd.com/projects/HIP/en/latest/understand/hardware_implementation.html
    - HIP C++ language extensions, warpSize: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html#warpsize
    - Clang command line reference, `-mwavefrontsize64` (AMDGPU; wave32 is the default on gfx10 and later): https://clang.llvm.org/docs/ClangCommandLineReference.html
    """

    code = "WRP012"
    name = "warp-size-constant-64"
    summary = "warp size defined as 64 for AMD; RDNA waves have 32 lanes"
    severity = Severity.WARNING
    impact = Impact.SILENT
    wave_sizes = frozenset({32})
    in_macros = False
    report_in_hip_branches = True
    checklist = "Use warpSize in device code (hipDeviceAttributeWarpSize on the host), choose the constant per architecture, or set targets to the wave64 GPUs the project builds for."
    query = WARP_SIZE_DEFINITIONS

    def check(self, ctx, captures):
        name = ctx.text(captures["name"][0])
        if name == "warpSize" or not WARP_SIZE_NAME.match(name):
            return
        if literal_value(ctx.text(captures["value"][0])) != 64:
            return
        node = captures["def"][0]
        start = ctx.file_range(node)[0]
        if ctx.platform_kind(start) != "hip" and not _amd_only_file(ctx.path):
            return
        if _chooses_by_wave(ctx, node):
            return
        if not _used_for_warp_work(ctx, name, ctx.file_range(captures["name"][0])[1]):
            return  # a block size, a replica divisor: right on a 32-lane wave too
        wave32 = [t for t in ctx.settings.targets if wave_size_of(t) == 32]
        where = ", ".join(wave32) + (" runs" if len(wave32) == 1 else " run")
        finding = ctx.report(captures["name"][0] if node.type == "preproc_def" else node,
                             f"`{name}` is defined as 64 for AMD; {where} 32-lane waves: every use assumes two waves' lanes there")
        if finding is not None:
            relate_uses(ctx, finding, name, captures["name"][0], f"`{name}` used here")
