from __future__ import annotations

from hiplint.lazy import libcst as cst

from hiplint import FileRule, Impact, Severity
from hiplint import pyparse

from ._vendor import handles_rocm

CUDA_HOME = "torch.utils.cpp_extension.CUDA_HOME"
STOPPERS = frozenset({"sys.exit", "exit", "quit", "os._exit"})


def _is_cuda_home(py, node) -> bool:
    """cpp_extension's CUDA_HOME (`from torch.utils.cpp_extension import CUDA_HOME`, or the dotted
    name), not a script's own variable of that name (`CUDA_HOME = os.environ.get(...)`)."""
    if not py.is_name(node, CUDA_HOME):
        return False
    if isinstance(node, cst.Name):
        parent = py.parent(node)
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return False
        if isinstance(parent, (cst.ImportAlias, cst.ImportFrom, cst.AssignTarget)):
            return False
        # Assigned in the file: the script's own value (the import is shadowed).
        if any(isinstance(t.target, cst.Name) and t.target.value == node.value
               for a in py.nodes(cst.Assign) for t in a.targets):
            return False
    return True


def _statements(block) -> list:
    """The small statements of a block, in order (`raise X` in `if c: raise X` or on lines of its own)."""
    if isinstance(block, cst.SimpleStatementSuite):
        return list(block.body)
    out = []
    for stmt in getattr(block, "body", ()):
        out.extend(stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt])
    return out


def _stops(stmt) -> bool:
    """`raise ...`, `sys.exit(...)`: the build stops here."""
    return isinstance(stmt, cst.Raise) or (
        isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call)
        and (pyparse.dotted(stmt.value.func) or "") in STOPPERS)


def _leaves(stmt) -> bool:
    return isinstance(stmt, cst.Return) or _stops(stmt)


