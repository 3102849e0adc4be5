"""cuRAND rules that need more than a name: state types, thread-derived arguments, counts, goldens."""
from __future__ import annotations

import re

from hiplint import CudaRule, Fix, Impact, Severity
from hiplint.rules._calls import (base_identifier, call_args, call_name, declared_type, initializer_text, int_value,
                                  thread_derived)
from hiplint.lazy import lazy_re

INIT_CALLS = ("curand_init", "hiprand_init")
SKIP_CALLS = ("skipahead", "skipahead_sequence", "skipahead_subsequence")
XORWOW_STATE = lazy_re(r"^(curand|hiprand)State(XORWOW)?(_t)?$")
MTGP32_STATE = lazy_re(r"^(curand|hiprand)StateMtgp32(_t)?$")
MTGP32_DEVICE_ONLY = ("curand_mtgp32_single", "curand_mtgp32_single_specific", "curand_mtgp32_specific")
PHILOX = {"curand": "curandStatePhilox4_32_10_t", "hiprand": "hiprandStatePhilox4_32_10_t"}


def _state_type(ctx, call, index: int) -> tuple[str, object]:
    args = call_args(call)
    if len(args) <= index:
        return "", None
    scope = ctx.function_scope(call)
    text, node = declared_type(ctx, scope, base_identifier(args[index]))
    return text.strip(), node


class XorwowPerThreadInit(CudaRule):
    """XORWOW states initialised per thread through the subsequence, or with per-thread seeds.

    ## What it does
    Finds `curand_init(seed, subsequence, offset, &state)` (or `hiprand_init`) on an XORWOW state
    (`curandState`, `curandState_t`, `curandStateXORWOW_t`) where the subsequence comes from the
    thread index, and the workaround where the seed comes from the thread index and the subsequence
    is a constant 0.

    ## Why it breaks on AMD
    A subsequence of XORWOW is 2^67 draws away; rocRAND's `discard_subsequence` reaches it with, for
    each base-4 digit of the subsequence, up to three products of a 160x160-bit jump matrix (read
    from a device table, `d_xorwow_sequence_jump_matrices`) with the state, so a kernel that
    initialises a state per thread spends much of its time in `hiprand_init` on AMD, as it does in
    `curand_init` on NVIDIA. The usual workaround, a different seed per thread with subsequence 0, gives
    streams with no independence guarantee (cuRAND's documentation warns that some seed choices
    correlate), and a low-bit skew was reported for consecutive seeds on rocRAND
    (ROCm/rocRAND#556). Philox 4x32-10 is counter based: any subsequence costs O(1). All targets.

    ## Example
    ```cuda
    __global__ void setup(float* out, unsigned long long seed) {
        int tid = blockIdx.x * blockDim.x + threadIdx.x;
        curandState s;
        curand_init(seed, tid, 0, &s);
        out[tid] = curand_uniform(&s);
    }
    ```

    ## Use instead
    ```cuda
    __global__ void setup(float* out, unsigned long long seed) {
        int tid = blockIdx.x * blockDim.x + threadIdx.x;
        curandStatePhilox4_32_10_t s;
        curand_init(seed, tid, 0, &s);
        out[tid] = curand_uniform(&s);
    }
    ```

    ## Fix
    Unsafe, for a state declared as a local variable: its type becomes
    `curandStatePhilox4_32_10_t` (`hiprandStatePhilox4_32_10_t` in HIP spelling). The random stream
    changes; states passed in from elsewhere (kernel parameters) are left to you, since their
    allocation size changes too.

    ## References
    - rocRAND XORWOW skip-ahead (`jump`, `discard_subsequence`): https://github.com/ROCm/rocRAND/blob/dc3656f/library/include/rocrand/rocrand_xorwow.h
    - cuRAND device API, "Performance notes" (seeds vs subsequences): https://docs.nvidia.com/cuda/curand/device-api-overview.html
    - ROCm/rocRAND#556 (seed-per-thread skew report): https://github.com/ROCm/rocRAND/issues/556
    - hipRAND device API: https://github.com/ROCm/hipRAND/blob/develop/library/include/hiprand/hiprand_kernel_rocm.h
    """

    code = "RND003"
    report_in_hip_branches = True  # wrong on AMD wherever it is written
    name = "xorwow-per-thread-init"
    summary = "XORWOW state initialised per thread"
    severity = Severity.WARNING
    impact = Impact.PERFORMANCE
    fix_availability = "sometimes"
    checklist = "Switch per-thread XORWOW states to Philox (curandStatePhilox4_32_10_t / hiprandStatePhilox4_32_10_t) with subsequence = thread id; regenerate any stored results."
    query = """((call_expression function: (identifier) @fn) @call (#any-of? @fn "curand_init" "hiprand_init"))"""

    def check(self, ctx, captures):
        call = captures["call"][0]
        args = call_args(call)
        if len(args) != 4:
            return
        type_text, type_node = _state_type(ctx, call, 3)
        if not XORWOW_STATE.match(type_text):
            return
        scope = ctx.function_scope(call)
        seed, sub = args[0], args[1]
        prefix = "hiprand" if type_text.startswith("hiprand") else "curand"
        if thread_derived(ctx, scope, sub):
            fix = None
            decl = type_node.parent if type_node is not None else None
            if decl is not None and decl.type == "declaration" and ctx.enclosing_function(decl) is not None:
                fix = Fix.unsafe(f"use {PHILOX[prefix]} (changes the random stream)", ctx.replace(type_node, PHILOX[prefix]))
            ctx.report(call, f"XORWOW `{type_text}` initialised per thread through the subsequence "
                             f"(`{ctx.text(sub)}`): each init is a costly skip-ahead on rocRAND; "
                             f"use {PHILOX[prefix]} (O(1) subsequences)", fix=fix)
        elif thread_derived(ctx, scope, seed) and int_value(ctx.text(sub)) == 0:
            ctx.report(call, f"per-thread seeds (`{ctx.text(seed)}`) with subsequence 0 on XORWOW: streams have no "
                             f"independence guarantee (skew reported on rocRAND, ROCm/rocRAND#556); use one seed "
                             f"with subsequence = thread id on {PHILOX[prefix]}",
                       checklist="Use one seed and the thread id as Philox subsequence instead of per-thread seeds.")


