"""Which files hiplint reads, and as what language."""
from __future__ import annotations

import fnmatch
import os

CUDA_EXTENSIONS = frozenset({".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh",
                             ".hxx", ".inl", ".cuinl", ".c++", ".h++", ".ipp", ".tpp"})
FILENAME_LANGUAGES = {"CMakeLists.txt": "cmake", "Makefile": "make", "makefile": "make", "GNUmakefile": "make"}
EXTENSION_LANGUAGES = {".py": "python", ".cmake": "cmake", ".mk": "make"}


def language_of(path: str, extra_include=()) -> str | None:
    name = os.path.basename(path)
    if name in FILENAME_LANGUAGES:
        return FILENAME_LANGUAGES[name]
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