class CudaHomeGate(FileRule):
    """A build script that needs PyTorch's `CUDA_HOME` to build its GPU extension.

    ## What it does
    Finds tests of `torch.utils.cpp_extension.CUDA_HOME` that decide whether a GPU build happens:
    - the build stops without it: `if CUDA_HOME is None: raise ...` (or `sys.exit(...)`),
      `if not CUDA_HOME: raise ...`, `assert CUDA_HOME is not None`, `assert CUDA_HOME`, and
      `if CUDA_HOME is not None: return` followed by a `raise` (a `check_cuda_home()` helper);
    - the GPU extension is built only with it: `if torch.cuda.is_available() and CUDA_HOME is not None:`
      whose branch (or conditional expression) picks `CUDAExtension`, also through a variable
      (`WITH_CUDA = CUDA_HOME is not None`, then `if WITH_CUDA:` choosing `CUDAExtension`).

    Not reported where the test, a condition around it, or an operand beside it names ROCm
    (`or torch.version.hip`, `or ROCM_HOME is not None`, `IS_HIP_EXTENSION`, `is_rocm_pytorch`) or
    `torch.version.cuda` (a CUDA-only branch on purpose; PY001 reads `torch.version.cuda` itself), after
    an early `if torch.version.hip: return`, nor a script's own `CUDA_HOME` variable (read from the
    environment): only cpp_extension's. Tests that pick a CUDA-only setting (`if CUDA_HOME is not None:
    nvcc_flags += [...]`) are fine on ROCm and not reported.

    ## Why it breaks on AMD
    On ROCm builds of PyTorch, `torch.utils.cpp_extension.CUDA_HOME` is None: PyTorch 2.x sets it
    only when `torch.version.cuda` is set (`CUDA_HOME = _find_cuda_home() if (torch.cuda._is_compiled()
    and torch.version.cuda) else None`), and older releases found it only from an installed CUDA
    toolkit (`CUDA_HOME`/`CUDA_PATH`, `nvcc` on the `PATH`, `/usr/local/cuda`), which a ROCm machine does
    not have. The ROCm toolkit is `ROCM_HOME` (and `IS_HIP_EXTENSION` is True), and `CUDAExtension`
    builds with hipcc there. So a required `CUDA_HOME` stops `pip install` on every ROCm machine, and
    a `CUDA_HOME is not None` gate builds the package without its GPU extension, silently: it installs,
    and fails or falls back to the CPU at run time. All ROCm versions, all AMD GPUs.

    ## Example
    ```python
    import torch
    from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension

    if CUDA_HOME is None:
        raise RuntimeError("nvcc not found")
    extension = CUDAExtension if torch.cuda.is_available() and CUDA_HOME is not None else CppExtension
    ```

    ## Use instead
    ```python
    import torch
    from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME, CppExtension, CUDAExtension

    if CUDA_HOME is None and ROCM_HOME is None:
        raise RuntimeError("neither nvcc nor hipcc found")
    has_toolkit = CUDA_HOME is not None or ROCM_HOME is not None
    extension = CUDAExtension if torch.cuda.is_available() and has_toolkit else CppExtension
    ```

    ## References
    - PyTorch C++ extensions (`CUDA_HOME`, `ROCM_HOME`, `IS_HIP_EXTENSION`; `CUDAExtension` builds with hipcc on ROCm): https://pytorch.org/docs/stable/cpp_extension.html
    - `CUDA_HOME` and `ROCM_HOME` are set in torch/utils/cpp_extension.py: https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py
    - PyTorch HIP (ROCm) semantics (`torch.version.hip`; `torch.version.cuda` is None): https://pytorch.org/docs/stable/notes/hip.html
    """

    code = "PY009"
    name = "cuda-home-gate"
    summary = "build needs PyTorch's CUDA_HOME, which is None on ROCm builds (ROCM_HOME is set instead)"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    languages = frozenset({"python"})
    triggers = ("CUDA_HOME",)
    checklist = "Accept ROCm in build gates on CUDA_HOME: also test `ROCM_HOME is not None` (or IS_HIP_EXTENSION) before raising or leaving out the GPU extension."

    def check_file(self, ctx):
        py = pyparse.get(ctx)
        if py is None:
            return
        for node in py.nodes(cst.Name, cst.Attribute):
            if not _is_cuda_home(py, node):
                continue
            found = self._gate(py, node)
            if found is None:
                continue
            kind, anchor = found
            if handles_rocm(py, node):
                continue
            start, end = py.span(anchor)
            if kind == "stops":
                ctx.report_range(start, end,
                                 "PyTorch's `CUDA_HOME` is None on ROCm builds, so this stops the build on every AMD "
                                 "machine; accept ROCm too (`ROCM_HOME is not None` or `IS_HIP_EXTENSION`), where "
                                 "CUDAExtension builds with hipcc")
            else:
                ctx.report_range(start, end,
                                 "PyTorch's `CUDA_HOME` is None on ROCm builds, so this leaves the GPU extension out of "
                                 "an AMD build, silently; also accept `ROCM_HOME is not None` (or "
                                 "`IS_HIP_EXTENSION`), where CUDAExtension builds with hipcc",
                                 severity=Severity.WARNING)

    def _gate(self, py, node):
        """('stops' | 'skips', node to report) when this test of CUDA_HOME decides whether the GPU build
        happens, else None."""
        test, negated = self._truth_test(py, node)
        if test is None:
            return None
        holder = py.parent(test)
        if isinstance(holder, cst.Assert) and holder.test is test and not negated:
            return "stops", test  # assert CUDA_HOME is not None
        if isinstance(holder, cst.If) and holder.test is test:
            body = _statements(holder.body)
            if negated and body and _stops(body[0]):
                return "stops", test  # if CUDA_HOME is None: raise
            if not negated and body and isinstance(body[0], cst.Return) and self._raises_after(py, holder):
                return "stops", test  # if CUDA_HOME is not None: return / raise ...
            if not negated and _names_cuda_extension(holder.body):
                return "skips", test
            if negated and holder.orelse is not None and _names_cuda_extension(holder.orelse):
                return "skips", test
            return None
        if isinstance(holder, cst.IfExp) and holder.test is test:
            chosen = holder.orelse if negated else holder.body
            return ("skips", test) if _names_cuda_extension(chosen) else None
        # WITH_CUDA = torch.cuda.is_available() and CUDA_HOME is not None
        if not negated and isinstance(holder, cst.Assign) and holder.value is test and len(holder.targets) == 1 \
                and isinstance(holder.targets[0].target, cst.Name):
            var = holder.targets[0].target.value
            if self._picks_extension(py, var):
                return "skips", test
        return None

    @staticmethod
    def _truth_test(py, node):
        """(the whole test expression, whether it asks for CUDA_HOME's absence) when `node` is tested for
        truth or against None: `CUDA_HOME`, `not CUDA_HOME`, `CUDA_HOME is None`, `... and CUDA_HOME is not
        None`."""
        cur, negated = node, False
        parent = py.parent(cur)
        if isinstance(parent, cst.Comparison):
            if len(parent.comparisons) != 1 or not (isinstance(parent.comparisons[0].comparator, cst.Name)
                                                    and parent.comparisons[0].comparator.value == "None"):
                return None, False
            op = parent.comparisons[0].operator
            if isinstance(op, (cst.Is, cst.Equal)):
                negated = True
            elif not isinstance(op, (cst.IsNot, cst.NotEqual)):
                return None, False
            cur = parent
        elif isinstance(parent, cst.Arg):
            return None, False  # os.path.join(CUDA_HOME, ...): a use, not a test
        for anc in py.ancestors(cur):
            if isinstance(anc, cst.UnaryOperation) and isinstance(anc.operator, cst.Not) and anc.expression is cur:
                negated, cur = not negated, anc
                continue
            if isinstance(anc, cst.BooleanOperation):
                # `FORCE_CUDA or (... and CUDA_HOME is not None)`: without the override, still a gate. An
                # operand that names ROCm (`or ROCM_HOME is not None`) is handles_rocm's to see.
                cur = anc
                continue
            break
        return cur, negated

    @staticmethod
    def _raises_after(py, if_node) -> bool:
        block = py.parent(if_node)
        body = list(getattr(block, "body", ()))
        if if_node not in body:
            return False
        rest = body[body.index(if_node) + 1:]
        for stmt in rest:
            small = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
            for s in small:
                if _stops(s):
                    return True
                if isinstance(s, cst.Expr) and isinstance(s.value, cst.Call):
                    continue  # a message printed before the raise
                if not isinstance(s, (cst.Assign, cst.Expr)):
                    return False
        return False

    @staticmethod
    def _picks_extension(py, var: str) -> bool:
        """Does an `if VAR:` (or `X if VAR else Y`) of the file pick `CUDAExtension`?"""
        for cond in py.nodes(cst.If, cst.IfExp):
            test = cond.test
            names = [n for n in pyparse.descendants(test) if isinstance(n, cst.Name) and n.value == var]
            if not names or isinstance(test, cst.UnaryOperation):
                continue
            if _names_cuda_extension(cond.body):
                return True
        return False


def _names_cuda_extension(node) -> bool:
    return any(isinstance(n, cst.Name) and n.value == "CUDAExtension" for n in pyparse.descendants(node))
