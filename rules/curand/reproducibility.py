"""cuRAND rules about a whole file: golden-value comparisons, the device API header."""
from __future__ import annotations

import re

from hiplint import CudaRule, Fix, Impact, Severity
from hiplint.rule import computed_once
from hiplint.cparse import iter_nodes
from hiplint.rules._apitable import load_table
from hiplint.rules._calls import call_args, call_name, declared_type, base_identifier
from hiplint.lazy import lazy_re

CREATE_CALLS = ("curandCreateGenerator", "curandCreateGeneratorHost", "hiprandCreateGenerator", "hiprandCreateGeneratorHost")
INIT_CALLS = ("curand_init", "hiprand_init")
# rocRAND reproduces cuRAND only for these (legacy ordering, same seed, offset and dimensions).
COMPATIBLE = lazy_re(r"(CURAND|HIPRAND)_RNG_QUASI_SOBOL(32|64)$|^(curand|hiprand)StateSobol(32|64)(_t)?$")
GOLDEN_NAME = lazy_re(r"(?i)golden|expected|reference|baseline|^ref_|_ref$|^ref$|^kRef")
COMPARE_CALLS = frozenset({"memcmp", "assert", "EXPECT_EQ", "ASSERT_EQ", "EXPECT_FLOAT_EQ", "ASSERT_FLOAT_EQ",
                           "EXPECT_DOUBLE_EQ", "ASSERT_DOUBLE_EQ", "EXPECT_NEAR", "ASSERT_NEAR", "CHECK_EQ",
                           "REQUIRE", "CHECK", "EXPECT_TRUE", "ASSERT_TRUE", "std::equal", "equal"})


def _golden_comparison(ctx, root):
    """The first comparison of something with stored expected values in the unit, or None."""
    for node in iter_nodes(root, frozenset({"binary_expression", "call_expression"})):
        if node.type == "binary_expression":
            op = node.child_by_field_name("operator")
            if op is None or ctx.text(op) not in ("==", "!=", "<", ">", "<=", ">="):
                continue
            operands = (node.child_by_field_name("left"), node.child_by_field_name("right"))
        else:
            fn = node.child_by_field_name("function")
            if fn is None or ctx.text(fn) not in COMPARE_CALLS:
                continue
            operands = tuple(call_args(node))
        for operand in operands:
            if operand is None:
                continue
            for ident in iter_nodes(operand, frozenset({"identifier"})):
                if GOLDEN_NAME.search(ctx.text(ident)):
                    return node
    return None


