import re

from hiplint import CudaRule, Fix, Impact, Severity
from hiplint.cparse import iter_nodes
from hiplint.cudaversions import skipped_by_version_test
from hiplint.headers import amd_macros, includers_define
from hiplint.model import Edit

from ._lanes import (HEADER_PATH, SYNC_WITH_MASK, declared_types, file_constant_name_node, file_macros, int_literal,
                     int_width, is_full_mask_32, is_full_mask_32_text, literal_width, top_level_ancestor)
from hiplint.lazy import lazy_re

FULL_MASK_MACRO = "HIPLINT_FULL_WARP_MASK"
# Inserted once per file. On AMD the mask must be 64 bits wide to compile, and since ROCm 6.2 a
# build without NDEBUG traps unless the mask equals the lanes that execute the call
# (`__hip_check_mask` compares it with `__ballot(true)`). A constant all-64-lanes mask therefore
# traps in every partly active wave (96-thread blocks, `if (warp == 0)` reductions: lanes 32-63 of
# wave 0 are inactive on wave64). `__activemask()` is exactly those lanes, and it is 64 bits wide.
# On NVIDIA the value stays the 32-bit one the code had: nvcc sees the same code.
FULL_MASK_BLOCK = f"""#ifndef {FULL_MASK_MACRO}
#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
#define {FULL_MASK_MACRO} __activemask()
#else
#define {FULL_MASK_MACRO} 0xffffffffu
#endif
#endif

"""


