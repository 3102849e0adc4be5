"""Per file: read, parse once, run every enabled rule, apply suppressions and ignores."""
from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass, field

from tree_sitter import QueryCursor

from hiplint import fingerprint, suppress
from hiplint.context import FileContext
from hiplint.cparse import (INDEX_CAPTURE, MAX_BLOCK_NESTING, MAX_NESTING, Unit, error_ranges, for_parsing,
                             macro_units, new_parser, seed_index, too_deep, too_deep_blocks, valid_utf8)
from hiplint.headers import platform_map
from hiplint.model import Finding, RelatedLocation, Severity
from hiplint.preproc import unreported_spans
from hiplint.queryplan import ROOT_CAPTURE, KindWalk, QueryPlan, Rooted
from hiplint.rule import CudaRule, FileRule, has_query
from hiplint.source import MAX_FILE_BYTES, Encoding, Skip, Source, decode_input, read_bounded  # noqa: F401

META_CODES = ("HL001", "HL002", "HL100", "HL101", "HL102")
_QUERIES: dict = {}  # rule set -> QueryPlan


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # one-line diagnostics for stderr
    internal_error: bool = False
    source: Source | None = None
    fixed: list[Finding] = field(default_factory=list)  # findings whose fixes were applied
    diff: str = ""
    depends: dict = field(default_factory=dict)  # other files the findings depend on: path -> digest
    skipped: bool = False  # not checked (too large, binary, nested too deep...): a note says why
    encoding: Encoding = field(default_factory=Encoding)  # how the file's bytes became source.data
    write_error: str = ""  # the fixed file could not be written (an error: exit 2, shown even with -q)


def _splitter_digest() -> str:
    """Hash of the modules whose code decides a query plan's split (hiplint.queryplan and what it uses)."""
    import hashlib

    h = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("queryplan.py", "triggers.py", "lookup.py", "cparse.py"):
        try:
            with open(os.path.join(here, name), "rb") as fh:
                h.update(fh.read())
        except OSError:
            h.update(name.encode())
    return h.hexdigest()


def changed_span(old: bytes, new: bytes) -> tuple[int, int, int]:
    """Where `new` differs from `old`: (start, end in old, end in new), the common prefix and suffix
    found by halving (slices compared in C)."""
    n = min(len(old), len(new))
    lo, hi = 0, n
    while lo < hi:  # the longest common prefix
        mid = (lo + hi + 1) // 2
        if old[:mid] == new[:mid]:
            lo = mid
        else:
            hi = mid - 1
    start = lo
    lo, hi = 0, n - start
    while lo < hi:  # the longest common suffix that does not overlap it
        mid = (lo + hi + 1) // 2
        if old[len(old) - mid:] == new[len(new) - mid:]:
            lo = mid
        else:
            hi = mid - 1
    return start, len(old) - lo, len(new) - lo


def _point(text: bytes, offset: int) -> tuple[int, int]:
    """(row, column in bytes) of a byte offset, as tree-sitter counts them."""
    row = text.count(b"\n", 0, offset)
    return row, offset - (text.rfind(b"\n", 0, offset) + 1)


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:8192]


