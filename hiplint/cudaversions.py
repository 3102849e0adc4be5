"""CUDA version and architecture tests evaluated for a given toolkit: which branch AMD (where no CUDA
macro is defined), the newest NVIDIA toolkit, or CUDA 12 (whose runtime API HIP follows) would take."""
from __future__ import annotations

import re

from hiplint.preproc import _groups_of, _parse_condition

# A future NVIDIA GPU and toolkit: a branch on these macros alone that AMD (where none is defined)
# takes as this build would, AMD takes as every current NVIDIA build does. Nothing differs silently.
NEWEST_NVIDIA = {"__CUDA_ARCH__": 10 ** 6, "CUDART_VERSION": 10 ** 6, "CUDA_VERSION": 10 ** 6,
                 "__CUDACC_VER_MAJOR__": 10 ** 3, "__CUDACC_VER_MINOR__": 0, "__CUDACC_VER_BUILD__": 0}
# The CUDA release whose runtime API HIP's follows: ROCm 7.2's HIP keeps CUDA 12's signatures
# (`hipMemPrefetchAsync(p, n, device, stream)`, `hipMemAdvise(p, n, advice, device)`), where CUDA 13
# changed them (`cudaMemLocation`).
HIP_API_MODEL = {"CUDART_VERSION": 12000, "CUDA_VERSION": 12000, "__CUDACC_VER_MAJOR__": 12,
                 "__CUDACC_VER_MINOR__": 0, "__CUDACC_VER_BUILD__": 0}
VERSION_NAMES = frozenset(NEWEST_NVIDIA) - {"__CUDA_ARCH__"}

