"""Modules imported on first use: libcst takes about 0.4 s to import, and a scan of C/CUDA files
(a pre-commit hook on one .cu file, say) never needs it."""
from __future__ import annotations

import importlib
import re


class LazyModule:
    def __init__(self, name: str):
        self._name = name
        self._module = None

    def __getattr__(self, attr: str):
        # Called only for names not yet here: after the import, the module's names are copied in,
        # so `cst.Name` in a hot loop is a plain attribute lookup.
        if self._module is None:
            self._module = importlib.import_module(self._name)
            self.__dict__.update(vars(self._module))
        return getattr(self._module, attr)


libcst = LazyModule("libcst")


_PATTERN_ATTRS = ("search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split", "flags",
                  "groups", "groupindex", "scanner")


class LazyRegex:
    """`re.compile(pattern, flags)`, compiled on first use. A rule module's patterns are compiled when
    a file first needs them, not when the module is imported: a run on one file imports every rule
    module (about 120 patterns, 25 ms) and uses a few of them. `pattern` is there without compiling;
    after the first use the compiled pattern's methods are plain attributes (no slower in a loop).
    For the module-level patterns of rules; not a `re.Pattern` (not for `isinstance` or `re.sub(p, ...)`)."""

    def __init__(self, pattern, flags=0):
        self.pattern = pattern
        self._flags = flags

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        compiled = re.compile(self.pattern, self._flags)
        for name in _PATTERN_ATTRS:
            self.__dict__[name] = getattr(compiled, name)
        self.__dict__["compiled"] = compiled
        return getattr(compiled, attr)

    def __repr__(self) -> str:
        return f"LazyRegex({self.pattern!r}, {self._flags!r})"


def lazy_re(pattern, flags=0) -> LazyRegex:
    return LazyRegex(pattern, flags)
