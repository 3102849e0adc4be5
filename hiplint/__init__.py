"""hiplint: find and fix what breaks when CUDA code moves to AMD GPUs (ROCm/HIP)."""

__version__ = "0.1.0"

from hiplint.model import Applicability, Edit, Finding, Fix, Impact, Severity  # noqa: E402
from hiplint.rule import CudaRule, FileRule, Rule  # noqa: E402

__all__ = [
    "Applicability", "CudaRule", "Edit", "FileRule", "Finding", "Fix", "Impact", "Rule",
    "Severity", "__version__",
]
