import re

from hiplint import CudaRule, Impact, Severity
from hiplint.cparse import iter_nodes
from ..warp._lanes import int_literal
from ._props import is_device_prop
from hiplint.lazy import lazy_re

COMPARISONS = frozenset({">", ">=", "<", "<=", "==", "!="})
ATTR_VAR = lazy_re(r"\b(?:cudaDeviceGetAttribute|hipDeviceGetAttribute|cuDeviceGetAttribute)\s*\(\s*&\s*(\w+)\s*,\s*"
                      r"(cudaDevAttrComputeCapability(Major|Minor)|hipDeviceAttributeComputeCapability(Major|Minor)|"
                      r"CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_(MAJOR|MINOR))\b")
# Gates from Volta (7.0) on: every AMD GPU reports 9.0 or more and passes older gates (Kepler to Pascal
# features, which AMD GPUs have); from 7.0 the numbers claim NVIDIA-only features (independent thread
# scheduling, tensor cores, bf16, async copies, clusters). Combined forms major*10+minor and *100.
MAJOR_RANGE = range(7, 13)
COMBINED_RANGES = (range(70, 130), range(700, 1300))
LOGICAL = ("&&", "||")
AMD_REPORTS = "AMD reports the gfx IP as the capability: gfx90a 9.0, gfx942 9.4, gfx950 9.5, gfx1100 11.0"


