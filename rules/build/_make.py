"""Makefiles as logical lines of tokens, with comments removed and conditionals tracked.

There is no Makefile grammar that serves here (tree-sitter-make leaves recipes as shell text), so this
is a small tokenizer: backslash continuations are joined, `#` comments dropped, words split on
blanks outside quotes (quotes removed from the token, offsets kept), and every line knows whether
it sits inside an `ifeq`/`ifdef` block whose condition names HIP/ROCm, or in a branch whose own test
picks the CUDA build (`ifeq ($(GPU_RUNTIME),CUDA)`): then it is ROCm-aware and the build rules leave
it alone.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ._vendor import NVIDIA_BACKENDS, is_hip_text
from hiplint.lazy import lazy_re

ASSIGN = lazy_re(r"^\s*(?:override\s+|export\s+|private\s+)*(?P<var>[A-Za-z_][\w.-]*)\s*(?:\+|\?|::?|!)?=")
CONDITIONAL = lazy_re(r"^\s*(?:else\s+)?(ifeq|ifneq|ifdef|ifndef)\b")
ELSE = lazy_re(r"^\s*else\b")
ENDIF = lazy_re(r"^\s*endif\b")
NVCC_VAR = lazy_re(r"NVCC|CUDA|^CU_?|NV_?FLAGS|GPU", re.I)


@dataclass
class MakeLine:
    first_line: int  # 1-based
    start: int  # byte offset of the logical line
    tokens: list = field(default_factory=list)  # [(text, start, end)]
    recipe: bool = False
    variable: str | None = None  # the variable this line assigns
    value_start: int = 0  # byte offset just after the assignment operator
    aware: bool = False  # inside a conditional that handles HIP/ROCm
    nvcc_context: bool = False  # runs nvcc or sets nvcc flags
    cuda_branch: bool = False  # inside a branch whose own test picks the CUDA build (_tests_for_cuda)

    def words(self) -> list[str]:
        return [t[0] for t in self.tokens]

    def command_tokens(self) -> list:
        """The tokens that can hold options: the value of an assignment, else the whole line."""
        return self.value_tokens() if self.variable is not None else self.tokens

    def value_tokens(self) -> list:
        """The words after `VAR =` (a word glued to the operator, `VAR?=nvcc`, is cut at the operator)."""
        out = []
        for text, s, e in self.tokens:
            if e <= self.value_start:
                continue
            if s < self.value_start:
                text, s = text[self.value_start - s:], self.value_start
            if text:
                out.append((text, s, e))
        return out


def _tokens(data: bytes, start: int, end: int, recipe: bool) -> list:
    """Split bytes [start, end) into (text, start, end) words; stop at a comment."""
    out = []
    i = start
    word_start = None
    buf = bytearray()
    quote = None
    while i < end:
        c = data[i:i + 1]
        if quote:
            if c == quote:
                quote = None
            else:
                buf += c
            i += 1
            continue
        if c == b"\\" and i + 1 < end and data[i + 1:i + 2] == b"\n":
            if word_start is not None:
                out.append((buf.decode("utf-8", "replace"), word_start, i))
                word_start, buf = None, bytearray()
            i += 2
            continue
        if c == b"#" and (not recipe or word_start is None) and (i == start or data[i - 1:i] != b"\\"):
            break
        if c in (b" ", b"\t", b"\n", b"\r"):
            if word_start is not None:
                out.append((buf.decode("utf-8", "replace"), word_start, i))
                word_start, buf = None, bytearray()
            i += 1
            continue
        if word_start is None:
            word_start = i
        if c in (b'"', b"'"):
            quote = c
        else:
            buf += c
        i += 1
    if word_start is not None:
        out.append((buf.decode("utf-8", "replace"), word_start, i))
    return out


def parse(source, per_backend: bool = True) -> list[MakeLine]:
    """The Makefile's logical lines. With `per_backend` (linting), variables the Makefile keeps for its
    NVIDIA build beside an AMD one count as handled; a HIP-only port (hiplint.buildport) turns the nvcc
    rules that read them into hipcc rules, so there they are ported like the rest."""
    data = source.data
    lines: list[MakeLine] = []
    n = source.line_count()
    ln = 1
    while ln <= n:
        start = source.line_starts[ln - 1]
        first = ln
        end = source.line_starts[ln] if ln < n else len(data)
        # Join continuation lines.
        while data[start:end].rstrip(b"\r\n").endswith(b"\\") and ln < n:
            ln += 1
            end = source.line_starts[ln] if ln < n else len(data)
        recipe = data[start:start + 1] == b"\t"
        ml = MakeLine(first, start, _tokens(data, start, end, recipe), recipe)
        if not recipe:
            m = ASSIGN.match(data[start:end].decode("utf-8", "replace"))
            if m:
                ml.variable = m.group("var")
                ml.value_start = start + len(m.group(0).encode())
        lines.append(ml)
        ln += 1
    _mark_conditionals(lines, data.decode("utf-8", "replace"), per_backend)
    for ml in lines:
        words = ml.words()
        runs_nvcc = any(os.path.basename(w) == "nvcc" or w in ("$(NVCC)", "${NVCC}") for w in words)
        ml.nvcc_context = runs_nvcc or bool(ml.variable and NVCC_VAR.search(ml.variable))
    return lines


def _mark_conditionals(lines: list[MakeLine], file_text: str = "", per_backend: bool = True) -> None:
    # Per open conditional: [first line, names HIP/ROCm, first line of the current branch, that branch
    # is the CUDA build by its own test (`ifeq ($(GPU_RUNTIME),CUDA)`)].
    stack: list[list] = []
    blocks: list[tuple[int, int, bool]] = []
    for i, ml in enumerate(lines):
        text = " ".join(ml.words())
        if ml.recipe:
            continue
        if CONDITIONAL.match(text) and not ELSE.match(text):
            stack.append([i, is_hip_text(text), i, _tests_for_cuda(text, file_text)])
        elif ELSE.match(text) and stack:
            if CONDITIONAL.match(text) and is_hip_text(text):
                stack[-1][1] = True
            _end_branch(lines, stack[-1], i)
            stack[-1][2:] = [i, bool(CONDITIONAL.match(text)) and _tests_for_cuda(text, file_text)]
        elif ENDIF.match(text) and stack:
            _end_branch(lines, stack[-1], i)
            first, aware, _, _ = stack.pop()
            blocks.append((first, i, aware))
        elif stack and ml.variable and is_hip_text(text):
            # `ifeq ($(shell which nvcc),) COMPILER := hipcc ... else COMPILER := nvcc ... endif` (mscclpp's
            # tutorials): a branch that sets up hipcc makes the conditional the per-compiler choice.
            stack[-1][1] = True
    for first, last, aware in blocks:
        if aware:
            for ml in lines[first:last + 1]:
                ml.aware = True
    # `CUDA_LIB = -lcusparse` beside `HIP_LIB = -lhipsparse`: a variable the Makefile keeps per backend;
    # `NVCC_FLAGS = ...` in a Makefile that also sets up hipcc: nvcc's own options.
    if not per_backend:
        return
    # `CUFLAGS = ...` set only in the block for machines with nvcc, then `CUFLAGS += -Xcompiler ...` further
    # down: the additions go to the NVIDIA build's variable.
    set_where: dict[str, list[bool]] = {}
    for ml in lines:
        if ml.variable and not ml.recipe and not re.match(r"^\s*(?:override\s+|export\s+)*[\w.-]+\s*\+=",
                                                           " ".join(ml.words())):
            set_where.setdefault(ml.variable, []).append(ml.cuda_branch)
    for ml in lines:
        if ml.variable and not ml.aware and all(set_where.get(ml.variable, [False])):
            ml.aware = True
    has_hip = _builds_for_both(lines, file_text)
    hip_rules = has_hip and runs_hip_compiler(lines)
    for ml in lines:
        if hip_rules and ml.recipe and not ml.aware and any(
                os.path.basename(w.lstrip("@-+")) == "nvcc" or w in ("$(NVCC)", "${NVCC}") for w in ml.words()):
            # LIKWID's test Makefile: `streamCU:` runs nvcc, `test-rocmon-triad:` runs $(HIPCC): one target
            # per vendor, and the nvcc one's options are nvcc's.
            ml.aware = True
            continue
        if not ml.variable or ml.aware:
            continue
        value = ml.value_tokens()
        if value and os.path.basename(value[0][0]) == "nvcc":
            continue  # the compiler itself (`NVCC ?= nvcc`): BLD007 weighs where it is used
        if _variable_with_twin(ml.variable, file_text) or (has_hip and _nvcc_only_variable(ml.variable, file_text)):
            ml.aware = True
        elif hip_rules and _read_only_by_nvcc_recipes(ml.variable, lines):
            # gpu-benches: `LDFLAGS := -lcuda -lnvidia-ml` read only by the `$(NVCC) ... $(LDFLAGS)` recipes,
            # beside a `hipify-perl` + `hipcc` rule for the same program that does not read it.
            ml.aware = True


# Make's implicit rules read these without naming them: a target with no recipe of its own may link with them.
_IMPLICIT_RULE_VARIABLES = frozenset({"LDFLAGS", "LDLIBS", "LOADLIBES", "CFLAGS", "CXXFLAGS", "CPPFLAGS"})


def _runs_nvcc(ml: MakeLine) -> bool:
    return any(os.path.basename(w.lstrip("@-+")) == "nvcc" or w in ("$(NVCC)", "${NVCC}") for w in ml.words())


def _read_only_by_nvcc_recipes(name: str, lines: list[MakeLine]) -> bool:
    """Is variable `name` read, and only by recipes that run nvcc (in a Makefile whose other rules run
    hipcc)? A variable of make's implicit rules counts only where every rule has a recipe of its own."""
    ref = re.compile(r"\$[({]" + re.escape(name) + r"[)}]")
    readers = [ml for ml in lines if any(ref.search(w) for w in ml.words()) and ml.variable != name]
    if not readers or not all(ml.recipe and _runs_nvcc(ml) for ml in readers):
        return False
    if name in _IMPLICIT_RULE_VARIABLES:
        for i, ml in enumerate(lines):
            words = ml.words()
            rule = not ml.recipe and ml.variable is None and any(w.endswith(":") or w == ":" for w in words) \
                and not (words and words[0].startswith("."))
            if rule and (i + 1 >= len(lines) or not lines[i + 1].recipe):
                return False  # a target make builds with its implicit rules, which read the variable
    return True


