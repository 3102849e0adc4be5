"""Base for the link-library notes of the library families (build files: make and cmake)."""
from __future__ import annotations

import re

from hiplint import FileRule, Impact, Severity
from hiplint.rules._buildfiles import tokens


class LinkLibraryRule(FileRule):
    """Subclasses set LIBRARIES: CUDA library name -> message naming the HIP library."""

    languages = frozenset({"make", "cmake"})
    severity = Severity.INFO
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
        for tok in tokens(ctx.source.data, cmake):
            m = flag.match(tok.text) or target.match(tok.text) or variable.match(tok.text) or path.match(tok.text)
            if m is None and cmake and tok.in_link_command:
                m = bare.match(tok.text)
            if m is None:
                continue
            lib = next(g for g in m.groups() if g and g in self.LIBRARIES)
            ctx.report_range(tok.start, tok.end, f"`{tok.text}`: {self.LIBRARIES[lib]}")