class SyncMaskNot64Bit(CudaRule):
    """A `*_sync` warp intrinsic called with a mask that is not a 64-bit integer.

    ## What it does
    Finds `__shfl_*_sync`, `__ballot_sync`, `__any_sync`, `__all_sync`, `__match_*_sync`,
    `__reduce_*_sync` and `__syncwarp` calls whose mask argument is 32 bits wide: an unsuffixed
    literal (`0xffffffff`, `0xffffu`), `~0u`, `-1`, a 32-bit cast, a 32-bit local variable or
    parameter (also one with a default value: `unsigned mask = 0xffffffff`, reported at the
    parameter), or a 32-bit constant of the file (`constexpr unsigned kFullMask = ~0u;`, also used as
    `ns::kFullMask`), which is reported once, at its declaration, with its uses as related locations. A mask macro defined in the file is reported at its definition instead (WRP004).
    Not reported where the project defines the intrinsic itself as a macro for AMD, in the file
    before the call or in a project header it includes (`#ifdef USE_ROCM` /
    `#define __shfl_xor_sync(mask, var, lane) __shfl_xor(var, lane)`): the mask never reaches ROCm.

    ## Why it breaks on AMD
    ROCm's warp-sync functions are templates with
    `static_assert(sizeof(MaskT) == 8, "The mask must be a 64-bit integer. Implicitly promoting a smaller integer is almost always an error.")`.
    A 32-bit mask is a compile error on every AMD target and every ROCm version that has these
    functions (6.2 and later). It is the most common build break of a hipified warp kernel.
    Widening with a cast is not enough for a full mask: `(unsigned long long)0xffffffff` compiles
    but names only lanes 0-31 of a 64-lane wave.

    ## Example
    ```cuda
    __device__ float sum(float v) {
        for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);
        return v;
    }
    ```

    ## Use instead
    ```cuda
    __device__ float sum(float v) {
        for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_xor_sync(__activemask(), v, o);
        return v;
    }
    ```

    ## Fix
    A full 32-bit mask (`0xffffffff`, `~0u`, `-1`) becomes `HIPLINT_FULL_WARP_MASK`, defined once at
    the top of the file as `__activemask()` on AMD and `0xffffffffu` elsewhere. Exact on NVIDIA (nvcc
    sees the same value). On AMD it is the lanes that execute the call, which is what a CUDA full mask
    means in correct code (every lane of the warp takes part) and what ROCm checks: since ROCm 6.2,
    in every build without `NDEBUG`, the `*_sync` functions trap (`__hip_check_mask`:
    `mask == __ballot(true)` or `__builtin_trap()`) when the mask is not exactly the active lanes. A
    constant 64-lane mask (`~0ull`) would trap in a partly active wave: a block of 96 threads, the
    last wave of a grid, or the classic block reduction whose `if (warp == 0)` leaves lanes 32-63 of
    wave 0 inactive on wave64. Safe.
    A partial literal mask (`0xffff`) gets an `ull` suffix: the same lanes on both vendors, which is
    only right if the code means lanes of the whole wave; unsafe. Variables and parameters are left
    to you (their type is part of a signature).
    A constant of the file that holds the 32-bit full mask (`constexpr unsigned FULL_MASK = 0xffffffffu;`,
    `namespace cfg { const uint32_t full = ~0u; }`) cannot become `__activemask()` (a device function,
    not a constant), and a constant `~0ull` would trap in partly active waves: instead each of its uses
    as a `*_sync` mask becomes `HIPLINT_FULL_WARP_MASK` (`cfg::full` too), exactly the literal fix at
    each call; the constant stays, for NVIDIA readers and any other use (unused, some compilers warn).
    Safe when every use of the constant in the file is such a mask, it is `const` or `constexpr` and
    not `extern`, and the file is not a header (its includers are not seen), as for a mask macro
    (WRP004); unsafe otherwise, because the other uses (data, comparisons, host code) keep the 32-bit
    value and nothing reports them any more. No fix where the name is declared again (a local of the
    same name), and none for a partial constant (`0x0000ffff`): it names real lanes, which is yours to
    decide.

    ## References
    - ROCm `amd_warp_sync_functions.h` (the 64-bit mask static_assert): https://github.com/ROCm/clr/blob/develop/hipamd/include/hip/amd_detail/amd_warp_sync_functions.h
    - HIP C++ language extensions, warp cross-lane functions ("all mask values ... are 64-bit"): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html#warp-cross-lane-functions
    - CUDA C++ Programming Guide, warp shuffle functions: https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#warp-shuffle-functions
    """

    code = "WRP006"
    name = "sync-mask-not-64bit"
    summary = "warp-sync mask is not a 64-bit integer: compile error on ROCm"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    fix_availability = "sometimes"
    checklist = "Pass a 64-bit mask to *_sync intrinsics: __activemask() where the code meant the full warp (a constant ~0ull traps in partly active waves on ROCm 6.2+), or a mask variable of type unsigned long long."
    query = """
    ((call_expression function: (identifier) @fn arguments: (argument_list . (_) @mask)) @call
      (#any-of? @fn "__shfl_sync" "__shfl_up_sync" "__shfl_down_sync" "__shfl_xor_sync" "__ballot_sync"
                    "__any_sync" "__all_sync" "__uni_sync" "__match_any_sync" "__match_all_sync" "__syncwarp"
                    "__reduce_add_sync" "__reduce_min_sync" "__reduce_max_sync" "__reduce_and_sync"
                    "__reduce_or_sync" "__reduce_xor_sync"))
    """

    def check(self, ctx, captures):
        call, mask = captures["call"][0], captures["mask"][0]
        fn = ctx.text(captures["fn"][0])
        scope = ctx.function_scope(call)
        if mask.type == "identifier" and ctx.text(mask) in file_macros(ctx):
            return  # a macro: reported at its definition (WRP004), uses are tied to it
        if int_width(ctx, mask, scope) != 32:
            return
        own = amd_macros(ctx).get(fn)
        if own is not None and own.byte < ctx.file_range(call)[0]:
            return  # the project's own macro replaces the intrinsic on AMD (a compat header)
        if includers_define(ctx, fn):
            return  # every includer defines its own first (a compat header included before this one)
        if mask.type in ("identifier", "qualified_identifier"):
            if not ctx.settings.report_nvidia_branches and skipped_by_version_test(ctx.source.data,
                                                                                 ctx.file_range(call)[0]):
                # The call is for CUDA 9 and later (`#if CUDART_VERSION >= 9000` beside `#else __ballot(p)`),
                # which AMD skips: its mask, reported where it is declared, would not be silenced with it
                # (AMGX's `ballot()`). A branch kept from AMD by a removed HIP macro still counts.
                return
            name = ctx.text(mask).split("::")[-1].strip()
            decl = file_constant_name_node(ctx, name) if name not in declared_types(ctx, scope) else None
            if decl is not None:
                # A mask constant of the file (`constexpr unsigned FULL_MASK = 0xffffffff;`): reported
                # once, where it is declared, as a mask macro is (WRP004); its uses are related locations.
                if ("wrp006_constant", name) not in ctx.cache:
                    main = ctx.units[0]
                    value = decl.parent.child_by_field_name("value") if decl.parent is not None else None
                    text = main.text(value) if value is not None else ""
                    full = is_full_mask_32_text(text)
                    advice = ("and pass `__activemask()` on AMD (a constant `~0ull` traps in a partly active wave)" if full
                              else "and check which lanes of a 64-lane wave it should name" if ctx.wave64
                              else "keeping its value (ROCm uses the low 32 bits on wave32 targets)")
                    fix = _constant_fix(ctx, name, decl) if full else None
                    ctx.cache[("wrp006_constant", name)] = ctx.report_range(
                        decl.start_byte + main.delta, decl.end_byte + main.delta,
                        f"`{name}` is a 32-bit constant passed as the mask of `{fn}` (and any other "
                        "*_sync call of the file): ROCm requires a 64-bit mask (static_assert); declare "
                        f"it unsigned long long, {advice}", fix=fix)
                ctx.relate(ctx.cache[("wrp006_constant", name)], mask, f"`{name}` is the mask of `{fn}` here")
                return
            local = _local_declarator(ctx, scope, name, call.start_byte) if not ctx.unit.is_macro else None
            if local is not None:
                # A mask variable of the function (`const unsigned activeMask = ...;`): reported once,
                # where it is declared, not at each of its uses (GROMACS passes one to 15 shuffles).
                if ("wrp006_local", local.start_byte) not in ctx.cache and \
                        local.parent is not None and local.parent.type == "optional_parameter_declaration":
                    default = local.parent.child_by_field_name("default_value")
                    ctx.cache[("wrp006_local", local.start_byte)] = ctx.report(
                        local.parent, f"`{name}` is a 32-bit parameter (default `{ctx.text(default)}`) passed as "
                                      f"the mask of `{fn}`: ROCm requires a 64-bit mask (static_assert); declare it "
                                      "unsigned long long, and default it to `__activemask()` on AMD")
                if ("wrp006_local", local.start_byte) not in ctx.cache:
                    ctx.cache[("wrp006_local", local.start_byte)] = ctx.report(
                        local, f"`{name}` is a 32-bit variable passed as the mask of `{fn}` (and any other "
                               "*_sync call after it): ROCm requires a 64-bit mask (static_assert); declare "
                               "it unsigned long long (or set it from __activemask())")
                ctx.relate(ctx.cache[("wrp006_local", local.start_byte)], mask, f"`{name}` is the mask of `{fn}` here")
                return
        text = ctx.text(mask)
        fix = None
        if is_full_mask_32(ctx, mask):
            edits = [ctx.replace(mask, FULL_MASK_MACRO)]
            isolation = None
            if FULL_MASK_MACRO not in file_macros(ctx):
                anchor = top_level_ancestor(ctx.unit.macro, ctx.units[0].root) if ctx.unit.is_macro else \
                    top_level_ancestor(call, ctx.unit.root)
                start = ctx.file_range(anchor)[0] if not ctx.unit.is_macro else anchor.start_byte
                edits.append(_insert_at_line_start(ctx, start, FULL_MASK_BLOCK))
                # One definition per file: one fix that inserts it per pass. Once it is there, the
                # fixes only replace masks and are all applied together.
                isolation = f"define:{FULL_MASK_MACRO}"
            fix = Fix.safe(f"Use `{FULL_MASK_MACRO}` (`__activemask()` on AMD, unchanged on NVIDIA)", *edits,
                           isolation=isolation)
        elif mask.type == "number_literal" and literal_width(text) == 32:
            lit = int_literal(text)
            new = text.rstrip("uUlL") + "ull"
            fix = Fix.unsafe(f"Widen the literal to `{new}` (same lanes; check the wave64 meaning)", ctx.replace(mask, new))
        if is_full_mask_32(ctx, mask):
            why = ("and this full mask names only half of a 64-lane wave" if ctx.wave64 else
                   "on wave32 targets ROCm uses its low 32 bits, but the type must still be 64 bits wide")
        elif mask.type in ("identifier", "qualified_identifier"):
            why = "declare the mask unsigned long long (or pass __activemask())"
        else:
            why = "widen it to the lanes of the whole wave"
        ctx.report(mask, f"`{fn}` mask `{text}` is 32 bits wide; ROCm requires a 64-bit mask (static_assert): {why}", fix=fix)


