"""The enabled rules' query patterns, compiled once and grouped by what a file must contain.

`QueryPlan.build` compiles every pattern of every rule together once (to validate them and to learn
each pattern's text and captures), then splits them:
- patterns with no requirement (see hiplint.triggers) are the *base*: they run on every unit;
- a pattern that needs one of some strings in the file joins the gate of those strings, open only on
  files containing one of them;
- a pattern on a single token tested by its text is no query at all: it is matched where its strings
  occur (hiplint.lookup).

Base and gated patterns stay in that one compiled query, and each file gets one walk of it: the
patterns of gates the file does not open have no owner for that file (QueryPlan.queries_for), so
their matches are dropped and their rules never called. Compiling a query costs at least 20 ms
whatever its size (tree-sitter analyses the grammar for it), and a walk costs about as much as a
parse: one query per gate or per set of open gates cost more in compiles and walks than the few
matches of closed gates cost to drop (flashinfer: 8.4 s of walks and compiles, 3.0 s with one query).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from tree_sitter import Query

from hiplint import triggers as trig
from hiplint.cparse import INDEX_KINDS_ORDER, INDEX_PATTERNS, language
from hiplint.cparse import walk_tree
from hiplint.lookup import LookupPattern
from hiplint.treematch import TreePattern

# Owner lists kept per set of open gates (a few hundred on a large, varied tree; each is small).
MAX_OWNER_SETS = 4096

# Bytes of source a process matches with structured patterns applied in Python (hiplint.treematch)
# before it compiles them: a one-file run never pays that compile, a large run pays it once. Matching
# in Python costs about 0.5 ms per KB of C++ more than the compiled query's walk, compiling the
# patterns 60-150 ms (bench/lsp_latency.py's 1,000-line file: 24-38 ms against 14-18 ms).
TREE_MATCH_BUDGET = 128 * 1024
_tree_matched = 0  # bytes matched so in this process
ROOT_CAPTURE = "__root__"


class KindWalk:
    """Patterns that are each one node kind, `(kind) @capture`, found by walking the tree in Python:
    the light query (QueryPlan._light_for) when every pattern in it is one. Compiling even such a
    query costs about 25 ms (tree-sitter reads the grammar's whole parse table); walking a small
    file's tree costs a few. `matches` gives what QueryCursor(query).matches would."""

    def __init__(self, texts: list[str]):
        self.by_kind: dict[str, list[tuple[int, str]]] = {}
        for i, text in enumerate(texts):
            kind, capture = text.strip()[1:].split(") @")
            self.by_kind.setdefault(kind, []).append((i, capture))
        self.kinds = frozenset(self.by_kind)

    def matches(self, root) -> list[tuple[int, dict]]:
        out = []
        for node in walk_tree(root, self.kinds):
            if node.is_named:
                for i, capture in self.by_kind[node.type]:
                    out.append((i, {capture: [node]}))
        return out


class Rooted:
    """The owner of a stand-in pattern `(kind) @__root__`: the structured patterns (hiplint.treematch)
    applied to each node it finds, each with its own owner ((rule, pattern id) or a list of them)."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list):
        self.pairs = pairs


@dataclass
class Gate:
    wants: frozenset[bytes]  # one of these must be in the file
    patterns: list[str]
    owners: list = field(default_factory=list)  # (rule, pattern id) per pattern
    slots: list[int] = field(default_factory=list)  # their pattern indices in the plan's query


@dataclass
class QueryPlan:
    query: Query | None  # the index, base and gated patterns (lookup patterns disabled); None until needed
    # (a restored plan compiles it when a second set of open gates comes; see queries_for)
    base_patterns: list[str]
    base_owners: list  # (rule, pattern id) of base_patterns, in their order; (None, kind) an index pattern
    gates: list[Gate]
    lookups: list[LookupPattern]
    search: trig.TextSearch  # every string a gate, a lookup or a rule's check_unit wants
    owners: list  # by pattern index of `query`: (rule, pattern id), (None, kind) an index pattern, None disabled
    rule_wants: dict = field(default_factory=dict)  # rule code -> its declared triggers
    lookup_patterns: list[str] = field(default_factory=list)  # their sources, for reference_queries
    lookup_wants: frozenset = frozenset()  # every string a lookup wants
    _reference: list = field(default_factory=list)
    _closed: list = field(default_factory=list)  # `owners` with every gated pattern's owner None
    _by_gates: dict = field(default_factory=dict)  # open gate indices -> owners for such a file
    restored: bool = False  # made from a saved layout (from_layout), not compiled whole
    _first: tuple | None = None  # (open gates, query of base + those gates' patterns, its owners)
    _light: tuple | None = None  # (query with stand-ins, [(slot, (pattern, owner, gate or None))...])
    _light_by_gates: dict = field(default_factory=dict)  # open gate indices -> the light query's owners

    @classmethod
    def build(cls, rules, unit_rules=()) -> "QueryPlan":
        """`rules`: rules with a query; `unit_rules`: rules with a check_unit (their declared triggers)."""
        lang = language()
        # The node index's patterns come first and ride along in every walk (owner (None, kind)): one
        # walk of the tree gives the rules their matches and the index its nodes (cparse.seed_index).
        index_patterns = INDEX_PATTERNS.split("\n")
        sources, starts = list(index_patterns), []
        offset = len(INDEX_PATTERNS.encode()) + 1
        for rule in rules:
            starts.append(offset)
            sources.append(rule.query)
            offset += len(rule.query.encode()) + 1
        text = "\n".join(sources)
        try:
            combined = Query(lang, text)
        except Exception:
            for rule in rules:  # name the rule at fault
                try:
                    Query(lang, rule.query)
                except Exception as exc:
                    raise RuntimeError(f"rule {rule.code}: invalid tree-sitter query: {exc}") from None
            raise
        data = text.encode()
        # Owners are (rule, pattern id): the engine deals matches out in (position, pattern id) order,
        # the same however the patterns were grouped into queries.
        base_patterns = list(index_patterns)
        base_owners: list = [(None, kind) for kind in INDEX_KINDS_ORDER]
        owners: list = base_owners + [None] * (combined.pattern_count - len(index_patterns))
        gates: dict[frozenset, Gate] = {}
        lookups, lookup_patterns = [], []
        for i in range(len(index_patterns), combined.pattern_count):
            start, end = combined.start_byte_for_pattern(i), combined.end_byte_for_pattern(i)
            rule_index = bisect.bisect_right(starts, start) - 1
            rule = rules[rule_index]
            pattern = data[start:end].decode()
            # The pattern's own predicate is the tightest gate; else what the rule declares.
            req = trig.pattern_requirement(combined, i, pattern)
            if req:
                wants = frozenset(s.encode() for s in req)
                lookup = LookupPattern.parse(pattern, (rule, i), wants)
                if lookup is not None:
                    lookups.append(lookup)
                    lookup_patterns.append(pattern)
                    combined.disable_pattern(i)  # matched by its text (hiplint.lookup), not walked
                    continue
            else:
                wants = frozenset(rule.trigger_bytes) if rule.triggers else None
            owners[i] = (rule, i)
            if wants is None:
                base_patterns.append(pattern)
                base_owners.append((rule, i))
                continue
            # One gate per set of wanted strings, not per rule: a rule's pattern on every identifier
            # (`cudaStreamTailLaunch`...) must not run because its call pattern's `cudaMalloc` is there.
            gate = gates.setdefault(wants, Gate(wants, []))
            gate.patterns.append(pattern)
            gate.owners.append((rule, i))
            gate.slots.append(i)
        return cls._assemble(combined, owners, base_patterns, base_owners, list(gates.values()), lookups,
                             lookup_patterns, unit_rules)

    @classmethod
    def _assemble(cls, query, owners, base_patterns, base_owners, gates, lookups, lookup_patterns,
                  unit_rules) -> "QueryPlan":
        declared = {r.code: frozenset(r.trigger_bytes) for r in unit_rules if r.triggers}
        search = trig.TextSearch([w for g in gates for w in g.wants] + [w for lk in lookups for w in lk.wants]
                                 + [w for ws in declared.values() for w in ws])
        closed = list(owners)
        for g in gates:
            for slot in g.slots:
                closed[slot] = None
        return cls(query, base_patterns, base_owners, gates, lookups, search, owners, declared, lookup_patterns,
                   frozenset(w for lk in lookups for w in lk.wants), _closed=closed)

    # The split as plain data. Compiling every pattern together and splitting them (build) costs about
    # 0.3 s, most of a one-file run; a run that finds the split of the same patterns saved
    # (hiplint.engine) compiles only the walked patterns, once.
    def layout(self, rules) -> dict:
        index = {id(r): n for n, r in enumerate(rules)}

        def entries(patterns, owners):
            return [[index[id(rule)], pid, text] for text, (rule, pid) in zip(patterns, owners)]

        n_index = len(INDEX_PATTERNS.split("\n"))
        return {
            "base": entries(self.base_patterns[n_index:], self.base_owners[n_index:]),
            "gates": [[sorted(w.decode() for w in g.wants), entries(g.patterns, g.owners)] for g in self.gates],
            "lookups": [[sorted(w.decode() for w in lk.wants)] + entries([text], [lk.owner])[0]
                        for lk, text in zip(self.lookups, self.lookup_patterns)],
        }

    @classmethod
    def from_layout(cls, layout: dict, rules, unit_rules=()) -> "QueryPlan":
        """The plan `build` would make for these rules, from its saved `layout`. Raises ValueError
        when the layout does not describe these rules' patterns (the caller then builds)."""
        def owned(entry):
            rule_index, pid, text = entry
            rule = rules[rule_index]
            # A pattern's text runs to the next pattern (whitespace, a comment): its start is the rule's.
            if not isinstance(text, str) or text.split("\n", 1)[0].strip() not in rule.query:
                raise ValueError("saved query plan does not match the rules")
            return text, (rule, pid)

        base = [owned(e) for e in layout["base"]]
        base_patterns = INDEX_PATTERNS.split("\n") + [t for t, _ in base]
        base_owners = [(None, kind) for kind in INDEX_KINDS_ORDER] + [o for _, o in base]
        gates = []
        for wants, members in layout["gates"]:
            pairs = [owned(e) for e in members]
            gates.append(Gate(frozenset(w.encode() for w in wants), [t for t, _ in pairs], [o for _, o in pairs]))
        lookups, lookup_patterns = [], []
        for wants, *entry in layout["lookups"]:
            text, owner = owned(entry)
            lookup = LookupPattern.parse(text, owner, frozenset(w.encode() for w in wants), checked=True)
            if lookup is None:
                raise ValueError("saved query plan does not match the rules")
            lookups.append(lookup)
            lookup_patterns.append(text)
        # The whole query is compiled when a second set of open gates needs it (queries_for): a run on
        # one file (a pre-commit hook, an editor) compiles only the base and the gates that file opens.
        query = None
        slot = len(base_patterns)
        for g in gates:
            g.slots = list(range(slot, slot + len(g.patterns)))
            slot += len(g.patterns)
        owners = base_owners + [o for g in gates for o in g.owners]
        plan = cls._assemble(query, owners, base_patterns, base_owners, gates, lookups, lookup_patterns, unit_rules)
        plan.restored = True
        return plan

    def _full_query(self) -> Query:
        return Query(language(), "\n".join(self.base_patterns + [p for g in self.gates for p in g.patterns]))

    def lookup_matches(self, root, data: bytes, hits: dict[bytes, list[int]]) -> list:
        """The lookup patterns' matches in `root`'s tree as (start, pattern id, rule, captures);
        `hits`: where the wanted strings occur in `data` (TextSearch.occurrences)."""
        out = []
        for lookup in self.lookups:
            if hits.keys().isdisjoint(lookup.wants):
                continue
            rule, pattern_id = lookup.owner
            for start, captures in lookup.matches(root, data, hits):
                out.append((start, pattern_id, rule, captures))
        return out

    def reference_queries(self) -> list[tuple[Query, list]]:
        """Every pattern in one query, lookups included, run on every file: what gating and lookups
        must agree with (the engine uses it when `Linter.gating` is off)."""
        if not self._reference:
            owners = self.base_owners + [o for g in self.gates for o in g.owners] + [lk.owner for lk in self.lookups]
            text = "\n".join(self.base_patterns + [p for g in self.gates for p in g.patterns] + self.lookup_patterns)
            self._reference.append((Query(language(), text), owners))
        return self._reference

    def runs(self, rule, found: frozenset[bytes]) -> bool:
        """Whether a rule's check_unit runs on a file in which the strings `found` occur."""
        wants = self.rule_wants.get(rule.code)
        return wants is None or not found.isdisjoint(wants)

    def queries_for(self, found: frozenset[bytes], size: int | None = None) -> list[tuple[Query, list]]:
        """The queries to run on a file in which the strings `found` occur, with their owners: the
        plan's one query, whose patterns of gates that `found` leaves closed have no owner (the engine
        drops their matches). `size`: the file's bytes, for the budget of matching in Python (None: a
        compiled query whatever the budget)."""
        global _tree_matched
        active = tuple(i for i, g in enumerate(self.gates) if not found.isdisjoint(g.wants))
        if self.query is None and self._first is None and size is not None \
                and _tree_matched + size <= TREE_MATCH_BUDGET:
            _tree_matched += size
            return [self._light_for(active)]
        if self.query is None:
            if self._first is None:
                patterns, owners = _shared(list(self.base_patterns) + [p for i in active for p in self.gates[i].patterns],
                                           list(self.base_owners) + [o for i in active for o in self.gates[i].owners])
                self._first = (active, Query(language(), "\n".join(patterns)), owners)
            if self._first[0] == active:
                return [(self._first[1], self._first[2])]
            self.query = self._full_query()
        owners = self._by_gates.get(active)
        if owners is None:
            owners = list(self._closed)
            for i in active:
                gate = self.gates[i]
                for slot, owner in zip(gate.slots, gate.owners):
                    owners[slot] = owner
            if len(self._by_gates) >= MAX_OWNER_SETS:
                self._by_gates.clear()
            self._by_gates[active] = owners
        return [(self.query, owners)]


    def _light_for(self, active: tuple) -> tuple[Query, list]:
        """The plan's patterns as one query that is cheap to compile: each structured pattern that
        hiplint.treematch reads is a stand-in `(kind) @__root__` for its root node kinds, shared by
        every such pattern on that kind (owner: Rooted); the rest as they are, a pattern that several
        rules wrote compiled once (as _shared does)."""
        if self._light is None:
            supertypes = _supertypes()
            texts: list[str] = []
            slots: list[tuple[str, list]] = []  # per pattern: ("query", [(owner, gate)]) or ("tree", [(tp, owner, gate)])
            at: dict[str, int] = {}  # a stand-in's or a rule pattern's text -> its index
            parsed: dict[str, TreePattern | None] = {}
            entries = [(t, o, None) for t, o in zip(self.base_patterns, self.base_owners)] + \
                [(t, o, gi) for gi, g in enumerate(self.gates) for t, o in zip(g.patterns, g.owners)]
            for text, owner, gate in entries:
                if owner[0] is None:  # the node index's patterns
                    texts.append(text)
                    slots.append(("query", [(owner, gate)]))
                    continue
                key = text.strip()
                if key not in parsed:
                    parsed[key] = TreePattern.parse(key, supertypes.__contains__)
                tp = parsed[key]
                if tp is None or tp.kinds is None:
                    if key not in at:
                        at[key] = len(texts)
                        texts.append(text)
                        slots.append(("query", []))
                    slots[at[key]][1].append((owner, gate))
                    continue
                for kind in sorted(tp.kinds):
                    stand_in = f"({kind}) @{ROOT_CAPTURE}"
                    if stand_in not in at:
                        at[stand_in] = len(texts)
                        texts.append(stand_in)
                        slots.append(("tree", []))
                    slots[at[stand_in]][1].append((tp, owner, gate))
            walkable = all(kind == "tree" or members[0][0][0] is None for kind, members in slots)
            self._light = (KindWalk(texts) if walkable else Query(language(), "\n".join(texts)), slots)
        query, slots = self._light
        owners = self._light_by_gates.get(active)
        if owners is None:
            open_gates = frozenset(active)
            owners = []
            for kind, members in slots:
                members = [m for m in members if m[-1] is None or m[-1] in open_gates]
                if not members:
                    owners.append(None)
                elif kind == "tree":
                    by_pattern: dict = {}  # one pattern that several rules wrote is matched once
                    for tp, owner, _ in members:
                        by_pattern.setdefault(tp, []).append(owner)
                    owners.append(Rooted([(tp, os[0] if len(os) == 1 else os) for tp, os in by_pattern.items()]))
                else:
                    owners.append(members[0][0] if len(members) == 1 else [o for o, _ in members])
            if len(self._light_by_gates) >= MAX_OWNER_SETS:
                self._light_by_gates.clear()
            self._light_by_gates[active] = owners
        return query, owners


def _supertypes() -> frozenset[str]:
    lang = language()
    return frozenset(lang.node_kind_for_id(s) for s in lang.supertypes)


def _shared(patterns: list[str], owners: list) -> tuple[list[str], list]:
    """The same rule pattern written by several rules (`(gnu_asm_expression) @asm` in six, MEM001's
    and WRP011's kernels with `__shared__`) compiled once: its owner is then the list of its owners,
    each of which gets the match (hiplint.engine). tree-sitter analyses every pattern of a query against
    the grammar, up to 20 ms for one on function bodies, whether or not another is the same."""
    out_patterns: list[str] = []
    out_owners: list = []
    seen: dict[str, int] = {}
    for text, owner in zip(patterns, owners):
        if owner is not None and owner[0] is not None:  # a rule's pattern (the index's are all different)
            key = text.strip()
            j = seen.get(key)
            if j is not None:
                prev = out_owners[j]
                out_owners[j] = (prev if isinstance(prev, list) else [prev]) + [owner]
                continue
            seen[key] = len(out_patterns)
        out_patterns.append(text)
        out_owners.append(owner)
    return out_patterns, out_owners
