"""Base for the link-library notes of the library families (build files: make and cmake)."""
from __future__ import annotations

import re

from hiplint import FileRule, Impact, Severity
from hiplint.rules.build import _cmake, _make
from hiplint.lazy import lazy_re


LINK_COMMANDS = frozenset({"target_link_libraries", "link_libraries", "target_link_options", "add_link_options"})
WORD = lazy_re(rb"[^\s\"']+")


class LinkLibraryRule(FileRule):
    """Subclasses set LIBRARIES: CUDA library name -> message naming the HIP library."""

    languages = frozenset({"make", "cmake"})
    # `CUDA::curand` is no target on ROCm (CMake stops at generate time), `-lcurand` fails at link
    # time: the same consequence as the BLD004 error beside it.
    severity = Severity.ERROR
    impact = Impact.COMPILE
    LIBRARIES: dict[str, str] = {}

    def _patterns(self):
        names = "|".join(sorted(map(re.escape, self.LIBRARIES), key=len, reverse=True))
        return (re.compile(rf"^-l({names})(_static)?$"),                      # -lcurand
                re.compile(rf"^CUDA::({names})(_static)?$"),                  # CMake FindCUDAToolkit targets
                re.compile(rf"^\$\{{CUDA_({names})_LIBRARY\}}$|^CUDA_({names})_LIBRARY$"),  # FindCUDA variables
                re.compile(rf"^(?:.*/)?lib({names})(_static)?\.(so|a)(\.[0-9.]+)?$"),
                re.compile(rf"^({names})$"))                                  # bare name in target_link_libraries

    def check_file(self, ctx):
        cmake = ctx.language == "cmake"
        flag, target, variable, path, bare = self._patterns()
        for text, start, end, in_link_command in _unaware_tokens(ctx, cmake):
            m = flag.match(text) or target.match(text) or variable.match(text) or path.match(text)
            if m is None and cmake and in_link_command:
                m = bare.match(text)
            if m is None:
                continue
            lib = next(g for g in m.groups() if g and g in self.LIBRARIES)
            ctx.report_range(start, end, f"`{text}`: {self.LIBRARIES[lib]}")


def _unaware_tokens(ctx, cmake: bool):
    """Tokens outside code that already handles ROCm (`if(HIP_FOUND)`, `ifeq ($(BACKEND),hip)`,
    `if(GPU_RUNTIME STREQUAL "CUDA")`), as the build rules see them. `if()` conditions are left out:
    `if(TARGET CUDA::cusolver)` tests for the library, it links nothing."""
    if cmake:
        for cmd in _cmake.get(ctx):
            # `unset(CUDA_curand_LIBRARY CACHE)` clears a variable: it links nothing.
            if not cmd.aware and cmd.name not in ("if", "elseif", "unset") and not cmd.exclusion_list:
                for tok in cmd.tokens():
                    if _cmake.genex_for_nvidia(tok.genex, ctx.source.data):
                        continue  # `$<$<BOOL:${X_WITH_CUDA}>:CUDA::cusolver>` beside the X_WITH_HIP one
                    yield tok.text, tok.start, tok.end, cmd.name in LINK_COMMANDS
    else:
        for line in _make.get(ctx):
            if not line.aware:
                for _, start, end in line.tokens:
                    # A quoted word (`"link with -lcurand"`) holds several: split its bytes again.
                    for m in WORD.finditer(ctx.source.data, start, end):
                        yield m.group().decode("utf-8", "replace"), m.start(), m.end(), False