def _nvcc_only_variable(name: str, file_text: str) -> bool:
    """A variable named for nvcc, CUDA or an NVIDIA-only library (`AMGX_LIB`) that no line naming HIP reads
    (`NVCC_FLAGS` used by the nvcc rule alone, not passed on through `HIPCC_FLAGS = $(NVCC_FLAGS)`)."""
    if not re.search(r"NVCC|CUDA|AMGX|NVSHMEM|CUDNN|TENSORRT|CUTLASS|CUDSS|CUTENSOR", name, re.I) or \
            re.search(r"HIP|ROCM", name, re.I):
        return False
    ref = re.compile(r"\$[({]" + re.escape(name) + r"[)}]")
    return not any(ref.search(line) and is_hip_text(line) for line in file_text.splitlines())


def runs_hip_compiler(lines: list[MakeLine]) -> bool:
    """Does a rule run hipcc (or amdclang++): itself, through a variable holding it (`${HIPCC} ...`), or
    through a helper that echoes and runs one (`$(call quiet,HIPCC)`)?"""
    hip_vars = {ml.variable for ml in lines if ml.variable and ml.value_tokens()
                and os.path.basename(ml.value_tokens()[0][0]) in ("hipcc", "amdclang++")}
    # `$(HIPCC)` with no assignment in the file: configure substitutes it (StarPU's `.hip.o` rule in
    # make/starpu.mk), as CMake's HIP language or hipcc itself would be.
    refs = {f"$({v})" for v in hip_vars | {"HIPCC"}} | {f"${{{v}}}" for v in hip_vars | {"HIPCC"}}
    call = re.compile(r"\$\(call\s+[^,()]+,\s*(?:" + "|".join(map(re.escape, hip_vars)) + r")\s*[,)]") \
        if hip_vars else None
    for ml in lines:
        if not ml.recipe:
            continue
        words = ml.words()
        if len(words) > 1 and words[1] in (":=", "=", "?=", "+=", "::=", "!="):
            continue  # a tab-indented assignment inside an `ifeq` block, not a command
        if any(os.path.basename(w.lstrip("@-+")) in ("hipcc", "amdclang++") or w in refs for w in words):
            return True
        if call is not None and call.search(" ".join(words)):
            return True
    return False


