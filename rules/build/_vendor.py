"""Words that mean "the AMD/ROCm path" in conditions of build files and Python code."""
from __future__ import annotations

import re
from hiplint.lazy import lazy_re

_WORD = lazy_re(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z0-9]+")
_IDENT = lazy_re(r"[A-Za-z_][A-Za-z0-9_]*")
HIP_WORDS = frozenset({"hip", "amd", "cdna", "rdna"})
HIP_SUBSTRINGS = ("rocm", "amdgpu", "gcnarch", "hipcc", "amdclang", "hipconfig",
                  # AMD's libraries, named as one word (`if(HIPBLAS_FOUND)`, `set(TPLS ... HIPSPARSE)`)
                  "hipblas", "hipsparse", "hipsolver", "hipfft", "hiprand", "hipcub", "rocblas", "rocsparse",
                  "rocsolver", "rocfft", "rocrand", "rocprim", "rccl", "miopen")
# Values of a build's GPU-runtime switch that mean the NVIDIA build (`GPU_RUNTIME STREQUAL "CUDA"`).
NVIDIA_BACKENDS = frozenset({"CUDA", "NVIDIA", "NVCC"})


def identifier_words(identifier: str) -> list[str]:
    """`MemoryEfficientAttentionCkOp` -> memory, efficient, attention, ck, op (lower case)."""
    return [p.lower() for p in _WORD.findall(identifier)]


def is_hip_word(identifier: str) -> bool:
    """IS_HIP_EXTENSION, use_rocm, isROCm, is_hip, gcnArchName, gfx942: yes. ship, chip, hipster: no."""
    low = identifier.lower()
    if any(s in low for s in HIP_SUBSTRINGS):
        return True
    parts = identifier_words(identifier)
    return any(p in HIP_WORDS or re.fullmatch(r"gfx[0-9a-f]*", p) for p in parts)


def is_hip_text(text: str) -> bool:
    """Whether any identifier-like word of a condition names HIP/ROCm."""
    return any(is_hip_word(w) for w in _IDENT.findall(text))
