from hiplint import CudaRule, Fix, Impact, Severity
from hiplint.cparse import iter_nodes

# CUDA's cudaMemoryType values (driver_types.h) and HIP's hipMemoryType values before ROCm 6.0.
CUDA_MEMORY_TYPES = {0: "cudaMemoryTypeUnregistered", 1: "cudaMemoryTypeHost", 2: "cudaMemoryTypeDevice",
                     3: "cudaMemoryTypeManaged"}
HIP5_MEMORY_TYPES = {0: "hipMemoryTypeHost", 1: "hipMemoryTypeDevice", 2: "hipMemoryTypeArray",
                     3: "hipMemoryTypeUnified", 4: "hipMemoryTypeManaged"}
ATTRIBUTE_TYPES = {"cudaPointerAttributes": "cuda", "hipPointerAttribute_t": "hip", "hipPointerAttributes": "hip"}
FIELDS = frozenset({"type", "memoryType"})
ALIGNED_SINCE = (6, 0)  # ROCm 6.0 aligned hipMemoryType's values with CUDA's (Array and Unified moved to 10, 11)


def declared_type(ctx, scope, name):
    """The type text of `name` declared in `scope` (parameters and locals) or at file scope."""
    for root in (scope, ctx.unit.root):
        for node in iter_nodes(root, {"declaration", "parameter_declaration"}):
            ty = node.child_by_field_name("type")
            if ty is None:
                continue
            for d in node.children_by_field_name("declarator"):
                ident = d
                while ident is not None and ident.type != "identifier":
                    inner = ident.child_by_field_name("declarator")
                    if inner is None and ident.type == "reference_declarator" and ident.named_children:
                        inner = ident.named_children[0]  # `const bf16_2 &a`: the grammar names no field here
                    ident = inner
                if ident is not None and ctx.text(ident) == name:
                    return " ".join(ctx.text(ty).replace("struct ", "").split())
    return None


