"""Output formats. Each module registers its formats with @emitter("name")."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from hiplint import config
from hiplint.model import Finding

import os as _os

from hiplint.project import RULE_DOCS_URL


def docs_base() -> str:
    """Where the rule pages are: HIPLINT_DOCS_URL when set, else the project's published pages."""
    return _os.environ.get("HIPLINT_DOCS_URL", "").strip() or RULE_DOCS_URL


def rule_url(code: str) -> str:
    """The page of rule `code`: the base and `CODE.md`, joined by one slash whether or not the base ends in one."""
    return f"{docs_base().rstrip('/')}/{code}.md"


# Each built-in format's module, imported when the format is first asked for: a run renders one or
# two formats, and importing all of them (html, sarif, junit: xml, uuid...) cost a one-file run ~15 ms.
# In the order they register in (config.OUTPUT_FORMATS, error messages).
FORMAT_MODULES = {"full": "text", "concise": "text", "json": "jsonfmt", "checklist": "checklist", "sarif": "sarif",
                  "github": "github", "gitlab": "gitlab", "junit": "junit", "json-lines": "jsonlines",
                  "html": "html"}


class _Emitters(dict):
    """Format name -> render function. Reading a built-in format imports its module (which registers
    it with @emitter); listing the formats imports them all."""

    def __missing__(self, name):
        module = FORMAT_MODULES.get(name)
        if module is None:
            raise KeyError(name)
        import importlib

        importlib.import_module(f"{__name__}.{module}")
        return dict.__getitem__(self, name)

    def __contains__(self, name):
        return name in FORMAT_MODULES or dict.__contains__(self, name)

    def get(self, name, default=None):
        return self[name] if name in self else default

    def _all(self):
        for name in FORMAT_MODULES:
            if not dict.__contains__(self, name):
                self.__missing__(name)

    def __iter__(self):
        self._all()
        return dict.__iter__(self)

    def __len__(self):
        self._all()
        return dict.__len__(self)

    def keys(self):
        self._all()
        return dict.keys(self)

    def values(self):
        self._all()
        return dict.values(self)

    def items(self):
        self._all()
        return dict.items(self)


EMITTERS: dict[str, Callable[["Report"], str]] = _Emitters()


@dataclass
class Report:
    findings: list[Finding]
    files_scanned: int = 0
    fixed: list[Finding] = field(default_factory=list)  # findings whose fixes were applied
    settings: object = None
    show_fix_hint: bool = True
    # What the checklist says to get a safe fix, and an unsafe one (`hiplint migrate` says its own).
    fix_hints: tuple[str, str] = ("`hiplint fix`", "review it: `hiplint fix --unsafe-fixes`")
    color: bool = False
    sources: dict = field(default_factory=dict)  # path -> Source, for code frames
    root: str | None = None  # paths in CI formats are relative to this; default: the git work tree
    incomplete: bool = False  # a rule failed on some file (internal error): "all checks passed" would be untrue
    skipped: int = 0  # files not checked, and named paths with nothing to check: neither "passed"
    baseline: dict | None = None  # with --baseline: {path, new, fixed, unchanged} (the html report shows it)

    def relpath(self, path: str) -> str:
        """`path` relative to the repository root, with forward slashes (SARIF, GitHub, GitLab)."""
        if self.root is None:
            self.root = repository_root(getattr(self.settings, "root", None))
        rel = _os.path.relpath(_os.path.realpath(path), _os.path.realpath(self.root))
        if rel.startswith(".."):
            rel = path  # outside the repository: keep what the user gave
        return rel.replace(_os.sep, "/")


MAX_RELATED_LISTED = 10  # text formats name this many related locations, then "and N more"


def also_at(f, relpath=None, limit: int = MAX_RELATED_LISTED) -> str:
    """`file:line, file:line and N more`: a finding's related lines in one line ('' if none); two
    places on one line are named once."""
    places = list(dict.fromkeys(f"{relpath(r.path) if relpath else r.path}:{r.line}" for r in f.related))
    text = ", ".join(places[:limit])
    if len(places) > limit:
        text += f" and {len(places) - limit} more"
    return text


def repository_root(fallback=None) -> str:
    """The git work tree around the working directory, else the config root, else the working directory."""
    import subprocess
    try:
        out = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, timeout=30)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return str(fallback) if fallback else _os.getcwd()


def emitter(name: str):
    def deco(fn):
        EMITTERS[name] = fn
        if name not in config.OUTPUT_FORMATS:
            config.OUTPUT_FORMATS = config.OUTPUT_FORMATS + (name,)
        return fn
    return deco


def render(fmt: str, report: Report) -> str:
    return EMITTERS[fmt](report)


config.OUTPUT_FORMATS = config.OUTPUT_FORMATS + tuple(n for n in FORMAT_MODULES if n not in config.OUTPUT_FORMATS)