class ComputeCapabilityGate(CudaRule):
    """Feature gates on compute-capability numbers: `prop.major >= 8`, `major * 10 + minor >= 70`.

    ## What it does
    Finds comparisons of a compute capability with a number: `prop.major` / `prop.minor` of a
    `cudaDeviceProp` (or `hipDeviceProp_t`), a variable filled by `cudaDeviceGetAttribute(&v,
    cudaDevAttrComputeCapabilityMajor, dev)`, and combinations such as `major * 10 + minor` or a
    variable holding one, against a number from 7.0 (Volta) on. A condition is reported once, however
    many comparisons it holds. Gates below 7.0 (`major < 3`, `major >= 6`) and `major == 9999` are
    not reported: every AMD GPU passes them, as it has the Kepler-to-Pascal features they protect.

    ## Why it breaks on AMD
    `hipGetDeviceProperties` fills `major` and `minor` from the AMD architecture version: MI200
    (gfx90a) reports 9.0, MI300X (gfx942) 9.4, MI350 (gfx950) 9.5 and RX 7900 XTX (gfx1100) 11.0.
    So `major >= 8` ("Ampere or newer") is true on every current AMD GPU, `major == 9` ("Hopper")
    is true on MI200 and MI300, and a gate for tensor cores, bf16 or async copies picks NVIDIA-only
    code paths. Nothing fails at compile time; the wrong kernel runs or fails later.

    ## Example
    ```cuda
    bool use_tensor_cores(int dev) {
        cudaDeviceProp prop;
        cudaGetDeviceProperties(&prop, dev);
        return prop.major >= 8;
    }
    ```

    ## Use instead
    ```cuda
    bool use_tensor_cores(int dev) {
        cudaDeviceProp prop;
        cudaGetDeviceProperties(&prop, dev);
    #if defined(__HIP_PLATFORM_AMD__)
        return std::string(prop.gcnArchName).rfind("gfx94", 0) == 0;  // test the architecture name
    #else
        return prop.major >= 8;
    #endif
    }
    ```

    ## References
    - HIP porting guide, "Host code feature identification" (`gcnArchName`, `arch.has*`): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    - ROCm/HIP `include/hip/hip_runtime_api.h`, `hipDeviceProp_t::major`: "On HCC, this is an approximation and features may differ from CUDA CC"
    - AMD GPU specifications (architecture per product): https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html
    """

    code = "ARC002"
    name = "compute-capability-gate"
    summary = "compute-capability number used as a feature gate; " + AMD_REPORTS
    severity = Severity.ERROR
    impact = Impact.SILENT
    checklist = "Gate AMD features on hipDeviceProp_t::gcnArchName or hipDeviceGetAttribute feature queries, not on major/minor."
    query = """
    (binary_expression operator: ["<" "<=" ">" ">=" "==" "!="]) @cmp
    """
    # Every gate compares a `major`/`minor` field, or a variable read from a ComputeCapabilityMajor/
    # Minor (COMPUTE_CAPABILITY_MAJOR/MINOR) attribute, or one computed from those.
    triggers = ("major", "minor", "Major", "Minor", "MAJOR", "MINOR")

    def check(self, ctx, captures):
        cmp = captures["cmp"][0]
        left, right = cmp.child_by_field_name("left"), cmp.child_by_field_name("right")
        if left is None or right is None:
            return
        for cc, num in ((left, right), (right, left)):
            if num.type != "number_literal":
                continue
            lit = int_literal(ctx.text(num))
            if lit is None:
                continue
            kind = self._capability(ctx, cc)
            if kind is None:
                continue
            value = lit[0]
            if kind == "major" and value not in MAJOR_RANGE:
                continue
            if kind == "combined" and not any(value in r for r in COMBINED_RANGES):
                continue
            if kind == "minor":
                continue  # a minor number alone says little; its major comparison is reported
            top = self._condition(ctx, cmp)
            reported = ctx.cache.setdefault("arc_cc_reported", set())
            if (id(ctx.unit), top.id) in reported:
                return
            reported.add((id(ctx.unit), top.id))
            ctx.report(top, f"`{' '.join(ctx.text(top).split())}` gates on a compute capability; {AMD_REPORTS}, "
                            f"so this comparison picks the wrong path on AMD")
            return

    @staticmethod
    def _condition(ctx, node):
        """The whole `a && (b || c)` condition around a comparison: reported once."""
        top = node
        p = node.parent
        while p is not None:
            if p.type == "parenthesized_expression" or (p.type == "unary_expression" and ctx.text(p).startswith("!")):
                p = p.parent
                continue
            if p.type == "binary_expression" and ctx.text(p.child_by_field_name("operator")) in LOGICAL:
                top = p
                p = p.parent
                continue
            break
        return top

    def _capability(self, ctx, node):
        """'major', 'minor', 'combined' or None for an expression."""
        while node.type == "parenthesized_expression" and node.named_children:
            node = node.named_children[0]
        if node.type == "field_expression":
            field = node.child_by_field_name("field")
            obj = node.child_by_field_name("argument")
            if field is not None and ctx.text(field) in ("major", "minor") and is_device_prop(ctx, node, obj):
                return ctx.text(field)
            return None
        if node.type == "identifier":
            name = ctx.text(node)
            kinds = self._attr_vars(ctx)
            if name in kinds:
                return kinds[name]
            if name in self._combined_vars(ctx, ctx.function_scope(node)):
                return "combined"
            return None
        if node.type == "binary_expression":
            parts = {self._capability(ctx, c) for c in (node.child_by_field_name("left"), node.child_by_field_name("right"))
                     if c is not None and c.type != "number_literal"}
            op = ctx.text(node.child_by_field_name("operator"))
            if op == "+" and "major" in {p for p in parts if p} and "minor" in {p for p in parts if p} \
                    or op == "+" and "combined" in parts:
                return "combined"
            if op == "*" and parts & {"major", "combined"}:
                return "combined"
        return None

    def _attr_vars(self, ctx) -> dict[str, str]:
        cached = ctx.cache.get("arc_attr_vars")
        if cached is None:
            cached = {}
            for m in ATTR_VAR.finditer(ctx.source.text):
                cached[m.group(1)] = "major" if "AJOR" in m.group(2).upper() else "minor"
            ctx.cache["arc_attr_vars"] = cached
        return cached

    def _combined_vars(self, ctx, scope) -> set[str]:
        key = ("arc_cc_vars", id(ctx.unit), scope.id)
        names = ctx.cache.get(key)
        if names is None:
            names = set()
            ctx.cache[key] = names  # set first: _capability may recurse into this scope
            for node in iter_nodes(scope, {"init_declarator", "assignment_expression"}):
                left = node.child_by_field_name("declarator" if node.type == "init_declarator" else "left")
                right = node.child_by_field_name("value" if node.type == "init_declarator" else "right")
                if left is not None and right is not None and left.type == "identifier" \
                        and right.type == "binary_expression" and self._capability(ctx, right) == "combined":
                    names.add(ctx.text(left))
        return names
