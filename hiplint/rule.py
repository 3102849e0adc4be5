"""The rule plugin interface.

A rule is a class with its metadata as class attributes and its documentation as the docstring.
`CudaRule` subclasses give a tree-sitter `query`; the engine compiles the queries of all enabled rules
into one query per run and calls `check(ctx, captures)` for each match. `FileRule` subclasses see the
whole file once through `check_file(ctx)`: Python, CMake and Makefile rules, and C++ rules that need
more than a pattern.
"""
from __future__ import annotations

import re
from typing import ClassVar, Iterable, Mapping, Sequence

from hiplint.model import Impact, Severity

# Sections every rule's docstring must have (tests enforce it, `hiplint rule CODE` prints them).
REQUIRED_SECTIONS = ("What it does", "Why it breaks on AMD", "Example", "Use instead", "References")
CODE_RE = re.compile(r"^[A-Z]{2,4}[0-9]{3}$")
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class computed_once:
    """A class attribute computed on first read, then kept on the class. For a `query` (or other
    attribute) built from a large table: a scan served from the cache never reads it, so never
    parses the table (`query = computed_once(lambda: any_of_query(...))`)."""

    def __init__(self, compute):
        self.compute = compute

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner):
        value = self.compute()
        setattr(owner, self.name, value)
        return value


def has_query(rule) -> bool:
    """Whether a rule has query patterns, without computing a `computed_once` query."""
    for klass in type(rule).__mro__:
        if "query" in vars(klass):
            value = vars(klass)["query"]
            if isinstance(value, computed_once):
                return True
            return bool(value.strip() if isinstance(value, str) else rule.query.strip())  # e.g. a property
    return False


class Rule:
    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""  # default message
    severity: ClassVar[Severity] = Severity.WARNING
    impact: ClassVar[Impact] = Impact.PORTABILITY
    languages: ClassVar[frozenset[str]] = frozenset({"cuda"})
    fix_availability: ClassVar[str] = "none"  # none | sometimes | always
    # Wave sizes the problem exists on; the rule is skipped when no configured target has one.
    wave_sizes: ClassVar[frozenset[int]] = frozenset({32, 64})
    # Report in #if branches that only compile for AMD? Most rules are about CUDA code: no.
    report_in_hip_branches: ClassVar[bool] = False
    # About an NVIDIA-only feature (PTX, async copies, clusters, programmatic dependent launch)? Then
    # not reported in branches AMD surely skips: nothing there reaches AMD's compiler, and ARC001
    # reports the skipped branch itself.
    nvidia_feature: ClassVar[bool] = False
    default_enabled: ClassVar[bool] = True
    checklist: ClassVar[str] = ""  # the manual step, shown in the migration checklist
    # A fallback rule (e.g. the generic "no HIP equivalent" table) yields to the specialist rules: its
    # finding is dropped when a selected non-fallback rule reports the same code text in the file.
    fallback: ClassVar[bool] = False
    # Names a specialist speaks for as a whole (a regex): once it reports anything in a file, fallback
    # findings on such names are dropped there too. MEM009 reports CUDA fp8 once per file; without it
    # the generic table would repeat every `__nv_fp8_e4m3` of the file.
    covers: ClassVar[str] = ""
    pack: ClassVar[str] = "builtin"  # set by the registry
    # Strings of which a file must contain one for this rule to report anything in it (speed: the
    # engine then skips the rule's query and check_unit on other files). Leave empty unless every
    # finding needs one; query patterns with an #eq?/#any-of?/#match? predicate are gated without it
    # (hiplint.triggers). A test checks that gating changes no finding on any fixture.
    triggers: ClassVar[tuple[str, ...]] = ()

    @property
    def trigger_bytes(self) -> tuple[bytes, ...]:
        return tuple(t.encode() for t in self.triggers)

    def enabled_for(self, settings) -> bool:
        """Whether the configured targets and ROCm versions make this rule relevant."""
        return bool(self.wave_sizes & settings.wave_sizes)

    # Documentation -----------------------------------------------------------------------------
    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        doc = cls.__doc__ or ""
        lines = doc.expandtabs().splitlines()
        # Dedent by the smallest indent of non-blank lines after the first.
        indents = [len(l) - len(l.lstrip()) for l in lines[1:] if l.strip()]
        cut = min(indents) if indents else 0
        text = "\n".join([lines[0].strip()] + [l[cut:] for l in lines[1:]]) if lines else ""
        sections: dict[str, str] = {}
        current = "_intro"
        buf: list[str] = []
        for line in text.splitlines():
            m = re.match(r"^##\s+(.+?)\s*$", line)
            if m:
                sections[current] = "\n".join(buf).strip()
                current, buf = m.group(1), []
            else:
                buf.append(line)
        sections[current] = "\n".join(buf).strip()
        return sections

    @classmethod
    def fence_body(cls, section: str) -> str:
        """The code inside the first ``` fence of a docstring section ('' if none)."""
        body = cls.doc_sections().get(section, "")
        m = re.search(r"```[a-zA-Z+]*\n(.*?)```", body, re.S)
        return m.group(1) if m else ""

    @classmethod
    def source_file(cls) -> str:
        import inspect
        try:
            return inspect.getsourcefile(cls) or ""
        except TypeError:
            return ""


class CudaRule(Rule):
    """A rule driven by a tree-sitter query over C/C++/CUDA/HIP sources (and macro bodies)."""

    query: ClassVar[str] = ""
    # Also match inside #define bodies (parsed as code). Rules about declarations may say no.
    in_macros: ClassVar[bool] = True

    def check(self, ctx, captures: Mapping[str, Sequence]) -> None:
        """Default: report the `@report` capture with the summary."""
        for node in captures.get("report", ()):
            ctx.report(node)

    def check_unit(self, ctx) -> None:
        """Called once per unit after all matches; for rules that collect first and report later."""


class FileRule(Rule):
    """A rule that looks at a whole file once."""

    def check_file(self, ctx) -> Iterable | None:
        raise NotImplementedError
