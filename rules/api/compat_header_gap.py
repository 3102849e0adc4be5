import os
import re

from hiplint import CudaRule, Impact, Severity
from hiplint.renames import API_NAME, declared_names, load_table

from ._common import in_preproc_condition

# A project header counts as the AMD build's compatibility header when it maps at least this many CUDA
# names for AMD (`#define cudaMalloc hipMalloc`, in a HIP-only branch or onto a HIP name).
MIN_MAPPINGS = 3
_MEMBER = frozenset({"field_expression", "qualified_identifier", "field_identifier"})


def _in_optional_block(ctx, node) -> bool:
    """Inside an `#if`/`#ifdef` branch other than an include guard: code an option or a version selects
    (`#if USE_COMPRESSIBLE_MEMORY`), which the AMD build may never compile."""
    up = node.parent
    while up is not None:
        if up.type in ("preproc_if", "preproc_elif", "preproc_else", "preproc_elifdef"):
            return True
        if up.type == "preproc_ifdef":
            name = up.child_by_field_name("name")
            guard = ctx.text(up).lstrip().startswith("#ifndef") and name is not None and any(
                c.type == "preproc_def" and c.child_by_field_name("name") is not None
                and ctx.text(c.child_by_field_name("name")) == ctx.text(name) for c in up.named_children[:3])
            if not guard:
                return True
        up = up.parent
    return False