class GoldenRandomValues(CudaRule):
    """Random output compared with stored values: rocRAND's sequences differ from cuRAND's.

    ## What it does
    In a file that compares values with stored expectations (an operand named `golden`, `expected`,
    `reference`, `ref_*`, `baseline` in `==`, `memcmp`, `EXPECT_EQ`/`EXPECT_NEAR`, `assert`, ...),
    reports each random generator once: every `curandCreateGenerator(Host)` call, and the first
    `curand_init` per state type. Sobol32 and Sobol64 (unscrambled) are exempt.

    ## Why it breaks on AMD
    rocRAND (behind hipRAND) reproduces cuRAND's output, with legacy ordering and the same seed,
    offset and dimensions, only for Sobol32 and Sobol64. XORWOW (the default), MRG32k3a, MTGP32,
    Philox 4x32-10, MT19937 and the scrambled Sobol generators produce different numbers, so golden
    outputs recorded on NVIDIA fail on AMD. The statistics are the same; the test is wrong. Every
    target and ROCm version.

    ## Example
    ```cuda
    void test() {
        curandGenerator_t gen;
        curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_XORWOW);
        curandGenerateUniform(gen, d, 4);
        for (int i = 0; i < 4; ++i) assert(h[i] == expected[i]);
    }
    ```

    ## Use instead
    ```cuda
    void test() {
        curandGenerator_t gen;
        curandCreateGenerator(&gen, CURAND_RNG_QUASI_SOBOL32);
        curandGenerateUniform(gen, d, 4);
        for (int i = 0; i < 4; ++i) assert(h[i] == expected[i]);
    }
    ```
    Or keep the generator and test statistics (mean, variance, a KS test) instead of values, or
    record goldens per vendor.

    ## References
    - rocRAND cuRAND compatibility table: https://rocm.docs.amd.com/projects/rocRAND/en/latest/conceptual/curand-compatibility.html
    - rocRAND programmer's guide (default generator and ordering): https://rocm.docs.amd.com/projects/rocRAND/en/latest/conceptual/programmers-guide.html
    """

    code = "RND006"
    name = "golden-random-values"
    summary = "random sequence compared with stored values differs on AMD"
    severity = Severity.WARNING
    impact = Impact.SILENT
    checklist = "Regenerate golden random outputs per vendor or test statistical properties; only Sobol32/Sobol64 match cuRAND."
    # check_unit reports only the calls check collected: a file without one of these names has none
    # (so the rule is not even imported for it: hiplint.manifest).
    triggers = CREATE_CALLS + INIT_CALLS
    query = """((call_expression function: (identifier) @fn) @call
      (#any-of? @fn "curandCreateGenerator" "curandCreateGeneratorHost" "hiprandCreateGenerator"
                    "hiprandCreateGeneratorHost" "curand_init" "hiprand_init"))"""

    def check(self, ctx, captures):
        if ctx.unit.is_macro:
            return
        call = captures["call"][0]
        name = call_name(ctx, call)
        args = call_args(call)
        if name in CREATE_CALLS:
            kind = ctx.text(args[1]) if len(args) > 1 else "?"
        else:
            kind, _ = declared_type(ctx, ctx.function_scope(call), base_identifier(args[-1]) if args else None)
            kind = kind.strip() or "?"
        if COMPATIBLE.search(kind):
            return
        ctx.cache.setdefault(("RND006", "generators"), []).append((call, name, kind))

    def check_unit(self, ctx):
        if ctx.unit.is_macro:
            return
        generators = ctx.cache.pop(("RND006", "generators"), [])
        if not generators:
            return
        compare = _golden_comparison(ctx, ctx.unit.root)
        if compare is None:
            return
        line = ctx.source.line_of(ctx.file_range(compare)[0])
        seen_states = set()
        for call, name, kind in generators:
            if name in INIT_CALLS:
                if kind in seen_states:
                    continue
                seen_states.add(kind)
            what = f"`{kind}` generator" if name in CREATE_CALLS else f"`{kind}` device states"
            ctx.report(call, f"{what}: rocRAND's sequence differs from cuRAND's for the same seed (only Sobol32/Sobol64 "
                             f"match), so the comparison with stored values on line {line} fails on AMD")


def _device_names() -> frozenset[str]:
    return frozenset(n for r in load_table("curand").rows if r.family == "device" and r.status != "unsupported"
                     for n in (r.cuda, r.hip) if n and n.startswith(("curand", "hiprand")))
# hipRAND's C++ wrapper `hiprand/hiprand.hpp` includes hiprand_kernel.h (ROCm 7.2 headers), as rocRAND's
# `rocrand.hpp` includes its kernel header.
KERNEL_HEADERS = lazy_re(r"(^|/)((curand_kernel|hiprand_kernel|hiprand_kernel_rocm|hiprand_kernel_nvcc|"
                            r"rocrand_kernel|rocrand)\.h|(hiprand|rocrand)\.hpp)$")
HEADER_FOR = {"curand": "<curand_kernel.h>", "hiprand": "<hiprand/hiprand_kernel.h>"}