def _builds_for_both(lines: list[MakeLine], file_text: str) -> bool:
    """Does the Makefile build for AMD beside NVIDIA: a rule runs hipcc (itself or through a variable
    holding it), or a conditional tests the project's CUDA switch whose HIP twin it names
    (`ifeq (YES,$(X_USE_CUDA))` beside `X_USE_HIP`)?"""
    if runs_hip_compiler(lines):
        return True
    for ml in lines:
        words = ml.words()
        text = " ".join(words)
        if CONDITIONAL.match(text):
            names = re.findall(r"\$[({]([A-Za-z_]\w*)[)}]", text) + (words[1:2] if words[0] in ("ifdef", "ifndef") else [])
            if any(_switch_with_twin(n, file_text) for n in names):
                return True
    return False


def _variable_with_twin(name: str, file_text: str) -> bool:
    from hiplint.amdbuild import _twins, names_cuda

    return names_cuda(name) and any(re.search(r"(?<![\w])" + re.escape(t) + r"\s*(?:\+|\?|::?|!)?=", file_text)
                                    for t in _twins(name))


IFEQ_OPERANDS = lazy_re(r"^\s*(?:else\s+)?ifeq\s*(.*)$")
VARIABLE_REF = lazy_re(r"\$[({][^)}]*[)}]")  # `$(CUDA)` names a variable, not the value CUDA


