import re

from hiplint import CudaRule, Impact, Severity
from hiplint.lazy import lazy_re

# CUDA's vector types are plain structs: nvcc gives them no operators, so projects define their own
# (NVIDIA's `helper_math.h` does). HIP's are `HIP_vector_type<T, n>` (amd_hip_vector_types.h, ROCm 7.2),
# which already has non-template members `operator+=`, `-=`, `*=`, `/=` taking `const HIP_vector_type&`
# and hidden friends `operator*` and `operator/` taking two of them. A free function with the same
# operands is an equally good match: each use is "use of overloaded operator is ambiguous".
VECTOR_TYPE = lazy_re(r"^(?:u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]$")
COMPOUND = frozenset({"+=", "-=", "*=", "/="})
BINARY = frozenset({"*", "/"})
_OWN_TYPE = r"(?:\bstruct\s+{0}\b\s*\{{|\btypedef\b[^;]*\b{0}\s*;|\busing\s+{0}\s*=)"


def _param(ctx, node):
    """(type name, passed by non-const reference?, passed by const reference or value?) of a parameter."""
    type_node = node.child_by_field_name("type")
    declarator = node.child_by_field_name("declarator")
    type_name = ctx.text(type_node) if type_node is not None else ""
    const = any(c.type == "type_qualifier" and ctx.text(c) == "const" for c in node.children)
    volatile = any(c.type == "type_qualifier" and ctx.text(c) == "volatile" for c in node.children)
    if declarator is not None and declarator.type == "reference_declarator":
        if ctx.text(declarator).startswith("&&"):
            return type_name, False, False
        return type_name, not const and not volatile, const and not volatile
    if declarator is not None and declarator.type not in ("identifier",):
        return type_name, False, False  # a pointer, an array: not the operand HIP's operator takes
    return type_name, False, not volatile


class VectorTypeOperator(CudaRule):
    """An operator the project defines for CUDA's vector types that HIP's vector types already have.

    ## What it does
    Finds free (non-member, non-template) definitions and declarations of `operator+=`, `operator-=`,
    `operator*=` and `operator/=` whose operands are two of the same CUDA vector type (`float3&` and
    `float3` or `const float3&`; any of `char`...`double` with 1 to 4 components), and of binary
    `operator*` and `operator/` taking two of them, as NVIDIA's `helper_math.h` defines them. One
    finding per file, the file's other such operators as related locations. Not reported where the
    file declares the type itself (`struct float3 {...}` for a host-only build), in branches AMD never
    compiles (`#if !defined(__HIPCC__)`), nor for the operators HIP leaves to templates, where the
    project's non-template function wins: `+` and `-`, a scalar operand (`float3 += float`), `%=`,
    `==`.

    ## Why it breaks on AMD
    CUDA's `float3` is a plain struct without operators, so nvcc accepts the project's own. HIP's
    `float3` is `HIP_vector_type<float, 3>` (`amd_hip_vector_types.h`), whose non-template members
    `operator+=(const HIP_vector_type&)` (and `-=`, `*=`, `/=`) and hidden friends `operator*` and
    `operator/` match the same operands equally well: every use is "use of overloaded operator '+='
    is ambiguous", a compile error (checked with ROCm 7.2 for gfx942: `+=`, `-=`, `/=`, `*` and `/`
    ambiguous; `+`, `-`, scalar operands, `%=` and `==` not). Every AMD target; the definition itself
    compiles, its uses do not.

    ## Example
    ```cuda
    inline __host__ __device__ void operator+=(float3& a, float3 b) { a.x += b.x; a.y += b.y; a.z += b.z; }
    __global__ void accumulate(float3* acc, const float3* v) { acc[threadIdx.x] += v[threadIdx.x]; }
    ```

    ## Use instead
    ```cuda
    #if !defined(__HIPCC__)  // HIP's vector types have componentwise operators of their own
    inline __host__ __device__ void operator+=(float3& a, float3 b) { a.x += b.x; a.y += b.y; a.z += b.z; }
    #endif
    __global__ void accumulate(float3* acc, const float3* v) { acc[threadIdx.x] += v[threadIdx.x]; }
    ```
    HIP's operators are componentwise, as such helpers are; a helper that means something else (a
    dot product spelled `*`) needs a named function instead.

    ## References
    - HIP `amd_hip_vector_types.h` (`HIP_vector_type` and its operators): https://github.com/ROCm/rocm-systems/blob/develop/projects/clr/hipamd/include/hip/amd_detail/amd_hip_vector_types.h
    - CUDA C++ Programming Guide, built-in vector types (structures, no operators): https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#built-in-vector-types
    """

    code = "API008"
    name = "vector-type-operator"
    summary = "operator HIP's vector types already define: ambiguous at every use"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    in_macros = False
    checklist = "Define your own float3/int2/... operators (+=, -=, *=, /=, vector * and /) only for CUDA (`#if !defined(__HIPCC__)`): HIP's vector types have them."
    query = """(function_declarator declarator: (operator_name) @op parameters: (parameter_list) @params) @decl"""
    triggers = ("operator",)

    def check(self, ctx, captures):
        if ctx.path.endswith(".c"):
            return
        op_node, params = captures["op"][0], captures["params"][0]
        op = re.sub(r"^operator\s*", "", ctx.text(op_node))
        if op not in COMPOUND and op not in BINARY:
            return
        owner = captures["decl"][0].parent
        while owner is not None and owner.type in ("reference_declarator", "pointer_declarator"):
            owner = owner.parent
        if owner is None or owner.type not in ("function_definition", "declaration"):
            return
        if owner.parent is not None and owner.parent.type in ("field_declaration_list", "template_declaration"):
            return  # a member of the project's own type, or a template (HIP's non-template member wins)
        args = [p for p in params.named_children if p.type == "parameter_declaration"]
        if len(args) != 2:
            return
        (t1, ref1, val1), (t2, _, val2) = _param(ctx, args[0]), _param(ctx, args[1])
        if t1 != t2 or not VECTOR_TYPE.match(t1) or not val2:
            return
        if op in COMPOUND and not ref1:
            return
        if op in BINARY and not val1:
            return
        if re.search(_OWN_TYPE.format(re.escape(t1)), ctx.source.data.decode("utf-8", "replace")):
            return  # the file's own `struct float3`: not HIP's vector type
        ctx.report(owner.child_by_field_name("declarator") or captures["decl"][0],
                   f"`operator{op}` for `{t1}`: HIP's `{t1}` (HIP_vector_type) already defines it, so every use is "
                   f"ambiguous on AMD (compile error); define it only for CUDA (`#if !defined(__HIPCC__)`)",
                   group="vector-operators")
