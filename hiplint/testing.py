"""The fixture harness: expectations written as comments inside each fixture.

    unsigned m = __ballot_sync(0xffffffff, p);   // hl-expect: WRP003, WRP004
    // hl-expect: WRP001 "lane index"              (own line: applies to the next code line)
    int lane = threadIdx.x & 31;
    int w = threadIdx.x / warpSize;              // hl-ok: WRP001
    // hl-config: rocm-version = "6.2"            (TOML; settings for this fixture)
    v = __shfl_sync(kMask, v, 0);                // hl-related: WRP006

`hl-related: CODE` marks a related location of a CODE finding (another place the finding stands
for, e.g. a use of the constant reported at its declaration; own line: the next code line), and
`hl-related: CODE "text"` also requires text in that related location's message. Once a fixture
marks one for a code, the related lines of that code's findings must be exactly the marked ones.

For a fixture `name.ext`, `name.fixed.ext` is the exact expected result of the safe fixes and
`name.unsafe.fixed.ext` of safe plus unsafe ones. They sit beside the fixture, except in a tree meant
to be scanned as a whole (the bundled sample): a directory `X` with a sibling `X.expected/` keeps them
there, at the same relative place, so that scanning `X` shows only the inputs. The findings of a fixture must equal its
annotations: a missing finding fails, and so does an unexpected one. Fixed files keep the
annotations of their input; there only the findings that remain are checked (each must be annotated).
Rule packs can use this module for their own fixtures.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from hiplint.config import Settings, apply_table
from hiplint.engine import Linter
from hiplint.fix import fix_bytes
from hiplint.languages import language_of
from hiplint.model import Applicability, Finding
from hiplint.registry import load_registry, select_rules

ANNOT = re.compile(r"(?://|#)\s*hl-(?P<kind>expect|ok|config|related):\s*(?P<body>.*?)\s*(?:\*/)?\s*$")
CODE = re.compile(r"\b[A-Z]{2,4}[0-9]{3}\b")
CODE_WITH_MESSAGE = re.compile(r'\b([A-Z]{2,4}[0-9]{3})\b(?:\s*"([^"]*)")?')


@dataclass
class Expectations:
    expected: dict[tuple[int, str], list[str]] = field(default_factory=dict)  # (line, code) -> message substrings
    ok: set[tuple[int, str]] = field(default_factory=set)
    counts: dict[tuple[int, str], int] = field(default_factory=dict)  # how many times each is expected
    config: dict = field(default_factory=dict)
    codes: set[str] = field(default_factory=set)
    related: set[tuple[int, str]] = field(default_factory=set)  # (line, code): a related location expected
    related_messages: dict[tuple[int, str], list[str]] = field(default_factory=dict)  # message substrings


def _is_comment_line(text: str, hash_comments: bool) -> bool:
    t = text.strip()
    if hash_comments:
        return t.startswith("#")
    return t.startswith(("//", "/*", "*"))


def parse_expectations(text: str, hash_comments: bool = False) -> Expectations:
    ex = Expectations()
    lines = text.splitlines()
    for i, line in enumerate(lines, start=1):
        for m in _annotations(line):
            _parse_annotation(ex, lines, i, line, m, hash_comments)
    return ex


def _annotations(line: str):
    """Every `hl-...:` annotation of a line (a line may carry `hl-ok: X  // hl-expect: Y`)."""
    starts = [m.start() for m in re.finditer(r"(?://|#)\s*hl-(?:expect|ok|config|related):", line)]
    for k, s in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(line)
        m = ANNOT.search(line[s:end])
        if m:
            yield (s, m)


def _parse_annotation(ex, lines, i, line, found, hash_comments):
    offset, m = found
    kind, body = m.group("kind"), m.group("body")
    if kind == "config":
        ex.config.update(tomllib.loads(body))
        return
    target = i
    if not line[: offset].strip():  # own line: the next line that holds code
        j = i + 1
        while j <= len(lines) and (not lines[j - 1].strip() or _is_comment_line(lines[j - 1], hash_comments)):
            j += 1
        target = j
    # `CODE "message part"` pairs: a quoted text belongs to the code before it.
    for c, message in CODE_WITH_MESSAGE.findall(body.split("(")[0] if kind == "ok" else body):
        ex.codes.add(c)
        if kind == "related":
            ex.related.add((target, c))
            if message:
                ex.related_messages.setdefault((target, c), []).append(message)
        elif kind == "expect":
            ex.expected.setdefault((target, c), []).extend([message] if message else [])
            ex.counts[(target, c)] = ex.counts.get((target, c), 0) + 1
        else:
            ex.ok.add((target, c))


def fixture_settings(ex: Expectations, path: Path) -> Settings:
    base = Settings(root=path.parent)
    settings = apply_table(base, ex.config, str(path)) if ex.config else base
    named = tuple(sorted(ex.codes))
    return settings.with_overrides(extend_select=settings.extend_select + named)


def linter_for(settings: Settings) -> Linter:
    return Linter(settings, select_rules(settings, load_registry()))


def lint_fixture(path: Path) -> tuple[list[Finding], Expectations, Linter, str]:
    data = path.read_bytes()
    lang = language_of(str(path)) or "cuda"
    ex = parse_expectations(data.decode("utf-8", "replace"), hash_comments=lang != "cuda")
    settings = fixture_settings(ex, path)
    linter = linter_for(settings)
    result = linter.lint_bytes(str(path), data, lang)
    if result.internal_error:
        raise AssertionError("\n".join(result.notes))
    return result.findings, ex, linter, lang


def compare(findings: list[Finding], ex: Expectations, subset: bool = False) -> list[str]:
    """Problems as readable lines; empty when the fixture holds."""
    problems = []
    found: dict[tuple[int, str], list[Finding]] = {}
    for f in findings:
        found.setdefault((f.line, f.code), []).append(f)
    for key, msgs in sorted(ex.expected.items()):
        if subset:
            continue
        if key not in found:
            problems.append(f"line {key[0]}: expected {key[1]}, not reported")
            continue
        if len(found[key]) > ex.counts.get(key, 1):
            problems.append(f"line {key[0]}: {key[1]} reported {len(found[key])} times, expected "
                            f"{ex.counts.get(key, 1)} (list the code once per finding)")
        for sub in msgs:
            if not any(sub in f.message for f in found[key]):
                problems.append(f"line {key[0]}: {key[1]} message lacks {sub!r}: {found[key][0].message!r}")
    if not subset:
        problems += _compare_related(findings, ex)
    for key, fs in sorted(found.items()):
        if key not in ex.expected:
            problems.append(f"line {key[0]}: unexpected {key[1]}: {fs[0].message}")
        if key in ex.ok:
            problems.append(f"line {key[0]}: {key[1]} reported on a line marked hl-ok")
    return problems


EXPECTED_SUFFIX = ".expected"


def _expected_tree(path: Path) -> tuple[Path, Path] | None:
    """(X, X.expected) when `path` lies in a directory X that keeps its fixed outputs in X.expected/."""
    for d in path.parents:
        if d.name and not d.name.endswith(EXPECTED_SUFFIX) and d.with_name(d.name + EXPECTED_SUFFIX).is_dir():
            return d, d.with_name(d.name + EXPECTED_SUFFIX)
    return None


def _compare_related(findings: list[Finding], ex: Expectations) -> list[str]:
    """For each code with an `hl-related` mark: its findings' related lines (in this file) are the marked ones."""
    problems = []
    for code in sorted({c for _, c in ex.related}):
        want = {line for line, c in ex.related if c == code}
        got = {r.line for f in findings if f.code == code for r in f.related if r.path == f.path}
        for line in sorted(want - got):
            problems.append(f"line {line}: expected as a related location of {code}, not listed")
        for line in sorted(got - want):
            problems.append(f"line {line}: unexpected related location of {code}")
    for (line, code), subs in sorted(ex.related_messages.items()):
        here = [r.message for f in findings if f.code == code for r in f.related if r.path == f.path and r.line == line]
        for sub in subs:
            if here and not any(sub in m for m in here):
                problems.append(f"line {line}: related location of {code} lacks {sub!r}: {here[0]!r}")
    return problems