TRUTHY = frozenset({"YES", "Y", "ON", "TRUE", "1"})
# `ifneq ($(X),)`, `ifneq (,$(X))`, `ifneq "$(X)" ""`: X is set (a library directory found, a path given).
IFNEQ_EMPTY = lazy_re(r"^\s*(?:else\s+)?ifneq\s*(?:\(\s*\$[({](\w+)[)}]\s*,\s*\)|\(\s*,\s*\$[({](\w+)[)}]\s*\)"
                      r"|\"\$[({](\w+)[)}]\"\s*\"\")\s*$")
# `ifneq ($(wildcard $(CUDA_HOME)/bin/nvcc),)`, `ifneq ($(shell which nvcc),)`: nvcc is installed.
NVCC_FOUND = lazy_re(r"^\s*(?:else\s+)?ifneq\s*\(\s*\$[({](?:wildcard|shell\s+(?:which|command\s+-v))\s[^,]*\bnvcc[)}]*\s*,\s*\)\s*$")
IFDEF_NAME = lazy_re(r"^\s*(?:else\s+)?ifdef\s+([A-Za-z_]\w*)\s*$")


CALL_ARGUMENTS = lazy_re(r"\$[({]call\s+[\w.-]+\s*,([^)}]*)[)}]")
_VENDOR_PART = {"nvidia": ("amd",), "cuda": ("hip", "rocm", "amd")}


