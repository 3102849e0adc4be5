"""The enabled rules' query patterns, compiled once and grouped by what a file must contain.

`QueryPlan.build` compiles every pattern of every rule together once (to validate them and to learn
each pattern's text and captures), then splits them:
- patterns with no requirement (see hiplint.triggers) form the *base* query that runs on every unit
  (that same compiled query, with every other pattern disabled);
- a pattern that needs one of some strings in the file joins the gate of those strings, open only on
  files containing one of them; each gate has a query (see QueryPlan.queries_for);
- a pattern on a single token tested by its text is no query at all: it is matched where its strings
  occur (hiplint.lookup).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from tree_sitter import Query

from hiplint import triggers as trig
from hiplint.cparse import INDEX_KINDS_ORDER, INDEX_PATTERNS, language
from hiplint.lookup import LookupPattern

# A set of open gates met this often gets one query for all its patterns (a walk instead of several),
# and one met MERGE_BASE_AFTER times a query with the base patterns too (one walk per file). A walk
# costs about 0.25 ms for a 6 KB file, a compile 15 ms plus its patterns (0.1 s with the base
# patterns), and each worker compiles its own: combining pays only for a kind of file met often.
COMBINE_AFTER = 16
MERGE_BASE_AFTER = 256
# Compiled combinations kept per process: the bound caps compile time on a corpus of many different files.
MAX_COMBINATIONS = 32


@dataclass
class Gate:
    wants: frozenset[bytes]  # one of these must be in the file
    patterns: list[str]
    owners: list = field(default_factory=list)  # (rule, pattern id) per pattern
    query: Query | None = None  # compiled when the gate first opens


@dataclass
class QueryPlan:
    base: tuple[Query, list]  # owners by pattern index: (None, kind) an index pattern, None a disabled one
    base_patterns: list[str]
    base_owners: list  # (rule, pattern id) of base_patterns, in their order
    gates: list[Gate]
    lookups: list[LookupPattern]
    search: trig.TextSearch  # every string a gate, a lookup or a rule's check_unit wants
    rule_wants: dict = field(default_factory=dict)  # rule code -> its declared triggers
    lookup_patterns: list[str] = field(default_factory=list)  # their sources, for reference_queries
    lookup_wants: frozenset = frozenset()  # every string a lookup wants
    _reference: list = field(default_factory=list)
    _by_gates: dict = field(default_factory=dict)  # active gate indices -> (queries, base merged in?)
    _seen: dict = field(default_factory=dict)  # active gate indices -> files met with them
    restored: bool = False  # made from a saved layout (from_layout), not compiled whole

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
        combined_owners: list = base_owners + [None] * (combined.pattern_count - len(index_patterns))
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
                    continue
            else:
                wants = frozenset(rule.trigger_bytes) if rule.triggers else None
            if wants is None:
                base_patterns.append(pattern)
                base_owners.append((rule, i))
                combined_owners[i] = (rule, i)
                continue
            # One gate per set of wanted strings, not per rule: a rule's pattern on every identifier
            # (`cudaStreamTailLaunch`...) must not run because its call pattern's `cudaMalloc` is there.
            gate = gates.setdefault(wants, Gate(wants, []))
            gate.patterns.append(pattern)
            gate.owners.append((rule, i))
        # The base query is the combined one with every other pattern disabled: no second compile.
        for i, owner in enumerate(combined_owners):
            if owner is None:
                combined.disable_pattern(i)
        return cls._assemble((combined, combined_owners), base_patterns, base_owners, list(gates.values()), lookups,
                             lookup_patterns, unit_rules)

    @classmethod
    def _assemble(cls, base, base_patterns, base_owners, gates, lookups, lookup_patterns, unit_rules) -> "QueryPlan":
        declared = {r.code: frozenset(r.trigger_bytes) for r in unit_rules if r.triggers}
        search = trig.TextSearch([w for g in gates for w in g.wants] + [w for lk in lookups for w in lk.wants]
                                 + [w for ws in declared.values() for w in ws])
        return cls(base, base_patterns, base_owners, gates, lookups, search, declared, lookup_patterns,
                   frozenset(w for lk in lookups for w in lk.wants))

    # The split as plain data. Compiling every pattern together (build) costs about 0.3 s, most of a
    # one-file run; a run that finds the split of the same patterns saved (hiplint.engine) compiles
    # only the base query and the gates its files open.
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
            lookup = LookupPattern.parse(text, owner, frozenset(w.encode() for w in wants))
            if lookup is None:
                raise ValueError("saved query plan does not match the rules")
            lookups.append(lookup)
            lookup_patterns.append(text)
        query = Query(language(), "\n".join(base_patterns))
        plan = cls._assemble((query, base_owners), base_patterns, base_owners, gates, lookups, lookup_patterns,
                             unit_rules)
        plan.restored = True
        return plan

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

    def queries_for(self, found: frozenset[bytes]) -> list[tuple[Query, list]]:
        """The queries to run on a file in which the strings `found` occur: the base query, then the
        open gates' queries.

        Each query walks the tree once, and compiling one costs about 20 ms plus its patterns. Real
        code is diverse (cuda-samples: 76 different sets of open gates in 199 files), so a query per
        set would be compiled for almost every file: each gate has its own query, compiled when first
        needed; a set of gates met COMBINE_AFTER times gets one query for its gates, and one met
        MERGE_BASE_AFTER times one query with the base patterns as well (one walk per file).
        """
        active = tuple(i for i, g in enumerate(self.gates) if not found.isdisjoint(g.wants))
        if not active:
            return [self.base]
        seen = self._seen[active] = self._seen.get(active, 0) + 1
        combined = self._by_gates.get(active)
        if combined is not None and combined[1] == (seen >= MERGE_BASE_AFTER):
            return combined[0]
        if len(active) == 1 and seen < MERGE_BASE_AFTER:
            return [self.base, self._gate_query(self.gates[active[0]])]
        if seen >= COMBINE_AFTER and (combined is not None or len(self._by_gates) < MAX_COMBINATIONS):
            gates = [self.gates[i] for i in active]
            patterns = [p for g in gates for p in g.patterns]
            owners = [o for g in gates for o in g.owners]
            if seen >= MERGE_BASE_AFTER:
                # A very common kind of file: the base patterns go in too, and it is walked once.
                query = Query(language(), "\n".join(self.base_patterns + patterns))
                queries = [(query, self.base_owners + owners)]
            else:
                queries = [self.base, (Query(language(), "\n".join(patterns)), owners)]
            self._by_gates[active] = (queries, seen >= MERGE_BASE_AFTER)
            return queries
        return [self.base] + [self._gate_query(self.gates[i]) for i in active]

    @staticmethod
    def _gate_query(gate: Gate) -> tuple[Query, list]:
        if gate.query is None:
            gate.query = Query(language(), "\n".join(gate.patterns))
        return gate.query, gate.owners
