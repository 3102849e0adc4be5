import re

from hiplint import CudaRule, Impact, Severity
from hiplint.cparse import iter_nodes

from ._values import call_args, call_name
from hiplint.lazy import lazy_re

# Allocations that return fine-grained (coherent) host memory on AMD: name -> index of the out-pointer
# argument (`&p`), or of the pointer registered in place.
FINE_GRAINED_OUT = {"cudaHostAlloc": 0, "cudaMallocHost": 0, "cudaMallocManaged": 0, "hipHostMalloc": 0,
                    "hipHostAlloc": 0, "hipMallocHost": 0, "hipMallocManaged": 0, "hipExtHostAlloc": 0,
                    "cudaHostGetDevicePointer": 0, "hipHostGetDevicePointer": 0}
FINE_GRAINED_IN_PLACE = {"cudaHostRegister": 0, "hipHostRegister": 0}
COARSE_FLAGS = lazy_re(r"NonCoherent")  # hipHostMallocNonCoherent gives coarse-grained memory
FLOAT_ATOMICS = frozenset({"atomicAdd", "atomicSub", "atomicAdd_system", "unsafeAtomicAdd", "atomicMax", "atomicMin",
                           "atomicAdd_block"})
FLOAT_TYPES = ("float", "double")
LAUNCH_ARG_OFFSET = {"hipLaunchKernelGGL": 5}


def _base_identifier(ctx, node):
    """`p` for p, &p[i], p + i, &p[i].x, (float*)p: the pointer the expression addresses."""
    while node is not None:
        t = node.type
        if t == "identifier":
            return ctx.text(node)
        if t in ("pointer_expression", "parenthesized_expression", "cast_expression"):
            node = node.child_by_field_name("argument") or node.child_by_field_name("value") or \
                (node.named_children[-1] if node.named_children else None)
        elif t == "subscript_expression":
            node = node.child_by_field_name("argument")
        elif t == "field_expression":
            node = node.child_by_field_name("argument")
        elif t == "binary_expression":
            node = node.child_by_field_name("left")
        else:
            return None
    return None


def _declarator_name(ctx, decl):
    d = decl
    while d is not None and d.type != "identifier":
        d = d.child_by_field_name("declarator")
    return ctx.text(d) if d is not None else None


