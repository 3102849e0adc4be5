import re

from hiplint.headers import amd_macros
from hiplint import CudaRule, Fix, Impact, Severity
from hiplint.cparse import defined_names, iter_nodes

# CUDA's cuda_runtime.h adds C++ overloads to the C runtime API (CUDA 13.0: templates on the kernel
# `T *func` / `T *entry` and on `T **pDevice`, and `cudaEventCreate(event, flags)`). ROCm 7.2's
# hip_runtime_api.h declares the calls below only with `const void*` (the kernel) or `void**` and has
# no such overload: an argument of another type is "no matching function for call to ...". Those HIP
# does template (hipMalloc, hipHostMalloc, hipHostAlloc, hipMallocManaged, hipMallocPitch, hipMallocAsync,
# the symbol copies, hipGetSymbolAddress/Size, hipOccupancy*) are not listed: the call compiles.
# Checked by compiling each call with nvcc 13.0 and with ROCm 7.2's clang 22.
#
# name -> index of the kernel argument (HIP: `const void* func`)
KERNEL_ARG = {
    "FuncGetAttributes": 1,
    "FuncSetCacheConfig": 0,
    "FuncSetSharedMemConfig": 0,
    "FuncSetAttribute": 0,
    "LaunchKernel": 0,
}
# name -> index of the `void**` out-argument (CUDA: `T **pDevice`)
POINTER_ARG = {"HostGetDevicePointer": 0}
# HIP's template `hipLaunchCooperativeKernel(T f, ..., unsigned sharedMemBytes, hipStream_t stream)` has no
# default arguments, and neither has the `const void*` one; CUDA's defaults are 0 and 0.
COOPERATIVE = "LaunchCooperativeKernel"
COOPERATIVE_ARGS = 6
# `cudaEventCreate(&e, flags)` is CUDA's C++ overload for cudaEventCreateWithFlags; HIP has the one-argument form only.
EVENT_CREATE = "EventCreate"

# CUDA 12 changed two graph calls' signatures; ROCm 7.2 keeps CUDA 11's (hip_runtime_api.h):
# `cudaGraphInstantiate(&exec, graph, flags)` is `hipGraphInstantiate(&exec, graph, errNode, log, size)` there,
# and CUDA's 3-argument form is `hipGraphInstantiateWithFlags` (cudaGraphInstantiateWithFlags since CUDA 11.4,
# the same call); `cudaGraphExecUpdate(exec, graph, &resultInfo)` is the 4-argument
# `hipGraphExecUpdate(exec, graph, &errNode, &result)` there, with no result-info struct.
GRAPH_INSTANTIATE = "GraphInstantiate"
GRAPH_EXEC_UPDATE = "GraphExecUpdate"
# CUDA 13's `cudaMemPrefetchAsync(ptr, n, cudaMemLocation, flags, stream)`: HIP's takes (ptr, n, device,
# stream); the location form is `hipMemPrefetchAsync_v2` (ROCm 7.2).
PREFETCH = "MemPrefetchAsync"
# CUDA 13's `cudaMemAdvise(ptr, n, advice, cudaMemLocation)`: HIP's takes a device; `hipMemAdvise_v2` the location.
ADVISE = "MemAdvise"

PREFIXES = ("cuda", "hip")
NAMES = tuple(p + n for p in PREFIXES for n in (*KERNEL_ARG, *POINTER_ARG, COOPERATIVE, EVENT_CREATE,
                                                GRAPH_INSTANTIATE, GRAPH_EXEC_UPDATE, PREFETCH, ADVISE))
# hipBLAS declares its half-precision calls with `hipblasHalf`, which hipblas.h (hipBLAS 3, ROCm 7.2) makes
# `uint16_t` unless HIPBLAS_USE_HIP_HALF is defined (then `__half`): cuBLAS's take `__half`.
HALF_BLAS = ("cublasHgemm", "cublasHgemmBatched", "cublasHgemmStridedBatched",  # cuBLAS has no Haxpy/Hdot
             "hipblasHaxpy", "hipblasHdot", "hipblasHgemm", "hipblasHgemmBatched", "hipblasHgemmStridedBatched")
