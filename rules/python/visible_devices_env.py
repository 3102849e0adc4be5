from __future__ import annotations

import re

from hiplint.lazy import libcst as cst

from hiplint import FileRule, Impact, Severity
from hiplint import pyparse

from ._vendor import handles_rocm

CUDA_VAR = "CUDA_VISIBLE_DEVICES"
HIP_VAR = "HIP_VISIBLE_DEVICES"
ROCR_VAR = "ROCR_VISIBLE_DEVICES"
VARIABLES = (CUDA_VAR, HIP_VAR, ROCR_VAR)
READERS = frozenset({"os.environ.get", "os.getenv", "environ.get", "getenv"})
WRITERS = frozenset({"os.environ.setdefault", "os.putenv", "environ.setdefault", "putenv"})


def env_access(py, node):
    """'read', 'write' or None for a mention of an environment variable name."""
    parent = py.parent(node)
    if isinstance(node, cst.Name):  # keyword argument: os.environ.update(CUDA_VISIBLE_DEVICES="0")
        return "write" if isinstance(parent, cst.Arg) and parent.keyword is node else None
    if isinstance(parent, cst.Index):
        sub = py.parent(py.parent(parent))
        if not isinstance(sub, cst.Subscript):
            return None
        holder = py.parent(sub)
        if isinstance(holder, (cst.AssignTarget, cst.Del)) or (isinstance(holder, cst.AugAssign) and holder.target is sub):
            return "write"
        return "read" if pyparse.dotted(sub.value) in ("os.environ", "environ") else None
    if isinstance(parent, cst.Arg):
        call = py.parent(parent)
        func = pyparse.dotted(call.func) if isinstance(call, cst.Call) else None
        if func in READERS and call.args and call.args[0] is parent:
            return "read"
        if func in WRITERS and call.args and call.args[0] is parent:
            return "write"
        return None
    if isinstance(parent, cst.DictElement) and parent.key is node:
        # A dict compared with another (`assert env == {"ROCR_VISIBLE_DEVICES": "0", ...}`) sets nothing.
        holder = py.parent(py.parent(parent))
        return None if isinstance(holder, (cst.Comparison, cst.ComparisonTarget)) else "write"
    if isinstance(parent, cst.Comparison):
        return "read" if any(isinstance(t.operator, (cst.In, cst.NotIn)) and
                             pyparse.dotted(t.comparator) in ("os.environ", "environ") for t in parent.comparisons) else None
    return None


PROCESS_ENV = "os.environ"


def env_group(py, node):
    """The environment a write of `node` (a variable name) goes to: the process's (`os.environ[...] =`,
    `setdefault`, `putenv`), one dict literal, or one variable of a function (`env["X"] = ...`,
    `env = {...}`)."""
    parent = py.parent(node)
    target = None
    if isinstance(parent, cst.Index):
        target = py.parent(py.parent(parent)).value  # the subscripted object
    elif isinstance(parent, cst.Arg):
        call = py.parent(parent)
        func = call.func if isinstance(call, cst.Call) else None
        if pyparse.dotted(func) in WRITERS or pyparse.dotted(func) in ("os.putenv", "putenv"):
            return PROCESS_ENV
        target = func.value if isinstance(func, cst.Attribute) else None  # env.update(CUDA_VISIBLE_DEVICES=...)
    elif isinstance(parent, cst.DictElement):
        literal = py.parent(parent)
        holder = py.parent(literal)
        if isinstance(holder, cst.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0].target, cst.Name):
            target = holder.targets[0].target  # env = {...}: the variable is the environment
        else:
            return ("dict", id(literal))
    if target is None:
        return None
    if pyparse.dotted(target) in ("os.environ", "environ"):
        return PROCESS_ENV
    if isinstance(target, cst.Name):
        scope = next((id(a) for a in py.ancestors(node) if isinstance(a, (cst.FunctionDef, cst.Lambda))), 0)
        return ("var", scope, target.value)
    return None


def _same_environment(group, rocr_groups) -> bool:
    """Would a child or this process see the CUDA/HIP write together with a ROCR write? The process's
    own environment is inherited by children (`dict(os.environ)`), so it pairs with every group."""
    if not rocr_groups:
        return False
    return group is None or group == PROCESS_ENV or PROCESS_ENV in rocr_groups or None in rocr_groups \
        or group in rocr_groups