class Linter:
    """The enabled rules, instantiated once, with their queries compiled into one."""

    def __init__(self, settings, rule_classes, selected_codes=None):
        """`selected_codes`: the codes the run selected, when `rule_classes` holds only those of them
        its files can need (hiplint.runner); the engine's own rules (HL...) report by these."""
        self.settings = settings
        self.selected_codes = set(selected_codes) if selected_codes is not None else {r.code for r in rule_classes}
        self.rules = [r() for r in rule_classes if r.code not in META_CODES and r().enabled_for(settings)]
        self.cuda_rules = [r for r in self.rules if isinstance(r, CudaRule) and has_query(r)]
        self.file_rules: dict[str, list[FileRule]] = {}
        for r in self.rules:
            if isinstance(r, FileRule):
                for lang in r.languages:
                    self.file_rules.setdefault(lang, []).append(r)
        # check_unit is called only where a rule has one: ~110 rules x every macro body adds up.
        self.unit_rules = [r for r in self.rules if isinstance(r, CudaRule) and type(r).check_unit is not CudaRule.check_unit]
        self._fallback_codes = frozenset(r.code for r in self.rules if r.fallback)
        self._covers = {r.code: re.compile(r.covers) for r in self.rules if r.covers}
        self._plan: QueryPlan | None = None
        self.plan_dir: str | None = None  # where the query plan is saved between runs (the cache's)
        self.gating = True  # tests turn it off to show that skipping rules by text changes nothing
        self._parser = None
        # The language server: a document linted again after an edit is parsed incrementally from its
        # previous tree (a keystroke re-parses a few nodes, not the whole 1,000-line file).
        self.reuse_trees = False
        self._previous: dict[str, tuple[bytes, object]] = {}  # path -> (text parsed, its tree)
        self.languages = {"cuda"} if self.unit_rules or self.file_rules.get("cuda") else set()
        self.languages |= set(self.file_rules)

    def prepare(self):
        """Compile the queries now (a parent does it before forking workers, which then share them)."""
        if self._parser is None:
            self._compile()
        if self._plan.query is None:
            # A restored plan (the manifest's, a saved one) compiles only what its first file needs;
            # workers that will see many files share the whole query instead of each compiling it.
            self._plan.query = self._plan._full_query()

    # Queries: the enabled rules' patterns, split by what a file must contain for them to match.
    def _compile(self):
        # One plan per rule set and process: every Linter with the same rules shares it.
        key = tuple((type(r).__module__, type(r).__qualname__, r.query, tuple(sorted(r.triggers))) for r in self.cuda_rules + self.unit_rules)
        plan = _QUERIES.get(key)
        if plan is None:
            plan = _QUERIES[key] = (self._manifest_plan() or self._saved_plan(key)
                                    or QueryPlan.build(self.cuda_rules, self.unit_rules))
            if self.plan_dir and not plan.restored:
                self._save_plan(key, plan)
        self._plan = plan
        self._parser = new_parser()

    def _plan_file(self, key) -> str:
        import hashlib
        import json

        import tree_sitter

        from hiplint.cparse import GRAMMAR_VERSION, INDEX_PATTERNS

        # The code that splits the patterns counts too: a checkout whose splitting changed (same version
        # number) must not reuse a split made by the old code.
        blob = json.dumps([GRAMMAR_VERSION, getattr(tree_sitter, "__version__", ""), INDEX_PATTERNS, _splitter_digest(),
                           key], default=lambda v: sorted(v) if isinstance(v, (set, frozenset)) else list(v))
        return os.path.join(self.plan_dir, hashlib.sha256(blob.encode()).hexdigest()[:24] + ".json")

    def _manifest_plan(self) -> QueryPlan | None:
        """The plan of these rules cut from the built-in rules' split in the manifest (hiplint.manifest),
        or None (not all built-in, or the manifest is stale)."""
        from hiplint import manifest

        try:
            layout = manifest.plan_layout(self.cuda_rules)
            return None if layout is None else QueryPlan.from_layout(layout, self.cuda_rules, self.unit_rules)
        except Exception:  # not these patterns after all: the saved plan or a build decides
            return None

    def _saved_plan(self, key) -> QueryPlan | None:
        """The plan of these rules saved by an earlier run (with the cache on), or None."""
        if not self.plan_dir:
            return None
        import json

        try:
            with open(self._plan_file(key), encoding="utf-8") as fh:
                return QueryPlan.from_layout(json.load(fh), self.cuda_rules, self.unit_rules)
        except Exception:  # none yet, unreadable, or not these patterns: build it
            return None

    def _save_plan(self, key, plan: QueryPlan) -> None:
        import json

        from hiplint.fix import replace_file

        path = self._plan_file(key)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            replace_file(path, json.dumps(plan.layout(self.cuda_rules)).encode(), durable=False)
        except OSError:
            pass  # the next run builds it again

    def lint_bytes(self, path: str, data: bytes, lang: str, fs_path: str | None = None) -> FileResult:
        result = FileResult(path)
        source = Source(path, data)
        result.source = source
        ctx = FileContext(path, source, self.settings, lang, fs_path)
        comments, next_stmt = [], None
        if lang == "cuda" and len(_LINE_MARKER.findall(data[:PREPROCESSED_PROBE])) >= 3:
            # `# 1 "<built-in>"`, `# 33 "/opt/rocm/.../__clang_hip_runtime_wrapper.h" 3`: a compiler's -E output
            # (tinygrad keeps ROCm's preprocessed hipRTC header). Its lines belong to other files.
            result.notes.append(f"{path}: skipped: preprocessor output (`# N \"file\"` line markers): lint the "
                                f"sources it was made from")
            result.skipped = True
            return result
        try:
            if lang == "cuda":
                comments, next_stmt = self._lint_c(ctx, result)
            for rule in self.file_rules.get(lang, ()):
                if self.gating and rule.triggers and not any(t in data for t in rule.trigger_bytes):
                    continue  # e.g. no Python rule's names in a .py file: libcst never parses it
                ctx.rule = rule
                self._run(result, rule, lambda: rule.check_file(ctx))
            if lang != "cuda":
                comments = suppress.hash_comments(source)
                next_stmt = ctx.cache.get("next_statement") or suppress.hash_next_statement(source)
        except RecursionError as exc:
            why = exc.args[0] if isinstance(exc, TooDeep) else "nesting too deep to analyse"
            result.notes.append(f"{path}: skipped: {why}")
            result.skipped = True
            return result
        findings = self._finish(ctx, comments, next_stmt)
        fingerprint.assign(findings, data, ctx.units[0].root if ctx.units else None)
        result.findings = findings
        result.depends = ctx.depends
        return result

    def _run(self, result: FileResult, rule, fn):
        try:
            out = fn()
            if out is not None:
                for _ in out:  # rules may be generators that call ctx.report
                    pass
        except Exception as exc:  # a rule bug must not stop the scan; it is reported and exits 2
            result.internal_error = True
            import traceback

            tb = traceback.extract_tb(exc.__traceback__)[-1]
            result.notes.append(f"{result.path}: internal error in rule {rule.code}: {type(exc).__name__}: {exc} "
                                f"({os.path.basename(tb.filename)}:{tb.lineno})")

    def _lint_c(self, ctx: FileContext, result_holder: FileResult):
        if self._parser is None:
            self._compile()
        data = ctx.source.data
        plan = self._plan
        if self.gating:
            hits = plan.search.occurrences(data)
            found = frozenset(hits)
            queries = plan.queries_for(found, len(data))
        else:  # the reference: every pattern as a query, on every file
            hits, found, queries = None, plan.search.strings, plan.reference_queries()
        # The rules see valid UTF-8 (tree-sitter's predicates need it); fixes never write over the bytes
        # replaced for that (_finish).
        data, ctx.blanked = valid_utf8(data)
        tree = self._parse_document(ctx.path, for_parsing(data))
        deep = too_deep(tree.root_node, data)
        if deep is not None:
            raise TooDeep(f"an expression nested more than {MAX_NESTING} levels deep (line "
                          f"{ctx.source.line_of(deep)}, generated code?)")
        deep = too_deep_blocks(tree.root_node, data)
        if deep is not None:
            raise TooDeep(f"blocks or braces nested more than {MAX_BLOCK_NESTING} levels deep (line "
                          f"{ctx.source.line_of(deep)}, generated code?)")
        errors = error_ranges(tree.root_node)
        text = data
        if errors and not self.settings.report_nvidia_branches:
            tree, text, errors = self._amd_view(tree, data, errors, ctx)
        root = tree.root_node
        # One walk per tree: the file first (its index then serves the search for macro bodies), then
        # all macro bodies together when they share one parse.
        matches = {0: self._matches(queries, root, self._lookups(root, text, hits, in_file=True))}
        units = [Unit(tree, text)] + macro_units(self._parser, tree, text)
        ctx.units = units
        if len(units) > 1:
            macro_roots = {id(u.tree) for u in units[1:]}
            if len(macro_roots) == 1 and units[1].node is not None:
                self._macro_matches(queries, units, matches, self._lookups(units[1].tree.root_node, units[1].data, hits))
            else:
                for i, unit in enumerate(units[1:], 1):
                    matches[i] = self._matches(queries, unit.root, self._lookups(unit.root, unit.data, hits))
        ctx.parse_errors = errors
        ctx.platform = platform_map(root, text, ctx.hip_macros, errors, ctx.fs_path, ctx.depends)
        unit_rules = [r for r in self.unit_rules if plan.runs(r, found)]
        # Rules with only `check_unit` (no query) run even when no enabled rule has a query.
        for i, unit in enumerate(units):
            ctx.unit = unit
            for rule, captures in matches.get(i, ()):
                if unit.is_macro and not rule.in_macros:
                    continue
                ctx.rule = rule
                self._run(result_holder, rule, lambda: rule.check(ctx, captures))
            for rule in unit_rules:
                if unit.is_macro and not rule.in_macros:
                    continue
                ctx.rule = rule
                self._run(result_holder, rule, lambda: rule.check_unit(ctx))
        ctx.unit = units[0]
        comments = suppress.c_comments(root, ctx.source)
        return comments, suppress.c_next_statement(root, ctx.source)

    def _parse_document(self, path: str, text: bytes):
        """`text` parsed; with `reuse_trees`, from the tree of the path's previous text, edited where the
        two texts differ (tree-sitter then re-parses only what the edit touched: the same tree as a
        parse from scratch where the text parses without errors; a text with errors is parsed from
        scratch). One document is kept: the one being typed in."""
        if not self.reuse_trees:
            return self._parser.parse(text)
        previous = self._previous.get(path)
        old_tree = None
        if previous is not None and previous[0] != text:
            old_text, old_tree = previous
            start, old_end, new_end = changed_span(old_text, text)
            old_tree.edit(start_byte=start, old_end_byte=old_end, new_end_byte=new_end,
                          start_point=_point(text, start), old_end_point=_point(old_text, old_end),
                          new_end_point=_point(text, new_end))
        tree = self._parser.parse(text, old_tree) if old_tree is not None else self._parser.parse(text)
        if old_tree is not None and tree.root_node.has_error:
            # Error recovery may take another path from the old tree than from scratch (seen on a fixture
            # edited at random): where the text does not parse cleanly, parse it from scratch.
            tree = self._parser.parse(text)
        self._previous = {path: (text, tree)}
        return tree

    def _amd_view(self, tree, data: bytes, errors, ctx):
        """A file tree-sitter cannot parse because its `#if` branches are not balanced on their own
        (`#if !defined(USE_ROCM)` / `if constexpr (...) { return; } else {` / `#endif`, with the closing
        `}` in a second such branch): parse it again with the bodies of branches whose findings are
        never shown by default blanked (NVIDIA code beside AMD's, `#if 0`; same length, newlines and
        directives kept). Kept when it parses better: the rules then see the code an AMD build
        compiles, which the broken tree hid. Returns (tree, text, errors)."""
        spans = unreported_spans(data, ctx.hip_macros)
        if not spans:
            return tree, data, errors
        view = bytearray(data)
        for start, end in spans:
            view[start:end] = re.sub(rb"[^\r\n]", b" ", data[start:end])
        view = bytes(view)
        other = self._parser.parse(for_parsing(view))
        other_errors = error_ranges(other.root_node)
        if _error_size(other_errors) >= _error_size(errors):
            return tree, data, errors
        ctx.blanked = sorted(ctx.blanked + spans)  # fixes must not write these spans back (_finish)
        return other, view, other_errors

    def _lookups(self, root, data: bytes, file_hits, in_file: bool = False) -> list:
        """Matches of the lookup patterns (hiplint.lookup) in a tree parsed from `data`: the file
        (`file_hits` are then its strings' places) or macro bodies (searched again: their bytes are
        not the file's). Nothing when the file has none of their strings, or in the reference run
        (`file_hits` None: lookups run as queries there)."""
        if not file_hits or file_hits.keys().isdisjoint(self._plan.lookup_wants):
            return []
        hits = file_hits if in_file else self._plan.search.occurrences(data)
        return self._plan.lookup_matches(root, data, hits)

    @staticmethod
    def _matches(queries, root, found: list) -> list:
        """The rules' matches in `root`'s tree, in (position, pattern) order whichever queries (or
        lookups: `found`, as (start, pattern id, rule, captures)) found them; the index patterns'
        nodes (first query) go to the node index."""
        indexed: dict[str, list] = {}
        rooted = []
        for query, owners in queries:
            walked = query.matches(root) if type(query) is KindWalk else QueryCursor(query).matches(root)
            for pattern_index, captures in walked:
                owner = owners[pattern_index]
                if owner is None:
                    continue  # a pattern of a gate this file does not open
                if type(owner) is Rooted:  # structured patterns applied here to the node found
                    node = captures[ROOT_CAPTURE][0]
                    for pattern, pattern_owner in owner.pairs:
                        for order, caps in pattern.matches(node):
                            rooted.append((order, pattern_owner, caps))
                    continue
                Linter._found(found, owner, captures, indexed)
        # tree-sitter gives a pattern's matches in the order their last steps were taken (treematch).
        rooted.sort(key=lambda m: m[0])
        for _, owner, captures in rooted:
            Linter._found(found, owner, captures, indexed)
        seed_index(root, indexed)
        found.sort(key=lambda m: (m[0], m[1]))
        return [(rule, captures) for _, _, rule, captures in found]

    @staticmethod
    def _found(found: list, owner, captures: dict, indexed: dict) -> None:
        if type(owner) is list:  # one pattern that several rules wrote (queryplan._shared)
            start = min(nodes[0].start_byte for nodes in captures.values())
            for rule, pattern_id in owner:
                found.append((start, pattern_id, rule, {k: list(v) for k, v in captures.items()}))
            return
        rule, pattern_id = owner
        if rule is None:  # pattern_id is the kind
            indexed.setdefault(pattern_id, []).extend(captures[INDEX_CAPTURE])
        else:
            start = min(nodes[0].start_byte for nodes in captures.values())
            found.append((start, pattern_id, rule, captures))

    @staticmethod
    def _macro_matches(queries, units, matches, lookups: list) -> None:
        """Match all macro bodies (wrapper functions of one tree) in one walk per query; give each
        match to the body it lies in."""
        tree_root = units[1].tree.root_node
        starts = [u.root.start_byte for u in units[1:]]
        for rule, captures in Linter._matches(queries, tree_root, lookups):
            node = next(iter(captures.values()))[0]
            i = bisect.bisect_right(starts, node.start_byte) - 1
            if i < 0 or node.end_byte > units[i + 1].root.end_byte:
                continue  # outside every body (the wrappers' own translation unit)
            matches.setdefault(i + 1, []).append((rule, captures))

    def _finish(self, ctx: FileContext, comments, next_stmt) -> list[Finding]:
        from hiplint.registry import rule_index
        from hiplint.meta import BlanketSuppression, ParseError, UnmatchedSuppressionRange, UnusedSuppression

        findings = ctx.findings
        source = ctx.source
        sups, problems = suppress.parse_directives(comments, next_stmt or (lambda l: (l + 1, l + 1)), source.line_count())
        # Dedupe: the same rule at the same place (a macro unit and the file can both see a node).
        seen: dict = {}
        unique = []
        for f in findings:
            key = (f.code, f.start_byte, f.end_byte)
            if key not in seen:
                seen[key] = f
                unique.append(f)
            elif f.related:
                seen[key].add_related(*f.related)  # the copy may have seen other places
        unique = _drop_covered_fallbacks(unique, source.data, self._fallback_codes, self._covers)
        blanked = ctx.blanked
        if blanked:
            for f in unique:
                if f.fix is not None and any(e.start < end and start < e.end or start < e.start < end
                                             for e in f.fix.edits for start, end in blanked):
                    f.fix = None  # its text came from the AMD view, where those spans are blank
        kept = [f for f in unique if not suppress.is_suppressed(f, sups)]
        for f in kept:
            if f.related:
                # A suppression comment on a related line takes that place out of the finding.
                f.related = tuple(r for r in f.related if r.path != f.path or not suppress.is_suppressed_at(f, r.line, sups))
        meta_rules = {"HL001": ParseError, "HL100": UnusedSuppression, "HL101": BlanketSuppression, "HL102": UnmatchedSuppressionRange}
        ctx.findings = []
        for p in problems:
            if p.code in self.selected_codes:
                ctx.rule = meta_rules[p.code]()
                ctx.platform, saved = None, ctx.platform
                ctx.report_range(p.comment.start_byte, p.comment.end_byte, p.message)
                ctx.platform = saved
        if "HL100" in self.selected_codes:
            ctx.rule = UnusedSuppression()
            registry = rule_index()  # codes and names: no rule imported for them
            for s in sups:
                unused = [c for c in s.codes if c not in s.used]
                known = [c for c in unused if registry.by_name_or_code(c) or any(r.code.startswith(c.upper()) for r in registry.rules)]
                if unused:
                    what = ", ".join(unused)
                    msg = f"suppression of {what} matches no finding" if len(known) == len(unused) else f"suppression names unknown code(s): {what}"
                    ctx.platform, saved = None, ctx.platform
                    ctx.report_range(s.comment.start_byte, s.comment.end_byte, msg)
                    ctx.platform = saved
        if "HL001" in self.selected_codes and ctx.parse_errors:
            ctx.rule = ParseError()
            s, e = ctx.parse_errors[0]
            n = len(ctx.parse_errors)
            ctx.platform = None
            ctx.report_range(s, max(e, s), f"{n} region(s) of this file could not be parsed; findings inside them may be missed")
        kept = merge_groups(kept)
        kept.extend(ctx.findings)
        kept = self._apply_config(ctx.path, kept)
        kept.sort(key=Finding.sort_key)
        return kept

    def _apply_config(self, path: str, findings: list[Finding]) -> list[Finding]:
        from hiplint.selection import per_file_ignored, severity_for

        out = []
        for f in findings:
            if per_file_ignored(self.settings, path, f.code, f.name):
                continue
            sev = severity_for(self.settings, f.code, f.name)
            if sev is not None:
                f.severity = sev
            out.append(f)
        return out