HIP_HALF_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(?:define|undef|if|ifdef|ifndef|elif)\b[^\n]*\bHIPBLAS_USE_HIP_HALF\b", re.M)
HALF_POINTER_CAST = re.compile(r"\(\s*(?:const\s+)?(?:__)?half\s*\*+\s*\)|_cast\s*<\s*(?:const\s+)?(?:__)?half\s*\*")

_CASTS = frozenset({"reinterpret_cast", "static_cast", "const_cast"})


class MissingRuntimeOverload(CudaRule):
    """A runtime call that relies on a C++ overload CUDA has and HIP lacks: no matching function on AMD.

    ## What it does
    Finds calls that compile with nvcc only because `cuda_runtime.h` adds C++ overloads to the C
    runtime API, and that HIP (ROCm 7.2) declares without them, in CUDA and in HIP code:

    - the kernel passed as itself (a kernel name, `kernel<T>`, `&kernel`, a function pointer) to
      `cudaFuncGetAttributes`, `cudaFuncSetCacheConfig`, `cudaFuncSetSharedMemConfig`,
      `cudaFuncSetAttribute` and `cudaLaunchKernel`;
    - a typed pointer's address (`&float_ptr`, a `float**`) as the out-argument of
      `cudaHostGetDevicePointer`;
    - `cudaLaunchCooperativeKernel` with fewer than six arguments (shared memory and stream left to
      their defaults);
    - `cudaEventCreate(&event, flags)`, CUDA's two-argument form of `cudaEventCreateWithFlags`;
    - CUDA 12's `cudaGraphInstantiate(&exec, graph, flags)` (HIP keeps CUDA 11's five arguments; the
      fix calls `cudaGraphInstantiateWithFlags`, the same call since CUDA 11.4, which hipify maps to
      `hipGraphInstantiateWithFlags`) and `cudaGraphExecUpdate(exec, graph, &resultInfo)` (HIP keeps
      the four-argument form and has no result-info struct);
    - CUDA 13's `cudaMemPrefetchAsync(ptr, count, location, flags, stream)` (HIP's takes a device; the
      location form is `hipMemPrefetchAsync_v2` in ROCm 7.2), and `cudaMemAdvise` with a `cudaMemLocation`
      variable (`hipMemAdvise_v2`): one finding per call name and file, the other calls as related locations;
    - cuBLAS's half-precision calls (`cublasHgemm`, `cublasHgemmBatched`, `cublasHgemmStridedBatched`; in
      HIP code also `hipblasHaxpy` and `hipblasHdot`) with a `__half` pointer: hipBLAS declares them
      with `hipblasHalf`, `uint16_t` unless HIPBLAS_USE_HIP_HALF is defined (hipblas.h, hipBLAS 3 in ROCm
      7.2); not reported in a file that defines or tests HIPBLAS_USE_HIP_HALF, nor where the file or a
      project header it includes maps the HIP name to a wrapper of its own (`#define hipblasHgemm
      compat_hgemm`, outside branches the AMD build skips).

    Not reported: a kernel argument that is already a `void*` (a cast, a `void*`/`const void*`
    variable), a name a member function uses that the file declares nowhere (a class member, maybe a
    `void*`), a `void*`'s address, member and other expressions whose type the file does not show,
    a file that defines or declares the function itself (a project's shim), and the calls HIP
    overloads as CUDA does (`hipMalloc(&typed, n)`, `hipHostMalloc`, `hipHostAlloc`,
    `hipMallocManaged`, `hipMallocPitch`, `hipMallocAsync`, the symbol copies,
    `hipGetSymbolAddress`, the `hipOccupancy*` calls, `hipLaunchCooperativeKernel` with all six
    arguments).

    ## Why it breaks on AMD
    CUDA's C API takes the kernel as `const void*` and the device pointer as `void**`; its
    `cuda_runtime.h` adds templates (`cudaFuncGetAttributes(cudaFuncAttributes*, T* entry)`,
    `cudaHostGetDevicePointer(T** pDevice, void*, unsigned)`, ...) that cast the argument and call
    the C function, so CUDA code passes kernels and typed pointers directly. HIP's
    `hip_runtime_api.h` (ROCm 7.2) declares `hipFuncGetAttributes`, `hipFuncSetCacheConfig`,
    `hipFuncSetSharedMemConfig`, `hipFuncSetAttribute` and `hipLaunchKernel` with `const void*`
    only, and `hipHostGetDevicePointer` with `void**` only. C++ converts neither a function to
    `const void*` nor a `float**` to `void**` implicitly: "no matching function for call to
    'hipFuncGetAttributes'", a compile error after hipify or `hiplint migrate`. Its template
    `hipLaunchCooperativeKernel` has no default for the shared memory size and the stream, and
    `hipEventCreate` has one parameter. Every AMD target, every ROCm version so far (checked with
    ROCm 7.2 and clang 22).

    ## Example
    ```cuda
    __global__ void step(float* x);
    void query(cudaFuncAttributes* attr, float* host) {
        cudaFuncGetAttributes(attr, step);
        float* dev;
        cudaHostGetDevicePointer(&dev, host, 0);
    }
    ```

    ## Use instead
    ```cuda
    __global__ void step(float* x);
    void query(cudaFuncAttributes* attr, float* host) {
        cudaFuncGetAttributes(attr, reinterpret_cast<const void*>(step));
        float* dev;
        cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev), host, 0);
    }
    ```

    ## Fix
    Safe, each one what CUDA's own overload does, written out:
    the kernel becomes `reinterpret_cast<const void*>(kernel)` (CUDA's template passes
    `(const void*)entry` to the C function, which nvcc now calls directly; HIP's C function
    receives the same kernel address); the out-pointer becomes `reinterpret_cast<void**>(&p)` (CUDA's
    template casts `(void**)(void*)pDevice`); `cudaLaunchCooperativeKernel` gets the default
    arguments `0` (no dynamic shared memory) and `0` (the default stream) written out, which selects
    HIP's template; `cudaEventCreate(&e, flags)` becomes `cudaEventCreateWithFlags(&e, flags)`, the
    function CUDA's overload calls.

    ## References
    - HIP runtime API, execution control (`hipFuncGetAttributes`, `hipFuncSetAttribute`, `hipFuncSetCacheConfig`, `hipLaunchKernel`, `hipLaunchCooperativeKernel`): https://rocm.docs.amd.com/projects/HIP/en/latest/doxygen/html/group___execution.html
    - HIP runtime API, memory management (`hipHostGetDevicePointer(void**, void*, unsigned)`): https://rocm.docs.amd.com/projects/HIP/en/latest/doxygen/html/group___memory.html
    - HIP `hip_runtime_api.h` (the C++ templates HIP does have, at its end): https://github.com/ROCm/rocm-systems/blob/develop/projects/hip/include/hip/hip_runtime_api.h
    - CUDA runtime API, C++ API routines (`cudaFuncGetAttributes(cudaFuncAttributes*, T*)`, `cudaHostGetDevicePointer(T**, ...)`, `cudaEventCreate(cudaEvent_t*, unsigned)`, ...): https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__HIGHLEVEL.html
    """

    code = "API006"
    name = "missing-runtime-overload"
    summary = "runtime call relies on a C++ overload CUDA has and HIP lacks: no matching function on AMD"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    fix_availability = "sometimes"
    report_in_hip_branches = True  # HIP code written the CUDA way fails the same
    in_macros = False  # a macro parameter's type is unknown
    checklist = ("Pass the kernel as `reinterpret_cast<const void*>(kernel)` and typed out-pointers as "
                 "`reinterpret_cast<void**>(&p)`: HIP has no C++ template overloads of these runtime calls.")
    query = ("((call_expression function: (identifier) @fn arguments: (argument_list) @args) @call (#any-of? @fn "
             + " ".join(f'"{n}"' for n in NAMES + HALF_BLAS) + "))")

    def check(self, ctx, captures):
        fn_node, args = captures["fn"][0], captures["args"][0]
        fn = ctx.text(fn_node)
        if fn in defined_names(ctx):
            return  # the project's own function of that name
        if fn in HALF_BLAS:
            self._half_blas(ctx, fn, captures)
            return
        prefix = "cuda" if fn.startswith("cuda") else "hip"
        base = fn[len(prefix):]
        params = [a for a in args.named_children if a.type != "comment"]
        scope = ctx.function_scope(captures["call"][0])
        if base in KERNEL_ARG:
            i = KERNEL_ARG[base]
            if len(params) > i and _is_kernel(ctx, params[i], scope):
                arg = params[i]
                text = ctx.text(arg)
                ctx.report(arg, f"`{fn}` of the kernel `{text}`: HIP declares it with `const void*` only (CUDA's "
                                f"template overload is missing: \"no matching function\"); pass "
                                f"`reinterpret_cast<const void*>({text})`",
                           fix=Fix.safe("Pass the kernel as `const void*`",
                                        ctx.replace(arg, f"reinterpret_cast<const void*>({text})")))
        elif base in POINTER_ARG:
            i = POINTER_ARG[base]
            if len(params) > i and (typed := _typed_pointer_address(ctx, params[i], scope)) is not None:
                arg = params[i]
                text = ctx.text(arg)
                ctx.report(arg, f"`{fn}` of `{text}` (a `{typed}`): HIP declares it with `void**` only (CUDA's "
                                f"`T**` template is missing: \"no matching function\"); pass "
                                f"`reinterpret_cast<void**>({text})`",
                           fix=Fix.safe("Pass the pointer's address as `void**`",
                                        ctx.replace(arg, f"reinterpret_cast<void**>({text})")))
        elif base == COOPERATIVE:
            if 4 <= len(params) < COOPERATIVE_ARGS:
                missing = COOPERATIVE_ARGS - len(params)
                defaults = ", 0, 0" if missing == 2 else ", 0"
                end = params[-1]
                ctx.report(captures["call"][0],
                           f"`{fn}` with {len(params)} arguments: HIP's has no default shared memory size and "
                           f"stream (\"no matching function\"); pass them (`{defaults[2:]}`, CUDA's defaults)",
                           fix=Fix.safe("Pass CUDA's default shared memory size and stream",
                                        ctx.insert_after(end, defaults)))
        elif base == GRAPH_INSTANTIATE and len(params) == 3:
            new = prefix + "GraphInstantiateWithFlags"
            ctx.report(captures["call"][0],
                       f"`{fn}(&exec, graph, flags)` is CUDA 12's form; HIP keeps CUDA 11's five-argument "
                       f"`hipGraphInstantiate` (\"no matching function\"); call `{new}`, the same call since CUDA 11.4",
                       fix=Fix.safe(f"Call `{new}`", ctx.replace(fn_node, new)))
        elif base == GRAPH_EXEC_UPDATE and len(params) == 3:
            ctx.report(captures["call"][0],
                       f"`{fn}(exec, graph, &resultInfo)` is CUDA 12's form; HIP keeps CUDA 11's "
                       f"`hipGraphExecUpdate(exec, graph, &errorNode, &updateResult)` and has no result-info "
                       f"struct (\"no matching function\"): pass the error node and the result separately on AMD")
        elif base == PREFETCH and len(params) == 5:
            ctx.report(captures["call"][0],
                       f"`{fn}` with a memory location and flags is CUDA 13's form; HIP's `hipMemPrefetchAsync` "
                       f"takes (ptr, count, device, stream) (\"no matching function\"): on AMD call "
                       f"`hipMemPrefetchAsync_v2(ptr, count, location, flags, stream)` (ROCm 7.2) or pass the device",
                       group=fn)
        elif base == ADVISE and len(params) == 4 and (
                re.search(r"\b(?:cuda|hip)MemLocation\b", ctx.text(params[3])) or (
                params[3].type == "identifier" and (kind := _declared(ctx, scope, ctx.text(params[3]))) is not None
                and kind[0] == "other" and re.search(r"\b(?:cuda|hip)MemLocation\b", kind[1]))):
            ctx.report(captures["call"][0],
                       f"`{fn}` with a memory location is CUDA 13's form; HIP's `hipMemAdvise` takes a device "
                       f"(\"no matching function\"): on AMD call `hipMemAdvise_v2(ptr, count, advice, location)` "
                       f"(ROCm 7.2) or pass the device", group=fn)
        elif base == EVENT_CREATE:
            if len(params) == 2:
                new = prefix + "EventCreateWithFlags"
                ctx.report(captures["call"][0],
                           f"`{fn}(event, flags)` is CUDA's C++ overload of `cudaEventCreateWithFlags`; HIP's "
                           f"`hipEventCreate` takes the event only (\"no matching function\"); call `{new}`",
                           fix=Fix.safe(f"Call `{new}`", ctx.replace(fn_node, new)))


    @staticmethod
    def _half_blas(ctx, fn, captures):
        if HIP_HALF_DIRECTIVE.search(ctx.source.data):
            return  # the file asks hipBLAS for `__half` itself, or tests whether the build does
        hip_name = "hipblas" + fn[len("cublas"):] if fn.startswith("cublas") else fn
        if hip_name in amd_macros(ctx):
            return  # a compat header maps the HIP name to a wrapper of its own (`#define hipblasHgemm __compat_...`)
        args = [a for a in captures["args"][0].named_children if a.type != "comment"]
        scope = ctx.function_scope(captures["call"][0])
        for arg in args:
            text = ctx.text(arg)
            kind = _declared(ctx, scope, text) if arg.type == "identifier" else None
            if HALF_POINTER_CAST.search(text) or (kind is not None and kind[0] == "pointer"
                                                  and re.search(r"\b(?:__)?half\b", kind[1])):
                hip = "hipblas" + fn[len("cublas"):] if fn.startswith("cublas") else fn
                ctx.report(captures["call"][0],
                           f"`{fn}` with a `__half` pointer (`{text}`): hipBLAS declares `{hip}` with `hipblasHalf`, "
                           f"which is `uint16_t` unless HIPBLAS_USE_HIP_HALF is defined (\"no matching function\"): "
                           f"define HIPBLAS_USE_HIP_HALF in the AMD build, or cast to `hipblasHalf*` there")
                return


