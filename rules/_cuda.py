"""Shared analysis for the SYN, NV and ARC rules: function qualifiers, names a file defines itself,
which NVIDIA-only names are called where, and what an inline-asm template holds."""
from __future__ import annotations

import re

from hiplint.cparse import iter_nodes
from hiplint.headers import project_defines
from hiplint.lazy import lazy_re

TEMPLATE_WRAPPERS = ("template_function", "template_type", "template_method")
FUNCTION_QUALIFIERS = frozenset({"__global__", "__device__", "__host__"})


def qualifiers(fn) -> set[str]:
    """`__global__`, `__device__`, `__host__` written on a function definition."""
    if fn is None or fn.type != "function_definition":
        return set()
    return {c.type for c in fn.children if c.type in FUNCTION_QUALIFIERS}


def is_device_only(fn) -> bool:
    """A kernel or a `__device__` function that is not also `__host__`: its body runs only on the GPU."""
    q = qualifiers(fn)
    return "__global__" in q or ("__device__" in q and "__host__" not in q)


def device_function(ctx, node):
    """The device-only function around `node`, or None. Macro bodies have no qualifiers: None."""
    fn = ctx.enclosing(node, ("function_definition",))
    while fn is not None:
        if is_device_only(fn):
            return fn
        outer = ctx.enclosing(fn, ("function_definition", "field_declaration_list"))
        if outer is not None and outer.type == "function_definition":
            # C++ has no nested functions: the parser took a macro call for a definition and ran on
            # into what follows (a host function after a kernel), so the outer body is not ours.
            return None
        fn = ctx.enclosing(outer, ("function_definition",)) if outer is not None else None
    return None


def file_defined_names(ctx) -> set[str]:
    """Functions and macros the file defines or declares itself: a user's shim named `__nanosleep`
    or `__dp4a` is the user's code, not NVIDIA's intrinsic."""
    key = "cuda_defined_names"
    names = ctx.cache.get(key)
    if names is None:
        names = set()
        unit = ctx.units[0]
        for node in iter_nodes(unit.root, {"function_declarator", "preproc_def", "preproc_function_def"}):
            target = node.child_by_field_name("declarator") if node.type == "function_declarator" else \
                node.child_by_field_name("name")
            if target is not None and target.type in ("identifier", "field_identifier"):
                names.add(unit.text(target))
        ctx.cache[key] = names
    return names


def call_name(ctx, call) -> str:
    """The called name of a call_expression without namespace or template arguments ('' if none)."""
    fn = call.child_by_field_name("function")
    while fn is not None and fn.type in ("qualified_identifier", "template_function"):
        fn = fn.child_by_field_name("name")
    if fn is None or fn.type not in ("identifier", "field_identifier"):
        return ""
    return ctx.text(fn)


def namespace_of(ctx, node) -> str:
    """For `a::b::name`, 'a::b'; '' when the name is unqualified."""
    if node.parent is not None and node.parent.type in TEMPLATE_WRAPPERS:
        node = node.parent
    parent = node.parent
    parts = []
    while parent is not None and parent.type == "qualified_identifier":
        scope = parent.child_by_field_name("scope")
        if scope is not None:
            parts.insert(0, ctx.text(scope))
        parent = parent.parent
    return "::".join(parts)


def file_text_has(ctx, pattern: re.Pattern) -> bool:
    return pattern.search(ctx.source.text) is not None


def written_for_amd(ctx) -> bool:
    """Does the file call AMD compiler builtins (`__builtin_amdgcn_*`) outside `#if` branches for one
    platform? nvcc cannot compile it: it is HIP code written for AMD, not CUDA code to port."""
    key = "written_for_amd"
    if key not in ctx.cache:
        found = False
        if b"__builtin_amdgcn_" in ctx.source.data:
            unit = ctx.units[0]
            for call in iter_nodes(unit.root, {"call_expression"}):
                fn = call.child_by_field_name("function")
                if fn is not None and unit.text(fn).startswith("__builtin_amdgcn_") \
                        and ctx.platform_kind(call.start_byte) is None:
                    found = True
                    break
        ctx.cache[key] = found
    return ctx.cache[key]


# Inline assembly ---------------------------------------------------------------------------------

