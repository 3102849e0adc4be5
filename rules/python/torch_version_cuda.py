from __future__ import annotations

from functools import cache

from hiplint.lazy import libcst as cst

from hiplint import Edit, FileRule, Fix, Impact, Severity
from hiplint import pyparse
from hiplint.rules.build._vendor import identifier_words

from ._vendor import HIP_DOTTED, handles_rocm, mentions_hip

TORCH_VERSION_CUDA = "torch.version.cuda"
# Calls that fail on None: float("12.1"), Version(...), packaging.version.parse(...).
VERSION_PARSERS = frozenset({"float", "int", "Version", "parse", "parse_version", "LooseVersion", "StrictVersion",
                             "version.parse", "version.Version", "packaging.version.parse", "packaging.version.Version",
                             "pkg_resources.parse_version", "distutils.version.LooseVersion", "tuple", "map", "list"})
@cache
def ordering():
    return (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)


@cache
def truth_tests():
    return (cst.If, cst.While, cst.IfExp, cst.Assert)
GUARDED_USES = frozenset({TORCH_VERSION_CUDA, "torch.cuda.get_device_capability", "torch.cuda.get_device_properties"})
# Under the test, these say the code picks NVIDIA's own path on purpose (CUTLASS kernels, NVML, a
# compute-capability check), not "any GPU build".
NVIDIA_ONLY_PARTS = ("cutlass", "nvml", "nvcc", "nvidia", "tensorrt", "capability")
# In the branch a CUDA-build test leaves to ROCm: AMD's own kernels (Composable Kernel: xformers' `fmha.ck`).
ROCM_LIBRARY_WORDS = frozenset({"ck", "miopen", "rocblas", "hipblaslt", "aiter"})