def _is_kernel(ctx, arg, scope) -> bool:
    """Is `arg` a function (a kernel, `kernel<T>`, `&kernel`, `ns::kernel`, a function pointer), not a void*?"""
    if arg.type == "template_function":
        return True
    if arg.type == "pointer_expression" and ctx.text(arg).startswith("&"):
        inner = arg.child_by_field_name("argument")
        return inner is not None and inner.type in ("identifier", "qualified_identifier", "template_function") and \
            _is_kernel(ctx, inner, scope)
    if arg.type == "qualified_identifier":
        name = arg.child_by_field_name("name")
        return name is not None and name.type in ("identifier", "template_function")
    if arg.type == "identifier":
        kind = _declared(ctx, scope, ctx.text(arg))
        if kind is None and _is_method(ctx, scope):
            return False  # in a member function, a name declared nowhere here may be a `void*` member
        # a function, a function pointer; or a name the file does not declare (a kernel from a header)
        return kind is None or kind[0] in ("function", "function pointer")
    return False


def _is_method(ctx, scope) -> bool:
    """Is `scope` a member function: defined in its class, or out of it (`void Stream::launch() {...}`)?"""
    if scope is None or scope.type != "function_definition":
        return False
    if ctx.enclosing(scope, {"class_specifier", "struct_specifier"}) is not None:
        return True
    declarator = scope.child_by_field_name("declarator")
    while declarator is not None and declarator.type not in ("function_declarator",):
        declarator = declarator.child_by_field_name("declarator")
    name = declarator.child_by_field_name("declarator") if declarator is not None else None
    return name is not None and name.type == "qualified_identifier"