# PTX that no AMD target accepts: special registers, declarations and instruction mnemonics.
PTX_MARKERS = lazy_re(
    r"%(laneid|warpid|nwarpid|smid|nsmid|gridid|clock64|clock|globaltimer\w*|lanemask_\w+|tid|ntid|ctaid|nctaid|"
    r"cluster\w*|dynamic_smem_size|total_smem_size|pm\d|envreg\d+)\b"
    r"|(^|[\s;{])\.(reg|shared|global|local|const|param)\s+\.(align|pred|v[248]|[bsuf]\d+|bf16\w*|f16x2|e\dm\d)\b"
    r"|(^|[\s;{])\.(reg|pred)\b"
    r"|(^|[\s;{}])@!?%?\w+[ \t]+[a-z]"  # a guard and its instruction (`@p bra L;`), not ARM's `@ comment`
    r"|(^|[\s;{}])(?P<op>mov|ld|st|cvt|cvta|prmt|bfe|bfi|shf|lop3|vote|shfl|atom|red|fence|membar|ldmatrix|stmatrix|"
    r"mma|wmma|wgmma|cp|mbarrier|bar|barrier|trap|brkpt|exit|nanosleep|setp|selp|add|sub|mul|mad|fma|min|max|"
    r"and|or|xor|not|shl|shr|brev|popc|clz|bfind|dp4a|dp2a|tex|suld|sust|isspacep|griddepcontrol|elect|"
    r"setmaxnreg|tcgen05|activemask|match|redux|prefetch|discard|applypriority|createpolicy|tensormap|"
    r"multimem|getctarank|mapa|st\.async|red\.async|ex2|lg2|rcp|rsqrt|sqrt|sin|cos|tanh|div|abs|neg|copysign|testp)"
    r"(?P<quals>\.[A-Za-z0-9_.:]+)"
    r"|(^|[\s;{}])(trap|brkpt|exit|pmevent|ret)\s*;",
    re.M,
)
# An instruction is PTX only if one of its qualifiers is: a type (`.u32`, `.f16x2`), a state space
# (`.global`, `.shared::cta`), a scope, ordering, rounding or shape. Other assemblers use dotted
# mnemonics too (RISC-V `fence.i`, `add.uw`; Esperanto's `mov.m.x m0, x0, 0xFF`).
PTX_QUALIFIER = lazy_re(
    r"(?:[bsuf](?:8|16|32|64|128)(?:x[24])?|bf16(?:x2)?|tf32|e[45]m[23](?:x2)?|pred|v[248]|"
    r"global|shared|local|const|param|tex|surf|generic|sync|aligned|async|arrive|cta|gpu|sys|cluster|"
    r"relaxed|acquire|release|acq_rel|sc|weak|volatile|mmio|nc|ca|cg|cs|lu|cv|wb|wt|rni?|rzi?|rmi?|rpi?|ftz|sat|"
    r"approx|full|lo|hi|wide|cc|ballot|any|all|uni|eq|up|down|bfly|idx|row|col|trans|x[124]|"
    r"m\d+n\d+(?:k\d+)?|add|min|max|inc|dec|exch|cas|and|or|xor|popc|L[12]|proxy|sc|to|bulk|b1|"
    r"lt|le|gt|ge|ne|ltu|leu|gtu|geu|neu|equ|num|nan|f32x2|sync|red|wait|expect_tx|complete_tx)(?:::\w+)*$"
)


# Mnemonics no other assembler has: any qualifier will do.
PTX_ONLY_OPS = frozenset({"prmt", "lop3", "shfl", "vote", "ldmatrix", "stmatrix", "wmma", "wgmma", "mbarrier",
                          "cvta", "griddepcontrol", "setmaxnreg", "tcgen05", "redux", "createpolicy",
                          "applypriority", "tensormap", "multimem", "getctarank", "mapa", "isspacep", "bfind",
                          "dp4a", "dp2a", "suld", "sust", "elect", "activemask", "nanosleep", "membar", "cp"})


def _ptx_instruction(m) -> bool:
    quals = m.group("quals")
    if quals is None or m.group("op") in PTX_ONLY_OPS:
        return True  # a special register, a declaration, a guard, `ret;` or a PTX-only mnemonic
    return any(PTX_QUALIFIER.match(q) for q in quals.strip(".").split(".") if q)

