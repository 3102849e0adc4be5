"""CMake files through tree-sitter-cmake: commands with their arguments and option tokens.

Each command knows whether it sits inside an `if()`/`elseif()` chain (or a function/macro) whose
condition or name mentions HIP/ROCm, or in a branch whose own test picks the CUDA build
(`if(GPU_RUNTIME STREQUAL "CUDA")`, `if(FFTLIB_ENABLE_CUDA)` in a file that also tests
`FFTLIB_ENABLE_ROCM`, `if(TARGET CUDA::cufft)`); such code already handles AMD and the build rules skip it.
Arguments are split into tokens on blanks and `;` (CMake lists), with generator-expression
wrappers (`$<$<COMPILE_LANGUAGE:CUDA>:--use_fast_math>`) peeled off; offsets are file bytes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from hiplint.amdbuild import ONE_GPU_BACKEND_CUDA_MACROS
from hiplint.lazy import lazy_re
from hiplint.preproc import AMD_LIBRARY_WORDS, names_nvidia_compiler

from ._vendor import NVIDIA_BACKENDS, is_hip_text

HIP_LANGUAGE_ARCH_VARS = ("CMAKE_HIP_ARCHITECTURES", "HIP_ARCHITECTURES", "GPU_TARGETS", "AMDGPU_TARGETS")


@lru_cache(maxsize=1)
def _parser():
    import tree_sitter_cmake
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_cmake.language()))


@dataclass
class Token:
    text: str
    start: int
    end: int
    genex: str = ""  # the generator-expression conditions around it, e.g. "$<COMPILE_LANGUAGE:CUDA>"


@dataclass
class Command:
    name: str  # lower case
    start: int
    end: int
    args: list = field(default_factory=list)  # [Token] one per argument (quotes removed)
    aware: bool = False
    nvidia_branch: bool = False  # inside a branch only the NVIDIA build takes (`if(X STREQUAL "CUDA")`)

    def tokens(self) -> list[Token]:
        out = []
        # A generator expression may span arguments (`$<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda` newline
        # `--expt-relaxed-constexpr>`: CMake joins the list before evaluating it): its condition holds
        # for every argument until it closes.
        carry, depth = "", 0
        for a in self.args:
            tokens = split_argument(a)
            if carry:
                tokens = [Token(t.text, t.start, t.end, carry + t.genex) for t in tokens]
            out.extend(tokens)
            opened, closed = a.text.count("$<"), a.text.count(">")
            if depth == 0 and opened > closed and tokens:
                carry = tokens[-1].genex
            depth += opened - closed
            if depth <= 0:
                depth, carry = 0, ""
        return out

    def arg_texts(self) -> list[str]:
        return [a.text for a in self.args]

    @property
    def exclusion_list(self) -> bool:
        """`set(auditwheel_exclude_list "libcublas.so.12" ...)`, `list(APPEND IGNORED_LIBS ...)`: a list of
        what not to bundle, check or link. The names in it link nothing."""
        texts = self.arg_texts()
        variable = texts[0] if self.name == "set" and texts else texts[1] if self.name == "list" and len(texts) > 1 \
            else ""
        return bool(_EXCLUSION_VARIABLE.search(variable))


# A variable named for what is left out: exclude, ignore, skip, a block or deny list.
_EXCLUSION_VARIABLE = re.compile(r"(?i)exclu|ignor|skip|block_?list|black_?list|deny_?list")


def genex_for_nvidia(genex: str, data: bytes) -> bool:
    """A generator-expression condition true only in the NVIDIA build: `$<BOOL:${X_WITH_CUDA}>` (or
    `$<BOOL:X_WITH_CUDA>`) where the file also names the HIP twin (`X_WITH_HIP`), the project picking one
    backend per build. A negated condition (`$<NOT:...>`) is not."""
    if not genex or "NOT:" in genex:
        return False
    from hiplint.amdbuild import _twins
    from hiplint.preproc import is_cuda_build_macro

    for name in re.findall(r"\$\{(\w+)\}|BOOL:(\w+)", genex):
        name = name[0] or name[1]
        if is_cuda_build_macro(name) and any(
                re.search(rb"(?<!\w)" + re.escape(t.encode()) + rb"(?!\w)", data) for t in _twins(name)):
            return True
    return False


def _peel_genex(text: str, start: int) -> tuple[str, int, str]:
    """`$<$<COMPILE_LANGUAGE:CUDA>:-Xptxas>` -> ("-Xptxas", offset, "$<COMPILE_LANGUAGE:CUDA>")."""
    cond = ""
    while text.startswith("$<"):
        depth = 0
        i = 0
        split = -1
        while i < len(text):
            if text.startswith("$<", i):
                depth += 1
                i += 2
                continue
            ch = text[i]
            if ch == ">":
                depth -= 1
            elif ch == ":" and depth == 1:
                split = i
                break
            i += 1
        if split < 0:
            break
        cond += text[2:split]
        text, start = text[split + 1:], start + len(text[:split + 1].encode())
    # Closing brackets of the wrappers removed here (or in an earlier argument of the same genex).
    while text.endswith(">") and text.count("<") < text.count(">"):
        text = text[:-1]
    return text, start, cond


def split_argument(arg: Token) -> list[Token]:
    out = []
    text = arg.text
    i = 0
    for piece in _pieces(text):
        idx = text.index(piece, i)
        i = idx + len(piece)
        inner, off, cond = _peel_genex(piece, arg.start + len(text[:idx].encode()))
        j = 0
        for sub in _pieces(inner):
            k = inner.index(sub, j)
            j = k + len(sub)
            s = off + len(inner[:k].encode())
            out.append(Token(sub, s, s + len(sub.encode()), arg.genex + cond))
    return out


def _pieces(text: str) -> list[str]:
    return [p for p in text.replace(";", " ").split() if p]


def _argument(node, data: bytes) -> Token:
    child = node.children[0] if node.children else node
    if child.type == "quoted_argument":
        inner = [c for c in child.children if c.type == "quoted_element"]
        if inner:
            s, e = inner[0].start_byte, inner[0].end_byte
        else:
            s = e = child.start_byte + 1
    elif child.type == "bracket_argument":
        inner = [c for c in child.children if c.type == "bracket_argument_content"]
        s, e = (inner[0].start_byte, inner[0].end_byte) if inner else (child.start_byte, child.start_byte)
    else:
        s, e = child.start_byte, child.end_byte
    return Token(data[s:e].decode("utf-8", "replace"), s, e)


def parse(data: bytes) -> list[Command]:
    tree = _parser().parse(data)
    commands: list[Command] = []
    defs: list = []  # (name, start, end) of each function and macro the file defines
    stack = [(tree.root_node, False, False)]
    while stack:
        node, aware, nvidia = stack.pop()
        if node.type in ("if_condition", "function_def", "macro_def"):
            heads = [c for c in node.children if c.type in ("if_command", "elseif_command", "function_command",
                                                              "macro_command")]
            if any(is_hip_text(data[h.start_byte:h.end_byte].decode("utf-8", "replace")) for h in heads):
                aware = True
        if node.type in ("normal_command", "if_command", "elseif_command"):
            ident = node.children[0] if node.children else None
            name = data[ident.start_byte:ident.end_byte].decode("utf-8", "replace").lower() if ident else ""
            cmd = Command(name, node.start_byte, node.end_byte, aware=aware, nvidia_branch=nvidia)
            for c in node.children:
                if c.type == "argument_list":
                    cmd.args = [_argument(a, data) for a in c.children if a.type == "argument"]
            if name in ("set", "list") and not aware and \
                    is_hip_text(data[node.start_byte:node.end_byte].decode("utf-8", "replace")):
                # `set(TPLS ... CUSPARSE CUBLAS ... HIP HIPBLAS HIPSPARSE CUDA::cudart)`: a list that names
                # both vendors' libraries, each used where it is found.
                cmd.aware = True
            commands.append(cmd)
        if node.type == "if_condition":
            # `if(GPU_RUNTIME STREQUAL "CUDA")`: that branch is the NVIDIA build by its own test.
            branch_nvidia, children = False, []
            for c in node.children:
                if c.type in ("if_command", "elseif_command", "else_command"):
                    branch_nvidia = _tests_for_cuda(c, data)
                inside = branch_nvidia and c.type == "body"
                children.append((c, aware or inside, nvidia or inside))
            stack.extend(reversed(children))
            continue
        if node.type in ("function_def", "macro_def") and not aware:
            head = next((c for c in node.children if c.type in ("function_command", "macro_command")), None)
            args = [c for c in head.children if c.type == "argument_list"] if head is not None else []
            first = next((a for a in args[0].children if a.type == "argument"), None) if args else None
            if first is not None:
                defs.append((data[first.start_byte:first.end_byte].decode("utf-8", "replace").lower(),
                             node.start_byte, node.end_byte))
        for c in reversed(node.children):
            stack.append((c, aware, nvidia))
    commands.sort(key=lambda c: c.start)
    _aware_when_only_called_aware(commands, defs)
    if _requires_hip(tree.root_node, data):
        for c in commands:
            c.aware = True
    return commands


_DEFINES_COMMAND = lazy_re(rb"(?im)^[ \t]*(?:macro|function)[ \t]*\([ \t]*(\w+)")
_FINDS_HIP = lazy_re(rb"(?i)find_package\s*\(\s*hip\b")


def hip_module_commands(path: str) -> frozenset:
    """Macros and functions (lower-cased) that the project's own HIP-requiring CMake modules define: QUICK's
    FindHipCUDA.cmake defines `cuda_add_library` for the AMD build. A call of one is that module's, not
    FindCUDA's (a copy of CMake's own FindCUDA.cmake never requires HIP)."""
    from hiplint.amdbuild import root_of
    return _hip_module_commands(root_of(path))


@lru_cache(maxsize=16)
def _hip_module_commands(root: str) -> frozenset:
    from hiplint.amdbuild import _build_files, _read_bytes
    names: set[str] = set()
    for path in _build_files(root)[0]:
        if not path.endswith(".cmake"):
            continue
        data = _read_bytes(path)
        if not data or _FINDS_HIP.search(data) is None:
            continue
        try:
            if not _requires_hip(_parser().parse(data).root_node, data):
                continue
        except Exception:  # a module the grammar cannot take: it defines nothing for us
            continue
        names.update(m.group(1).decode("utf-8", "replace").lower() for m in _DEFINES_COMMAND.finditer(data))
    return frozenset(names)


def _requires_hip(root, data: bytes) -> bool:
    """A CMake module that stops without HIP: `find_package(hip REQUIRED)` at its top level, outside any
    if() or function. Only an AMD build runs it, so the CUDA names in it are that build's own mapping
    (QUICK's FindHipCUDA.cmake sets `CUDA_cublas_LIBRARY` to `roc::rocblas`), as a compatibility header
    maps names for the sources."""
    for node in root.children:
        if node.type != "normal_command" or not node.children:
            continue
        ident = node.children[0]
        if data[ident.start_byte:ident.end_byte].lower() != b"find_package":
            continue
        args = [_argument(a, data).text for c in node.children if c.type == "argument_list"
                for a in c.children if a.type == "argument"]
        if args and args[0].lower() == "hip" and "REQUIRED" in args[1:]:
            return True
    return False


def _aware_when_only_called_aware(commands: list[Command], defs: list) -> None:
    """A macro or function called only inside branches the NVIDIA build alone takes (Horovod's
    `add_cuda()`, called in `if(NOT DEFINED HOROVOD_GPU OR HOROVOD_GPU STREQUAL "CUDA")`): its body
    belongs to that build. One also called in the HIP build's branch is reported as usual."""
    for _ in range(3):  # a macro called only from such a macro's body is one too
        changed = False
        for name, start, end in defs:
            calls = [c for c in commands if c.name == name and not (start <= c.start < end)]
            if not calls or not all(c.nvidia_branch for c in calls):
                continue
            for c in commands:
                if start <= c.start < end and not c.nvidia_branch:
                    c.aware = c.nvidia_branch = changed = True
        if not changed:
            return


def _tests_for_cuda(head, data: bytes) -> bool:
    """`if(<var> STREQUAL "CUDA")` (either side), `if(CMAKE_CUDA_COMPILER MATCHES "nvcc$")`, a switch
    named for an NVIDIA compiler (`if(COMPILER_IS_PGI)`), a CUDA backend switch whose HIP/ROCm twin the
    file also tests (`if(Heffte_ENABLE_CUDA)` beside `if(Heffte_ENABLE_ROCM)`) or `if(TARGET CUDA::cufft)`:
    the branch runs only when the build is the CUDA one, or the compiler NVIDIA's."""
    args = [c for c in head.children if c.type == "argument_list"]
    words = [data[a.start_byte:a.end_byte].decode("utf-8", "replace").strip('"').strip("@").upper()
             for a in (args[0].children if args else ()) if a.type == "argument"]
    words = [w[2:-1] if w.startswith("${") and w.endswith("}") else w for w in words]
    if "OR" in words and "AND" not in words:
        # if(NOT DEFINED GPU OR GPU STREQUAL "CUDA"): CUDA when the choice is left unset, and the AMD build
        # sets it (`elseif(GPU STREQUAL "ROCM")`).
        parts = _split(words, "OR")
        chosen = {p[0] for p in parts if len(p) == 3 and _condition_for_cuda(p, data)}
        return bool(chosen) and all(_condition_for_cuda(p, data) or (len(p) == 3 and p[:2] == ["NOT", "DEFINED"]
                                                                     and p[2] in chosen) for p in parts)
    if "AND" in words:
        # if(NVCC_THREADS AND GPU_LANG STREQUAL "CUDA"): one conjunct for the CUDA build is enough.
        parts = _split(words, "AND")
        return "OR" not in words and any(_condition_for_cuda(p, data) for p in parts if p)
    return _condition_for_cuda(words, data)


def _split(words: list[str], operator: str) -> list[list[str]]:
    """The operands of a condition's `AND`s or `OR`s, each a list of words."""
    parts, current = [], []
    for w in words + [operator]:
        if w == operator:
            parts.append(current)
            current = []
        else:
            current.append(w)
    return parts


def _condition_for_cuda(words: list[str], data: bytes) -> bool:
    if len(words) == 1:
        # if(C_COMPILER_FAMILY_IS_PGI), if(PROJECT_COMPILER_IS_NVCC), if(FFTLIB_ENABLE_CUDA) beside _ROCM;
        # if(CMAKE_CUDA_COMPILER) after check_language(CUDA), if(CUDAToolkit_FOUND): set only where CUDA is.
        # if(Kokkos_ENABLE_CUDA): a dependency's CUDA backend, set only where that dependency was built for NVIDIA.
        return names_nvidia_compiler(words[0]) or _has_amd_twin(words[0], data) or \
            (words[0] in CUDA_FOUND_VARIABLES and _AMD_PATH.search(data) is not None) or \
            words[0] in ONE_GPU_BACKEND_CUDA_MACROS
    if len(words) == 2:
        return words[0] == "TARGET" and words[1].startswith("CUDA::")  # the CUDA toolkit's imported targets
    if len(words) != 3:
        return False
    if words[1] == "MATCHES":
        # `if(CMAKE_CUDA_COMPILER MATCHES "nvcc$")`, `if(AMReX_GPU_BACKEND MATCHES "CUDA")`
        return "NVCC" in words[2] or words[2] in NVIDIA_BACKENDS
    return words[1] == "STREQUAL" and (words[0] in NVIDIA_BACKENDS or words[2] in NVIDIA_BACKENDS)


# A file with a path of its own for AMD: it finds ROCm packages, enables HIP or picks the ROCm backend.
_AMD_PATH = re.compile(rb"(?i)find_package\s*\(\s*(?:hip|rocm|roc[a-z]+|hip[a-z]+)\b|enable_language\s*\([^)]*\bHIP\b|"
                       rb"STREQUAL\s+\"?(?:ROCM|HIP|AMD)\"?\s*\)")
# Variables CMake sets only on a machine with the CUDA toolkit or nvcc (uppercased, as the words are); in
# a file with an AMD path, a branch on them is the NVIDIA build's. In code never ported it is how the
# GPU part gets silently left out on AMD, and stays reported.
CUDA_FOUND_VARIABLES = frozenset({"CMAKE_CUDA_COMPILER", "CMAKE_CUDA_COMPILER_LOADED", "CUDATOOLKIT_FOUND",
                                  "CUDA_FOUND"})


def _has_amd_twin(switch: str, data: bytes) -> bool:
    """A switch named for CUDA (`FFTLIB_ENABLE_CUDA`) or an NVIDIA library (`GMX_USE_NVTX`) whose AMD
    twin (`FFTLIB_ENABLE_ROCM`, `GMX_USE_ROCTX`) the file names too: one switch per backend, and an AMD
    build has the NVIDIA one off."""
    parts = switch.split("_")
    for i, part in enumerate(parts):
        for amd in AMD_LIBRARY_WORDS.get(part, ()):  # CUDA -> HIP, ROCM; NVTX -> ROCTX; NCCL -> RCCL ...
            twin = "_".join(parts[:i] + [amd] + parts[i + 1:])
            if re.search(rb"(?i)(?<![\w])" + re.escape(twin.encode()) + rb"(?![\w])", data):
                return True
    return False


def get(ctx) -> list[Command]:
    if "cmake" not in ctx.cache:
        ctx.cache["cmake"] = parse(ctx.source.data)
    return ctx.cache["cmake"]


def enables_hip_language(commands: list[Command]) -> bool:
    """The project compiles HIP: the HIP language (`enable_language(HIP)`, `project(... HIP)`), or
    clang's HIP mode through the C++ compiler (`-xhip`, `-x hip`). Either way, options for the CUDA
    language (`$<COMPILE_LANGUAGE:CUDA>`, CMAKE_CUDA_FLAGS) never reach the HIP build."""
    # `set(GPU_LANG "HIP")` ... `enable_language(${GPU_LANG})` (vLLM): a variable the file sets to HIP.
    hip_vars = {c.arg_texts()[0] for c in commands if c.name == "set" and len(c.arg_texts()) >= 2
                and c.arg_texts()[1].strip('"') == "HIP"}
    for c in commands:
        if c.name == "enable_language" and ("HIP" in c.arg_texts()
                                            or any(a.strip('"') in ("${%s}" % v for v in hip_vars) for a in c.arg_texts())):
            return True
        if c.name == "project" and "HIP" in c.arg_texts()[1:]:
            return True
        words = [t.text for t in c.tokens()]
        if "-xhip" in words or any(a == "-x" and b == "hip" for a, b in zip(words, words[1:])):
            return True
    return False


# AMD targets set another way: a project variable for them (`KOKKOS_HIP_ARCHITECTURES`,
# `X_AMDGPU_TARGETS`) or clang's option itself (`--offload-arch=gfx90a`, the old `--amdgpu-target`).
_AMD_ARCH_TOKEN = lazy_re(r"\w*(?:HIP_ARCHITECTURES|AMDGPU_TARGETS)\b|--offload-arch\b|--amdgpu-target\b")


def sets_hip_architectures(commands: list[Command]) -> bool:
    """Does the file name AMD targets (CMake's HIP variables, a project variable for them, or
    `--offload-arch`)?"""
    for c in commands:
        for t in c.tokens():
            if t.text.strip("${}") in HIP_LANGUAGE_ARCH_VARS or _AMD_ARCH_TOKEN.search(t.text):
                return True
    return False
