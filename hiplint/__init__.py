"""hiplint: find and fix what breaks when CUDA code moves to AMD GPUs (ROCm/HIP)."""

__version__ = "0.1.0"

# Installed, the built-in rules are the subpackage hiplint.rules; in a source checkout they sit in
# rules/ beside this package. Let `import hiplint.rules` find them in both cases (for example when
# `python -m pytest` runs from the checkout and puts it first on sys.path).
import os as _os

_checkout = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if not _os.path.isdir(_os.path.join(_os.path.dirname(__file__), "rules")) and \
        _os.path.isfile(_os.path.join(_checkout, "rules", "__init__.py")) and _checkout not in __path__:
    __path__.append(_checkout)

from hiplint.model import Applicability, Edit, Finding, Fix, Impact, RelatedLocation, Severity  # noqa: E402
from hiplint.rule import CudaRule, FileRule, Rule  # noqa: E402

__all__ = [
    "Applicability", "CudaRule", "Edit", "FileRule", "Finding", "Fix", "Impact", "Rule",
    "Severity", "__version__",
]