def _local_declarator(ctx, scope, name: str, before: int):
    """The last declaration of variable or parameter `name` in function `scope` before byte `before`."""
    found = None
    for node in iter_nodes(scope, {"init_declarator", "parameter_declaration", "optional_parameter_declaration",
                                   "declaration"}):
        if node.start_byte >= before:
            break
        declarator = node.child_by_field_name("declarator")
        if declarator is not None and declarator.type == "identifier" and ctx.text(declarator) == name:
            found = declarator
    if found is not None and found.parent is not None and found.parent.type == "init_declarator":
        value = found.parent.child_by_field_name("value")
        if value is not None and _VOTE.search(ctx.text(value)):
            return None  # a narrowed ballot: WRP005 reports the declaration, this rule the *_sync use
    return found


_VOTE = lazy_re(r"\b__(ballot|activemask|match_any|match_all)\w*")


_DECLARATIONS = frozenset({"declaration", "init_declarator", "parameter_declaration", "optional_parameter_declaration",
                           "field_declaration", "pointer_declarator", "reference_declarator", "array_declarator"})


def _constant_uses(ctx, name: str, decl):
    """Uses of the file constant `name` (declared by identifier `decl` of the main unit), in the file and
    its macro bodies: ([(unit, expression node) passed as the mask of a *_sync call], other uses, whether
    the name is declared again: a local or another namespace's constant of the same name)."""
    masks, others, redeclared = [], 0, False
    for unit in ctx.units:
        for node in iter_nodes(unit.root, {"identifier"}):
            if unit.text(node) != name or (unit is ctx.units[0] and node.id == decl.id):
                continue
            parent = node.parent
            if parent is not None and parent.type in _DECLARATIONS and parent.child_by_field_name("declarator") == node:
                redeclared = True
                continue
            expr = node
            while expr.parent is not None and expr.parent.type == "qualified_identifier" and \
                    expr.parent.child_by_field_name("name") == expr:
                expr = expr.parent  # `cfg::full_lane_mask`
            args = expr.parent
            call = args.parent if args is not None and args.type == "argument_list" else None
            fn = call.child_by_field_name("function") if call is not None and call.type == "call_expression" else None
            if fn is not None and unit.text(fn) in SYNC_WITH_MASK and args.named_children[0] == expr:
                masks.append((unit, expr))
            else:
                others += 1
    return masks, others, redeclared