class CompatHeaderGap(CudaRule):
    """A CUDA API name the project's own compatibility header does not map, in code AMD compiles as is.

    ## What it does
    In a file that includes a project header mapping CUDA names for the AMD build (at least three
    `#define cudaX hipX` in a HIP-only branch, or onto HIP or ROCm names: the "hipifly" layout, a
    `cuda_to_hip.h`), or holds such a block itself, reports each CUDA API name of hiplint's rename table that the file uses but no
    project header it includes maps, declares or mentions. One finding per file, the first use of
    each further name as a related location. Not reported where the build hipifies the sources
    (PyTorch's extension build, a hipify step), where the file declares the name itself, in `#if`
    conditions, or inside any `#if`/`#ifdef` branch but an include guard (an option such as
    `#if USE_COMPRESSIBLE_MEMORY` may keep the code from the AMD build).

    ## Why it breaks on AMD
    Such a project compiles its CUDA sources with hipcc as they are; only the header's macros turn
    `cudaMalloc` into `hipMalloc`. HIP declares no CUDA names, so a name the header leaves out is "use of
    undeclared identifier" on AMD (checked with ROCm 7.2), while the NVIDIA build, which never
    includes the header, compiles. Typical after new code uses one more runtime call
    (`cudaMemPrefetchAsync` added beside mapped `cudaMallocManaged`). Every AMD target.

    ## Example
    ```cuda
    #ifdef __HIP_PLATFORM_AMD__  // what the project's cuda_to_hip.h does
    #include <hip/hip_runtime.h>
    #define cudaMalloc hipMalloc
    #define cudaMemcpy hipMemcpy
    #define cudaMemcpyHostToDevice hipMemcpyHostToDevice
    #endif
    void upload(float* d, const float* h, size_t n) { cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, 0); }
    ```

    ## Use instead
    Add the missing names to the header (the message names the HIP spelling from hiplint's rename
    table):
    ```cuda
    #ifdef __HIP_PLATFORM_AMD__
    #include <hip/hip_runtime.h>
    #define cudaMalloc hipMalloc
    #define cudaMemcpy hipMemcpy
    #define cudaMemcpyAsync hipMemcpyAsync
    #define cudaMemcpyHostToDevice hipMemcpyHostToDevice
    #endif
    void upload(float* d, const float* h, size_t n) { cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, 0); }
    ```

    ## References
    - HIP porting guide, "hipify" and compatibility headers: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    - AMD HPC training examples, the "hipifly" header approach: https://github.com/amd/HPCTrainingExamples/tree/main/hipifly
    """

    code = "API009"
    name = "compat-header-gap"
    summary = "CUDA name the project's AMD compatibility header does not map"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    in_macros = False
    checklist = "Add each CUDA name the AMD build meets to the project's compatibility header (`#define cudaX hipX`)."
    # Only names shaped like NVIDIA APIs reach check(): a call per identifier of every file costs a tenth of a scan.
    query = ("([(identifier) (type_identifier)] @name (#match? @name "
             "\"^(cuda[A-Z]|cu[A-Z][a-z]|CU[A-Z]+_[A-Z]|CUDA_[A-Z]|CUDART_|cublas|CUBLAS_|curand|CURAND_|cusolver|CUSOLVER_|"
             "cusparse|CUSPARSE_|cufft|CUFFT_|nvtx|NVTX_|nvrtc|NVRTC_)\"))")
    triggers = ("cuda", "cu", "CU", "nvtx", "NVTX", "nvrtc")

    def check(self, ctx, captures):
        table = load_table()
        candidates = [n for n in captures.get("name", ()) if API_NAME.match(ctx.text(n)) and ctx.text(n) in table.names
                      and not (n.parent is not None and n.parent.type in _MEMBER)]
        if not candidates:
            return
        compat = self._compat_headers(ctx)  # reads the project headers the file includes: only when needed
        if not compat:
            return
        from hiplint.headers import amd_macros
        macros = amd_macros(ctx)
        seen = ctx.cache.setdefault(("API009", "seen"), set())
        for node in candidates:
            name = ctx.text(node)
            if name in seen:
                continue
            if name in macros or in_preproc_condition(node) or _in_optional_block(ctx, node):
                continue
            if name in self._declared(ctx) or self._mentioned(ctx, name):
                continue
            seen.add(name)
            where = ", ".join(sorted(os.path.relpath(h, os.path.dirname(os.path.abspath(ctx.fs_path)))
                                     for h in compat))
            ctx.report(node, f"`{name}` is not mapped by the project's compatibility header ({where}), "
                             f"which the AMD build compiles this file with: on AMD it is an undeclared identifier; "
                             f"add `#define {name} {table.names[name]}` there", group="compat-gap")

    @staticmethod
    def _compat_headers(ctx) -> frozenset:
        """The project headers that map at least MIN_MAPPINGS CUDA names for AMD, as this file reaches them."""
        found = ctx.cache.get(("API009", "compat"))
        if found is not None:
            return found
        found = frozenset()
        if ctx.fs_path and not ctx.build_facts.hipified_at_build and ctx.language == "cuda":
            from hiplint.headers import amd_macros
            counts: dict = {}
            for name, macro in amd_macros(ctx).items():
                if not API_NAME.match(name):
                    continue
                if macro.hip_only or ctx.maps_to_amd(macro, name):
                    where = macro.header or os.path.abspath(ctx.fs_path)  # the file's own mapping block counts too
                    counts[where] = counts.get(where, 0) + 1
            found = frozenset(h for h, n in counts.items() if n >= MIN_MAPPINGS)
        ctx.cache[("API009", "compat")] = found
        return found

    @staticmethod
    def _declared(ctx) -> set:
        names = ctx.cache.get(("API009", "declared"))
        if names is None:
            names = ctx.cache[("API009", "declared")] = declared_names(ctx.units)
        return names

    @staticmethod
    def _mentioned(ctx, name: str) -> bool:
        """Does a project header the file includes name it at all (a typedef, a `using`, a wrapper)?"""
        from hiplint.headers import project_headers
        texts = ctx.cache.get(("API009", "texts"))
        if texts is None:
            texts = ctx.cache[("API009", "texts")] = [data for _, data in project_headers(ctx)]
        pattern = re.compile(rb"(?<![\w])" + re.escape(name.encode()) + rb"(?![\w])")
        return any(pattern.search(t) for t in texts)
