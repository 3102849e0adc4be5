import re

from hiplint import CudaRule, Impact, Severity

from hiplint.triggers import regex_literals

from ._scan import load_table, names

_ERROR_WORDS = ("CUBIN", "Bitcode", "LTOIR", "NVVM")


def _table():
    return load_table("libraries.toml")["nvrtc"]


def _string_value(ctx, node) -> str | None:
    if node.type != "string_literal":
        return None
    parts = [ctx.text(c) for c in node.named_children if c.type == "string_content"]
    return "".join(parts)


class NvrtcAndModuleLoading(CudaRule):
    """NVRTC output and module loading: PTX/cubin calls hipify maps to the wrong HIPRTC functions.

    ## What it does
    Reports `nvrtcGetPTX[Size]`, `nvrtcGetCUBIN[Size]`, `nvrtcGetLTOIR`, `nvrtcGetNVVM`, `cuLinkAdd*`
    and `hiprtcGetBitcode` calls; NVRTC architecture options in string literals
    (`"--gpu-architecture=compute_80"`, `"-arch=sm_90"`) in files that use runtime compilation; and
    PTX / cubin / fatbin file names passed to module loaders (`cuModuleLoad("k.ptx")`, `hipModuleLoad`).

    ## Why it breaks on AMD
    hipify renames `nvrtcGetPTX` to `hiprtcGetCode` and `nvrtcGetCUBIN` to `hiprtcGetBitcode`.
    `hiprtcGetCode` returns a binary AMD code object, not PTX text, so code that prints, edits or
    string-handles "the PTX" breaks. `hiprtcGetBitcode` returns LLVM bitcode, which HIPRTC produces
    only when compiling with `-fgpu-rdc` and which `hipModuleLoadData` cannot load: the loadable
    binary (what a cubin is on NVIDIA) comes from `hiprtcGetCode`. NVRTC's `compute_XX` / `sm_XX`
    options are NVIDIA architectures: HIPRTC takes `--gpu-architecture=gfx942` (optionally with
    target features, `gfx90a:xnack-`) or compiles for the current device without one. HIP modules
    are AMD code objects (`.hsaco`, `.co`) or HIP fat binaries (`hipcc --genco --offload-arch=...`);
    PTX and cubin files cannot be loaded. From HIP 7.0, hiprtc must be linked explicitly (`-lhiprtc`).
    All targets.

    ## Example
    ```cuda
    #include <nvrtc.h>
    void build(nvrtcProgram prog, char* ptx) {
        const char* opts[] = {"--gpu-architecture=compute_80"};
        nvrtcCompileProgram(prog, 1, opts);
        nvrtcGetPTX(prog, ptx);
    }
    ```

    ## Use instead
    ```cuda
    #include <hip/hiprtc.h>
    void build(hiprtcProgram prog, char* code) {
        const char* opts[] = {"--gpu-architecture=gfx942"};
        hiprtcCompileProgram(prog, 1, opts);
        hiprtcGetCode(prog, code);
    }
    ```

    ## References
    - HIP RTC programming guide (options, code objects, bitcode with -fgpu-rdc): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_rtc.html
    - HIPIFY, CUDA RTC API supported by HIP (nvrtcGetCUBIN -> hiprtcGetBitcode, nvrtcGetPTX -> hiprtcGetCode): https://rocm.docs.amd.com/projects/HIPIFY/en/latest/reference/tables/CUDA_RTC_API_supported_by_HIP.html
    - HIP porting guide, code object formats and module loading: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    - HIP 7.0 changelog (hipRTC linked separately): https://github.com/ROCm/clr/blob/develop/CHANGELOG.md
    """

    code = "LIB008"
    # The string-literal pattern reports only in files that use runtime compilation (rtc_marker).
    triggers = tuple(sorted(regex_literals(_table()["rtc_marker"]) or ()))
    name = "nvrtc-and-module-loading"
    summary = "NVRTC/module-loading code that assumes PTX or cubin"
    severity = Severity.WARNING
    impact = Impact.RUNTIME
    checklist = "Use hiprtcGetCode/hiprtcGetCodeSize for loadable code, pass --gpu-architecture=gfxNNN (or none), precompile modules with hipcc --genco, and link -lhiprtc."
    query = """
    ((call_expression function: (identifier) @fn arguments: (argument_list) @args) @call
     (#match? @fn "^(nvrtc|hiprtc|cuLink|cuModuleLoad|hipModuleLoad|cuLibraryLoad)"))
    (string_literal) @str
    """

    def check(self, ctx, captures):
        table = _table()
        if "str" in captures:
            node = captures["str"][0]
            value = _string_value(ctx, node)
            if value and re.search(table["option_pattern"], value.strip()) and self._uses_rtc(ctx):
                ctx.report(node, f"NVRTC architecture option `{value.strip()}`: HIPRTC takes --gpu-architecture=gfxNNN "
                                 f"(e.g. gfx942, gfx90a:xnack-) or none (the current device)")
            return
        fn = ctx.text(captures["fn"][0])
        call = captures["call"][0]
        note = table["calls"].get(fn)
        if note is not None:
            sev = Severity.ERROR if any(w in fn for w in _ERROR_WORDS) else None
            ctx.report(call, f"`{fn}`: {note}", severity=sev)
            return
        if fn in table["module_loaders"]:
            for arg in captures["args"][0].named_children:
                value = _string_value(ctx, arg)
                if value and re.search(table["module_file_pattern"], value.strip(), re.I):
                    ctx.report(arg, f"`{fn}` loads `{value}`: HIP loads AMD code objects (.hsaco/.co) or HIP fat "
                                    f"binaries, not PTX/cubin; build them with hipcc --genco --offload-arch=...",
                               severity=Severity.ERROR)

    @staticmethod
    def _uses_rtc(ctx) -> bool:
        if "lib008_rtc" not in ctx.cache:
            marker = re.compile(_table()["rtc_marker"])
            ctx.cache["lib008_rtc"] = any(marker.fullmatch(n.text) for n in names(ctx))
        return ctx.cache["lib008_rtc"]
