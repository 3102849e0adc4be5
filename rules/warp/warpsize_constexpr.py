import os
import re

from hiplint import CudaRule, Impact, Severity
from hiplint.cparse import iter_nodes
from hiplint.lazy import lazy_re

CONSTANT_CONTEXTS = frozenset({"template_argument_list", "static_assert_declaration", "case_statement",
                               "enumerator", "array_declarator", "bitfield_clause", "template_parameter_list",
                               "alignas_qualifier"})


class WarpSizeNotConstexpr(CudaRule):
    """`warpSize` used where a compile-time constant is needed.

    ## What it does
    Finds `warpSize` in template arguments, array bounds, `static_assert`, `constexpr` initialisers,
    `case` labels and enumerator values, and any use of the deprecated `__AMDGCN_WAVEFRONT_SIZE`
    macros; and the same uses of a macro the project defines as `warpSize` where AMD compiles it
    (`#define WARP_SIZE warpSize` in the ROCm branch of a compat header: once per file, its other
    uses related). A template or function parameter named `warpSize` (`template <int warpSize>`), or a
    variable the code declares under that name (`constexpr int warpSize = 64;`), hides HIP's and is
    not reported; nor is a member (`Config::warpSize`) or a variable template of the code's own
    (`traits::warpSize<Kernel>`: HIP's `warpSize` is no template).

    ## Why it breaks on AMD
    Up to ROCm 6.x `warpSize` was `static constexpr int warpSize = __AMDGCN_WAVEFRONT_SIZE`. HIP 7.0
    made it a run-time value (announced in 6.4.1): such code stops compiling ("must be initialized by
    a constant expression"). It was never constant in CUDA either. The wavefront-size macros are
    deprecated and have no value in the host pass; ROCm 7.2's clang (22) no longer defines them in the
    device pass either (`#if __AMDGCN_WAVEFRONT_SIZE == 64` reads 0 there, `static_assert` on it does not
    compile). Compile error from ROCm 7.0 on every target.

    ## Example
    ```cuda
    __global__ void k(float* out) {
        __shared__ float partial[1024 / warpSize];
        out[0] = partial[0];
    }
    ```

    ## Use instead
    ```cuda
    template <int WarpSize>
    __global__ void k(float* out) {
        __shared__ float partial[1024 / WarpSize];
        out[0] = partial[0];
    }
    ```
    and choose `WarpSize` on the host from `hipDeviceAttributeWarpSize`; or size for the largest
    wave (64) when that is enough.

    ## References
    - HIP 7.0 changelog, "warpSize change" (no longer constexpr): https://github.com/ROCm/clr/blob/develop/CHANGELOG.md
    - HIP C++ language extensions, warpSize: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html#warpsize
    - LLVM, `__AMDGCN_WAVEFRONT_SIZE(__)` deprecated: https://github.com/llvm/llvm-project/pull/112849 (announced in the ROCm 6.3.2 release notes)
    """

    code = "WRP009"
    name = "warpsize-not-constexpr"
    summary = "warpSize is not a compile-time constant from ROCm 7.0"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    report_in_hip_branches = True
    checklist = "Dispatch on the host to a template<int WarpSize> kernel (hipDeviceAttributeWarpSize), or size for 64."
    query = """
    ([(identifier) (type_identifier)] @w (#any-of? @w "warpSize" "__AMDGCN_WAVEFRONT_SIZE" "__AMDGCN_WAVEFRONT_SIZE__"))
    """

    def check(self, ctx, captures):
        node = captures["w"][0]
        name = ctx.text(node)
        if name != "warpSize":
            host = "" if _device_pass_only(ctx, node) else " and undefined in the host pass"
            ctx.report(node, f"`{name}` is deprecated and no longer defined by ROCm 7.2's clang (an undeclared "
                             f"identifier in the device pass too){host}; use warpSize at run time or a template parameter")
            return
        if _declared_here(ctx, node):
            return  # a template or function parameter named warpSize: a constant of the code's own
        if _qualified_member(node) or _class_member(ctx, node):
            return  # `GpuConfig::warpSize`, or a class's own `static constexpr int warpSize` (SPH-EXA)
        if node.parent is not None and node.parent.type in ("template_function", "template_type") \
                and node.parent.child_by_field_name("name") == node:
            return  # `trait::warpSize<Kernel, Acc>`: a variable template of the code's own (alpaka); HIP's is no template
        message = _constant_context(ctx, node, "`warpSize`")
        if message and not _names_own_variable(ctx, node):
            ctx.report(node, message)

    def check_unit(self, ctx):
        """A macro the project defines as `warpSize` where AMD compiles it (`#define WARP_SIZE warpSize` in
        the `USE_ROCM` branch of a compat header), used where a constant is needed: the same error."""
        if not ctx.units or ctx.unit is not ctx.units[0]:
            return
        aliases = _warpsize_aliases(ctx)
        if not aliases:
            return
        data = ctx.unit.data
        for name, where in aliases.items():
            for m in re.finditer(rb"(?<![\w#])" + re.escape(name.encode()) + rb"(?!\w)", data):
                node = ctx.unit.root.descendant_for_byte_range(m.start(), m.end())
                if node is None or node.type not in ("identifier", "type_identifier") or ctx.text(node) != name:
                    continue
                message = _constant_context(ctx, node, f"`{name}` (`warpSize` on AMD, {where})")
                if message:
                    ctx.report(node, message, group=f"alias:{name}")  # one definition to change: once per file