class VisibleDevicesEnv(FileRule):
    """GPU selection through CUDA_VISIBLE_DEVICES where ROCm's variables decide.

    ## What it does
    Two cases, per file:
    - the file sets `ROCR_VISIBLE_DEVICES` and also sets `CUDA_VISIBLE_DEVICES` or
      `HIP_VISIBLE_DEVICES` in the same environment (`os.environ`, which children inherit; or one
      `env` dict or variable for a subprocess, `setdefault`, `putenv`): each CUDA/HIP write is reported;
    - the file reads `CUDA_VISIBLE_DEVICES` (`os.environ[...]`, `.get`, `os.getenv`, `in os.environ`)
      and never mentions `HIP_VISIBLE_DEVICES` or `ROCR_VISIBLE_DEVICES`: each read is reported.
    Setting only `CUDA_VISIBLE_DEVICES` is fine (HIP honours it) and is not reported; neither is code
    inside a condition that names HIP/ROCm, a dict literal that is only compared (`assert env ==
    {...}`), a read inside a test assertion (`self.assertEqual(os.environ[...], "5,6")`), or a read in
    a function that sets `os.environ["CUDA_VISIBLE_DEVICES"]` itself (a fixture that saves the value,
    sets its own and restores it), or in a file that sets it for its own process at module level (a
    `--force-cpu` switch that empties it before importing torch, then checks it). Nor anything in a pytest module (`test_*.py`, `*_test.py`,
    `conftest.py`): a test sets both masks to check that the code under test strips them, and reads
    them to check what it left; the code under test is where GPUs are chosen.

    ## Why it breaks on AMD
    On AMD GPUs three layers filter devices: `ROCR_VISIBLE_DEVICES` (the ROCm runtime, applied
    first), then `HIP_VISIBLE_DEVICES` or its alias `CUDA_VISIBLE_DEVICES` (the HIP runtime), whose
    indices count only the GPUs ROCR left. Setting both with physical GPU ids double-filters:
    `ROCR_VISIBLE_DEVICES=2` plus `CUDA_VISIBLE_DEVICES=2` leaves no GPU. AMD recommends
    `ROCR_VISIBLE_DEVICES` on Linux, so launchers that follow it leave `CUDA_VISIBLE_DEVICES` unset,
    and code that reads only `CUDA_VISIBLE_DEVICES` to count or assign GPUs sees all of them.
    Applies to every ROCm version.

    ## Example
    ```python
    import os

    def local_gpus():
        ids = os.environ.get("CUDA_VISIBLE_DEVICES", "")
        return [int(i) for i in ids.split(",") if i]
    ```

    ## Use instead
    ```python
    import os

    def local_gpus():
        ids = os.environ.get("CUDA_VISIBLE_DEVICES") or os.environ.get("HIP_VISIBLE_DEVICES") or \\
            os.environ.get("ROCR_VISIBLE_DEVICES", "")
        return [int(i) for i in ids.split(",") if i]
    ```

    ## References
    - HIP environment variables, GPU isolation (order, alias, recommendation): https://rocm.docs.amd.com/projects/HIP/en/latest/reference/env_variables.html
    - ROCm GPU isolation techniques: https://rocm.docs.amd.com/en/latest/conceptual/gpu-isolation.html
    - PyTorch on ROCm counts devices with both variables set (ROCR applied first): https://github.com/ROCm/pytorch/pull/1895
    """

    code = "PY005"
    name = "visible-devices-env"
    summary = "GPU selection via CUDA_VISIBLE_DEVICES: on ROCm, ROCR_VISIBLE_DEVICES is applied first and HIP indices are relative to it"
    severity = Severity.WARNING
    impact = Impact.RUNTIME
    languages = frozenset({"python"})
    triggers = ("VISIBLE_DEVICES",)
    checklist = "Decide which variable selects GPUs on AMD (AMD recommends ROCR_VISIBLE_DEVICES on Linux); never set ROCR and CUDA/HIP to the same physical ids."

    def check_file(self, ctx):
        if _TEST_MODULE.search(ctx.path.replace("\\", "/")):
            return  # a test sets and reads the masks to check the code under test, not to pick GPUs
        py = pyparse.get(ctx)
        if py is None:
            return
        uses = []  # (variable, access, node)
        for node in py.nodes(cst.SimpleString, cst.Name):
            var = pyparse.string_value(node) if isinstance(node, cst.SimpleString) else node.value
            if var not in VARIABLES:
                continue
            access = env_access(py, node)
            uses.append((var, access, node))
        mentioned = {v for v, _, _ in uses}
        # Which environment each write goes to: the process's own, or one dict / variable for a child.
        rocr_groups = {env_group(py, node) for v, a, node in uses if a == "write" and v == ROCR_VAR}
        # Functions that set `CUDA_VISIBLE_DEVICES` in the process themselves (a test fixture saving the old
        # value, setting "0,1,2,3" and restoring it): their reads see the value they set.
        own_setters = {_function_of(py, node) for v, a, node in uses
                       if a == "write" and v == CUDA_VAR and env_group(py, node) == PROCESS_ENV}
        # Set for the whole process at module level (`--force_cpu` sets it to "" before importing torch):
        # the file's reads check the value it chose itself.
        module_setter = None in own_setters
        for var, access, node in uses:
            if handles_rocm(py, node, cuda_build_guard=False):
                continue
            start, end = py.span(node)
            if access == "write" and var in (CUDA_VAR, HIP_VAR) and _same_environment(env_group(py, node), rocr_groups):
                ctx.report_range(start, end,
                                 f"`{var}` is set together with `{ROCR_VAR}`: HIP applies it after ROCR, counting "
                                 "only the GPUs ROCR left, so the same physical ids select the wrong GPU or none; "
                                 "set one of them")
            elif access == "read" and var == CUDA_VAR and not ({HIP_VAR, ROCR_VAR} & mentioned) \
                    and not _checked_by_a_test(py, node) and _function_of(py, node) not in own_setters \
                    and not module_setter:
                ctx.report_range(start, end,
                                 f"reads only `{CUDA_VAR}`: on ROCm the GPUs are often chosen with `{ROCR_VAR}` "
                                 f"(AMD's recommendation on Linux) or `{HIP_VAR}`, leaving it unset; read those too")


# pytest's test modules and fixtures (`test_gpu_selection.py`, `gpu_test.py`, `conftest.py`).
_TEST_MODULE = re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test|conftest)\.py$")


def _function_of(py, node):
    """The innermost function around `node` (None at module level)."""
    return next((anc for anc in py.ancestors(node) if isinstance(anc, cst.FunctionDef)), None)


def _checked_by_a_test(py, node) -> bool:
    """A read inside `assert ...` or `self.assertEqual(...)` checks a value; it selects no GPU."""
    for anc in py.ancestors(node):
        if isinstance(anc, cst.Assert):
            return True
        if isinstance(anc, cst.Call) and (pyparse.dotted(anc.func) or "").rsplit(".", 1)[-1].startswith("assert"):
            return True
        if isinstance(anc, (cst.SimpleStatementLine, cst.FunctionDef)):
            return False
    return False
