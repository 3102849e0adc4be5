"""Is this Python code already ROCm-aware? Shared by the PY rules.

Code counts as handling ROCm when a condition around it (an `if`/`elif`/`while`/conditional
expression test, or a boolean operation it is part of) mentions a HIP/ROCm marker, when an earlier
statement of the same block leaves early on ROCm (`if torch.version.hip: return ...`), or when it
sits in a function whose name says it is the HIP/ROCm variant (`def _flags_rocm():`) or whose
decorators test for it (`@pytest.mark.skipif(cupy.cuda.runtime.is_hip, ...)`). A variable every
assignment of which is such a marker counts as one (`use_cuda = torch.version.cuda and ...`).
"""
from __future__ import annotations

import re
from functools import cache

from hiplint.lazy import libcst as cst

from hiplint.pyparse import PyModule, assigned_values, dotted, scope_of, string_value
from hiplint.rules.build._vendor import is_hip_word

# Names that mean "this is the AMD path" when they appear in a condition.
HIP_DOTTED = frozenset({"torch.version.hip", "torch.utils.cpp_extension.IS_HIP_EXTENSION",
                        "torch.utils.cpp_extension.ROCM_HOME"})
# A condition on this means "CUDA build only" (it is None on ROCm builds).
# None on ROCm builds of PyTorch: `torch.version.cuda`, and cpp_extension's CUDA_HOME (found only when
# torch.version.cuda is set: torch/utils/cpp_extension.py, `CUDA_HOME = _find_cuda_home() if (... and
# torch.version.cuda) else None`).
CUDA_BUILD_DOTTED = frozenset({"torch.version.cuda", "torch.utils.cpp_extension.CUDA_HOME"})


def mentions_hip(py: PyModule, node: cst.CSTNode, also=frozenset()) -> bool:
    """Whether an expression mentions ROCm: torch.version.hip, IS_HIP_EXTENSION, is_rocm(), "hip", "gfx942"...

    Remembered per node: `handles_rocm` asks about the same `if` tests for every node below them
    (a 100 KB test file asked 6,000 times, 2.5 s of visits)."""
    memo = py.__dict__.setdefault("_mentions_hip", {})
    key = (id(node), also)
    if key not in memo:
        memo[key] = (node, _mentions_hip(py, node, also))  # the node is kept: its id stays its own
    return memo[key][1]


def _mentions_hip(py: PyModule, node: cst.CSTNode, also) -> bool:
    found = False

    class V(cst.CSTVisitor):
        def visit_Attribute(self, n):
            nonlocal found
            if py.names(n) & (HIP_DOTTED | also) or is_hip_word(n.attr.value):
                found = True
            return not found

        def visit_Name(self, n):
            nonlocal found
            if is_hip_word(n.value) or py.names(n) & (HIP_DOTTED | also) or _alias_mentions(py, n, also) \
                    or _predicate_mentions(py, n, also):
                found = True
            return False

        def visit_SimpleString(self, n):
            nonlocal found
            v = string_value(n)
            if v is not None and (v.lower() in ("hip", "rocm", "amd") or v.lower().startswith("gfx")):
                found = True
            return False

    node.visit(V())
    return found


def _alias_mentions(py: PyModule, name: cst.Name, also) -> bool:
    """A variable every assignment of which (in its function or at module level) mentions ROCm (or,
    with `also`, the CUDA build): `use_cuda = torch.version.cuda and CUDA_HOME is not None`, then
    `if use_cuda:`."""
    memo = py.__dict__.setdefault("_alias_mentions", {})
    key = (id(scope_of(py, name)), name.value, also)
    if key not in memo:
        memo[key] = False  # while deciding: a name assigned from itself says nothing
        values = list(assigned_values(py, name))
        memo[key] = bool(values) and all(mentions_hip(py, v, also) for v in values)
    return memo[key]


def _predicate_mentions(py: PyModule, name: cst.Name, also) -> bool:
    """A module-level function of the file, called here, every `return` of which mentions ROCm (or, with
    `also`, the CUDA build): `def _is_cuda(): return torch.version.cuda is not None`, then
    `if _is_cuda():` (vLLM's setup.py)."""
    parent = py.parent(name)
    if not (isinstance(parent, cst.Call) and parent.func is name):
        return False
    memo = py.__dict__.setdefault("_predicate_mentions", {})
    key = (name.value, also)
    if key not in memo:
        memo[key] = False  # while deciding: a recursive predicate says nothing
        defs = [d for d in py.module.body if isinstance(d, cst.FunctionDef) and d.name.value == name.value]
        returns = [r.value for d in defs for r in _returns(d) if r.value is not None]
        memo[key] = len(defs) == 1 and bool(returns) and all(mentions_hip(py, v, also) for v in returns)
    return memo[key]


def _returns(fn: cst.FunctionDef) -> list:
    found = []

    class V(cst.CSTVisitor):
        def visit_Return(self, n):
            found.append(n)

        def visit_FunctionDef(self, n):
            return n is fn  # not the returns of nested functions

        def visit_Lambda(self, n):
            return False

    fn.visit(V())
    return found


@cache
def _tested():
    return (cst.If, cst.While, cst.IfExp)


@cache
def _exits():
    return (cst.Return, cst.Raise, cst.Continue, cst.Break)


def _leaves_early(block) -> bool:
    body = getattr(block, "body", ())
    if isinstance(block, cst.SimpleStatementSuite):
        stmts = body
    elif body and isinstance(body[-1], cst.SimpleStatementLine):
        stmts = body[-1].body
    else:
        return False
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, _exits()):
        return True
    # sys.exit(...) / exit(...)
    return isinstance(last, cst.Expr) and isinstance(last.value, cst.Call) and \
        (dotted(last.value.func) or "") in ("sys.exit", "exit", "quit", "os._exit", "pytest.skip")