class Mtgp32DeviceApi(CudaRule):
    """MTGP32 device API that hipRAND does not have.

    ## What it does
    Finds `curand_mtgp32_single`, `curand_mtgp32_single_specific` and `curand_mtgp32_specific`, and
    `curand_init`/`hiprand_init`/`skipahead` on a `curandStateMtgp32_t` (or hipRAND) state.

    ## Why it breaks on AMD
    hipRAND has none of the `curand_mtgp32_*specific` helpers (hipify leaves them), and its
    `hiprand_init` and `skipahead` `static_assert` on MTGP32 states ("hiprandStateMtgp32_t does not
    have hiprand_init function, check hiprandMakeMTGP32KernelState()"). rocRAND's MTGP32 state is
    shared by a whole block and advanced cooperatively (it reads `threadIdx` and synchronises), like
    cuRAND's, so MTGP32 states are only ever built on the host. All targets and ROCm versions.

    ## Example
    ```cuda
    __global__ void draw(curandStateMtgp32_t* states, float* out) {
        out[threadIdx.x] = curand_mtgp32_single_specific(&states[blockIdx.x], threadIdx.x, blockDim.x);
    }
    ```

    ## Use instead
    ```cuda
    __global__ void draw(curandStateMtgp32_t* states, float* out) {
        out[blockIdx.x * blockDim.x + threadIdx.x] = curand_uniform(&states[blockIdx.x]);
    }
    // host: curandMakeMTGP32Constants + curandMakeMTGP32KernelState, one state per block (at most 256 threads)
    ```

    ## References
    - hipRAND device API (MTGP32 static_asserts, hiprand_mtgp32_block_copy): https://github.com/ROCm/hipRAND/blob/develop/library/include/hiprand/hiprand_kernel_rocm.h
    - rocRAND MTGP32 state: https://github.com/ROCm/rocRAND/blob/develop/library/include/rocrand/rocrand_mtgp32.h
    - cuRAND MTGP32 device API: https://docs.nvidia.com/cuda/curand/device-api-overview.html#bit-generation-with-the-mtgp32-generator
    """

    code = "RND004"
    report_in_hip_branches = True  # wrong on AMD wherever it is written
    name = "mtgp32-device-api"
    summary = "MTGP32 device API without a hipRAND equivalent"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    checklist = "Build MTGP32 states on the host (hiprandMakeMTGP32Constants/KernelState), draw with hiprand()/hiprand_uniform() one state per block, or switch to Philox."
    query = """((call_expression function: (identifier) @fn) @call
      (#any-of? @fn "curand_mtgp32_single" "curand_mtgp32_single_specific" "curand_mtgp32_specific"
                    "curand_init" "hiprand_init" "skipahead" "skipahead_sequence" "skipahead_subsequence"))"""

    def check(self, ctx, captures):
        call = captures["call"][0]
        name = call_name(ctx, call)
        if name in MTGP32_DEVICE_ONLY:
            ctx.report(call, f"`{name}` has no hipRAND equivalent; draw with curand()/curand_uniform() on the "
                             f"block's MTGP32 state, or switch to Philox")
            return
        index = 3 if name in INIT_CALLS else 1
        type_text, _ = _state_type(ctx, call, index)
        if MTGP32_STATE.match(type_text):
            ctx.report(call, f"`{name}` on an MTGP32 state: hipRAND static_asserts (no device init or skip-ahead for "
                             f"MTGP32); build states on the host with hiprandMakeMTGP32KernelState")