def _config_word_with_amd_twin(word: str, file_text: str) -> bool:
    """`gpu_nvidia` where the Makefile also names `gpu_amd`: a configuration value for the NVIDIA build
    beside the AMD one's. So is a value naming a CUDA library whose AMD counterpart's value the Makefile
    names too (`hasCurand` beside `hasHiprand`): the NVIDIA build's choice of library."""
    from hiplint.preproc import AMD_LIBRARY_WORDS

    low = word.lower()
    for cuda, amds in AMD_LIBRARY_WORDS.items():
        cuda = cuda.lower()
        if cuda == "cuda" or cuda not in low:
            continue  # `cuda` itself is _VENDOR_PART's, word by word
        if any(re.search(r"(?i)(?<![\w-])" + re.escape(low.replace(cuda, amd.lower())) + r"(?![\w-])", file_text)
               for amd in amds):
            return True
    parts = re.split(r"[_-]", low)
    for i, part in enumerate(parts):
        for amd in _VENDOR_PART.get(part, ()):
            twin = "_".join(parts[:i] + [amd] + parts[i + 1:])
            if len(parts) > 1 and re.search(r"(?i)(?<![\w-])" + re.escape(twin).replace("_", "[_-]") + r"(?![\w-])",
                                            file_text):
                return True
    return False


def _tests_for_cuda(text: str, file_text: str = "") -> bool:
    """`ifeq ($(GPU_RUNTIME),CUDA)` / `ifeq "$(BACKEND)" "cuda"`: true only in the CUDA build (or, as
    `ifeq ($(OS),Darwin)`, only on macOS, where no ROCm build runs). So is a
    test of the project's CUDA switch whose HIP twin the Makefile names too (`ifeq (YES,$(X_USE_CUDA))`
    or `ifdef X_USE_CUDA` beside `X_USE_HIP`): the project picks one backend per build; and a test of a
    configuration value for NVIDIA whose AMD twin the Makefile names (`ifneq (,$(call
    parse_config,gpu_nvidia))` beside `gpu_amd`, `ifeq ($(MACHINE),gpu_nvidia)`)."""
    if CONDITIONAL.match(text) and any(_config_word_with_amd_twin(w, file_text)
                                       for args in CALL_ARGUMENTS.findall(text) for w in re.split(r"[\s,]+", args) if w):
        return True
    m = IFEQ_OPERANDS.match(text)
    if m is not None:
        operands = [w for w in re.split(r"[\s,()\"']+", VARIABLE_REF.sub(" ", m.group(1))) if w]
        if any(w.upper() in NVIDIA_BACKENDS or _config_word_with_amd_twin(w, file_text) for w in operands):
            return True
        if any(w.upper() in ("DARWIN", "MACOS", "OSX") for w in operands):
            return True  # `ifeq ($(OS),Darwin)`: macOS, which ROCm does not run on, links its own way
        names = re.findall(r"\$[({]([A-Za-z_]\w*)[)}]", m.group(1))
        if len(names) == 1 and len(operands) == 1 and operands[0].upper() in TRUTHY:
            return _switch_with_twin(names[0], file_text)
        return False
    if NVCC_FOUND.match(text) and re.search(r"(?<![\w-])hipcc\b|\$[({]HIPCC[)}]", file_text):
        # `ifneq ($(wildcard $(CUDA_HOME)/bin/nvcc),)` in a Makefile that sets up hipcc too: the block runs
        # only where nvcc is installed, and configures the NVIDIA build.
        return True
    m = IFNEQ_EMPTY.match(text)
    if m is not None:
        # `ifneq ($(CUDA_LIB_DIR),)` beside `ifneq ($(HIP_LIB_DIR),)`: the CUDA backend's block, found or not
        return _variable_with_twin(m.group(1) or m.group(2) or m.group(3), file_text)
    m = IFDEF_NAME.match(text)
    return m is not None and _switch_with_twin(m.group(1), file_text)


def _switch_with_twin(name: str, file_text: str) -> bool:
    from hiplint.amdbuild import _is_build_switch, _twins
    from hiplint.preproc import is_cuda_build_macro

    return _is_build_switch(name) and is_cuda_build_macro(name) and \
        any(re.search(r"(?<![\w])" + re.escape(t) + r"(?![\w])", file_text) for t in _twins(name))


def _end_branch(lines: list[MakeLine], entry: list, end: int) -> None:
    if entry[3]:
        for ml in lines[entry[2]:end + 1]:
            ml.aware = True
            ml.cuda_branch = True


def get(ctx) -> list[MakeLine]:
    if "make" not in ctx.cache:
        ctx.cache["make"] = parse(ctx.source)
    return ctx.cache["make"]
