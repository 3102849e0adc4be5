"""nvcc command-line options and what hipcc (ROCm's clang driver) does with them.

Shared by the build rules (BLD) and the PyTorch-extension rule (PY003). hipcc passes options it
does not know to clang; the "effect" column is what clang 19 (`clang -x hip --offload-arch=gfx942`)
does with each option, checked on this project's compile oracle. hipcc itself only special-cases
`-use_fast_math` (it adds `-DHIP_FAST_MATH`, see ROCm/llvm-project amd/hipcc/src/hipBin_amd.h).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from hiplint.lazy import lazy_re

ERROR = "clang rejects it (unknown argument): the build fails"


@dataclass(frozen=True)
class NvccOption:
    pattern: str  # full match against one command-line token
    kind: str  # "flag" (nvcc-only option) or "arch" (NVIDIA architecture selection)
    effect: str  # what happens when hipcc gets it
    instead: str  # the HIP counterpart
    takes_value: bool = False  # the next token is its argument when the token has no "="
    generic: bool = False  # short enough to mean something else outside an nvcc command
    breaks: bool = True  # False: the build still works (a warning, or a simple case that happens to pass)
    # When the flags only reach compile steps (PyTorch passes an extension's "nvcc" list with `-c`):
    # what happens there instead, and it is a warning (`-lineinfo` is an unused linker input then).
    compile_effect: str | None = None
    # What `hiplint migrate` writes instead (hiplint/buildport.py): "" drops the option (and its value),
    # "{value}" is its value (comma lists become separate options), "{arch}" one `--offload-arch` per
    # configured target; a dict picks by the option's value. None: not ported, left for hand work.
    port: str | dict | None = None

    def effect_in(self, compile_only: bool) -> str:
        return self.compile_effect if compile_only and self.compile_effect else self.effect

    def breaks_in(self, compile_only: bool) -> bool:
        return False if compile_only and self.compile_effect else self.breaks

    def matches(self, token: str) -> bool:
        return re.fullmatch(self.pattern, token) is not None


NVCC_OPTIONS: tuple[NvccOption, ...] = (
    NvccOption(r"--use_fast_math", "flag", ERROR, "`-ffast-math` (review denormals: `-fgpu-flush-denormals-to-zero`)",
               port="-ffast-math"),
    NvccOption(r"-use_fast_math", "flag",
               "hipcc only adds `-DHIP_FAST_MATH`; clang reads the option as `-u se_fast_math` (a linker symbol), so no fast math is enabled",
               "`-ffast-math`",
               port="-ffast-math"),
    NvccOption(r"--?expt-relaxed-constexpr", "flag", ERROR,
               "drop it: clang treats constexpr functions as callable from device code by default (`-fcuda-host-device-constexpr`)",
               port=""),
    NvccOption(r"--?expt-extended-lambda|--?extended-lambda", "flag", ERROR,
               "drop it: clang accepts `__device__` lambdas without a flag",
               port=""),
    NvccOption(r"-Xptxas(=.*)?|--ptxas-options(=.*)?", "flag", ERROR,
               "drop it (there is no ptxas); for register and spill reports use `-Rpass-analysis=kernel-resource-usage`",
               takes_value=True,
               port=""),
    NvccOption(r"-Xcompiler", "flag",
               "clang ignores it with a warning and reads the next argument as its own option; comma lists (`-Wall,-Wextra`) break",
               "the host options themselves, without `-Xcompiler` (hipcc is the host compiler too)", takes_value=True,
               breaks=False,
               port="{value}"),
    NvccOption(r"-Xcompiler=.*|--compiler-options(=.*)?", "flag", ERROR,
               "the host options themselves, without `-Xcompiler` (hipcc is the host compiler too)", takes_value=True,
               port="{value}"),
    NvccOption(r"-lineinfo", "flag", "clang reads it as `-l ineinfo`: the link fails (no library `ineinfo`)",
               "`-gline-tables-only`",
               compile_effect="clang reads it as the linker input `-l ineinfo` and ignores it when compiling "
                              "(a warning): no line tables are generated",
               port="-gline-tables-only"),
    NvccOption(r"--generate-line-info", "flag", ERROR, "`-gline-tables-only`",
               port="-gline-tables-only"),
    NvccOption(r"-G", "flag", "clang reads it as `-G <size>` (a MIPS option) and swallows the next argument",
               "`-g` (with `-O0` for device debugging)", generic=True,
               port="-g"),
    NvccOption(r"--device-debug", "flag", ERROR, "`-g` (with `-O0` for device debugging)",
               port="-g"),
    NvccOption(r"-rdc(=.*)?|--relocatable-device-code(=.*)?", "flag", ERROR,
               "`-fgpu-rdc` to compile and `--hip-link -fgpu-rdc` to link (or `-fno-gpu-rdc`, the default)", takes_value=False),
    NvccOption(r"-dc", "flag", "clang ignores it (unused-argument warning): no relocatable device code is built",
               "`-fgpu-rdc -c`", generic=True),
    NvccOption(r"--device-c", "flag", ERROR, "`-fgpu-rdc -c`"),
    NvccOption(r"-dlink|--device-link", "flag",
               "clang ignores `-dlink` (unused-argument warning) and rejects `--device-link`: no device link step happens",
               "`--hip-link -fgpu-rdc` on the final link", generic=True),
    NvccOption(r"--?maxrregcount(=.*)?", "flag", ERROR,
               "drop it; bound register use per kernel with `__launch_bounds__`", takes_value=True),
    NvccOption(r"--?default-stream(=.*)?", "flag", ERROR, "`-fgpu-default-stream=per-thread` (or `=legacy`)",
               takes_value=True,
               port={"per-thread": "-fgpu-default-stream=per-thread", "legacy": "-fgpu-default-stream=legacy"}),
    NvccOption(r"-ccbin(=.*)?|--compiler-bindir(=.*)?", "flag", ERROR,
               "drop it (hipcc drives ROCm's clang; `HIP_CLANG_PATH` selects another clang)", takes_value=True,
               port=""),
    NvccOption(r"--?ftz=.*", "flag", ERROR, "`-fgpu-flush-denormals-to-zero` for `=true`; drop `=false`",
               port={"true": "-fgpu-flush-denormals-to-zero", "false": ""}),
    NvccOption(r"--?prec-(div|sqrt)=.*", "flag", ERROR,
               "drop it: IEEE division and square root are clang's default (`-ffast-math` relaxes them)",
               port=""),
    NvccOption(r"--?fmad=.*", "flag", ERROR, "`-ffp-contract=fast` for `=true`, `-ffp-contract=off` for `=false`",
               port={"true": "-ffp-contract=fast", "false": "-ffp-contract=off"}),
    # One dash: clang takes `-d...` as its own (unused) option; a separate value becomes an input file.
    NvccOption(r"-diag[-_](?:suppress|error|warn)=.*", "flag", "clang ignores it (an unused-argument warning): the nvcc diagnostic setting has no effect",
               "drop it; silence clang warnings with `-Wno-<warning>`", breaks=False,
               port=""),
    NvccOption(r"-diag[-_](?:suppress|error|warn)", "flag",
               "clang ignores the option and reads its value as an input file: the build fails",
               "drop it; silence clang warnings with `-Wno-<warning>`", takes_value=True,
               port=""),
    NvccOption(r"-Xcudafe(=.*)?|-Xnvlink(=.*)?|-Xfatbin(=.*)?|--diag[-_](?:suppress|error|warn)(=.*)?", "flag", ERROR,
               "drop it; silence clang warnings with `-Wno-<warning>`", takes_value=True,
               port=""),
    NvccOption(r"--threads(=.*)?|--split-compile(=.*)?", "flag", ERROR, "drop it", takes_value=True,
               port=""),
    NvccOption(r"-t", "flag", "clang reads `-t` as a linker option and the count as an input file",
               "drop it", takes_value=True, generic=True,
               port=""),
    NvccOption(r"--keep|-keep", "flag", ERROR, "`-save-temps`",
               port="-save-temps"),
    NvccOption(r"--keep-dir(=.*)?", "flag", ERROR, "`-save-temps=obj` (temporaries beside the object)", takes_value=True,
               port="-save-temps=obj"),
    NvccOption(r"--source-in-ptx|-src-in-ptx|--display-error-number|-err-no", "flag", ERROR, "drop it",
               port=""),
    NvccOption(r"-res-usage|--resource-usage", "flag", ERROR, "`-Rpass-analysis=kernel-resource-usage`",
               port="-Rpass-analysis=kernel-resource-usage"),
    NvccOption(r"--?forward-unknown-to-host-compiler|--use-local-env", "flag", ERROR, "drop it",
               port=""),
    NvccOption(r"-Wno-deprecated-gpu-targets", "flag", "clang warns about an unknown warning option", "drop it",
               breaks=False,
               port=""),
    NvccOption(r"-x|-xcu", "lang", "clang compiles the file as CUDA for an NVIDIA target, not as HIP",
               "`-x hip`", takes_value=True,
               port="-x hip"),
    # Architecture selection: AMD targets are named with --offload-arch=gfxNNN, once per target.
    NvccOption(r"-arch(=.*)?|--gpu-architecture(=.*)?", "arch", ERROR, "`--offload-arch=<gfx target>`",
               takes_value=True,
               port="{arch}"),
    NvccOption(r"-gencode(=.*)?|--generate-code(=.*)?", "arch", ERROR, "`--offload-arch=<gfx target>`, once per target",
               takes_value=True,
               port="{arch}"),
    NvccOption(r"-code(=.*)?|--gpu-code(=.*)?", "arch", ERROR, "`--offload-arch=<gfx target>`", takes_value=True,
               port="{arch}"),
)

# An -arch value must name an NVIDIA GPU for the option to be nvcc's (`-arch x86_64` is Apple's).
NVIDIA_ARCH_VALUE = lazy_re(r"(?:arch=)?(?:sm|compute|lto)_(?:[0-9]+[a-z]?\b|$|\$)|^(?:native|all|all-major)$")


def lookup(token: str) -> NvccOption | None:
    for opt in NVCC_OPTIONS:
        if opt.matches(token):
            return opt
    return None


@dataclass
class OptionUse:
    option: NvccOption
    token: str
    value: str  # the argument ("" if none)
    start: int  # byte range of the option (and its separate argument)
    end: int
    compile_only: bool = False  # given to compile steps only (`target_compile_options`)


def scan(tokens, nvcc_context: bool):
    """Find nvcc options in a token list [(text, start, end)]; generic options only in an nvcc context."""
    i = 0
    n = len(tokens)
    while i < n:
        text, start, end = tokens[i]
        opt = lookup(text)
        if opt is None or (opt.generic and not nvcc_context):
            i += 1
            continue
        value = text.split("=", 1)[1] if "=" in text and not text.startswith("-x") else ""
        stop = end
        if opt.takes_value and "=" not in text and text != "-xcu" and i + 1 < n and opt.pattern != r"-Xcompiler":
            value = tokens[i + 1][0]
            stop = tokens[i + 1][2]
            i += 1
        elif opt.pattern == r"-Xcompiler" and i + 1 < n:
            value = tokens[i + 1][0]
        i += 1
        if opt.kind == "arch" and not NVIDIA_ARCH_VALUE.search(value):
            continue
        if opt.kind == "lang" and text != "-xcu" and value != "cu":
            continue
        yield OptionUse(opt, text, value, start, stop)


def describe(use: OptionUse) -> str:
    shown = use.token if not use.value or "=" in use.token else f"{use.token} {use.value}"
    return f"nvcc option `{shown}`: {use.option.effect_in(use.compile_only)}; for HIP: {use.option.instead}"
