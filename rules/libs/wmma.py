import re

from hiplint import CudaRule, Impact, Severity
from hiplint.cparse import iter_nodes

from ._scan import Library, first_use, is_last_unit, load_table, relate_uses, span, unguarded


def _table():
    return load_table("libraries.toml")


class WmmaToRocwmma(CudaRule):
    """WMMA (`<mma.h>`, `nvcuda::wmma`): HIP has no warp matrix functions; rocWMMA is the port.

    ## What it does
    Reports, once per file, the `#include <mma.h>` (or the first `nvcuda::` name), and then each
    use that rocWMMA cannot express directly: fragment shapes without a rocWMMA block size
    (m32n8k16, m8n32k16, m8n8k4, m8n8k32, m8n8k128), sub-byte and TF32 precisions
    (`precision::u4`, `s4`, `b1`, `tf32`), `bmma_sync`, and statements that use a fragment element's
    index `i` of `frag.x[i]` as a coordinate elsewhere (`bias[i % 8]`); element-wise code that treats
    every element alike (`acc.x[i] *= alpha`) is layout-independent and not reported. Only `mma.h`
    itself counts: CUTLASS's and CuTe's own `arch/mma.h` are not WMMA (LIB010 reports CUTLASS).
    Not reported in a branch AMD surely skips (`#if __CUDA_ARCH__ >= 730`, whose `#else` is the
    fallback AMD compiles): ARC001 reports that branch itself.

    ## Why it breaks on AMD
    HIP's kernel language does not support the warp matrix types and functions, and hipify leaves
    `nvcuda::wmma` untouched, so the HIP build fails. rocWMMA offers a similar API in namespace
    `rocwmma` (`fragment`, `fill_fragment`, `load_matrix_sync`, `mma_sync`, `store_matrix_sync`),
    but it runs per wavefront (64 lanes on CDNA), supports block sizes 16x16 and 32x32 on CDNA
    (16x16 only on RDNA3 / wave32), has no 4-bit or 1-bit types, and supports xfloat32 (TF32's
    counterpart) on gfx940-gfx942 only. The element-to-lane layout of fragments differs, so code
    that indexes `frag.x[i]` (to apply an epilogue or a mask per element) computes the wrong
    coordinates. Every ROCm version; shapes per architecture as above.

    ## Example
    ```cuda
    #include <mma.h>
    using namespace nvcuda;
    __global__ void k(const half* a, float* c) {
        wmma::fragment<wmma::matrix_a, 32, 8, 16, half, wmma::row_major> fa;
        wmma::load_matrix_sync(fa, a, 16);
    }
    ```

    ## Use instead
    ```cuda
    #include <rocwmma/rocwmma.hpp>
    __global__ void k(const rocwmma::float16_t* a, float* c) {
        rocwmma::fragment<rocwmma::matrix_a, 16, 16, 16, rocwmma::float16_t, rocwmma::row_major> fa;
        rocwmma::load_matrix_sync(fa, a, 16);
    }
    ```
    Keep the CUDA path behind `#if !defined(__HIP_PLATFORM_AMD__)` in single-source projects.

    ## References
    - HIP kernel language, warp matrix functions (not supported): https://rocm.docs.amd.com/projects/HIP/en/latest/reference/cpp_language_support.html
    - rocWMMA API reference (supported block sizes and types per architecture): https://rocm.docs.amd.com/projects/rocWMMA/en/latest/api-reference/api-reference-guide.html
    - CUDA C++ programming guide, warp matrix functions (shapes and precisions): https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#wmma
    """

    code = "LIB002"
    nvidia_feature = True
    # check_unit reports a file that includes or names WMMA, or uses a `wmma::` namespace.
    triggers = (*Library.from_table("wmma", _table()["libraries"]["wmma"]).triggers(), "wmma")
    name = "wmma-to-rocwmma"
    summary = "WMMA is not supported by HIP: port to rocWMMA"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    checklist = "Port nvcuda::wmma to rocwmma:: (16x16 or 32x32 blocks, wave-sized fragments), replace u4/s4/b1 and tf32 paths, and rewrite per-element fragment code."

    def check_unit(self, ctx):
        if not is_last_unit(ctx):
            return
        table = _table()
        lib = Library.from_table("wmma", table["libraries"]["wmma"])
        found = first_use(ctx, lib)
        if found is not None:
            where, item = found
            what = f"`#include <{item.path}>`" if where == "include" else f"first use of WMMA (`{item.text}`)"
            finding = ctx.report_range(*span(item), f"{what}: HIP does not support warp matrix (WMMA) functions; "
                                                             f"port to rocWMMA (`rocwmma::`, wave-sized fragments)")
            relate_uses(ctx, finding, lib, "WMMA used here")
        elif not any(n.text == "wmma" for n in _namespace_names(ctx)):
            return
        self._details(ctx, table["wmma"])

    def _details(self, ctx, wmma):
        shapes = {tuple(s) for s in wmma["unsupported_shapes"]}
        bad_types = tuple(wmma["unsupported_types"])
        tf32 = tuple(wmma["tf32"])
        fragment_vars = set()
        reported_statements = set()
        for unit in ctx.units:
            ctx.unit = unit
            for node in iter_nodes(unit.root, {"template_type", "qualified_identifier", "call_expression",
                                               "declaration", "field_expression"}):
                t = node.type
                if t == "template_type" and unit.text(node.child_by_field_name("name")) == "fragment":
                    args = [a for a in node.child_by_field_name("arguments").named_children if a.type != "comment"]
                    nums = [unit.text(a) for a in args[1:4]]
                    if len(nums) == 3 and all(re.fullmatch(r"\d+", n) for n in nums):
                        shape = tuple(int(n) for n in nums)
                        if shape in shapes:
                            self._report(ctx, node, f"WMMA fragment shape m{shape[0]}n{shape[1]}k{shape[2]} has no rocWMMA "
                                                    f"block size (rocWMMA: 16x16 or 32x32 blocks on CDNA, 16x16 on RDNA3)")
                elif t == "qualified_identifier" and (node.parent is None or node.parent.type != "qualified_identifier"):
                    text = re.sub(r"\s+", "", unit.text(node))
                    if text.endswith(bad_types):
                        self._report(ctx, node, f"`{text}`: rocWMMA has no 4-bit or 1-bit matrix types")
                    elif text.endswith(tf32):
                        self._report(ctx, node, f"`{text}`: TF32 fragments map to rocWMMA xfloat32, available on "
                                                f"gfx940-gfx942 only; elsewhere compute in fp32 or fp16/bf16")
                elif t == "call_expression":
                    fn = node.child_by_field_name("function")
                    if fn is not None and unit.text(fn).split("::")[-1] in wmma["bmma"]:
                        self._report(ctx, node, "`bmma_sync` (1-bit matrix multiply) has no rocWMMA equivalent")
                elif t == "declaration":
                    ty = node.child_by_field_name("type")
                    if ty is not None and "fragment<" in unit.text(ty).replace(" ", ""):
                        for d in node.children_by_field_name("declarator"):
                            ident = d
                            while ident is not None and ident.type != "identifier":
                                ident = ident.child_by_field_name("declarator")
                            if ident is not None:
                                fragment_vars.add(unit.text(ident))
                elif t == "field_expression":
                    arg, field = node.child_by_field_name("argument"), node.child_by_field_name("field")
                    if arg is not None and field is not None and unit.text(field) == "x" and \
                            arg.type in ("identifier", "subscript_expression") and \
                            unit.text(arg).split("[")[0] in fragment_vars and \
                            node.parent is not None and node.parent.type == "subscript_expression" and \
                            _index_used_as_coordinate(unit, node.parent, fragment_vars) and \
                            _statement_key(unit, node) not in reported_statements:
                        # Keyed by place: each `.parent` is a new Node object, so id() never repeats.
                        reported_statements.add(_statement_key(unit, node))
                        self._report(ctx, node.parent, f"`{unit.text(node.parent)}` with its index used as a coordinate "
                                                       f"relies on NVIDIA's fragment element-to-lane layout; rocWMMA "
                                                       f"fragments are laid out per 64-lane wave and differently")
        ctx.unit = ctx.units[-1]

    def _report(self, ctx, node, message):
        start, _ = ctx.file_range(node)
        if unguarded(ctx, start):
            ctx.report(node, message)


