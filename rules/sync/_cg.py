"""Cooperative groups: which namespace names mean `cooperative_groups` in a file."""
from __future__ import annotations

import re
from hiplint.lazy import lazy_re

CG = "cooperative_groups"
_ALIAS = lazy_re(r"\bnamespace\s+(\w+)\s*=\s*(?:::)?cooperative_groups\s*;")
_USING = lazy_re(r"\busing\s+namespace\s+(?:::)?cooperative_groups\s*;")


def cg_aliases(ctx) -> set[str]:
    names = ctx.cache.get("cg_aliases")
    if names is None:
        names = {CG} | set(_ALIAS.findall(ctx.source.text))
        ctx.cache["cg_aliases"] = names
    return names


def uses_cg_namespace(ctx) -> bool:
    return _USING.search(ctx.source.text) is not None


def cg_namespace(ctx, ns: str) -> bool:
    """Is `ns` (as written before `::`) the cooperative_groups namespace, or unqualified under a
    `using namespace cooperative_groups;`?"""
    ns = ns.lstrip(":")
    if not ns:
        return uses_cg_namespace(ctx)
    return ns in cg_aliases(ctx)
