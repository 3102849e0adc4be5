import re

from hiplint import CudaRule, Impact, Severity
from hiplint.cparse import iter_nodes
from .._cuda import device_function
from hiplint.lazy import lazy_re

_CLOCK_CALL = lazy_re(r"\bclock(64)?\s*\(\s*\)")
_ATTR_VAR = lazy_re(r"\bcudaDeviceGetAttribute\s*\(\s*&\s*(\w+)\s*,\s*cudaDevAttrClockRate\b")
_RATE_FIELD = "clockRate"


class ClockRateTiming(CudaRule):
    """Device clock cycles (`clock()`, `clock64()`) converted to time with `clockRate`.

    ## What it does
    In a file whose device code reads `clock()` or `clock64()`, finds divisions and
    multiplications by `prop.clockRate` (or a variable filled from
    `cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, dev)`): the usual conversion of a cycle
    count to milliseconds.

    ## Why it breaks on AMD
    On NVIDIA `clock64()` counts SM clock cycles and `clockRate` is that clock in kHz. On AMD,
    `hipDeviceProp_t::clockRate` is the maximum shader clock, but the device-side `clock*`
    counter runs at `clockInstructionRate` (kHz, a separate field that exists only in HIP), and
    HIP's documentation points to `wall_clock64()` with `hipDeviceAttributeWallClockRate` for a
    constant-rate timer. Dividing by `clockRate` gives silently wrong times on every AMD target.

    ## Example
    ```cuda
    __global__ void timed(long long* cycles) {
        long long t0 = clock64();
        cycles[0] = clock64() - t0;
    }
    double to_ms(long long c, const cudaDeviceProp& prop) { return c / (double)prop.clockRate; }
    ```

    ## Use instead
    ```cuda
    __global__ void timed(long long* cycles) {
        long long t0 = clock64();
        cycles[0] = clock64() - t0;
    }
    double to_ms(long long c, int rate_khz) { return c / (double)rate_khz; }
    ```
    with `rate_khz` from `prop.clockInstructionRate` on AMD (behind `__HIP_PLATFORM_AMD__`) and
    `prop.clockRate` on NVIDIA; or time with events on the host.

    ## References
    - HIP kernel language, "Timer functions": https://rocm.docs.amd.com/projects/HIP/en/latest/reference/kernel_language.html
    - `hipDeviceProp_t::clockInstructionRate` ("Frequency in khz of the timer used by the device-side clock*"): ROCm/HIP `include/hip/hip_runtime_api.h`
    - CUDA Runtime API, `cudaDeviceProp::clockRate`: https://docs.nvidia.com/cuda/cuda-runtime-api/
    """

    code = "NV006"
    triggers = ("clock",)  # check_unit returns at once without a clock()/clock64() call (_CLOCK_CALL)
    name = "clock-rate-timing"
    summary = "cycle counts from clock()/clock64() divided by clockRate: AMD's counter runs at clockInstructionRate"
    severity = Severity.WARNING
    impact = Impact.SILENT
    checklist = "Convert clock64() cycles with hipDeviceProp_t::clockInstructionRate (or use wall_clock64() and hipDeviceAttributeWallClockRate) on AMD."
    query = ""

    def check_unit(self, ctx):
        if ctx.unit.is_macro or not _CLOCK_CALL.search(ctx.source.text):
            return
        if not self._clock_in_device_code(ctx):
            return
        attr_vars = set(_ATTR_VAR.findall(ctx.source.text))
        for node in iter_nodes(ctx.unit.root, {"field_identifier", "identifier"}):
            name = ctx.text(node)
            if node.type == "field_identifier" and name == _RATE_FIELD:
                operand = node.parent
            elif node.type == "identifier" and name in attr_vars:
                operand = node
            else:
                continue
            expr = self._arithmetic_parent(ctx, operand)
            if expr is not None:
                ctx.report(expr, f"`{ctx.text(expr)}` converts cycles with `clockRate`; on AMD the "
                                 f"clock64() counter runs at `clockInstructionRate`: silently wrong times")

    @staticmethod
    def _clock_in_device_code(ctx) -> bool:
        for call in iter_nodes(ctx.unit.root, {"call_expression"}):
            fn = call.child_by_field_name("function")
            if fn is not None and fn.type == "identifier" and ctx.text(fn) in ("clock", "clock64") \
                    and device_function(ctx, call) is not None:
                return True
        return False

    @staticmethod
    def _arithmetic_parent(ctx, node):
        n = node
        while n.parent is not None and n.parent.type in ("parenthesized_expression", "cast_expression"):
            n = n.parent
        p = n.parent
        if p is not None and p.type == "binary_expression":
            op = p.child_by_field_name("operator")
            if op is not None and ctx.text(op) in ("/", "*"):
                return p
        if p is not None and p.type == "assignment_expression":
            op = p.child_by_field_name("operator")
            if op is not None and ctx.text(op) in ("/=", "*=") and p.child_by_field_name("right") == n:
                return p
        return None