def fixed_path(path: Path, unsafe: bool) -> Path:
    stem, ext = path.name.split(".", 1)[0], path.name.split(".", 1)[1] if "." in path.name else ""
    name = f"{stem}.{'unsafe.' if unsafe else ''}fixed.{ext}" if ext else f"{stem}.{'unsafe.' if unsafe else ''}fixed"
    tree = _expected_tree(path)
    if tree is not None:
        return tree[1] / path.parent.relative_to(tree[0]) / name
    return path.with_name(name)


def input_dir(path: Path) -> Path:
    """The directory of the fixture a file belongs to: its own, or for a file in X.expected/, the one in X."""
    for d in path.parents:
        if d.name.endswith(EXPECTED_SUFFIX) and d.with_name(d.name[: -len(EXPECTED_SUFFIX)]).is_dir():
            return d.with_name(d.name[: -len(EXPECTED_SUFFIX)]) / path.parent.relative_to(d)
    return path.parent


def is_fixed_output(path: Path) -> bool:
    return ".fixed." in path.name or path.name.endswith(".fixed")


def run_fix(path: Path, unsafe: bool):
    findings, ex, linter, lang = lint_fixture(path)
    data = path.read_bytes()
    threshold = Applicability.UNSAFE if unsafe else Applicability.SAFE
    outcome = fix_bytes(lambda d: linter.lint_bytes(str(path), d, lang).findings, data, lang, threshold)
    return outcome, linter, lang


def fixture_files(root: Path) -> list[Path]:
    out = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and language_of(str(p)) is not None and not p.name.startswith("_"):
            out.append(p)
    return out


def main(argv=None) -> int:
    """`python -m hiplint.testing [--write] FIXTURE...`: show (or write) the .fixed outputs of fixtures.

    Review what it prints before committing it: the .fixed file is the specification of the fix.
    """
    import sys
    args = list(sys.argv[1:] if argv is None else argv)
    write = "--write" in args
    for name in [a for a in args if a != "--write"]:
        path = Path(name)
        for unsafe in (False, True):
            outcome, _, _ = run_fix(path, unsafe)
            target = fixed_path(path, unsafe)
            if outcome.data == path.read_bytes():
                continue
            if unsafe and fixed_path(path, False).exists() and outcome.data == fixed_path(path, False).read_bytes():
                continue
            if write:
                target.write_bytes(outcome.data)
                print(f"wrote {target}")
            else:
                print(f"--- {target}\n{outcome.data.decode('utf-8', 'replace')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