# What a PTX template is about, most specific first; each category has one rule that reports it.
PTX_CATEGORIES = (
    # `bar.warp.sync` is `__syncwarp`'s PTX, which HIP has: general PTX (NV001), not a named barrier.
    ("barrier", re.compile(r"(^|[\s;{}])(bar|barrier)\.(sync|arrive|red|cta)\b|(^|[\s;{}])bar\.sync\b"
                           r"|(^|[\s;{}])barrier\.(cta\.)?(sync|arrive)")),
    ("trap", re.compile(r"(^|[\s;{}])(trap|brkpt|pmevent)(\.[a-z]+)?\s*(;|$|\d)")),
    ("async-copy", re.compile(r"\b(cp\.async|cp\.reduce\.async|mbarrier\.|cp\.async\.bulk|tensormap\.|"
                              r"griddepcontrol\.)")),
    ("sm90", re.compile(r"\b(wgmma\.|tcgen05\.|setmaxnreg\.|stmatrix\.|elect\.sync|barrier\.cluster|"
                        r"mapa\.|getctarank|%cluster\w*|multimem\.)")),
    ("timer", re.compile(r"%globaltimer|\bnanosleep\.")),
)


def asm_template(ctx, asm) -> str:
    """The assembly template of a gnu_asm_expression (adjacent string literals joined)."""
    parts = []
    for child in asm.children:
        if child.type == "string_literal":
            parts.append(_string_body(ctx, child))
        elif child.type == "concatenated_string":
            for s in child.children:
                if s.type == "string_literal":
                    parts.append(_string_body(ctx, s))
                elif s.type == "identifier":  # `asm(LD_NC_V1 " {%0}, [%1];")`: the file's string macro
                    parts.append(_string_macros(ctx).get(ctx.text(s), ""))
        elif child.type.startswith("gnu_asm_") and child.type != "gnu_asm_qualifier":
            break
    return "".join(parts)


_STRING_MACRO = lazy_re(r'^"((?:[^"\\\n]|\\.)*)"\s*(?://.*|/\*.*\*/)?$')


def _string_macros(ctx) -> dict[str, str]:
    """Object-like macros of the file whose body is one string literal (`#define LD_NC_V1
    "ld.global.cs.nc.u32"`): name -> the string's text (the first definition)."""
    found = ctx.cache.get("cuda_string_macros")
    if found is None:
        found = {}
        unit = ctx.units[0]
        for node in iter_nodes(unit.root, {"preproc_def"}):
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is not None and value is not None:
                m = _STRING_MACRO.match(unit.text(value).strip())
                if m:
                    found.setdefault(unit.text(name), m.group(1))
        ctx.cache["cuda_string_macros"] = found
    return found


def _string_body(ctx, lit) -> str:
    return "".join(ctx.text(c) for c in lit.children if c.type in ("string_content", "escape_sequence"))


def is_ptx(template: str) -> bool:
    t = template.replace("\\n", "\n").replace("\\t", "\t")
    return any(_ptx_instruction(m) for m in PTX_MARKERS.finditer(t))


def ptx_category(template: str) -> str:
    """'barrier', 'trap', 'async-copy', 'sm90', 'timer' or 'general' for a PTX template."""
    t = template.replace("\\n", "\n").replace("\\t", "\t")
    for name, pattern in PTX_CATEGORIES:
        if pattern.search(t):
            return name
    return "general"


# Rules that report NVIDIA-only names -----------------------------------------------------------
def _names_regex(keys) -> str:
    last = sorted({k.split("::")[-1] for k in keys})
    return "^(" + "|".join(re.escape(n) for n in last) + ")$"


def _function_locals(ctx, node) -> frozenset:
    """Names the function around `node` declares as variables or parameters: they shadow a namespace's
    function or type of the same name."""
    fn = ctx.enclosing_function(node)
    if fn is None:
        return frozenset()
    key = ("function_locals", fn.start_byte, fn.end_byte)
    found = ctx.cache.get(key)
    if found is None:
        names = set()
        for d in iter_nodes(fn, {"init_declarator", "declaration", "parameter_declaration"}):
            target = d.child_by_field_name("declarator")
            while target is not None and target.type in ("pointer_declarator", "reference_declarator",
                                                          "array_declarator", "init_declarator"):
                target = target.child_by_field_name("declarator") or (
                    target.named_children[-1] if target.named_children else None)
            if target is not None and target.type == "identifier":
                names.add(ctx.text(target))
        found = ctx.cache[key] = frozenset(names)
    return found


