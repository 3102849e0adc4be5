"""Modules imported on first use: libcst takes about 0.4 s to import, and a scan of C/CUDA files
(a pre-commit hook on one .cu file, say) never needs it."""
from __future__ import annotations

import importlib


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