# A line marker of preprocessor output (`# 1 "<built-in>"`), looked for at the top of a file.
_LINE_MARKER = re.compile(rb'(?m)^#[ \t]*[0-9]+[ \t]+"[^"\n]*"')
PREPROCESSED_PROBE = 4096


class TooDeep(RecursionError):
    """A file nested too deeply to analyse in bounded time (cparse.too_deep)."""


def merge_groups(findings: list[Finding]) -> list[Finding]:
    """Merge the findings a rule gave one group key (Finding.group): the first in the file stays and
    the others become its related locations, with their own messages. Findings with a fix stay apart
    (a merged finding could not carry their edits as one fix)."""
    groups: dict[tuple[str, str], list[Finding]] = {}
    out = []
    for f in findings:
        if f.group is None or f.fix is not None:
            out.append(f)
        else:
            groups.setdefault((f.code, f.group), []).append(f)
    for members in groups.values():
        members.sort(key=Finding.sort_key)
        first = members[0]
        if len(members) > 1:
            first.add_related(*(RelatedLocation(m.path, m.line, m.column, m.end_line, m.end_column, m.message)
                                for m in members[1:]))
            first.add_related(*(r for m in members[1:] for r in m.related))
            # The message stays the first place's own: every format shows the related locations.
        out.append(first)
    for f in out:
        f.group = None  # merged: a finding served from the cache (which does not store it) compares equal
    return out


