import re

from hiplint import CudaRule, Impact, Severity
from hiplint.lazy import lazy_re

REFERENCE_CALLS = lazy_re(r"^(cuda|hip)(BindTexture(2D|ToArray|ToMipmappedArray)?|UnbindTexture|GetTextureReference|"
                             r"GetTextureAlignmentOffset|BindSurfaceToArray|GetSurfaceReference)$")
REFERENCE_TEMPLATES = frozenset({"texture", "surface"})


class TextureReference(CudaRule):
    """Texture and surface *references* (`texture<T, dim, mode>`, `cudaBindTexture`): removed in CUDA 12, deprecated in HIP.

    ## What it does
    Finds `texture<...>` and `surface<...>` reference declarations and the reference API:
    `cudaBindTexture`, `cudaBindTexture2D`, `cudaBindTextureToArray`, `cudaUnbindTexture`,
    `cudaGetTextureReference`, `cudaBindSurfaceToArray` and their `hip*` spellings.

    ## Why it breaks on AMD
    CUDA 12 removed texture and surface references; HIP keeps the texture reference API only as
    deprecated ("Texture Management [Deprecated]": `hipBindTexture*`, `hipUnbindTexture`,
    `hipGetTextureReference`, the `hipTexRef*` functions), and has no surface references at all.
    hipify renames the calls but keeps `texture<>`, so the port compiles with deprecation warnings
    today and against an API AMD intends to drop. On gfx940-gfx942 there is no image hardware at all
    (see MEM004). Every ROCm version.

    ## Example
    ```cuda
    texture<float, 2, cudaReadModeElementType> tex;
    void bind(cudaArray_t a) { cudaBindTextureToArray(tex, a); }
    ```

    ## Use instead
    ```cuda
    cudaTextureObject_t make(cudaArray_t a) {
        cudaResourceDesc res = {};
        res.resType = cudaResourceTypeArray;
        res.res.array.array = a;
        cudaTextureDesc desc = {};
        cudaTextureObject_t tex = 0;
        cudaCreateTextureObject(&tex, &res, &desc, nullptr);
        return tex;
    }
    ```
    Texture objects (`hipCreateTextureObject` after hipify), or plain global loads (`__ldg`).

    ## References
    - HIP runtime API, Texture Management [Deprecated]: https://rocm.docs.amd.com/projects/HIP/en/latest/doxygen/html/group___texture_d.html
    - HIP deprecated API list: https://rocm.docs.amd.com/projects/HIP/en/latest/reference/deprecated_api_list.html
    - CUDA 12.0 release notes (texture and surface references removed): https://docs.nvidia.com/cuda/archive/12.0.0/cuda-toolkit-release-notes/index.html
    """

    code = "MEM003"
    name = "texture-reference"
    summary = "texture/surface references are removed in CUDA 12 and deprecated in HIP"
    severity = Severity.WARNING
    impact = Impact.COMPILE
    checklist = "Replace texture/surface references with texture objects (hipCreateTextureObject) or plain global loads."
    query = f"""
    ((template_type name: (type_identifier) @tname) @ref (#any-of? @tname {" ".join(f'"{t}"' for t in sorted(REFERENCE_TEMPLATES))}))
    ((call_expression function: (identifier) @fn) @call (#match? @fn "{REFERENCE_CALLS.pattern}"))
    """

    def check(self, ctx, captures):
        if "ref" in captures:
            if ctx.text(captures["tname"][0]) in REFERENCE_TEMPLATES and _is_declaration_type(captures["ref"][0]):
                node = captures["ref"][0]
                kind = ctx.text(captures["tname"][0])
                ctx.report(node, f"`{kind}<...>` reference: removed in CUDA 12 and deprecated in HIP; use a {kind} object")
            return
        fn = ctx.text(captures["fn"][0])
        if REFERENCE_CALLS.match(fn):
            ctx.report(captures["call"][0], f"`{fn}`: the texture/surface reference API is removed in CUDA 12 and "
                                            f"deprecated in HIP; use texture objects")


def _is_declaration_type(node) -> bool:
    parent = node.parent
    return parent is not None and parent.type in ("declaration", "field_declaration", "parameter_declaration") \
        and parent.child_by_field_name("type") == node