_WARPSIZE_ALIAS = lazy_re(rb"(?m)^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+\(?[ \t]*warpSize[ \t]*\)?[ \t]*"
                          rb"(?://[^\n]*|/\*[^\n]*)?$")


def _warpsize_aliases(ctx) -> dict:
    """{macro: "file:line"} for `#define NAME warpSize` in the file or a project header it includes, where
    the AMD compile reads it (not in a branch AMD never takes)."""
    from hiplint.headers import project_headers
    from hiplint.preproc import HIP, _Eval, excluded_when

    found = {}
    own = ctx.source.data
    sources = [(ctx.path, own)] if b"warpSize" in own else []
    sources += [(p, d) for p, d in project_headers(ctx) if b"warpSize" in d]
    for path, data in sources:
        ev = None
        for m in _WARPSIZE_ALIAS.finditer(data):
            if ev is None:
                ev = _Eval(data, frozenset(ctx.hip_macros))
            if excluded_when(m.start(), data, lambda name: ev.defined(name, HIP)):
                continue
            name = m.group(1).decode()
            if name != "warpSize":
                line = data.count(b"\n", 0, m.start()) + 1
                found.setdefault(name, f"{os.path.basename(path)}:{line}")
    return found


def _constant_context(ctx, node, what: str) -> str | None:
    """The message for `node` (warpSize, or a macro for it) where C++ needs a constant, else None."""
    n = node.parent
    while n is not None and n.type not in ("compound_statement", "translation_unit", "function_definition"):
        if n.type in CONSTANT_CONTEXTS:
            if n.type == "array_declarator" and ctx.enclosing(n, {"parameter_declaration"}) is not None:
                return None
            return f"{what} needs to be a compile-time constant here; it is a run-time value from ROCm 7.0"
        if n.type == "declaration" and any(c.type == "type_qualifier" and ctx.text(c) == "constexpr" for c in n.children):
            return f"`constexpr` initialised from {what}: not a constant from ROCm 7.0"
        n = n.parent
    return None


PARAMETER_KINDS = frozenset({"parameter_declaration", "optional_parameter_declaration"})