def merge_directory_groups(findings: list[Finding], codes) -> list[Finding]:
    """One finding per directory for the rules in `codes` (a rule's `group_by_directory`: a library
    to re-implement, whose headers fill a directory one include each): the first file's finding stays
    and the others of its directory become its related locations. Findings with a fix stay apart. Run
    on what is reported (after baselines and diff gates), so that a new file still shows."""
    codes = frozenset(codes)
    if not codes:
        return findings
    firsts: dict[tuple[str, str], Finding] = {}
    out = []
    for f in sorted(findings, key=Finding.sort_key):
        if f.code not in codes or f.fix is not None:
            out.append(f)
            continue
        key = (f.code, os.path.dirname(f.path))
        first = firsts.get(key)
        if first is None:
            firsts[key] = f
            out.append(f)
        else:
            first.add_related(RelatedLocation(f.path, f.line, f.column, f.end_line, f.end_column, f.message))
            first.add_related(*f.related)
    return out


def _error_size(errors) -> tuple[int, int]:
    """How much of a file failed to parse: bytes in ERROR nodes, then their count (MISSING nodes are empty)."""
    return sum(e - s for s, e in errors), len(errors)


def lint_file(linter: Linter, path: str, display: str, lang: str) -> FileResult:
    """Read and lint one file; every problem with the input becomes a one-line note, never a traceback.
    A file not checked (too large, binary, a stream that does not end, too deep) is `skipped`."""
    result = FileResult(display)
    if os.path.islink(path) and not os.path.exists(path):
        # Met in a walk (a named broken link stops the run earlier): most often a link into a git
        # submodule that is not checked out. Not a source of this checkout, so not a finding; a note
        # and the skipped count keep it visible.
        result.notes.append(f"{display}: skipped: broken symbolic link (to {os.readlink(path)})")
        result.skipped = True
        return result
    try:
        if os.path.isdir(path):
            result.notes.append(f"{display}: is a directory")
            result.skipped = True
            return result
        data, result.encoding = decode_input(read_bounded(path))
    except Skip as why:
        result.notes.append(f"{display}: skipped: {why}")
        result.skipped = True
        return result
    except OSError as exc:
        return _io_error(linter, display, exc)
    if is_binary(data):
        result.notes.append(f"{display}: skipped: binary file")
        result.skipped = True
        return result
    try:
        res = linter.lint_bytes(display, data, lang, fs_path=path)
    except RecursionError:
        result.notes.append(f"{display}: skipped: nesting too deep to analyse")
        result.skipped = True
        return result
    except Exception as exc:  # last line of defence: one line, the scan goes on, exit 2
        result.internal_error = True
        result.notes.append(f"{display}: internal error: {type(exc).__name__}: {exc}")
        return result
    res.encoding = result.encoding
    return res


