"""Which expressions are CUDA/HIP device-property structs."""
from __future__ import annotations

import re
from hiplint.lazy import lazy_re

PROP_TYPES = lazy_re(r"\b(cudaDeviceProp|hipDeviceProp_t|cudaDeviceProp_t)\b")


def is_device_prop(ctx, field_expr, obj) -> bool:
    """Is `obj` (the object of `obj.field` / `obj->field`) a cudaDeviceProp: declared as one in the
    function or file, or filled by cudaGetDeviceProperties?"""
    if obj is None:
        return False
    name = ctx.text(obj).lstrip("*&").strip()
    if not re.fullmatch(r"[A-Za-z_]\w*(\[[^\]]*\])?", name):
        return False
    base = re.escape(name.split("[")[0])
    scope_text = ctx.text(ctx.function_scope(field_expr))
    decl = re.compile(PROP_TYPES.pattern + r"\s*[&*]?\s*(const\s+)?[&*]?\s*" + base + r"\b")
    if decl.search(scope_text) or decl.search(ctx.source.text):
        return True
    return re.search(r"\b(cuda|hip)GetDeviceProperties\w*\s*\(\s*&?\s*" + base + r"\b", ctx.source.text) is not None
