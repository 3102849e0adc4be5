"""Shared analysis for the MEM rules: constant integer expressions, type sizes, LDS limits per target."""
from __future__ import annotations

import ast
import re
from collections import ChainMap

from hiplint.cparse import iter_nodes
from hiplint.rules.libs._scan import load_table as _load

from pathlib import Path
from hiplint.lazy import lazy_re

_HERE = str(Path(__file__).resolve().parent)


def table() -> dict:
    return _load("memory.toml", _HERE)


def lds_limit(arch: str) -> int:
    lds = table()["lds"]
    return int(lds.get(arch, lds["default"]))


def exceeded_targets(settings, nbytes: int) -> list[str]:
    """The configured targets whose per-workgroup LDS is smaller than `nbytes`."""
    return [a for a in settings.targets if nbytes > lds_limit(a)]


def kib(n: int) -> str:
    return f"{n / 1024:g} KiB"


def limits_text(targets: list[str]) -> str:
    """'64 KiB on gfx90a, gfx942' grouped by limit."""
    groups: dict[int, list[str]] = {}
    for a in targets:
        groups.setdefault(lds_limit(a), []).append(a)
    return "; ".join(f"{kib(limit)} on {', '.join(archs)}" for limit, archs in sorted(groups.items()))


def type_size(type_text: str) -> int | None:
    t = " ".join(type_text.replace("const ", "").replace("volatile ", "").split())
    sizes = table()["sizeof"]
    return sizes.get(t)


# Constant evaluation ------------------------------------------------------------------------------
_INT_LIT = lazy_re(r"\b(0[xX][0-9a-fA-F']+|\d[\d']*)([uUlL]*)\b")
_SIZEOF = lazy_re(r"\bsizeof\s*\(\s*([A-Za-z_][\w ]*?)\s*\)")
_IDENT = lazy_re(r"\b[A-Za-z_]\w*\b")
_CAST = lazy_re(r"\(\s*(?:unsigned|signed|int|long|size_t|unsigned\s+int|unsigned\s+long|int64_t|uint32_t|uint64_t)\s*\)")
# Starts with the literal `const` so the regex engine can skip ahead to it (a leading `\b(?:static\s+)?`
# made it try every position: 26x slower); the word boundary before it is checked by hand.
_CONST_DECL = lazy_re(r"const(?:expr)?\s+(?:static\s+)?(?:unsigned\s+|signed\s+)?"
                         r"(?:int|long\s+long|long|short|size_t|unsigned|int32_t|uint32_t|int64_t|uint64_t|auto)\s+"
                         r"([A-Za-z_]\w*)\s*=\s*([^;{}]+);")


def file_constants(ctx) -> dict[str, str]:
    """Object-like macros and const/constexpr integer declarations of the file: name -> expression text."""
    cached = ctx.cache.get("mem_constants")
    if cached is not None:
        return cached
    env: dict[str, str] = {}
    unit = ctx.units[0]
    for node in iter_nodes(unit.root, {"preproc_def"}):
        name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if name is not None and value is not None:
            env.setdefault(unit.text(name), unit.text(value).strip())
    text = ctx.source.text
    for m in _CONST_DECL.finditer(text):
        if m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_"):
            continue  # `xconst int`: not the keyword
        env.setdefault(m.group(1), m.group(2).strip())
    ctx.cache["mem_constants"] = env
    return env


def local_constants(ctx, scope) -> dict[str, str]:
    """Locals of `scope` initialised once and never assigned again: name -> initializer text."""
    key = ("mem_locals", id(ctx.unit), scope.id)
    cached = ctx.cache.get(key)
    if cached is not None:
        return cached
    inits: dict[str, str] = {}
    assigned: set[str] = set()
    for node in iter_nodes(scope, {"init_declarator", "assignment_expression", "update_expression"}):
        if node.type == "init_declarator":
            d, v = node.child_by_field_name("declarator"), node.child_by_field_name("value")
            if d is not None and v is not None and d.type == "identifier":
                name = ctx.text(d)
                if name in inits:
                    assigned.add(name)
                inits[name] = ctx.text(v)
        else:
            target = node.child_by_field_name("left") or node.child_by_field_name("argument")
            if target is not None and target.type == "identifier":
                assigned.add(ctx.text(target))
    out = {k: v for k, v in inits.items() if k not in assigned}
    ctx.cache[key] = out
    return out


def eval_int(text: str, env: dict[str, str], depth: int = 0) -> int | None:
    """The value of a C integer constant expression, or None if it is not one hiplint can evaluate."""
    if depth > 8:
        return None
    text = _CAST.sub("", text)

    def sizeof(m):
        size = type_size(m.group(1))
        return str(size) if size is not None else "__unknown__"

    text = _SIZEOF.sub(sizeof, text)
    text = _INT_LIT.sub(lambda m: str(int(m.group(1).replace("'", ""), 0)), text)

    def ident(m):
        name = m.group(0)
        if name in env:
            value = eval_int(env[name], env, depth + 1)
            return str(value) if value is not None else "__unknown__"
        return "__unknown__"

    text = _IDENT.sub(ident, text)
    if "__unknown__" in text:
        return None
    text = text.replace("/", "//")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return None
    return _eval_ast(tree.body)


_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.FloorDiv: lambda a, b: a // b if b else None, ast.Mod: lambda a, b: a % b if b else None,
        ast.LShift: lambda a, b: a << b if 0 <= b < 64 else None, ast.RShift: lambda a, b: a >> b if 0 <= b < 64 else None}


def _eval_ast(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _eval_ast(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        a, b = _eval_ast(node.left), _eval_ast(node.right)
        if a is None or b is None:
            return None
        return _OPS[type(node.op)](a, b)
    return None


def const_value(ctx, node, scope=None) -> int | None:
    text = ctx.text(node)
    if text.isascii() and text.isdigit() and (text[0] != "0" or text == "0"):
        return int(text)  # the common case, `[32]`, needs no evaluation (not octal `010`)
    env = file_constants(ctx)
    if scope is not None:
        env = ChainMap(local_constants(ctx, scope), env)  # locals shadow the file's constants
    return eval_int(text, env)


def call_name(ctx, call) -> str:
    fn = call.child_by_field_name("function")
    if fn is None:
        return ""
    if fn.type == "template_function":
        fn = fn.child_by_field_name("name")
    return ctx.text(fn) if fn is not None else ""


def call_args(call) -> list:
    args = call.child_by_field_name("arguments")
    return [a for a in args.named_children if a.type != "comment"] if args is not None else []