def _typed_pointer_address(ctx, arg, scope):
    """The type of `arg` when it is the address of a pointer other than `void*` (`&p` with `float* p`, or a
    `float**` variable), else None."""
    if arg.type == "pointer_expression" and ctx.text(arg).startswith("&"):
        inner = arg.child_by_field_name("argument")
        if inner is None or inner.type != "identifier":
            return None
        kind = _declared(ctx, scope, ctx.text(inner))
        if kind is not None and kind[0] == "pointer" and not (kind[1] == "void" and kind[2] == 1):
            return kind[1] + "*" * kind[2] + "*"
        return None
    if arg.type == "identifier":
        kind = _declared(ctx, scope, ctx.text(arg))
        if kind is not None and kind[0] == "pointer" and kind[2] >= 2 and not (kind[1] == "void" and kind[2] == 2):
            return kind[1] + "*" * kind[2]
    return None


_DECLS = frozenset({"declaration", "parameter_declaration", "optional_parameter_declaration", "function_definition"})


def _declared(ctx, scope, name: str):
    """What `name` is declared as, looking in the function and then at file level: ("function",),
    ("function pointer",), ("pointer", base type, depth), ("other",), or None (not declared here)."""
    for where in ((scope,) if scope is not None and scope.id != ctx.unit.root.id else ()) + (ctx.unit.root,):
        found = _declarations(ctx, where).get(name)
        if found is not None:
            return found
    return None