_BINARY = {"&&": lambda a, b: int(bool(a) and bool(b)), "||": lambda a, b: int(bool(a) or bool(b)),
           "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b), ">": lambda a, b: int(a > b),
           ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
           "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
           "/": lambda a, b: a // b if b else None, "%": lambda a, b: a % b if b else None}


def value(node, data: bytes, env: dict):
    """The integer a `#if` expression has with the macros `env` defines (all others undefined), or None
    when it names anything else or uses what this small evaluator does not know."""
    t = node.type
    if t == "number_literal":
        try:
            return int(data[node.start_byte:node.end_byte].decode().rstrip("uUlL"), 0)
        except ValueError:
            return None
    if t == "identifier":
        name = data[node.start_byte:node.end_byte].decode("utf-8", "replace")
        return env.get(name, 0) if name in NEWEST_NVIDIA else None
    if t == "preproc_defined":
        ids = [c for c in node.named_children if c.type == "identifier"]
        name = data[ids[0].start_byte:ids[0].end_byte].decode("utf-8", "replace") if ids else ""
        return int(name in env) if name in NEWEST_NVIDIA else None
    if t == "parenthesized_expression":
        inner = node.named_children
        return value(inner[0], data, env) if len(inner) == 1 else None
    if t == "unary_expression":
        op, arg = node.child_by_field_name("operator"), node.child_by_field_name("argument")
        v = value(arg, data, env) if arg is not None else None
        if v is None or op is None:
            return None
        return {"!": lambda x: int(not x), "-": lambda x: -x, "+": lambda x: x}.get(op.type, lambda x: None)(v)
    if t == "binary_expression":
        op = node.child_by_field_name("operator")
        fn = _BINARY.get(op.type if op is not None else "")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        a = value(left, data, env) if left is not None else None
        if op is not None and ((op.type == "&&" and a == 0) or (op.type == "||" and a not in (None, 0))):
            return int(op.type == "||")  # settled by the left side, as the preprocessor does (`0 && defined(X)`)
        b = value(right, data, env) if right is not None else None
        return None if fn is None or a is None or b is None else fn(a, b)
    return None


def as_on_cuda_12(cond, data: bytes) -> bool:
    """Does AMD, with no CUDA macro defined, decide this test as a CUDA 12.0 build does
    (`(CUDA_VERSION / 1000) >= 13`, `CUDART_VERSION >= 12080`)? Then AMD compiles the CUDA 12 code,
    whose API HIP follows."""
    on_amd, on_12 = value(cond, data, {}), value(cond, data, HIP_API_MODEL)
    return on_amd is not None and on_amd == on_12


def newer_cuda_only(data: bytes, offset: int) -> bool:
    """Is byte `offset` in a branch of CUDA version tests that neither AMD nor CUDA 12 takes (the body
    of `#if (CUDA_VERSION / 1000) >= 13`)? Only newer NVIDIA toolkits compile it."""
    for group in _groups_of(data):
        if not group[0][3] <= offset < group[-1][4]:
            continue
        if not any(start <= offset < end for _, _, _, start, end in group):
            continue
        for kind, cond, _, start, end in group:
            if kind not in ("if", "elif"):
                break
            if not any(name.encode() in cond for name in VERSION_NAMES) or b"__CUDA_ARCH" in cond:
                break
            node, snippet = _parse_condition(cond)
            if node is None:
                break
            on_amd, on_12 = value(node, snippet, {}), value(node, snippet, HIP_API_MODEL)
            if on_amd is None or on_12 is None or on_amd != on_12:
                break
            if start <= offset < end:
                if on_amd == 0:
                    return True
                break
            if on_amd:
                break  # an earlier branch is taken by both
    return False


_DIRECTIVE_LINE = re.compile(rb"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")


def compiled_text(text: bytes, env: dict) -> bytes | None:
    """The lines of `text` (a whole `#if ... #endif` chain) that a build with the macros `env` compiles,
    comments and blank space dropped; None when a condition names anything but the CUDA version and
    architecture macros."""
    from hiplint.cparse import strip_c_comments

    text = re.sub(rb"\\\r?\n", b" ", strip_c_comments(text.decode("utf-8", "replace")).encode())
    out: list[bytes] = []
    stack: list[list[bool]] = []  # per open #if: [this branch active, some branch taken, parent active]
    for line in text.splitlines():
        m = _DIRECTIVE_LINE.match(line)
        active = not stack or stack[-1][0]
        if m is None:
            if active and line.strip():
                out.append(b" ".join(line.split()))
            continue
        kind, rest = m.group(1), m.group(2).strip()
        if kind in (b"if", b"ifdef", b"ifndef", b"elif"):
            if kind == b"elif":
                if not stack:
                    return None
                _, taken, parent = stack.pop()
            else:
                taken, parent = False, active
            cond = rest if kind in (b"if", b"elif") else b"defined(" + rest + b")"
            if kind == b"ifndef":
                cond = b"!" + cond
            truth = False
            if parent and not taken:
                node, snippet = _parse_condition(cond)
                v = value(node, snippet, env) if node is not None else None
                if v is None:
                    return None
                truth = bool(v)
            stack.append([parent and not taken and truth, taken or truth, parent])
        elif kind == b"else":
            if not stack:
                return None
            _, taken, parent = stack.pop()
            stack.append([parent and not taken, True, parent])
        elif stack:
            stack.pop()
    return b"\n".join(out)


def same_code_as_cuda_12(text: bytes) -> bool:
    """Does AMD compile, from this `#if` chain, the very code a CUDA 12.0 build compiles (xgboost's
    `#if defined(__CUDACC_VER_MAJOR__)` / CUDA 11.0 workaround / `#else` the same call as CUDA 12)?"""
    on_amd, on_12 = compiled_text(text, {}), compiled_text(text, HIP_API_MODEL)
    return on_amd is not None and on_amd == on_12


def skipped_by_version_test(data: bytes, offset: int) -> bool:
    """Is byte `offset` in a branch that AMD, with no CUDA macro defined, surely skips because of a CUDA
    version test (`#if CUDART_VERSION >= 9000` beside the pre-CUDA-9 `#else`)? Tests of other macros
    (`#ifndef __HIP_PLATFORM_HCC__`, which ROCm 6 no longer defines) do not count."""
    best = None
    for group in _groups_of(data):
        if not group[0][3] <= offset < group[-1][4]:
            continue
        if any(start <= offset < end for _, _, _, start, end in group):
            if best is None or group[0][3] >= best[0][3]:
                best = group  # the innermost group holding the offset
    if best is None:
        return False
    for kind, cond, _, start, end in best:
        if kind not in ("if", "elif"):
            return False
        if not any(name.encode() in cond for name in VERSION_NAMES) or b"__CUDA_ARCH" in cond:
            return False
        node, snippet = _parse_condition(cond)
        v = value(node, snippet, {}) if node is not None else None
        if v is None:
            return False
        if start <= offset < end:
            return v == 0
        if v:
            return True  # an earlier branch is taken instead
    return False