def _declared_here(ctx, node) -> bool:
    """Does `warpSize` here name a parameter of an enclosing template or function (`template <int warpSize>`,
    AMReX's reductions), which hides HIP's variable?"""
    for anc in _ancestors(node):
        if anc.type == "template_declaration":
            params = anc.child_by_field_name("parameters")
        elif anc.type == "function_definition":
            declarator = anc.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "function_declarator":
                declarator = declarator.child_by_field_name("declarator")
            params = declarator.child_by_field_name("parameters") if declarator is not None else None
        else:
            continue
        for param in params.named_children if params is not None else ():
            name = param.child_by_field_name("declarator") if param.type in PARAMETER_KINDS else None
            if name is not None and name.type == "identifier" and ctx.text(name) == "warpSize":
                return True
    return False


SCOPES = frozenset({"compound_statement", "translation_unit", "declaration_list"})


def _qualified_member(node) -> bool:
    """`Config::warpSize`: a name of the scope it is qualified with, not HIP's variable (`::warpSize` is)."""
    parent = node.parent
    return parent is not None and parent.type == "qualified_identifier" and \
        parent.child_by_field_name("name") == node and parent.child_by_field_name("scope") is not None


def _class_member(ctx, node) -> bool:
    """A `warpSize` inside a class or struct that declares a member of that name (`static constexpr int
    warpSize = 64;`): the member hides HIP's variable in the whole class body, before or after it."""
    for anc in _ancestors(node):
        if anc.type != "field_declaration_list":
            continue
        for decl in iter_nodes(anc, {"field_declaration"}):
            if next((a for a in _ancestors(decl) if a.type == "field_declaration_list"), None) != anc:
                continue
            for d in decl.children_by_field_name("declarator"):
                if d.type in ("field_identifier", "identifier") and ctx.text(d) == "warpSize":
                    return True
    return False


def _names_own_variable(ctx, node) -> bool:
    """Is this `warpSize` a variable of the code's own: the name being declared (`constexpr int
    warpSize = 64;`), or a use after such a declaration in an enclosing scope? From ROCm 7.0 HIP's
    `warpSize` is an object, not a macro, so a declaration may hide it (OpenMM's HIP kernels do)."""
    parent = node.parent
    if parent is not None and parent.type in ("init_declarator", "declaration") and \
            parent.child_by_field_name("declarator") == node:
        return True
    for scope in _ancestors(node):
        if scope.type not in SCOPES:
            continue
        for decl in iter_nodes(scope, {"declaration"}):
            if decl.start_byte >= node.start_byte:
                break
            if _scope_of(decl) == scope and any(_declares_warp_size(ctx, d) for d in decl.children_by_field_name("declarator")):
                return True
    return False


def _scope_of(node):
    return next((a for a in _ancestors(node) if a.type in SCOPES), None)


def _declares_warp_size(ctx, declarator) -> bool:
    if declarator.type == "init_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator is not None and declarator.type == "identifier" and ctx.text(declarator) == "warpSize"


def _ancestors(node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


_DEVICE_PASS_TEST = lazy_re(r"(!\s*)?\bdefined\s*\(?\s*__HIP_DEVICE_COMPILE__\b")


def _device_pass_only(ctx, node) -> bool:
    """Is `node` in the body of an `#if defined(__HIP_DEVICE_COMPILE__) ...` (or `#ifdef`) branch,
    which the host pass never reads?"""
    child, n = node, node.parent
    while n is not None:
        if n.type in ("preproc_if", "preproc_elif", "preproc_ifdef") and child != n.child_by_field_name("alternative"):
            cond = n.child_by_field_name("condition") or n.child_by_field_name("name")
            if cond is not None and child != cond:
                text = ctx.text(cond)
                if n.type == "preproc_ifdef":
                    if text == "__HIP_DEVICE_COMPILE__" and ctx.text(n.child(0)) == "#ifdef":
                        return True
                elif "||" not in text and any(m.group(1) is None for m in _DEVICE_PASS_TEST.finditer(text)):
                    return True
        child, n = n, n.parent
    return False