def _declarations(ctx, where) -> dict:
    key = ("api006_decls", id(ctx.unit), where.id)
    cached = ctx.cache.get(key)
    if cached is not None:
        return cached
    found: dict = {}
    top = where.type == "translation_unit"
    for node in iter_nodes(where, _DECLS):
        if top and node.type != "function_definition" and ctx.enclosing_function(node) is not None:
            continue  # a local of some function: not visible at file level
        ty = node.child_by_field_name("type")
        base = " ".join(ctx.text(ty).split()) if ty is not None else ""
        for d in node.children_by_field_name("declarator"):
            kind = _declarator_kind(ctx, d, base)
            if kind is not None:
                found.setdefault(kind[0], kind[1])
    ctx.cache[key] = found
    return found


def _declarator_kind(ctx, d, base):
    """(name, kind) for one declarator."""
    if d.type == "init_declarator":
        d = d.child_by_field_name("declarator")
    depth = 0
    while d is not None:
        if d.type == "identifier":
            if depth == 0:
                return ctx.text(d), ("other", base)
            return ctx.text(d), ("pointer", base, depth)
        if d.type == "pointer_declarator":
            depth += 1
            d = d.child_by_field_name("declarator")
        elif d.type == "function_declarator":
            inner = d.child_by_field_name("declarator")
            while inner is not None and inner.type == "parenthesized_declarator":
                inner = inner.named_children[0] if inner.named_children else None
                if inner is not None and inner.type == "pointer_declarator":
                    ident = inner.child_by_field_name("declarator")
                    if ident is not None and ident.type == "identifier":
                        return ctx.text(ident), ("function pointer",)
                    return None
            if inner is not None and inner.type in ("identifier", "qualified_identifier"):
                return ctx.text(inner).split("::")[-1], ("function",)
            return None
        elif d.type in ("reference_declarator", "parenthesized_declarator"):
            d = d.named_children[0] if d.named_children else None
        else:
            return None
    return None