def handles_rocm(py: PyModule, node: cst.CSTNode, cuda_build_guard: bool = True) -> bool:
    """Whether `node` is inside code that already distinguishes ROCm from CUDA.

    With `cuda_build_guard`, a condition on `torch.version.cuda` (None on ROCm) counts too: code under
    `if torch.version.cuda:` only runs on CUDA builds.
    """
    also = CUDA_BUILD_DOTTED if cuda_build_guard else frozenset()
    child = node
    for anc in py.ancestors(node):
        # The guard is the part that does not contain the node: the test of an `if` around it, the
        # other operand of an `and`/`or` it belongs to.
        if isinstance(anc, _tested()) and anc.test is not child and (
                mentions_hip(py, anc.test, also) or tests_cuda_switch(py, anc.test)):
            return True
        if isinstance(anc, cst.BooleanOperation):
            other = anc.right if anc.left is child else anc.left
            if mentions_hip(py, other, also):
                return True
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef)) and (
                is_hip_word(anc.name.value) or any(mentions_hip(py, d.decorator, also) for d in anc.decorators)):
            return True  # `def _flags_rocm():`, `@pytest.mark.skipif(runtime.is_hip, ...)`
        # An earlier statement of the same block that leaves on ROCm guards everything after it. (Not
        # `if not torch.version.cuda: raise`: that exit is itself the bug PY001 reports.)
        body = getattr(anc, "body", None)
        if isinstance(body, (list, tuple)) and child in body:
            for stmt in body[:body.index(child)]:
                if isinstance(stmt, cst.If) and mentions_hip(py, stmt.test) and _leaves_early(stmt.body):
                    return True
        child = anc
    return False


def tests_cuda_switch(py: PyModule, test: cst.CSTNode) -> bool:
    """`if env['USE_CUDA'] == '1':`, `if args.with_cuda:`: a test that a CUDA build switch is on, in a file
    that also names the switch's HIP twin (`USE_HIP`): the project picks one backend per run, and this
    branch is the NVIDIA one. Not a negated test (`!= '1'`, `not`), which a ROCm run takes."""
    from hiplint.amdbuild import _is_build_switch, _twins
    from hiplint.preproc import is_cuda_build_macro

    code = py.code(test)
    source = py.code(py.module)
    if re.search(r"\bor\b", code):
        return False  # an alternative may be the HIP build's
    if _backend_value_test(code, source):
        return True
    for conjunct in re.split(r"\band\b", code):
        if re.search(r"!=|^\s*\(?\s*not\b|==\s*['\"]?(?:0|OFF|off|False|false)\b", conjunct):
            continue  # negated: a ROCm run takes it
        # A switch of two words or more (`USE_CUDA`, not `device == "cuda"`, which ROCm's PyTorch also
        # takes), whose twin the file writes as a word of its own (`USE_HIP`, not inside `relationship`).
        for word in set(re.findall(r"[A-Za-z_]\w*", conjunct)):
            if "_" in word.strip("_") and _is_build_switch(word.upper()) and is_cuda_build_macro(word.upper()) and any(
                    re.search(r"(?<![\w])" + re.escape(t) + r"(?![\w])", source, re.I) for t in _twins(word)):
                return True
    return False


_CUDA_VALUE_TEST = re.compile(r"""^\s*\(?\s*([A-Za-z_][\w.]*)\s*==\s*['"](?:cuda|CUDA|nvidia|NVIDIA)['"]\s*\)?\s*$""")


def _backend_value_test(code: str, source: str) -> bool:
    """`if SYSTEM == "cuda":` (one conjunct of the test) in a file that also tests the same name for
    "rocm" or "hip" (TGI's `SYSTEM`, set to "rocm" when `torch.version.hip` is set): a backend variable
    the project sets per vendor, and this is its NVIDIA branch. A torch device string
    (`device.type == "cuda"`) is never compared with "rocm": ROCm's PyTorch calls its devices "cuda"."""
    for conjunct in re.split(r"\band\b", code):
        m = _CUDA_VALUE_TEST.match(conjunct)
        if m and re.search(r"(?<![\w.])" + re.escape(m.group(1)) + r"""\s*(?:==|!=)\s*['"](?:rocm|ROCM|hip|HIP|amd|AMD)['"]""",
                           source):
            return True
    return False


def file_mentions(py: PyModule, needles) -> bool:
    """Whether any identifier, attribute or string literal of the file contains one of `needles`."""
    low = [n.lower() for n in needles]
    for n in py.nodes(cst.Name):
        if any(x in n.value.lower() for x in low):
            return True
    for n in py.nodes(cst.SimpleString):
        v = string_value(n)
        if v and any(x in v.lower() for x in low):
            return True
    return False


def caught_in_try(py: PyModule, node: cst.CSTNode, exceptions: frozenset[str]) -> bool:
    """Whether `node` runs in the body of a `try` (in the same function) whose handlers catch one
    of `exceptions` (by name, `except (A, B)`, a bare `except`)."""
    child = node
    for anc in py.ancestors(node):
        if isinstance(anc, cst.Try) and anc.body is child:
            for handler in anc.handlers:
                kinds = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
                names = {(dotted(k.value if isinstance(k, cst.Element) else k) or "").rsplit(".", 1)[-1]
                         for k in kinds if k is not None}
                if handler.type is None or names & exceptions:
                    return True
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        child = anc
    return False