class FpAtomicsOnFineGrainedMemory(CudaRule):
    """Float/double atomics on host-coherent (fine-grained) memory: silently wrong with fast FP atomics on AMD.

    ## What it does
    Follows pointers allocated with `cudaHostAlloc`, `cudaMallocHost`, `cudaHostRegister`,
    `cudaHostGetDevicePointer` or `cudaMallocManaged` (and the `hip` spellings, except
    `hipHostMallocNonCoherent` allocations) to kernel launches in the same function, and reports the
    launch argument when the kernel does `atomicAdd`, `atomicSub`, `atomicMax`, `atomicMin` or
    `unsafeAtomicAdd` on the matching `float*` / `double*` parameter. Float atomics on `__managed__`
    variables are reported in the kernel. AMD-only `#if` branches are checked too.

    ## Why it breaks on AMD
    HIP pinned host memory is coherent (fine-grained) by default, and managed memory without XNACK is
    host memory too. AMD's hardware floating-point atomic instructions do not work on fine-grained
    memory reached over PCIe on some devices: HIP documents that "some devices produce incorrect
    answers if fast floating-point atomic instructions target fine-grained memory". By default the
    compiler emits a compare-and-swap loop (correct, slower), but `unsafeAtomicAdd`, builds with
    `-munsafe-fp-atomics` (common for speed; frameworks add it) and hardware atomics on gfx90a make
    the same code lose updates silently. On NVIDIA the same code is correct. Applies to gfx90a and
    gfx942 in particular; every ROCm version.

    ## Example
    ```cuda
    __global__ void hist(const int* idx, float* bins, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) atomicAdd(&bins[idx[i]], 1.0f);
    }
    void run(const int* idx, int n) {
        float* bins;
        cudaHostAlloc(&bins, 256 * sizeof(float), cudaHostAllocMapped);
        hist<<<(n + 255) / 256, 256>>>(idx, bins, n);
    }
    ```

    ## Use instead
    ```cuda
    __global__ void hist(const int* idx, float* bins, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) atomicAdd(&bins[idx[i]], 1.0f);
    }
    void run(const int* idx, float* host_bins, int n) {
        float* bins;
        cudaMalloc(&bins, 256 * sizeof(float));
        hist<<<(n + 255) / 256, 256>>>(idx, bins, n);
        cudaMemcpy(host_bins, bins, 256 * sizeof(float), cudaMemcpyDeviceToHost);
    }
    ```
    Accumulate in device memory and copy back, or allocate with `hipHostMallocNonCoherent` on AMD,
    or use `safeAtomicAdd` for these pointers and never build them with `-munsafe-fp-atomics`.

    ## References
    - HIP C++ language extensions, "Unsafe floating-point atomic operations" (fine-grained memory, -munsafe-fp-atomics, safeAtomicAdd/unsafeAtomicAdd): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html
    - HIP host memory (coherent by default, hipHostMallocNonCoherent): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_runtime_api/memory_management/host_memory.html
    - Clang, `-munsafe-fp-atomics` ("may give incorrect results for certain memory destinations"): https://clang.llvm.org/docs/ClangCommandLineReference.html
    """

    code = "MEM006"
    triggers = tuple(sorted(FLOAT_ATOMICS))  # every finding is about a float atomic in a kernel of the file
    name = "fp-atomics-on-fine-grained-memory"
    summary = "floating-point atomics on fine-grained host memory can silently lose updates on AMD"
    severity = Severity.WARNING
    impact = Impact.SILENT
    # The hip* allocations and hipLaunchKernelGGL sit in AMD-only branches of single-source code: wrong there too.
    report_in_hip_branches = True
    checklist = "Keep float atomics on device memory (or hipHostMallocNonCoherent buffers); never combine -munsafe-fp-atomics/unsafeAtomicAdd with pinned or managed memory."

    def check_unit(self, ctx):
        unit = ctx.unit
        if unit.is_macro:
            return
        kernels = self._kernels(ctx)
        managed = self._managed_globals(ctx)
        for fn in iter_nodes(unit.root, {"function_definition"}):
            if self._is_kernel(ctx, fn):
                self._managed_atomics(ctx, fn, managed)
            else:
                self._host_function(ctx, fn, kernels)

    # Kernels: name -> {parameter index: (atomic name, line)} for float atomics on float/double params.
    def _kernels(self, ctx):
        out = {}
        for fn in iter_nodes(ctx.unit.root, {"function_definition"}):
            if not self._is_kernel(ctx, fn):
                continue
            decl = fn.child_by_field_name("declarator")
            name = _declarator_name(ctx, decl)
            fdecl = decl
            while fdecl is not None and fdecl.type != "function_declarator":
                fdecl = fdecl.child_by_field_name("declarator")
            if fdecl is None or name is None:
                continue
            params = fdecl.child_by_field_name("parameters")
            float_params = {}
            for i, p in enumerate(x for x in params.named_children if x.type == "parameter_declaration"):
                ty = p.child_by_field_name("type")
                d = p.child_by_field_name("declarator")
                if ty is None or d is None or ctx.text(ty).replace("const", "").strip() not in FLOAT_TYPES:
                    continue
                if "*" not in ctx.text(d):
                    continue
                pname = _declarator_name(ctx, d)
                if pname:
                    float_params[pname] = i
            hits = {}
            for call in iter_nodes(fn, {"call_expression"}):
                if call_name(ctx, call) in FLOAT_ATOMICS:
                    args = call_args(call)
                    base = _base_identifier(ctx, args[0]) if args else None
                    if base in float_params:
                        hits.setdefault(float_params[base], (call_name(ctx, call), ctx.source.position(ctx.file_range(call)[0])[0]))
            out[name] = hits
        return out

    @staticmethod
    def _is_kernel(ctx, fn):
        return any(ctx.text(c) == "__global__" for c in fn.children if c.type not in ("compound_statement",))

    def _managed_globals(self, ctx):
        names = set()
        for decl in ctx.unit.root.named_children:
            if decl.type != "declaration":
                continue
            words = [ctx.text(c) for c in decl.children if c.type == "type_qualifier"]
            ty = decl.child_by_field_name("type")
            if "__managed__" in words and ty is not None and ctx.text(ty) in FLOAT_TYPES:
                for d in decl.children_by_field_name("declarator"):
                    n = _declarator_name(ctx, d)
                    if n:
                        names.add(n)
        return names

    def _managed_atomics(self, ctx, fn, managed):
        if not managed:
            return
        for call in iter_nodes(fn, {"call_expression"}):
            name = call_name(ctx, call)
            if name in FLOAT_ATOMICS:
                args = call_args(call)
                base = _base_identifier(ctx, args[0]) if args else None
                if base in managed:
                    ctx.report(call, f"`{name}` on the `__managed__` float `{base}`: managed memory is fine-grained host "
                                     f"memory on AMD without XNACK; fast FP atomics there lose updates silently")

    def _host_function(self, ctx, fn, kernels):
        fine = {}
        for call in iter_nodes(fn, {"call_expression"}):
            name = call_name(ctx, call)
            args = call_args(call)
            if name in FINE_GRAINED_OUT and args:
                if any(COARSE_FLAGS.search(ctx.text(a)) for a in args[1:]):
                    continue
                base = _base_identifier(ctx, args[FINE_GRAINED_OUT[name]])
                if base:
                    fine[base] = name
            elif name in FINE_GRAINED_IN_PLACE and args:
                base = _base_identifier(ctx, args[FINE_GRAINED_IN_PLACE[name]])
                if base:
                    fine[base] = name
        if not fine:
            return
        for call in iter_nodes(fn, {"call_expression"}):
            name = call_name(ctx, call)
            config = next((c for c in call.children if c.type == "kernel_call_syntax"), None)
            args = call_args(call)
            if config is None:
                if name not in LAUNCH_ARG_OFFSET or not args:
                    continue
                kernel = ctx.text(args[0])
                args = args[LAUNCH_ARG_OFFSET[name]:]
            else:
                kernel = name
            hits = kernels.get(kernel, {})
            for i, arg in enumerate(args):
                base = _base_identifier(ctx, arg)
                if i in hits and base in fine and arg.type in ("identifier", "binary_expression", "cast_expression"):
                    atomic, line = hits[i]
                    ctx.report(arg, f"`{base}` comes from `{fine[base]}` (fine-grained host memory on AMD) and `{kernel}` "
                                    f"applies `{atomic}` to it (line {line}): fast FP atomics on fine-grained memory lose "
                                    f"updates silently (unsafeAtomicAdd, -munsafe-fp-atomics)")
