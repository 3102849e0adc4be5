"""Output formats. Each module registers its formats with @emitter("name")."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from hiplint import config
from hiplint.model import Finding

# Rule pages live in the repository; projects that publish them elsewhere set HIPLINT_DOCS_URL.
import os as _os

DOCS_URL = _os.environ.get("HIPLINT_DOCS_URL", "docs/rules/")


def rule_url(code: str) -> str:
    return f"{DOCS_URL}{code}.md"


EMITTERS: dict[str, Callable[["Report"], str]] = {}


@dataclass
class Report:
    findings: list[Finding]
    files_scanned: int = 0
    fixed: list[Finding] = field(default_factory=list)  # findings whose fixes were applied
    settings: object = None
    show_fix_hint: bool = True
    color: bool = False
    sources: dict = field(default_factory=dict)  # path -> Source, for code frames


def emitter(name: str):
    def deco(fn):
        EMITTERS[name] = fn
        if name not in config.OUTPUT_FORMATS:
            config.OUTPUT_FORMATS = config.OUTPUT_FORMATS + (name,)
        return fn
    return deco


def render(fmt: str, report: Report) -> str:
    return EMITTERS[fmt](report)


from hiplint.emit import text, jsonfmt, checklist  # noqa: E402,F401  (registration)