NORMAL_CALLS = ("curandGenerateNormal", "curandGenerateNormalDouble", "curandGenerateLogNormal",
                "curandGenerateLogNormalDouble", "hiprandGenerateNormal", "hiprandGenerateNormalDouble",
                "hiprandGenerateLogNormal", "hiprandGenerateLogNormalDouble")


class NormalOddCount(CudaRule):
    """Normal or log-normal host generation with an odd count or an odd element offset.

    ## What it does
    Finds `curandGenerateNormal`, `...NormalDouble`, `...LogNormal`, `...LogNormalDouble` (and the
    hipRAND names) whose count is an odd constant (a literal, or a local initialised with one), or
    whose output pointer is offset by an odd constant number of elements. Counts that are not
    constants are left alone.

    ## Why it breaks on AMD
    Box-Muller produces pairs: cuRAND and hipRAND's header both document
    `LENGTH_NOT_MULTIPLE` when n is odd or the output is not aligned to two elements. On AMD,
    hipRAND forwards straight to `rocrand_generate_normal`, and rocRAND returns
    `ROCRAND_STATUS_LENGTH_NOT_MULTIPLE` only from its quasi-random (Sobol) dimension check, so the same call succeeds on AMD and fails on NVIDIA (and code written
    on AMD breaks on NVIDIA). All targets.

    ## Example
    ```cuda
    curandGenerateNormal(gen, d_out, 1001, 0.0f, 1.0f);
    ```

    ## Use instead
    ```cuda
    curandGenerateNormal(gen, d_out, 1002, 0.0f, 1.0f);  // allocate n rounded up to even
    ```

    ## References
    - hipRAND `hiprandGenerateNormal` (status LENGTH_NOT_MULTIPLE): https://github.com/ROCm/hipRAND/blob/develop/library/include/hiprand/hiprand.h
    - hipRAND AMD backend (forwards to rocRAND): https://github.com/ROCm/hipRAND/blob/develop/library/src/amd_detail/hiprand.cpp
    - rocRAND sources (the status is returned only in `rng/sobol.hpp`): https://github.com/ROCm/rocRAND/blob/dc3656f/library/src/rng/sobol.hpp
    - cuRAND `curandGenerateNormal`: https://docs.nvidia.com/cuda/curand/group__HOST.html
    """

    code = "RND005"
    name = "normal-odd-count"
    summary = "normal generation with an odd count or unaligned output"
    severity = Severity.WARNING
    impact = Impact.RUNTIME
    checklist = "Round normal/log-normal counts up to even and keep outputs aligned to two elements; check the returned status."
    query = """((call_expression function: (identifier) @fn) @call (#any-of? @fn %s))""" % " ".join(f'"{n}"' for n in NORMAL_CALLS)

    def check(self, ctx, captures):
        call = captures["call"][0]
        args = call_args(call)
        if len(args) < 3:
            return
        scope = ctx.function_scope(call)
        n = self._constant(ctx, scope, args[2])
        if n is not None and n % 2 == 1:
            ctx.report(args[2], f"odd count {n} for `{call_name(ctx, call)}`: cuRAND returns LENGTH_NOT_MULTIPLE, "
                                f"hipRAND on AMD does not; round up to even")
            return
        out = args[1]
        if out.type == "binary_expression" and ctx.text(out.child_by_field_name("operator")) in ("+", "-"):
            k = self._constant(ctx, scope, out.child_by_field_name("right"))
            if k is not None and k % 2 == 1:
                ctx.report(out, f"output offset by {k} elements is not aligned to two elements: cuRAND returns "
                                f"LENGTH_NOT_MULTIPLE, hipRAND on AMD does not")

    @staticmethod
    def _constant(ctx, scope, node):
        if node is None:
            return None
        value = int_value(ctx.text(node))
        if value is None and node.type == "identifier":
            value = int_value(initializer_text(ctx, scope, ctx.text(node)))
        return value