def _statement_key(unit, node) -> tuple[int, int, int]:
    stmt = _statement(node)
    return id(unit), stmt.start_byte, stmt.end_byte


def _statement(node):
    n = node
    while n.parent is not None and n.type not in ("expression_statement", "declaration", "return_statement"):
        n = n.parent
    return n


def _is_fragment_element(unit, node, fragment_vars) -> bool:
    """`frag.x[...]` (node is the subscript_expression)."""
    arg = node.child_by_field_name("argument")
    return node.type == "subscript_expression" and arg is not None and arg.type == "field_expression" and \
        unit.text(arg).rsplit(".", 1)[-1] == "x" and unit.text(arg).split("[")[0].split(".")[0] in fragment_vars


def _index_used_as_coordinate(unit, element, fragment_vars) -> bool:
    """Is the element index also used outside fragment subscripts in the same statement (`bias[i % 8]`)?

    `acc.x[i] = alpha * acc.x[i]` treats every element alike and is layout-independent; an index that
    also addresses other data maps elements to matrix coordinates, which is layout-dependent."""
    index_list = element.child_by_field_name("indices")
    index = index_list.named_children[0] if index_list is not None and index_list.named_children else None
    if index is None or index.type != "identifier":
        return False
    name = unit.text(index)
    stmt = _statement(element)
    for ident in iter_nodes(stmt, {"identifier"}):
        if unit.text(ident) != name:
            continue
        n, inside = ident.parent, False
        while n is not None and n != stmt:
            if _is_fragment_element(unit, n, fragment_vars):
                inside = True
                break
            n = n.parent
        if not inside:
            return True
    return False


def _namespace_names(ctx):
    from ._scan import names
    return [n for n in names(ctx) if n.kind == "namespace_identifier"]
