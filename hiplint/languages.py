"""Which files hiplint reads, and as what language."""
from __future__ import annotations

import fnmatch
import os
import re

CUDA_EXTENSIONS = frozenset({".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh",
                             ".hxx", ".inl", ".cuinl", ".c++", ".h++", ".ipp", ".tpp"})
FILENAME_LANGUAGES = {"CMakeLists.txt": "cmake", "Makefile": "make", "makefile": "make", "GNUmakefile": "make"}
EXTENSION_LANGUAGES = {".py": "python", ".cmake": "cmake", ".mk": "make"}
# A Makefile kept per GPU vendor (`makefile.hip`, `Makefile.cuda`, `Makefile_nvcc`) is a Makefile, not a
# HIP source. Other suffixes stay out: `Makefile.am`/`.in` (autotools inputs, read elsewhere), and copies
# such as `Makefile.expected` or `Makefile.orig`, which no build reads.
_MAKEFILE_VARIANT = re.compile(r"^(?:GNU)?[Mm]akefile[._-](?:\w+[._-])*(?:hip|hipcc|rocm|amd|amdgpu|cuda|nvcc|nvidia|gpu)"
                               r"(?:[._-]\w+)*$", re.I)


_COPY_SUFFIXES = frozenset({".orig", ".bak", ".old", ".rej", ".expected", ".sample", ".example", ".template",
                            ".tmpl", ".in", ".am", ".txt", ".md"})


def is_makefile_name(name: str) -> bool:
    """Is this file name a Makefile (`Makefile`, `GNUmakefile`, `makefile.hip`, `Makefile.cuda`)?"""
    if FILENAME_LANGUAGES.get(name) == "make":
        return True
    return _MAKEFILE_VARIANT.match(name) is not None and os.path.splitext(name)[1].lower() not in _COPY_SUFFIXES


def language_of(path: str, extra_include=()) -> str | None:
    name = os.path.basename(path)
    if name in FILENAME_LANGUAGES:
        return FILENAME_LANGUAGES[name]
    if is_makefile_name(name):
        return "make"
    ext = os.path.splitext(name)[1]
    if ext.lower() in CUDA_EXTENSIONS:
        return "cuda"
    if ext in EXTENSION_LANGUAGES:
        return EXTENSION_LANGUAGES[ext]
    for pattern in extra_include:
        if fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(path, pattern):
            # Files included by glob are read as C-family sources unless the glob says .py etc.
            return EXTENSION_LANGUAGES.get(os.path.splitext(pattern)[1], "cuda")
    return None
