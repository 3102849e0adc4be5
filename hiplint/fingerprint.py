"""Line-independent finding fingerprints (baselines, SARIF `fingerprints`, GitLab `fingerprint`).

A fingerprint must survive edits elsewhere in the file (a line added above moves every finding), so
it has no line number: it hashes the rule code, the reported code with whitespace squeezed out, the
text of the first reported line the same way, and the name of the enclosing function.
"""
from __future__ import annotations

import hashlib
import re

from hiplint.cparse import FunctionSpans

_SPACE = re.compile(r"\s+")
_MAX_NODE_TEXT = 512  # a whole-function finding is identified well enough by its first 512 bytes


def _squeeze(text: str) -> str:
    return _SPACE.sub("", text)


def function_name(functions: FunctionSpans, start: int, end: int, data: bytes) -> str:
    """Name of the innermost function definition around byte range [start, end) ('' at file scope)."""
    node = functions.innermost(start, max(start, end))
    if node is None:
        return ""
    decl = node.child_by_field_name("declarator")
    # Descend declarators (pointer, reference, function) to the identifier that names the function.
    while decl is not None and decl.type not in ("identifier", "field_identifier", "qualified_identifier",
                                                  "destructor_name", "operator_name", "template_function"):
        inner = decl.child_by_field_name("declarator")
        if inner is None:
            break
        decl = inner
    if decl is None:
        return node.type  # a lambda: no name, but still a different scope than the file
    return data[decl.start_byte:decl.end_byte].decode("utf-8", "replace")


def compute(code: str, node_text: str, line_text: str, function: str) -> str:
    key = "\0".join((code, _squeeze(node_text[:_MAX_NODE_TEXT]), _squeeze(line_text), function))
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:16]


def assign(findings, data: bytes, root) -> None:
    """Set `fingerprint` on each finding of one file (root: the file's tree, or None for non-C files)."""
    functions = None
    for f in findings:
        if f.fingerprint:
            continue
        if functions is None:
            functions = FunctionSpans(root)
        node_text = data[f.start_byte:min(f.end_byte, f.start_byte + _MAX_NODE_TEXT)].decode("utf-8", "replace")
        f.fingerprint = compute(f.code, node_text, f.source_line, function_name(functions, f.start_byte, f.end_byte, data))


def unique_ids(findings, paths=None) -> list[str]:
    """Per finding, an id unique within the report: path + fingerprint + occurrence among equal ones.

    GitLab de-duplicates issues by fingerprint, and SARIF consumers treat equal fingerprints as the
    same result; two identical lines in one function must stay two results.
    """
    seen: dict[tuple[str, str], int] = {}
    out = []
    for i, f in enumerate(findings):
        path = paths[i] if paths is not None else f.path
        key = (path.replace("\\", "/"), f.fingerprint or f"{f.code}:{f.line}:{f.column}")
        n = seen.get(key, 0)
        seen[key] = n + 1
        out.append(hashlib.sha256(f"{key[0]}\0{key[1]}\0{n}".encode()).hexdigest()[:32])
    return out