class DeviceApiWithoutHeader(CudaRule):
    """The cuRAND/hipRAND device API used without including its header.

    ## What it does
    Reports the first use of a device-API name (`curand_init`, `curand_uniform`, `curandState_t`,
    `hiprand_normal`, ...) in a file that includes neither `curand_kernel.h` nor
    `hiprand/hiprand_kernel.h` (nor rocRAND's kernel header). Files that include a project header
    (`#include "..."`, or `#include <...>` naming a header beside the file or in an include directory
    of the project's build) are left alone: the header may bring it in. The name a `#define` defines is
    not a use (`#define curandState hiprandState` in a compatibility header maps it for the AMD build). hipRAND's C++ wrapper
    `hiprand/hiprand.hpp` includes the device header and counts as it.

    ## Why it breaks on AMD
    The device API lives in `curand_kernel.h`, and hipRAND's in `hiprand/hiprand_kernel.h`; the host
    headers (`curand.h`, `hiprand/hiprand.h`) do not include it. Code that got it through another
    CUDA header (or an `-include` flag) loses it after hipify. Every target.

    ## Example
    ```cuda
    #include <curand.h>
    __global__ void k(curandState* s) { curand_init(1, threadIdx.x, 0, &s[threadIdx.x]); }
    ```

    ## Use instead
    ```cuda
    #include <curand.h>
    #include <curand_kernel.h>
    __global__ void k(curandState* s) { curand_init(1, threadIdx.x, 0, &s[threadIdx.x]); }
    ```

    ## Fix
    Safe: inserts `#include <curand_kernel.h>` (`#include <hiprand/hiprand_kernel.h>` when the use
    is spelled the hipRAND way) after the file's last `#include`.

    ## References
    - hipRAND device API header: https://github.com/ROCm/hipRAND/blob/develop/library/include/hiprand/hiprand_kernel.h
    - cuRAND device API: https://docs.nvidia.com/cuda/curand/device-api-overview.html
    """

    code = "RND007"
    report_in_hip_branches = True  # wrong on AMD wherever it is written
    name = "device-api-without-header"
    summary = "cuRAND device API used without its header"
    severity = Severity.WARNING
    impact = Impact.COMPILE
    fix_availability = "always"
    checklist = "Include <hiprand/hiprand_kernel.h> wherever the device RNG API is used."
    in_macros = False
    # check_unit reports only the uses check collected: the names of the query's own predicate.
    triggers = computed_once(lambda: tuple(sorted(_device_names())))
    query = computed_once(lambda: "([(identifier) (type_identifier)] @name (#any-of? @name %s))"
                                  % " ".join(f'"{n}"' for n in sorted(_device_names())))

    def check(self, ctx, captures):
        node = captures["name"][0]
        parent = node.parent
        if parent is not None and parent.type in ("field_expression", "function_declarator", "enumerator"):
            return  # a member, a declaration of the project's own, an enumerator (`enum class backend { curand }`)
        if parent is not None and parent.type == "qualified_identifier" and parent.child_by_field_name("scope") is not None:
            return  # `backend::curand`: cuRAND's device API has no namespace
        if parent is not None and parent.type in ("preproc_def", "preproc_function_def") \
                and parent.child_by_field_name("name") == node:
            return  # `#define curandState hiprandState`: a compatibility header's mapping, not a use
        ctx.cache.setdefault(("RND007", "uses"), []).append(node)

    @staticmethod
    def _project_header(ctx, include: str) -> bool:
        """`<X.H>` that is the project's own: beside the file, or in an include directory its build names."""
        if not ctx.fs_path:
            return False
        import os

        from hiplint.amdbuild import project_include
        here = os.path.dirname(os.path.abspath(ctx.fs_path))
        return os.path.isfile(os.path.join(here, include)) or project_include(ctx.fs_path, include) is not None

    def check_unit(self, ctx):
        uses = ctx.cache.pop(("RND007", "uses"), [])
        if not uses or ctx.unit.is_macro:
            return
        includes = list(iter_nodes(ctx.unit.root, frozenset({"preproc_include"})))
        for inc in includes:
            path = inc.child_by_field_name("path")
            text = ctx.text(path).strip('<>"') if path is not None else ""
            if KERNEL_HEADERS.search(text):
                return
            if path is not None and path.type == "string_literal":
                return  # a project header may include the device API
            if path is not None and self._project_header(ctx, text):
                return  # so may one included with <...> (AMReX's `<AMReX_RandomEngine.H>`)
        first = min(uses, key=lambda n: n.start_byte)
        spelling = "hiprand" if ctx.text(first).startswith("hiprand") else "curand"
        header = HEADER_FOR[spelling]
        if includes:
            last = max(includes, key=lambda n: n.end_byte)
            end = ctx.file_range(last)[1]
            # preproc_include ends after its newline; insert there
            edit_at = end if ctx.source.data[end - 1:end] == b"\n" else end
            text = f"#include {header}\n" if ctx.source.data[end - 1:end] == b"\n" else f"\n#include {header}"
        else:
            edit_at, text = 0, f"#include {header}\n"
        from hiplint.model import Edit
        fix = Fix.safe(f"include {header}", Edit(edit_at, edit_at, text))
        ctx.report(first, f"`{ctx.text(first)}` is device RNG API, but the file does not include {header}", fix=fix)
