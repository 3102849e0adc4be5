"""Every rule that offers a fix has a fix fixture: some fixture's expected output comes from applying it."""
from functools import lru_cache

import pytest

from conftest import FIXTURES
from hiplint.registry import load_registry
from hiplint.testing import fixed_path, fixture_files, is_fixed_output, run_fix

INPUTS = [p for p in fixture_files(FIXTURES) if not is_fixed_output(p)]
FIXING_RULES = [r for r in load_registry().rules if r.fix_availability != "none" and r.pack == "builtin"]


@lru_cache(maxsize=None)
def applied_codes() -> frozenset:
    codes = set()
    for path in INPUTS:
        for unsafe in (False, True):
            if not fixed_path(path, unsafe).exists():
                continue
            outcome, _, _ = run_fix(path, unsafe)
            codes.update(f.code for f in outcome.applied)
    return frozenset(codes)


# Gaps found when the families were merged: strict, so the entry must go once a fixture exists.
MISSING_FIX_FIXTURES: dict[str, str] = {}


@pytest.mark.parametrize("rule", FIXING_RULES, ids=lambda r: r.code)
def test_rule_with_a_fix_has_a_fix_fixture(rule, request):
    if rule.code in MISSING_FIX_FIXTURES:
        request.applymarker(pytest.mark.xfail(reason=MISSING_FIX_FIXTURES[rule.code], strict=True))
    assert rule.code in applied_codes(), (
        f"{rule.code} says its fix is available ({rule.fix_availability}) but no .fixed fixture applies it")