class NamesRuleMixin:
    """Report uses of names (functions, types, enumerators, qualified `ns::name`), `#include`s of
    headers and inline-asm templates of one PTX category. Subclasses set NAMES, HEADERS, ASM_CATEGORY
    and call `names_query()` for their query. Names the file defines itself are not reported."""

    NAMES: dict = {}  # "name" or "ns::name" -> message
    HEADERS: dict = {}  # "cuda/barrier" -> message
    ASM_CATEGORY: str | None = None
    ASM_MESSAGE: str = ""
    NAME_NODES = ("identifier", "type_identifier", "field_identifier")
    # One finding per name (and one for the file's inline asm of the category) per file, its other uses
    # related locations: for rules whose porting task is the file's whole use of a feature (an async-copy
    # pipeline is rewritten as one), not each call.
    GROUP_PER_FILE = False
    # "name" -> (Severity, Impact) where one name's consequence differs from the rule's (a deprecated API
    # that still compiles, among names that do not exist).
    NAME_SEVERITY: dict = {}

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "query" not in cls.__dict__:
            cls.query = cls.names_query() + "\n" + cls.__dict__.get("EXTRA_QUERY", "")

    @classmethod
    def names_query(cls) -> str:
        parts = []
        if cls.NAMES:
            regex = _names_regex(cls.NAMES).replace("\\", "\\\\")
            nodes = " ".join(f"({t})" for t in cls.NAME_NODES)
            parts.append(f'([{nodes}] @name (#match? @name "{regex}"))')
        if cls.HEADERS:
            parts.append("(preproc_include path: (_) @include)")
        if cls.ASM_CATEGORY:
            parts.append("(gnu_asm_expression) @asm")
        return "\n".join(parts)

    def check(self, ctx, captures):
        for node in captures.get("name", ()):
            self._check_name(ctx, node)
        for inc in captures.get("include", ()):
            path = ctx.text(inc).strip('<>"')
            if path in self.HEADERS:
                ctx.report(inc, self.HEADERS[path])
        for asm in captures.get("asm", ()):
            template = asm_template(ctx, asm)
            if is_ptx(template) and ptx_category(template) == self.ASM_CATEGORY:
                message = self.asm_message(template)
                ctx.report(asm, message, group=f"asm:{message}" if self.GROUP_PER_FILE else None)

    def asm_message(self, template: str) -> str:
        """The message for an inline-asm template of this rule's PTX category (one message by default)."""
        return self.ASM_MESSAGE

    def _check_name(self, ctx, node):
        name = ctx.text(node)
        if node.parent is not None and node.parent.type in ("preproc_def", "preproc_function_def"):
            return  # `#define cudaStreamFireAndForget hipStreamFireAndForget`: a mapping, not a use
        ns = namespace_of(ctx, node)
        if not ns and name in file_defined_names(ctx):
            return  # the project's own function or macro of that name
        key = f"{ns}::{name}" if ns else name
        message = self.NAMES.get(key)
        if message is None:
            # Namespace aliases (`namespace cg = cooperative_groups`) and using-directives resolve here.
            message = self.NAMES.get(self.qualify(ctx, ns, name) or "")
        if message is None:
            return
        if not ns and project_defines(ctx, name):
            return  # a project header defines it (a ROCm shim of `__dp4a`), for this file or its includer
        if not ns and name in _function_locals(ctx, node):
            return  # `ValType reduce = 0;` under `using namespace cooperative_groups;`: a local, not cg::reduce
        if node.type == "field_identifier" and not self.accept_member(ctx, node, name):
            return
        if not self.accept(ctx, node, name):
            return
        report_node = node
        if report_node.parent is not None and report_node.parent.type in TEMPLATE_WRAPPERS:
            report_node = report_node.parent
        while report_node.parent is not None and report_node.parent.type == "qualified_identifier":
            report_node = report_node.parent
        # One finding per rule and line: `cuda::pipeline<...> p = cuda::make_pipeline();` is one problem.
        line = ctx.source.line_of(ctx.file_range(report_node)[0])
        seen = ctx.cache.setdefault(("names_lines", self.code), set())
        if line in seen:
            return
        seen.add(line)
        severity, impact = self.NAME_SEVERITY.get(key) or self.NAME_SEVERITY.get(self.qualify(ctx, ns, name) or "") \
            or (None, None)
        ctx.report(report_node, message, group=key if self.GROUP_PER_FILE else None, severity=severity, impact=impact)

    def qualify(self, ctx, ns: str, name: str) -> str | None:
        ns = ns.lstrip(":")
        return f"{ns}::{name}" if ns else name

    def accept_member(self, ctx, node, name) -> bool:
        return False

    def accept(self, ctx, node, name) -> bool:
        return True
