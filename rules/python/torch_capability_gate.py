from __future__ import annotations

from functools import cache

from hiplint.lazy import libcst as cst

from hiplint import FileRule, Impact, Severity
from hiplint import pyparse

from ._vendor import handles_rocm

CAPABILITY_CALLS = frozenset({"torch.cuda.get_device_capability"})
PROPERTIES_CALLS = frozenset({"torch.cuda.get_device_properties"})
@cache
def comparisons():
    return (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual, cst.Equal, cst.NotEqual,
               cst.In, cst.NotIn)
# What ROCm builds of PyTorch report (major, minor from hipDeviceProp_t, derived from the gfx name).
ROCM_CAPABILITIES = "MI200/gfx90a (9, 0), MI300/gfx942 (9, 4), MI350/gfx950 (9, 5), RDNA3/gfx1100 (11, 0)"


def _is_number_like(node) -> bool:
    """An int/float literal, or a tuple/list/set of them (or of such tuples)."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.expression, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return bool(node.elements) and all(_is_number_like(e.value) for e in node.elements)
    return False


def _is_zero(node) -> bool:
    """A tuple of zeros, `(0, 0)`: the capability a CPU-only build or a stub reports. (A lone 0 is not:
    `minor != 0` tells NVIDIA's x.0 data-centre parts from the rest.)"""
    return isinstance(node, (cst.Tuple, cst.List)) and bool(node.elements) and all(
        isinstance(e.value, cst.Integer) and int(e.value.value.replace("_", ""), 0) == 0 for e in node.elements)


class TorchCapabilityGate(FileRule):
    """A compute-capability gate with NVIDIA numbers, taken on ROCm too.

    ## What it does
    Finds `torch.cuda.get_device_capability()` (and `get_device_properties(d).major`/`.minor`)
    compared with numbers: `get_device_capability() >= (8, 0)`, `get_device_capability()[0] >= 9`,
    and the same through a variable in the same function (`major, minor = ...; if major >= 8:`,
    `cap = ...; cap == (9, 0)`, `props = ...; props.major * 10 + props.minor >= 80`). Not reported
    where the code already separates ROCm (a condition or boolean expression naming
    `torch.version.hip`, `is_hip()`, `gcnArchName`..., an earlier `if torch.version.hip: return`, or a
    function named for ROCm), nor a comparison with `(0, 0)` only (what a CPU-only stub reports: no
    NVIDIA architecture named; `minor != 0` still is one). Nor a gate that every AMD target answers as
    it should: an ordering against a level below Ada's 8.9 (`>= (8, 0)`, `major < 8`, `cc <= 52`:
    tensor cores, bf16, TF32-level features, which AMD's 9.x and 11.x pass as newer GPUs), or an
    equality or membership naming only levels below 9 (`major == 8`: no AMD GPU reports 8, so it
    takes the other path; so does a test on the minor joined by `and` to such an equality, `major == 8
    and minor > 0`). From 8.9 on (FP8, TMA, wgmma, Blackwell) and for equalities with 9, 11
    or 12 the gate is reported, unless its value goes to a local nothing in the function reads, or it
    sits under a test of a backend variable the file also tests for ROCm (`if SYSTEM == "cuda":` beside
    `SYSTEM == "rocm"`; not a torch device string, which ROCm's PyTorch spells "cuda" too).
    A gate that only picks numbers (its `if` branches assign or return tile sizes, `num_warps`, stage
    counts; not a bare 0 or 1, which is a flag) is reported as info: AMD GPUs get the values tuned for
    that NVIDIA generation, which may not suit them (LDS is 64 KiB per workgroup on gfx942) but select
    no NVIDIA-only code.

    ## Why it breaks on AMD
    ROCm builds of PyTorch answer `get_device_capability()` with the major/minor of the gfx
    architecture: MI200 (gfx90a) reports (9, 0), MI300X/MI325X (gfx942) (9, 4), MI350 (gfx950)
    (9, 5), RDNA3 (gfx1100) (11, 0). Those numbers pass gates written for Hopper (`>= (9, 0)`) or
    Ampere (`>= (8, 0)`), so code selects NVIDIA-only kernels (FlashAttention 3, FP8 or TMA paths,
    cuBLASLt workspaces) on AMD GPUs, which then fail or give wrong results; equality gates
    (`== (9, 0)`) match MI200 as if it were an H100. Silent on every ROCm version.

    ## Example
    ```python
    import torch

    def use_fp8_kernels():
        major, minor = torch.cuda.get_device_capability()
        return major >= 9
    ```

    ## Use instead
    ```python
    import torch

    def use_fp8_kernels():
        if torch.version.hip:
            return torch.cuda.get_device_properties(0).gcnArchName.startswith(("gfx942", "gfx950"))
        major, minor = torch.cuda.get_device_capability()
        return major >= 9
    ```

    ## References
    - PyTorch, HIP (ROCm) semantics: https://pytorch.org/docs/stable/notes/hip.html
    - torchtitan fix: FA3 selected on MI350X because (9, 5) >= (9, 0): https://github.com/pytorch/torchtitan/pull/4778
    - ROCm/pytorch: Navi passed a `>= (9, 4)` gate meant for MI300: https://github.com/ROCm/pytorch/pull/1846
    - AMD GPU specifications (gfx name per product): https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html
    """

    code = "PY002"
    name = "torch-capability-gate"
    summary = "compute-capability gate with NVIDIA numbers: ROCm reports gfx-derived numbers (MI300 is (9, 4))"
    severity = Severity.ERROR
    impact = Impact.SILENT
    languages = frozenset({"python"})
    triggers = ("get_device_capability", "get_device_properties")  # the calls a capability comes from (also when imported under another name)
    checklist = "Separate AMD in capability gates: branch on torch.version.hip and match get_device_properties(d).gcnArchName."

    def check_file(self, ctx):
        py = pyparse.get(ctx)
        if py is None:
            return
        sources = [c for c in py.nodes(cst.Call) if py.names(c.func) & (CAPABILITY_CALLS | PROPERTIES_CALLS)]
        if not sources:
            return
        tracked = self._tracked_names(py, sources)
        # One more step: `sm = major * 10 + minor` makes `sm` a capability too.
        for assign in py.nodes(cst.Assign):
            if self._derives(py, assign.value, tracked):
                for target in assign.targets:
                    for name in _bound_names(target.target):
                        tracked.setdefault(_scope_key(py, assign), {}).setdefault(name, "cap")
        reported = set()
        for comp in py.nodes(cst.Comparison):
            if not any(isinstance(t.operator, comparisons()) for t in comp.comparisons):
                continue
            operands = [comp.left] + [t.comparator for t in comp.comparisons]
            derived = [o for o in operands if self._derives(py, o, tracked)]
            numbers = [o for o in operands if o not in derived and _is_number_like(o)]
            if not derived or not numbers or all(_is_zero(o) for o in numbers):
                continue  # `== (0, 0)` is "no GPU", not an NVIDIA architecture
            if _amd_answer_is_right(comp, derived, numbers):
                continue
            if self._beside_a_major_amd_never_has(py, comp, tracked):
                continue  # `major == 8 and minor > 0`: false on AMD whatever the minor test says
            if _assigned_and_never_read(py, comp):
                continue  # `is_sm90 = major == 9 and minor == 0` and no line reads `is_sm90`
            # Once per test: `cc == 61 or cc <= 52` is one gate, reported at its first comparison.
            test = comp
            while isinstance(py.parent(test), (cst.BooleanOperation, cst.UnaryOperation)):
                test = py.parent(test)
            if handles_rocm(py, comp) or id(test) in reported:
                continue
            reported.add(id(test))
            start, end = py.span(comp)
            if _only_picks_numbers(py, test):
                # `if is_blackwell: BLOCK, num_warps = 32, 8`: AMD GPUs get NVIDIA's tuning, not an NVIDIA-only
                # code path; a tile that does not fit fails loudly at compile time.
                ctx.report_range(start, end,
                                 "compute-capability gate picks tuning numbers with NVIDIA levels: ROCm builds "
                                 f"report {ROCM_CAPABILITIES}, so AMD GPUs get the values chosen for that NVIDIA "
                                 "generation; check they suit AMD (LDS is 64 KiB per workgroup on gfx942)",
                                 severity=Severity.INFO)
                continue
            ctx.report_range(start, end,
                             "compute-capability gate with NVIDIA numbers: ROCm builds report "
                             f"{ROCM_CAPABILITIES}, so this selects an NVIDIA code path on AMD GPUs; branch on "
                             "`torch.version.hip` and check `get_device_properties(d).gcnArchName`")

    def _beside_a_major_amd_never_has(self, py, comp, tracked) -> bool:
        """`major == 8 and minor > 0`, `major == 7 and minor == 5`: a comparison joined by `and` to an
        equality that pins the major number to a level below 9, which no AMD GPU reports: the whole
        test is false on AMD, as it is on every NVIDIA GPU of another major."""
        test = py.parent(comp)
        if not isinstance(test, cst.BooleanOperation) or not isinstance(test.operator, cst.And):
            return False
        for side in (test.left, test.right):
            if side is comp or not isinstance(side, cst.Comparison) or len(side.comparisons) != 1:
                continue
            if not isinstance(side.comparisons[0].operator, cst.Equal):
                continue
            operands = [side.left, side.comparisons[0].comparator]
            derived = [o for o in operands if self._derives(py, o, tracked)]
            numbers = [o for o in operands if o not in derived and _is_number_like(o)]
            level = _level(numbers[0]) if len(numbers) == 1 and derived else None
            if level is not None and level < 90 and "minor" not in _code(derived[0]):
                return True
        return False

    @staticmethod
    def _tracked_names(py, sources):
        """Names bound to a capability tuple, its parts, or a device-properties object, per scope."""
        tracked: dict[str, set] = {}
        for call in sources:
            node, parent = call, py.parent(call)
            if isinstance(parent, cst.Subscript):
                node, parent = parent, py.parent(parent)
            if isinstance(parent, cst.Attribute) and parent.attr.value in ("major", "minor"):
                node, parent = parent, py.parent(parent)
            if isinstance(parent, cst.AssignTarget):
                continue
            if isinstance(parent, cst.Assign) and parent.value is node:
                kind = "props" if py.names(call.func) & PROPERTIES_CALLS and node is call else "cap"
                for target in parent.targets:
                    for name in _bound_names(target.target):
                        tracked.setdefault(_scope_key(py, parent), {})[name] = kind
        return tracked

    def _derives(self, py, node, tracked) -> bool:
        """Does this expression come from a capability call (directly or through a tracked name)?"""
        names = tracked.get(_scope_key(py, node), {})
        for n in pyparse.descendants(node):
            if isinstance(n, cst.Call) and py.names(n.func) & CAPABILITY_CALLS:
                return True
            if isinstance(n, cst.Attribute) and n.attr.value in ("major", "minor"):
                v = n.value
                if isinstance(v, cst.Call) and py.names(v.func) & PROPERTIES_CALLS:
                    return True
                if isinstance(v, cst.Name) and names.get(v.value) == "props":
                    return True
            if isinstance(n, cst.Name) and names.get(n.value) == "cap":
                parent = py.parent(n)
                if not (isinstance(parent, cst.Attribute) and parent.attr is n):
                    return True
        return False


# Below Ada's 8.9 (FP8), a gate asks for Volta/Turing/Ampere features (tensor cores, bf16, TF32): every AMD
# target answers as newer, which it is for those. From 8.9 on it asks for NVIDIA's FP8, TMA, wgmma or
# Blackwell paths, which MI200's (9, 0) or RDNA4's (12, 0) then take.
AMD_PASSES_BELOW = 89
ORDERINGS = ("LessThan", "LessThanEqual", "GreaterThan", "GreaterThanEqual")


def _level(node) -> int | None:
    """major * 10 + minor of a literal capability: `8` -> 80, `(8, 6)` -> 86, `86` -> 86; None otherwise."""
    def integer(n):
        if isinstance(n, cst.Integer):
            return int(n.value.replace("_", ""), 0)
        if isinstance(n, cst.Float):
            major, _, minor = n.value.partition(".")
            return int(major) * 10 + int((minor or "0")[:1]) if major.isdigit() else None
        return None
    if isinstance(node, (cst.Tuple, cst.List)) and node.elements:
        parts = [integer(e.value) for e in node.elements[:2]]
        if None in parts:
            return None
        return parts[0] * 10 + (parts[1] if len(parts) > 1 else 0)
    value = integer(node)
    if isinstance(node, cst.Float):
        return value
    return None if value is None else value * 10 if value < 20 else value


def _amd_answer_is_right(comp, derived, numbers) -> bool:
    """Does every AMD capability (9.x, 11.x, 12.x) fall on the side the gate means for such a GPU? An
    ordering against a level below 8.9 (`>= (8, 0)`, `major < 8`, `cc >= 75`), and an equality or
    membership naming only levels below 9 (`== (8, 0)`: AMD is never one): yes. Gates on the minor
    number alone, or with numbers that are not plain capabilities, are not judged here."""
    for d in derived:
        code = _code(d)
        if ("minor" in code and "major" not in code) or (code.rstrip().endswith("[1]") and "[0]" not in code):
            return False  # the minor number alone
    levels = []
    for n in numbers:
        if isinstance(n, (cst.Set,)) or (isinstance(n, (cst.Tuple, cst.List)) and n.elements
                                           and isinstance(n.elements[0].value, (cst.Tuple, cst.List))):
            levels.extend(_level(e.value) for e in n.elements)
        else:
            levels.append(_level(n))
    if not levels or None in levels:
        return False
    operators = {type(t.operator).__name__ for t in comp.comparisons}
    if operators <= set(ORDERINGS):
        return max(levels) < AMD_PASSES_BELOW
    return max(levels) < 90


def _code(node) -> str:
    try:
        return cst.Module(body=[]).code_for_node(node)
    except Exception:  # a node libcst cannot print: judged as before, never a crash
        return "minor"


def _assigned_and_never_read(py, comp) -> bool:
    """Is the test (with the `and`/`or`/`not` around it) the value of `name = ...` whose name nothing in
    the function (or the module, at top level) reads?"""
    test = comp
    while isinstance(py.parent(test), (cst.BooleanOperation, cst.UnaryOperation)):
        test = py.parent(test)
    assign = py.parent(test)
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or \
            not isinstance(assign.targets[0].target, cst.Name):
        return False
    name = assign.targets[0].target.value
    scope = next((a for a in py.ancestors(assign) if isinstance(a, cst.FunctionDef)), None)
    if scope is None:
        return False  # a module-level name may be imported elsewhere
    reads = [n for n in py.nodes(cst.Name) if n.value == name and n is not assign.targets[0].target
             and any(a is scope for a in py.ancestors(n))]
    return not reads


def _only_picks_numbers(py, test) -> bool:
    """Does the gate only choose numbers: the test of an `if` whose branches assign or return nothing but
    numbers (`BLOCK, num_warps = 32, 8`), of a conditional expression between numbers, or the value of a
    local whose every read is such a test?"""
    parent = py.parent(test)
    if isinstance(parent, cst.If) and parent.test is test:
        return _branches_pick_numbers(parent)
    if isinstance(parent, cst.IfExp) and parent.test is test:
        return _picks_number(parent.body) and _picks_number(parent.orelse)
    if not isinstance(parent, cst.Assign) or len(parent.targets) != 1 or \
            not isinstance(parent.targets[0].target, cst.Name):
        return False
    scope = next((a for a in py.ancestors(parent) if isinstance(a, cst.FunctionDef)), None)
    if scope is None:
        return False  # a module-level name may be imported elsewhere
    name = parent.targets[0].target.value
    reads = [n for n in py.nodes(cst.Name) if n.value == name and n is not parent.targets[0].target
             and any(a is scope for a in py.ancestors(n))]
    return bool(reads) and all(_only_picks_numbers(py, _whole_test(py, r)) for r in reads)


def _whole_test(py, node):
    while isinstance(py.parent(node), (cst.BooleanOperation, cst.UnaryOperation)):
        node = py.parent(node)
    return node


def _picks_number(node) -> bool:
    """A tuning number: not a bare 0 or 1, which is a flag choosing a code path (`USE_TMA = 1`)."""
    if isinstance(node, cst.IfExp):
        return _picks_number(node.body) and _picks_number(node.orelse)
    if isinstance(node, cst.Integer) and node.value in ("0", "1"):
        return False
    return _is_number_like(node)


def _branches_pick_numbers(if_node) -> bool:
    """Every statement of the `if` (and of its `elif`/`else`) assigns numbers to names or returns one."""
    blocks = [if_node.body]
    orelse = if_node.orelse
    while orelse is not None:
        blocks.append(orelse.body)
        orelse = orelse.orelse if isinstance(orelse, cst.If) else None
    for block in blocks:
        lines = block.body if isinstance(block, cst.IndentedBlock) else [block]
        for line in lines:
            if not isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                return False
            for small in line.body:
                if isinstance(small, cst.Assign):
                    if not _picks_number(small.value) or not all(
                            list(_bound_names(t.target)) for t in small.targets):
                        return False
                elif isinstance(small, cst.Return):
                    if small.value is None or not _picks_number(small.value):
                        return False
                elif not isinstance(small, cst.Pass):
                    return False
    return True


def _bound_names(target):
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for e in target.elements:
            yield from _bound_names(e.value)


def _scope_key(py, node):
    for anc in py.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
            return id(anc)
    return 0