def _io_error(linter: Linter, display: str, exc: OSError) -> FileResult:
    result = FileResult(display)
    reason = exc.strerror or str(exc)
    if "HL002" in linter.selected_codes:
        from hiplint.meta import IoError
        result.findings.append(Finding(code=IoError.code, name=IoError.name, message=f"cannot read file: {reason}",
                                       severity=Severity.ERROR, path=display, line=1, column=1, end_line=1, end_column=1))
    else:
        result.notes.append(f"{display}: cannot read: {reason}")
    return result


def _drop_covered_fallbacks(findings: list[Finding], data: bytes, fallback_codes, covers=None) -> list[Finding]:
    """A fallback finding yields to a specialist's finding at an overlapping place or on the same text,
    and to a specialist that reported in the file and covers its name (Rule.covers)."""
    if not fallback_codes or not any(f.code in fallback_codes for f in findings):
        return findings
    specialists = [f for f in findings if f.code not in fallback_codes and not f.code.startswith("HL")]
    spans = [(f.start_byte, f.end_byte) for f in specialists]
    texts = {data[f.start_byte:f.end_byte].strip() for f in specialists}
    covering = {covers[f.code] for f in specialists if covers and f.code in covers}
    out = []
    for f in findings:
        if f.code in fallback_codes:
            text = data[f.start_byte:f.end_byte].strip()
            if any(s < f.end_byte and f.start_byte < e for s, e in spans) or \
                    any(text and text in t for t in texts) or \
                    any(p.fullmatch(text.decode("utf-8", "replace")) for p in covering):
                continue
        out.append(f)
    return out