class TorchVersionCudaNone(FileRule):
    """`torch.version.cuda` used as if it were never None.

    ## What it does
    Finds `torch.version.cuda` (also through `import torch as th` or `from torch.version import cuda`)
    where `None` breaks or misleads:
    - parsed as a version: `float(torch.version.cuda)`, `Version(torch.version.cuda)`,
      `packaging.version.parse(...)`, `torch.version.cuda.split(".")`, `torch.version.cuda[0]`;
    - ordered: `torch.version.cuda >= "11.8"`, `"12" in torch.version.cuda`;
    - tested for truth as "this is a GPU build": `if torch.version.cuda:`, `not torch.version.cuda`,
      `assert torch.version.cuda`, where the guarded code does not itself use the CUDA version;
    - compared with `None` to demand a CUDA build: `if torch.version.cuda is None: raise ...` (or
      `sys.exit(...)`), `assert torch.version.cuda is not None`, unless a later statement of the
      block parses the version (then that parse is what is reported).

    Not reported: other `is None` / `is not None` and `==` / `!=` comparisons (they pick a path); a
    truth test that guards a use of the version or an NVIDIA-only check (`if torch.version.cuda and
    float(torch.version.cuda) >= 11.8`, `torch.version.cuda and torch.cuda.get_device_capability() >=
    (9, 0)`); version uses under such a guard; code in a branch or boolean expression that mentions `torch.version.hip` (or
    another HIP/ROCm marker) or after an early `if torch.version.hip: return`. Nor a truth test that
    picks NVIDIA's own path on purpose: its branch or conditions name CUTLASS, NVML, nvcc or a compute
    capability (`fmha.cutlass.FwOp if torch.version.cuda else ...`, `torch.version.cuda and
    compute_capability < (8, 0)`), its other branch names AMD's kernels (`else fmha.ck.FwOp`), or an
    `if` beside it tests `torch.version.hip`.

    ## Why it breaks on AMD
    PyTorch's ROCm builds reuse the `torch.cuda` API but set `torch.version.hip` and leave
    `torch.version.cuda` as `None`. `float(None)`, `None.split(".")` and `None >= "11.8"` raise
    `TypeError`/`AttributeError` on every ROCm build (all ROCm versions, all AMD GPUs). A truth test
    silently classifies a working ROCm GPU build as CPU-only, so the GPU path is never taken.

    ## Example
    ```python
    import torch

    if torch.version.cuda:
        device = "cuda"
    CUDA_MAJOR = int(torch.version.cuda.split(".")[0])
    ```

    ## Use instead
    ```python
    import torch

    if torch.version.cuda or torch.version.hip:
        device = "cuda"
    CUDA_MAJOR = int(torch.version.cuda.split(".")[0]) if torch.version.cuda else None
    ```

    ## Fix
    For a truth test only, an unsafe fix rewrites `torch.version.cuda` to
    `torch.version.cuda or torch.version.hip` (parenthesized where needed). It is unchanged on
    CUDA builds (`torch.version.hip` is None there) but takes the GPU branch on ROCm builds, which is
    the point, and also means that branch now runs on AMD: review that it holds nothing
    NVIDIA-specific (nvcc, NVML). Version parsing has no automatic fix: what the code should do on
    ROCm is a decision.

    ## References
    - PyTorch, HIP (ROCm) semantics ("torch.version.hip", "torch.version.cuda is None"): https://pytorch.org/docs/stable/notes/hip.html
    - torch.utils.cpp_extension: IS_HIP_EXTENSION is `torch.version.hip is not None and ROCM_HOME is not None`: https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py
    """

    code = "PY001"
    name = "torch-version-cuda-none"
    summary = "torch.version.cuda is None on ROCm builds of PyTorch (torch.version.hip is set instead)"
    severity = Severity.ERROR
    impact = Impact.RUNTIME
    fix_availability = "sometimes"
    languages = frozenset({"python"})
    triggers = ("cuda",)  # every spelling of torch.version.cuda names the attribute `cuda` (rarer than `version`)
    checklist = "Handle torch.version.cuda being None on ROCm: test `torch.version.cuda or torch.version.hip` for GPU builds, guard version parsing."

    def check_file(self, ctx):
        py = pyparse.get(ctx)
        if py is None:
            return
        for node in py.nodes(cst.Attribute, cst.Name):
            if not self._is_version_cuda(py, node):
                continue
            kind, anchor = self._usage(py, node)
            if kind is None:
                continue
            # A truth test is the subject here; other uses are fine under `if torch.version.cuda:`.
            if handles_rocm(py, node, cuda_build_guard=kind not in ("truth", "requires")):
                continue
            start, end = py.span(anchor)
            if kind == "requires" and self._guards_later_use(py, anchor):
                continue  # the version is parsed right after: a check that the CUDA version exists
            if kind == "requires":
                ctx.report_range(start, end,
                                 "`torch.version.cuda` is None on ROCm builds, so this check stops a ROCm GPU build "
                                 "as if it were CPU-only; also accept `torch.version.hip` (or use "
                                 "`torch.cuda.is_available()`)")
            elif kind == "truth":
                fix = self._truth_fix(py, node)
                ctx.report_range(start, end,
                                 "`torch.version.cuda` is None on ROCm builds, so this test treats a ROCm GPU build "
                                 "as CPU-only; also accept `torch.version.hip` (or use `torch.cuda.is_available()`)",
                                 fix=fix)
            else:
                ctx.report_range(start, end,
                                 f"`torch.version.cuda` is None on ROCm builds: {kind} raises on AMD; check "
                                 "`torch.version.hip` first or guard with `if torch.version.cuda:`")

    @staticmethod
    def _is_version_cuda(py, node) -> bool:
        parent = py.parent(node)
        if isinstance(node, cst.Name):
            # `cuda` imported from torch.version; not the attr part of an Attribute.
            if isinstance(parent, cst.Attribute) and parent.attr is node:
                return False
            if isinstance(parent, (cst.ImportAlias, cst.ImportFrom)):
                return False
            if TORCH_VERSION_CUDA not in py.names(node):
                return False
            # A parameter of an enclosing function shadows the import (`def f(cuda=True): if cuda: ...`).
            for anc in py.ancestors(node):
                if isinstance(anc, (cst.FunctionDef, cst.Lambda)) and any(
                        p.name.value == node.value for p in _params(anc.params)):
                    return False
            return True
        return TORCH_VERSION_CUDA in py.names(node)

    def _usage(self, py, node):
        """(what goes wrong, node to report) or (None, None) when the use is None-safe."""
        parent = py.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return f"`.{parent.attr.value}` on it", parent
        if isinstance(parent, cst.Subscript) and parent.value is node:
            return "indexing it", parent
        if isinstance(parent, cst.Arg):
            call = py.parent(parent)
            if isinstance(call, cst.Call) and (pyparse.dotted(call.func) or "") in VERSION_PARSERS:
                return f"`{pyparse.dotted(call.func)}()` of it", call
            if isinstance(call, cst.Call) and pyparse.dotted(call.func) == "bool":
                return ("truth", call) if not self._guards_version_use(py, call) else (None, None)
            return None, None
        if isinstance(parent, cst.Comparison):
            return self._comparison(py, node, parent)
        if isinstance(parent, cst.ComparisonTarget):
            return self._comparison(py, node, py.parent(parent))
        if self._truth_position(py, node):
            if self._guards_version_use(py, node) or self._picks_nvidia(py, node):
                return None, None
            return "truth", node
        return None, None

    def _guards_later_use(self, py, comp) -> bool:
        """Does a statement after this `if ... is None: raise` / `assert ... is not None` use the CUDA
        version itself (parse or order it)? Then it only checks that the version exists, as a
        `torch.version.cuda and float(torch.version.cuda) >= 11.8` guard does."""
        stmt, block = None, None
        for anc in py.ancestors(comp):
            body = getattr(anc, "body", None)
            if isinstance(body, (list, tuple)) and stmt is not None and \
                    not isinstance(anc, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and \
                    any(b is stmt for b in body):
                block = body
                break
            stmt = anc
        if block is None:
            return False
        after = next(i for i, b in enumerate(block) if b is stmt) + 1
        for later in block[after:]:
            for node in pyparse.descendants(later):
                if isinstance(node, (cst.Attribute, cst.Name)) and self._is_version_cuda(py, node):
                    kind, _ = self._usage(py, node)
                    if kind not in (None, "truth", "requires"):
                        return True
        return False

    @staticmethod
    def _comparison(py, node, comp):
        if not isinstance(comp, cst.Comparison):
            return None, None
        operands = [comp.left] + [t.comparator for t in comp.comparisons]
        idx = next(i for i, o in enumerate(operands) if o is node)
        ops = [t.operator for t in comp.comparisons]
        touching = ([ops[idx - 1]] if idx > 0 else []) + ([ops[idx]] if idx < len(ops) else [])
        if any(isinstance(o, ordering()) for o in touching):
            return "an ordering comparison with it", comp
        if idx > 0 and isinstance(ops[idx - 1], (cst.In, cst.NotIn)):
            return "`in` on it", comp
        # `if torch.version.cuda is None: raise ...` and `assert torch.version.cuda is not None`
        # demand a CUDA build: on ROCm they stop a GPU build. An `is None` test that picks a path is fine.
        if len(operands) == 2 and isinstance(operands[1 - idx], cst.Name) and operands[1 - idx].value == "None":
            test_of = py.parent(comp)
            if isinstance(ops[0], cst.IsNot) and isinstance(test_of, cst.Assert) and test_of.test is comp:
                return "requires", comp
            if isinstance(ops[0], cst.Is) and isinstance(test_of, cst.If) and test_of.test is comp and \
                    _stops(test_of.body):
                return "requires", comp
        return None, None

    @staticmethod
    def _truth_position(py, node) -> bool:
        """Is `node`'s value used only for its truth (if/while/assert test, `not`, and/or in such a test)?"""
        cur = node
        for anc in py.ancestors(node):
            if isinstance(anc, truth_tests()) and anc.test is cur:
                return True
            if isinstance(anc, cst.UnaryOperation) and isinstance(anc.operator, cst.Not):
                return True
            if isinstance(anc, cst.BooleanOperation):
                cur = anc
                continue
            return False
        return False

    @staticmethod
    def _guards_version_use(py, node) -> bool:
        """`torch.version.cuda and float(torch.version.cuda) > 11` or `if torch.version.cuda: v = torch.version.cuda`."""
        top = node
        for anc in py.ancestors(node):
            if isinstance(anc, (cst.BooleanOperation, cst.UnaryOperation)):
                top = anc
                continue
            break
        scope = py.parent(top)
        guarded = []
        if isinstance(top, cst.BooleanOperation):
            guarded.append(top)
        if isinstance(scope, (cst.If, cst.While)) and scope.test is top:
            guarded.append(scope.body)
        elif isinstance(scope, cst.IfExp) and scope.test is top:
            guarded.append(scope.body)
        for g in guarded:
            for other in pyparse.descendants(g):
                if other is node or not isinstance(other, cst.Attribute):
                    continue
                # The test guards a use of the version, or an NVIDIA-only check (capability numbers).
                if py.names(other) & GUARDED_USES:
                    return True
        return False

    @staticmethod
    def _picks_nvidia(py, node) -> bool:
        """Does the test choose between NVIDIA's and AMD's own paths, not "GPU build or not"? Its branch or
        conditions name an NVIDIA-only thing (`fmha.cutlass.FwOp`, `compute_capability < (8, 0)`), its other
        branch AMD's (`else fmha.ck.FwOp`), or a statement beside it tests `torch.version.hip`."""
        top = node
        for anc in py.ancestors(node):
            if not isinstance(anc, (cst.BooleanOperation, cst.UnaryOperation)):
                break
            top = anc
        scope = py.parent(top)
        chosen = [top] if isinstance(top, cst.BooleanOperation) else []
        other = None
        if isinstance(scope, (cst.If, cst.IfExp)) and scope.test is top:
            chosen.append(scope.body)
            other = scope.orelse
        if any(_names_nvidia_only(py, part) for part in chosen):
            return True
        if other is not None and (mentions_hip(py, other) or _names_rocm_library(other)):
            return True
        if isinstance(scope, cst.If) and scope.test is top:
            block = py.parent(scope)
            for stmt in getattr(block, "body", ()):
                if stmt is not scope and isinstance(stmt, cst.If) and any(
                        py.names(n) & HIP_DOTTED for n in pyparse.descendants(stmt.test) if isinstance(n, cst.Attribute)):
                    return True
        return False

    @staticmethod
    def _truth_fix(py, node):
        if not isinstance(node, cst.Attribute) or node.attr.value != "cuda":
            return None
        text = py.code(node)
        hip = text[: -len("cuda")] + "hip"
        parent = py.parent(node)
        direct = (isinstance(parent, truth_tests()) and parent.test is node) or isinstance(parent, cst.Arg)
        new = f"{text} or {hip}" if direct else f"({text} or {hip})"
        start, end = py.span(node)
        return Fix.unsafe("also accept torch.version.hip (ROCm builds)", Edit(start, end, new))


def _stops(block) -> bool:
    """Does the block raise or exit the program first thing (`raise ...`, `sys.exit(...)`)?"""
    stmts = block.body if isinstance(block, cst.SimpleStatementSuite) else \
        (block.body[0].body if block.body and isinstance(block.body[0], cst.SimpleStatementLine) else ())
    if not stmts:
        return False
    first = stmts[0]
    return isinstance(first, cst.Raise) or (
        isinstance(first, cst.Expr) and isinstance(first.value, cst.Call)
        and (pyparse.dotted(first.value.func) or "") in ("sys.exit", "exit", "quit", "os._exit"))


def _params(params: cst.Parameters):
    out = list(params.params) + list(params.kwonly_params) + list(params.posonly_params)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            out.append(star)
    return out


def _names_nvidia_only(py, node) -> bool:
    for n in pyparse.descendants(node):
        if isinstance(n, cst.Name):
            text = n.value.lower()
        elif isinstance(n, cst.SimpleString):
            text = (pyparse.string_value(n) or "").lower()
        else:
            continue
        if any(part in text for part in NVIDIA_ONLY_PARTS):
            return True
    return False


def _names_rocm_library(node) -> bool:
    return any(isinstance(n, cst.Name) and not ROCM_LIBRARY_WORDS.isdisjoint(identifier_words(n.value))
               for n in pyparse.descendants(node))