class PointerAttributeEnumValues(CudaRule):
    """Pointer-attribute memory types compared with numbers: HIP's values differed from CUDA's before ROCm 6.0.

    ## What it does
    Finds `attr.type` / `attr.memoryType` (of a `cudaPointerAttributes` or `hipPointerAttribute_t`)
    compared with an integer literal or matched against numeric `case` labels. An error when the
    configured `rocm-version` is older than 6.0; from 6.0 on an info-level portability note.
    Reported in AMD-only `#if` branches too, where the `hip` spelling usually sits.

    ## Why it breaks on AMD
    CUDA numbers its memory types Unregistered=0, Host=1, Device=2, Managed=3. HIP up to ROCm 5.x
    used Host=0, Device=1, Array=2, Unified=3 (Managed=4 in later 5.x releases) and had no
    "unregistered"; its pointer attributes called the field `memoryType`. hipify renames the
    enumerator *names* correctly, but a literal stays a literal: `attr.type == 2` asks "device?" on
    NVIDIA and "array?" on ROCm 5, a silent misclassification (a device pointer treated as host
    memory, a wrong copy direction). ROCm 6.0 aligned the values with CUDA (Array and Unified moved
    to 10 and 11) and renamed the field `type`; projects that must still build on ROCm 5.x are
    affected, and named enumerators stay correct everywhere.

    ## Example
    ```cuda
    bool on_device(const void* p) {
        cudaPointerAttributes attr;
        cudaPointerGetAttributes(&attr, p);
        return attr.type == 2;
    }
    ```

    ## Use instead
    ```cuda
    bool on_device(const void* p) {
        cudaPointerAttributes attr;
        cudaPointerGetAttributes(&attr, p);
        return attr.type == cudaMemoryTypeDevice;
    }
    ```

    ## Fix
    For `cudaPointerAttributes` the literal is replaced by the CUDA enumerator it means
    (`2` -> `cudaMemoryTypeDevice`): identical on NVIDIA, and hipify maps the name to the right HIP
    value on every ROCm version. Safe, except for `0` -> `cudaMemoryTypeUnregistered`, which is unsafe:
    HIP before 6.0 has no "unregistered" type, so the hipified name may not compile there (better than
    a silent misreading, but a person should decide). For `hipPointerAttribute_t` the intended numbering is unknown
    (CUDA's, from a hipified literal, or HIP's own): no fix; the message names both readings.

    ## References
    - HIP porting guide, "Memory type identification" (hipMemoryType values): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    - HIP 5.x `hipMemoryType` (Host, Device, Array, Unified from 0; hipfort enums): https://rocm.docs.amd.com/projects/hipfort/en/docs-5.4.4/doxygen/html/namespacehipfort__enums.html
    - HIP 6.x `hip_runtime_api.h` (`hipMemoryTypeUnregistered = 0`, `Host = 1`, `Device = 2`, `Managed = 3`, `Array = 10`, `Unified = 11`; field `type`): https://github.com/ROCm/HIP/blob/develop/include/hip/hip_runtime_api.h
    - HIP global enums (`hipMemoryType`): https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api/global_defines_enums_structs_files/global_enum_and_defines.html
    - CUDA runtime API, `cudaMemoryType`: https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html
    """

    code = "MEM007"
    name = "pointer-attribute-enum-values"
    summary = "memory type compared with a number: hipMemoryType values differ from CUDA's before ROCm 6.0"
    severity = Severity.ERROR
    impact = Impact.SILENT
    fix_availability = "sometimes"
    # `hipPointerAttribute_t` comparisons sit in AMD-only branches of single-source code; wrong there too.
    report_in_hip_branches = True
    checklist = "Compare pointer-attribute memory types only with named enumerators (cudaMemoryTypeDevice, ...), never with numbers."
    _fields = " ".join(f'"{f}"' for f in sorted(FIELDS))
    query = f"""
    ((binary_expression left: (field_expression field: (field_identifier) @name) @field right: (number_literal) @num) @cmp
      (#any-of? @name {_fields}))
    ((binary_expression left: (number_literal) @num right: (field_expression field: (field_identifier) @name) @field) @cmp
      (#any-of? @name {_fields}))
    ((switch_statement condition: (condition_clause value: (field_expression field: (field_identifier) @name) @field)
      body: (compound_statement) @body) @switch (#any-of? @name {_fields}))
    """

    def check(self, ctx, captures):
        field = captures["field"][0]
        spelling = self._attribute_spelling(ctx, field)
        if spelling is None:
            return
        if "cmp" in captures:
            cmp = captures["cmp"][0]
            op = ctx.text(cmp.child_by_field_name("operator"))
            if op not in ("==", "!=", "<", ">", "<=", ">="):
                return
            self._report_literal(ctx, captures["num"][0], field, spelling)
        else:
            for case in iter_nodes(captures["body"][0], {"case_statement"}):
                value = case.child_by_field_name("value")
                if value is not None and value.type == "number_literal":
                    self._report_literal(ctx, value, field, spelling)

    def _attribute_spelling(self, ctx, field):
        name = field.child_by_field_name("field")
        arg = field.child_by_field_name("argument")
        if name is None or arg is None or ctx.text(name) not in FIELDS or arg.type != "identifier":
            return None
        ty = declared_type(ctx, ctx.function_scope(field), ctx.text(arg))
        if ty is None:
            return None
        return ATTRIBUTE_TYPES.get(ty.rstrip("*& ").strip())

    def _report_literal(self, ctx, num, field, spelling):
        try:
            value = int(ctx.text(num).rstrip("uUlL"), 0)
        except ValueError:
            return
        cuda_name, hip_name = CUDA_MEMORY_TYPES.get(value), HIP5_MEMORY_TYPES.get(value)
        reading = f"CUDA reads {value} as {cuda_name or 'no memory type'}, ROCm 5.x as {hip_name or 'no memory type'}"
        aligned = ctx.rocm_version >= ALIGNED_SINCE
        fix = None
        if spelling == "cuda" and cuda_name is not None:
            edit = ctx.replace(num, cuda_name)
            # HIP before 6.0 has no "unregistered" memory type: the name is exact on CUDA but may not build on ROCm 5.x.
            fix = Fix.unsafe(f"compare with {cuda_name}", edit) if value == 0 else \
                Fix.safe(f"compare with {cuda_name}", edit)
        if aligned:
            ctx.report(num, f"`{ctx.text(field)}` compared with the number {value}: ROCm 6.0 and later match CUDA's values, but "
                            f"{reading}; use the named enumerator", fix=fix, severity=Severity.INFO)
        else:
            ctx.report(num, f"`{ctx.text(field)}` compared with the number {value}: {reading}; use the named enumerator",
                       fix=fix)