def _constant_fix(ctx, name: str, decl):
    """The fix for a file constant that holds the 32-bit full mask: each of its uses as a *_sync mask
    becomes HIPLINT_FULL_WARP_MASK (the active lanes on AMD, unchanged on NVIDIA). The constant stays.

    A namespace-scope constant cannot become `__activemask()` (a device function), and a macro of its name
    would break `ns::name`; rewriting each mask is what WRP006 does for a literal full mask. Safe when
    every use of the constant in the file is such a mask, the constant is `const`/`constexpr` (not a
    variable some code may assign, not `extern`) and the file is not a header (its includers are not
    seen); unsafe otherwise. No fix when the name is declared again (a local of the same name)."""
    main = ctx.units[0]
    declaration = decl.parent.parent if decl.parent is not None else None
    masks, others, redeclared = _constant_uses(ctx, name, decl)
    if not masks or redeclared or declaration is None or declaration.type != "declaration":
        return None
    edits = [Edit(*unit.file_range(expr), FULL_MASK_MACRO) for unit, expr in masks]
    isolation = None
    if FULL_MASK_MACRO not in file_macros(ctx):
        start = main.file_range(top_level_ancestor(declaration, main.root))[0]
        edits.append(_insert_at_line_start(ctx, start, FULL_MASK_BLOCK))
        isolation = f"define:{FULL_MASK_MACRO}"
    specifiers = {main.text(c) for c in declaration.children if c.type in ("type_qualifier", "storage_class_specifier")}
    title = (f"Pass `{FULL_MASK_MACRO}` (`__activemask()` on AMD, unchanged on NVIDIA) where `{name}` is a mask "
             f"({len(masks)} use{'s' if len(masks) > 1 else ''}); the constant stays")
    why = (f"{others} other use(s) of `{name}` keep its 32-bit value" if others else
           "a header: files that include it may use the constant otherwise" if HEADER_PATH.search(ctx.path) else
           f"`{name}` is `extern`: other files may use it" if "extern" in specifiers else
           f"`{name}` is not `const`: code may assign it another mask" if not specifiers & {"const", "constexpr"}
           else None)
    if why is None:
        return Fix.safe(title, *edits, isolation=isolation)
    return Fix.unsafe(f"{title} (unsafe: {why})", *edits, isolation=isolation)


def _insert_at_line_start(ctx, byte, text):
    line = ctx.source.line_of(byte)
    start = ctx.source.byte_of_line(line)
    return Edit(start, start, text)
