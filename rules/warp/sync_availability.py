import re

from hiplint import CudaRule, Impact, Severity

from ._lanes import file_macros
from hiplint.lazy import lazy_re

# When each warp-sync function became usable in HIP (ROCm release notes and headers):
#   6.2: the *_sync shuffle/vote/match family and __activemask exist, but only with
#        -DHIP_ENABLE_WARP_SYNC_BUILTINS; HIP 7.0: on by default, plus __syncwarp and __reduce_*_sync.
OPT_IN_FROM = (6, 2)
DEFAULT_FROM = (7, 0)
NEW_IN_7 = frozenset({"__syncwarp", "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
                      "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync"})
OPT_IN_MACRO = "HIP_ENABLE_WARP_SYNC_BUILTINS"


def _v(t):
    return f"{t[0]}.{t[1]}"


# The fix's own definition (rules/warp/sync_mask_width.py).
_FULL_MASK_DEFINE = lazy_re(r"#\s*define\s+HIPLINT_FULL_WARP_MASK\b")


class WarpSyncAvailability(CudaRule):
    """A warp-sync intrinsic that the oldest supported ROCm version lacks or hides.

    ## What it does
    Reports, once per function name and file, the use of `*_sync` warp intrinsics, `__activemask`,
    `__syncwarp` and `__reduce_*_sync` when the configured oldest ROCm version (`rocm-version`,
    default 7.0) does not provide them by default; the other calls of that function in the file
    are listed with it as related locations.

    ## Why it breaks on AMD
    - ROCm 6.1 and older: none of the `*_sync` functions nor `__activemask` exist (only the maskless
      `__shfl*`, `__ballot`, `__any`, `__all`): compile error.
    - ROCm 6.2 to 6.4: the shuffle, vote and match `*_sync` functions and `__activemask` exist but are
      disabled unless `HIP_ENABLE_WARP_SYNC_BUILTINS` is defined before the HIP headers.
    - HIP 7.0: enabled by default (`HIP_DISABLE_WARP_SYNC_BUILTINS` turns them off), and
      `__syncwarp` and `__reduce_*_sync` are added.
    Nothing is reported when `rocm-version` is 7.0 or newer. Applies to every target.

    ## Example
    ```cuda
    // hl-config: rocm-version = "6.2"
    __global__ void k(int* out) { __syncwarp(); out[0] = 1; }
    ```

    ## Use instead
    ```cuda
    // hl-config: rocm-version = "6.2"
    __global__ void k(int* out) { __syncthreads(); out[0] = 1; }
    ```
    or raise `rocm-version` to 7.0, or for 6.2-6.4 define `HIP_ENABLE_WARP_SYNC_BUILTINS`
    (e.g. `-DHIP_ENABLE_WARP_SYNC_BUILTINS` on the compile line) and avoid the 7.0-only functions.

    ## References
    - HIP 7.0 changelog, "warp sync builtins enabled by default", `__syncwarp`, `__reduce_*_sync`: https://github.com/ROCm/clr/blob/develop/CHANGELOG.md
    - HIP 6.2 kernel language reference, `HIP_ENABLE_WARP_SYNC_BUILTINS`: https://rocm.docs.amd.com/projects/HIP/en/docs-6.2.0/reference/kernel_language.html
    """

    code = "WRP007"
    name = "warp-sync-availability"
    summary = "warp-sync intrinsic not available by default on the oldest supported ROCm"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    report_in_hip_branches = True
    checklist = "Raise the minimum ROCm to 7.0, or build with -DHIP_ENABLE_WARP_SYNC_BUILTINS on 6.2-6.4 and avoid __syncwarp/__reduce_*_sync there."
    query = """
    ((call_expression function: (identifier) @fn) @call
      (#any-of? @fn "__shfl_sync" "__shfl_up_sync" "__shfl_down_sync" "__shfl_xor_sync" "__ballot_sync"
                    "__any_sync" "__all_sync" "__match_any_sync" "__match_all_sync" "__activemask" "__syncwarp"
                    "__reduce_add_sync" "__reduce_min_sync" "__reduce_max_sync" "__reduce_and_sync"
                    "__reduce_or_sync" "__reduce_xor_sync"))
    """

    def enabled_for(self, settings) -> bool:
        return settings.rocm_version < DEFAULT_FROM and super().enabled_for(settings)

    def check(self, ctx, captures):
        name = ctx.text(captures["fn"][0])
        if ctx.unit.is_macro and ctx.unit.macro is not None and _FULL_MASK_DEFINE.match(ctx.units[0].text(ctx.unit.macro)):
            return  # WRP006's `#define HIPLINT_FULL_WARP_MASK __activemask()`: used only inside *_sync calls, reported there
        oldest = ctx.rocm_version
        opted_in = OPT_IN_MACRO in file_macros(ctx)  # a -D flag in the build is not visible here
        if name in NEW_IN_7:
            msg = f"`{name}` exists only from HIP 7.0; the oldest supported ROCm is {_v(oldest)}"
        elif oldest < OPT_IN_FROM:
            msg = f"`{name}` does not exist before ROCm 6.2; the oldest supported ROCm is {_v(oldest)}"
        elif not opted_in:
            msg = (f"`{name}` needs -D{OPT_IN_MACRO} on ROCm 6.2-6.4 (the oldest supported is {_v(oldest)}); "
                   "it is on by default from 7.0")
        else:
            return
        # One finding per function name and file (the engine merges them after suppressions, the first
        # call in the file staying): the other calls are its related locations.
        ctx.report(captures["call"][0], msg, group=name)
