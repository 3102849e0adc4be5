"""Port a CUDA build file to a HIP-only build: the CMake files and Makefiles `hiplint migrate` writes.

The engine. What each CUDA piece becomes is data: `rules/build/_port.py` (CMake names, libraries,
packages, toolkit paths) and `rules/build/_nvcc.py` (`NvccOption.port`: nvcc options). The files are
read the way the build rules read them (`rules/build/_cmake.py`, `rules/build/_make.py`), so code the
rules leave alone (an `if()` chain or Makefile conditional that names HIP/ROCm, or a branch kept to the
CUDA build by its own test) is left alone here too; a CMake file that already enables the HIP language
is not ported at all.

Every port is a list of byte edits on the original text. The result is parsed again (tree-sitter-cmake
for CMake, the Makefile tokenizer for Makefiles); a result with a new parse error, or a Makefile whose
logical lines changed kind (assignment, recipe, conditional), is refused: the caller keeps the file as it
was and says why. What cannot be ported is returned as `manual` items for the migration checklist.
"""
from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field

from hiplint.rules.build import _cmake, _make, _nvcc, _options
from hiplint.rules.build import _port as T
from hiplint.rules.build.cmake_cuda_language import _project_languages
from hiplint.rules.build.cmake_find_cuda import FINDCUDA_COMMANDS as ALL_FINDCUDA_COMMANDS
from hiplint.rules.build.nvcc_compiler import HIP_COMPILERS
from hiplint.source import Source

CMAKE_LANGUAGE = "cmake"
MAKE_LANGUAGE = "make"
PORTED_LANGUAGES = frozenset({CMAKE_LANGUAGE, MAKE_LANGUAGE})


@dataclass
class TreeFacts:
    """What a build file's port needs to know about the rest of the tree."""
    renamed: frozenset = frozenset()  # relative paths (with /) of sources written under a new name (.cu -> .hip)
    hip_extension: bool = False
    packages: tuple = ()  # (directory, CMake packages for the CUDA libraries a CMake file there links)
    finds_toolkit: bool = False  # some CMake file of the tree calls find_package(CUDAToolkit) or find_package(CUDA)
    nvidia_only: frozenset = frozenset()  # relative paths (with /) of sources the project's AMD build leaves to NVIDIA

    def packages_for(self, rel: str) -> set[str]:
        """The packages linked in the directory of `rel` and below: what a find_package() there must find."""
        here = os.path.dirname(rel)
        return {p for d, found in self.packages for p in found
                if not here or d == here or d.startswith(here + "/")}


@dataclass
class Port:
    data: bytes
    changes: Counter = field(default_factory=Counter)  # kind of change -> count
    manual: list = field(default_factory=list)  # (line, text): left for hand work
    refused: str = ""  # why the port was not kept (the file stays as it was)

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    def describe(self) -> str:
        return ", ".join(f"{kind} ×{n}" if n > 1 else kind for kind, n in sorted(self.changes.items()))


class _Edits:
    def __init__(self, data: bytes):
        self.data = data
        self.items: list[tuple[int, int, str, str]] = []
        self.manual: dict[str, list[int]] = {}

    def replace(self, start: int, end: int, text: str, kind: str) -> None:
        if self.data[start:end].decode("utf-8", "replace") != text:
            self.items.append((start, end, text, kind))

    def drop(self, start: int, end: int, kind: str) -> None:
        """Remove a word and the blanks before it (never a line's leading tab or newline)."""
        while start > 0 and self.data[start - 1:start] == b" ":
            start -= 1
        if start == 0 or self.data[start - 1:start] in (b"\n", b"\t", b"(", b'"'):
            while self.data[end:end + 1] == b" ":
                end += 1
            if (start == 0 or self.data[start - 1:start] == b"\n") and self.data[end:end + 1] == b"\n":
                end += 1  # the word was the whole line: the line goes
        self.items.append((start, end, "", kind))

    def note(self, offset: int, text: str) -> None:
        self.manual.setdefault(text, []).append(offset)

    def apply(self) -> Port:
        out, pos, changes = [], 0, Counter()
        crlf = b"\r\n" in self.data  # lines the port adds end as the file's lines do
        shifts = []  # (original offset, bytes added before what follows it)
        grown = 0
        for start, end, text, kind in sorted(self.items, key=lambda e: (e[0], e[1])):
            if start < pos:
                continue  # overlapping edits: the first one wins
            out.append(self.data[pos:start])
            new = text.encode("utf-8")
            if crlf:
                new = new.replace(b"\n", b"\r\n")
            out.append(new)
            pos = end
            grown += len(new) - (end - start)
            shifts.append((end, grown))
            changes[kind] += 1
        out.append(self.data[pos:])
        data = b"".join(out)

        def line(offset: int) -> int:  # the line in the ported text
            moved = offset + next((g for e, g in reversed(shifts) if e <= offset), 0)
            return data.count(b"\n", 0, moved) + 1

        manual = sorted((line(offsets[0]), _lines_note([line(o) for o in offsets], text))
                        for text, offsets in self.manual.items())
        return Port(data, changes, manual)


def _lines_note(lines: list[int], text: str) -> str:
    more = sorted(set(lines[1:]) - {lines[0]})
    return text + (f" (also line{'s' if len(more) > 1 else ''} {', '.join(map(str, more))})" if more else "")


def _offload(targets) -> str:
    return " ".join(f"--offload-arch={t}" for t in targets)


def _option_text(use, targets, first_arch: bool) -> str | None:
    """What an nvcc option becomes, or None when it is left for hand work."""
    port = use.option.port
    if isinstance(port, dict):
        port = port.get(use.value.strip().lower())
    if port is None:
        return None
    if port == "{arch}":
        return _offload(targets) if first_arch else ""
    if port == "{value}":
        return " ".join(p for p in use.value.replace(",", " ").split() if p)
    return port


def _library(name: str):
    low = name.lower()
    if low.endswith("_static"):
        low = low[:-len("_static")]
    return T.LIBRARIES.get(low)


# Sources renamed by the migration -------------------------------------------------------------

_CU_NAME = re.compile(rb"\.cu(?![\w])")
_DIR_PREFIXES = ("${CMAKE_CURRENT_SOURCE_DIR}/", "${CMAKE_CURRENT_LIST_DIR}/", "$(CURDIR)/", "./")


def _tree_rel(token: str, build_dir: str) -> str | None:
    """The tree path (with /) a source token of a build file in `build_dir` names, or None."""
    for prefix in _DIR_PREFIXES:
        if token.startswith(prefix):
            token = token[len(prefix):]
    if "$" in token or "*" in token:
        return None
    return os.path.normpath(os.path.join(build_dir, token)).replace(os.sep, "/")


def _renamed_source(token: str, build_dir: str, facts: TreeFacts) -> bool:
    """A `.cu` name the migration writes as `.hip`: a pattern (`*.cu`, `%.cu`), or a file of the tree."""
    if not facts.hip_extension:
        return False
    if "*" in token or "%" in token:
        return True
    for prefix in _DIR_PREFIXES:
        if token.startswith(prefix):
            token = token[len(prefix):]
    if "$" in token:
        return False
    rel = os.path.normpath(os.path.join(build_dir, token)).replace(os.sep, "/")
    return rel in facts.renamed


def _rename_cu(edits: _Edits, raw: bytes, start: int) -> None:
    for m in _CU_NAME.finditer(raw):
        edits.replace(start + m.start(), start + m.end(), ".hip", "source renamed")


# CMake -----------------------------------------------------------------------------------------

SET_KEYWORDS = frozenset({"CACHE", "PARENT_SCOPE", "FORCE", "APPEND", "PREPEND", "INSERT"})
ARCH_VALUE = re.compile(r"(?i)(?:sm_|compute_)?[0-9]+[a-z]?(?:-real|-virtual)?|native|all|all-major")
OFF_VALUES = frozenset({"OFF", "FALSE", "NO", "0", "N", "IGNORE"})
CUSTOM_COMMANDS = ("add_custom_command", "add_custom_target", "execute_process")
NVCC_WORDS = re.compile(r"(?<![\w])nvcc(?![\w])|CMAKE_CUDA_COMPILER(?![\w])|CUDA_NVCC_EXECUTABLE")
LINK_COMMANDS = ("target_link_libraries", "link_libraries")
SOURCE_LIST_COMMANDS = ("set", "list", "add_executable", "add_library", "target_sources") + tuple(T.FINDCUDA_COMMANDS)
FINDCUDA_LIB_VAR = re.compile(r"^\$\{CUDA_(?P<lib>[A-Za-z0-9]+)_LIBRAR(?:Y|IES)\}$")
LANGUAGE_LIST_GENEX = re.compile(rb"\$<(COMPILE|LINK)_LANGUAGE:([A-Za-z_,]*)>")


def _outer(arg, data: bytes) -> tuple[int, int]:
    """Byte range of an argument with its quotes."""
    start, end = arg.start, arg.end
    if start > 0 and data[start - 1:start] == b'"' and data[end:end + 1] == b'"':
        return start - 1, end + 1
    return start, end


def _line_start(data: bytes, offset: int) -> int:
    return data.rfind(b"\n", 0, offset) + 1


def _indent(data: bytes, offset: int) -> str:
    start = _line_start(data, offset)
    m = re.match(rb"[ \t]*", data[start:offset])
    return m.group(0).decode() if m else ""


def _line_end(data: bytes, offset: int) -> int:
    end = data.find(b"\n", offset)
    return len(data) if end < 0 else (end - 1 if data[end - 1:end] == b"\r" else end)


def finds_toolkit(data: bytes) -> bool:
    return any(c.name == "find_package" and c.args and c.args[0].text in ("CUDA", "CUDAToolkit") and not c.aware
               for c in _cmake.parse(data))


def cmake_packages(data: bytes) -> set[str]:
    """The ROCm packages for the CUDA libraries a CMake file links (`CUDA::cublas` -> hipblas)."""
    out = set()
    for cmd in _cmake.parse(data):
        if cmd.aware or cmd.name in ("if", "elseif", "find_package"):
            continue
        for tok in cmd.tokens():
            lib = _cmake_library(tok.text, cmd.name in LINK_COMMANDS)
            if lib is not None and lib[1]:
                out.add(lib[1])
    return out


def _cmake_library(text: str, bare: bool):
    if text.startswith("CUDA::"):
        return _library(text[len("CUDA::"):])
    if text == "${CUDA_LIBRARIES}":
        return T.LIBRARIES["cudart"]
    m = FINDCUDA_LIB_VAR.match(text)
    if m:
        return _library(m.group("lib"))
    if text.startswith("-l"):
        return _library(text[2:])
    if bare and not text.startswith("$"):
        return _library(text)
    return None


def _version(text: str):
    m = re.match(r"(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def port_cmake(rel: str, data: bytes, targets, facts: TreeFacts) -> Port:
    commands = _cmake.parse(data)
    if _cmake.enables_hip_language(commands):
        return Port(data)  # it already builds HIP: its CUDA parts are the NVIDIA build
    edits = _Edits(data)
    if re.match(T.CUDA_FIND_MODULE, os.path.basename(rel)):
        edits.note(0, "a find module for an NVIDIA component: ROCm has no such package; find the ROCm "
                      "counterpart (the hip* packages, `find_package(hip)`) or keep the module to the CUDA build")
    build_dir = os.path.dirname(rel)
    marked = _marked_hip(commands)
    target_list = ";".join(targets)
    enables_hip = None  # the command that now enables HIP
    sets_arch = False
    packages: set[str] = set()  # the ROCm packages of the libraries this file links
    first_user = None  # the first command that links one
    for cmd in commands:
        if cmd.aware:
            continue
        texts = cmd.arg_texts()
        if cmd.name == "project":
            for arg in _project_languages(cmd.args[1:]):
                if arg.text == "CUDA":
                    edits.replace(arg.start, arg.end, "HIP", "HIP language")
                    enables_hip = enables_hip or cmd
        elif cmd.name == "enable_language":
            for arg in cmd.args:
                if arg.text == "CUDA":
                    edits.replace(arg.start, arg.end, "HIP", "HIP language")
                    enables_hip = enables_hip or cmd
        elif cmd.name == "find_package" and cmd.args:
            package = cmd.args[0].text
            if package in ("CUDA", "CUDAToolkit"):
                words = [w for w in ("REQUIRED", "QUIET") if w in texts]
                suffix = "".join(f" {w}" for w in words)
                indent = _indent(data, cmd.start)
                edits.replace(cmd.start, cmd.end, f"find_package(hip{suffix})", "find_package(hip)")
                at = _line_end(data, cmd.end)
                found = sorted(facts.packages_for(rel) - {"hip"})
                more = "".join(f"\n{indent}find_package({p}{suffix})" for p in found)
                edits.replace(at, at, more, "find_package(hip)")
            elif package.lower() in T.CUDA_PACKAGES:
                edits.note(cmd.start, f"`find_package({package})`: a CUDA library outside the toolkit; on ROCm use "
                                      f"{T.CUDA_PACKAGES[package.lower()]}")
        elif cmd.name in T.FINDCUDA_COMMANDS:
            if "OPTIONS" in texts:
                edits.note(cmd.start, f"`{cmd.name}(... OPTIONS ...)`: a FindCUDA macro with nvcc options; use "
                                      f"`{T.FINDCUDA_COMMANDS[cmd.name]}` and `target_compile_options`")
            else:
                edits.replace(cmd.start, cmd.start + len(cmd.name), T.FINDCUDA_COMMANDS[cmd.name], "FindCUDA macro")
        elif cmd.name in ALL_FINDCUDA_COMMANDS:
            edits.note(cmd.start, f"`{cmd.name}`: a FindCUDA macro with no HIP counterpart; compile with the HIP "
                                  "language (add_executable/add_library) and link the hip* packages")
        elif cmd.name in ("include",) and texts and texts[0] in ("FindCUDA", "FindCUDAToolkit"):
            edits.note(cmd.start, f"`include({texts[0]})`: CUDA's find module; use `find_package(hip)`")
        if cmd.name in CUSTOM_COMMANDS and NVCC_WORDS.search(data[cmd.start:cmd.end].decode("utf-8", "replace")):
            edits.note(cmd.start, f"`{cmd.name}` runs nvcc: write the HIP command by hand (`hipcc`, "
                                  "`--offload-arch=...`), or build it as a HIP target")
        if cmd.name in ("set_source_files_properties", "set_property", "set_target_properties"):
            for a, b in zip(cmd.args, cmd.args[1:]):
                if a.text in T.LANGUAGE_PROPERTIES and b.text == "CUDA":
                    edits.replace(b.start, b.end, "HIP", "source language")
        if cmd.name in T.INCLUDE_COMMANDS:
            for tok in cmd.tokens():
                if tok.text in T.CMAKE_DROPPED_INCLUDES and not tok.genex:
                    edits.drop(*_outer(tok, data), "include directory")
        sets_arch |= _port_cmake_arch(cmd, data, edits, target_list)
        used = _port_cmake_libraries(cmd, edits)
        if used and not facts.finds_toolkit and first_user is None:
            first_user = cmd
        packages |= used
        _port_cmake_sources(cmd, data, edits, build_dir, facts, marked)
    arch_done = set()  # commands whose first architecture option became the --offload-arch list
    for cmd, use, cmd_tokens in _cmake_option_uses(commands):
        _port_option(use, cmd_tokens, edits, targets, cmake=True, first_arch=id(cmd) not in arch_done)
        if use.option.kind == "arch":
            arch_done.add(id(cmd))
    _port_cmake_names(commands, data, edits)
    if enables_hip is not None:
        _raise_minimum(commands, edits)
        if not sets_arch:
            at = _line_start(data, enables_hip.start)
            edits.replace(at, at, f'{_indent(data, enables_hip.start)}set(CMAKE_HIP_ARCHITECTURES "{target_list}" '
                                  'CACHE STRING "AMD GPU targets")\n', "HIP architectures")
    if first_user is not None:
        # No file of the tree found the CUDA toolkit (CUDA:: targets came from elsewhere): find the ROCm
        # packages before their first use.
        at = _line_start(data, first_user.start)
        indent = _indent(data, first_user.start)
        edits.replace(at, at, "".join(f"{indent}find_package({p} REQUIRED)\n" for p in sorted(packages)),
                      "find_package(hip)")
    port = edits.apply()
    if port.changed:
        before = _cmake_errors(data)
        if _cmake_errors(port.data) > before:
            return Port(data, refused="the ported file does not parse as CMake")
    return port


def _cmake_errors(data: bytes) -> int:
    root = _cmake._parser().parse(data).root_node
    count, stack = 0, [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            count += 1
        if node.has_error:
            stack.extend(node.children)
    return count


def _port_cmake_arch(cmd, data: bytes, edits: _Edits, target_list: str) -> bool:
    """`set(CMAKE_CUDA_ARCHITECTURES 70 80)` -> the configured AMD targets. True when it sets one."""
    if cmd.name not in ("set", "list", "set_property", "set_target_properties"):
        return False
    found = False
    args = cmd.args
    for i, arg in enumerate(args):
        if arg.text not in ("CMAKE_CUDA_ARCHITECTURES", "CUDA_ARCHITECTURES"):
            continue
        found = True
        if cmd.name == "set_target_properties":
            values = args[i + 1:i + 2]
        elif cmd.name == "set_property":
            values = args[i + 1:]
        else:
            values = []
            for a in args[i + 1:]:
                if a.text in SET_KEYWORDS:
                    break
                values.append(a)
        words = [t.text for v in values for t in _cmake.split_argument(v)]
        if not words or any(w.upper() in OFF_VALUES for w in words):
            continue
        if all(ARCH_VALUE.fullmatch(w) for w in words):
            start, end = _outer(values[0], data)[0], _outer(values[-1], data)[1]
            edits.replace(start, end, f'"{target_list}"', "HIP architectures")
        else:
            edits.note(arg.start, f"`{arg.text}` is set from `{' '.join(words)}`: make sure the value names AMD "
                                  f"targets ({target_list}), not NVIDIA architectures")
    return found


def _port_cmake_libraries(cmd, edits: _Edits) -> set[str]:
    """CUDA libraries -> ROCm's; returns the packages of the CMake targets written."""
    used = set()
    if cmd.name in ("if", "elseif", "find_package"):
        return used
    bare = cmd.name in LINK_COMMANDS
    for tok in cmd.tokens():
        lib = _cmake_library(tok.text, bare)
        if lib is None:
            continue
        make_name, _, target = lib
        if not make_name:
            edits.drop(tok.start, tok.end, "library")
        elif tok.text.startswith("-l"):
            edits.replace(tok.start, tok.end, f"-l{make_name}", "library")
        elif tok.text.startswith(("CUDA::", "${")):
            edits.replace(tok.start, tok.end, target, "library")
            used.add(lib[1])
        else:
            edits.replace(tok.start, tok.end, make_name, "library")
    return used


def _marked_hip(commands) -> set[str]:
    """Sources a `set_source_files_properties(... PROPERTIES LANGUAGE HIP)` of the file names."""
    out = set()
    for cmd in commands:
        texts = cmd.arg_texts()
        if cmd.name == "set_source_files_properties" and "PROPERTIES" in texts:
            props = texts[texts.index("PROPERTIES") + 1:]
            if any(a == "LANGUAGE" and b == "HIP" for a, b in zip(props, props[1:])):
                out.update(texts[:texts.index("PROPERTIES")])
    return out


def _port_cmake_sources(cmd, data: bytes, edits: _Edits, build_dir: str, facts: TreeFacts, marked: set) -> None:
    """`.cu` sources: renamed to `.hip` with the migration, else marked `LANGUAGE HIP` (CMake compiles a
    `.cu` file as CUDA unless told)."""
    if cmd.name == "file" and cmd.args and cmd.args[0].text in ("GLOB", "GLOB_RECURSE") and len(cmd.args) > 2:
        patterns = [a for a in cmd.args[2:] if a.text not in ("LIST_DIRECTORIES", "RELATIVE", "CONFIGURE_DEPENDS",
                                                               "FOLLOW_SYMLINKS", "true", "false")]
        cu = [a for a in patterns if a.text.endswith(".cu")]
        if not cu:
            return
        if facts.hip_extension:
            for a in cu:
                _rename_cu(edits, data[a.start:a.end], a.start)
        elif "${%s}" % cmd.args[1].text in marked:
            pass  # a ported file
        elif len(cu) == len(patterns):
            var = cmd.args[1].text
            at = _line_end(data, cmd.end)
            edits.replace(at, at, f"\n{_indent(data, cmd.start)}set_source_files_properties(${{{var}}} "
                                  "PROPERTIES LANGUAGE HIP)", "LANGUAGE HIP")
        else:
            edits.note(cmd.start, "`file(GLOB)` collects `.cu` files with others: mark the `.cu` ones "
                                  "`set_source_files_properties(... PROPERTIES LANGUAGE HIP)`")
        return
    if cmd.name not in SOURCE_LIST_COMMANDS:
        return
    cu = [t for t in cmd.tokens() if t.text.endswith(".cu") and not t.genex and "*" not in t.text]
    if not facts.hip_extension:
        cu = [t for t in cu if t.text not in marked]  # marked LANGUAGE HIP already (a ported file)
        # The NVIDIA back end of a project that builds for AMD (hiplint.amdbuild) stays CUDA: its sources
        # are not rewritten either, so marking them HIP would break the build and undo idempotence.
        cu = [t for t in cu if _tree_rel(t.text, build_dir) not in facts.nvidia_only]
    if not cu:
        return
    if facts.hip_extension:
        for t in cu:
            if _renamed_source(t.text, build_dir, facts):
                _rename_cu(edits, data[t.start:t.end], t.start)
        return
    names = " ".join(t.text for t in cu)
    at = _line_end(data, cmd.end)
    edits.replace(at, at, f"\n{_indent(data, cmd.start)}set_source_files_properties({names} PROPERTIES LANGUAGE HIP)",
                  "LANGUAGE HIP")


def _cmake_option_uses(commands):
    for cmd in commands:
        if cmd.aware or cmd.name not in _options.OPTION_COMMANDS:
            continue
        tokens = cmd.tokens()
        names = [t.text for t in tokens[:2]]
        nvcc_variable = any(_make.NVCC_VAR.search(n) for n in names)
        triples = [(t.text, t.start, t.end) for t in tokens]
        for use in _nvcc.scan(triples, nvcc_context=True):
            genex = next((t.genex for t in tokens if t.start == use.start), "")
            if use.option.generic and not (nvcc_variable or "CUDA" in genex):
                continue
            use.genex = genex
            use.argument = next(((a.start, a.end) for a in cmd.args if a.start <= use.start and use.end <= a.end), None)
            yield cmd, use, triples


def _port_option(use, tokens, edits: _Edits, targets, cmake: bool, first_arch: bool = True) -> None:
    shown = use.token if not use.value or "=" in use.token else f"{use.token} {use.value}"
    start, end = use.start, use.end
    if use.option.pattern == r"-Xcompiler":
        nxt = next((t for t in tokens if t[1] >= use.end), None)
        if nxt is None:
            return
        end = nxt[2]
    if cmake and getattr(use, "genex", "") and use.option.port == "{value}" and "," in use.value:
        edits.note(use.start, f"nvcc option `{shown}` inside a generator expression: write its options "
                              "one by one, without `-Xcompiler`")
        return
    text = _option_text(use, targets, first_arch)
    if text is None:
        edits.note(use.start, f"nvcc option `{shown}`: for HIP: {use.option.instead}")
        return
    arg = getattr(use, "argument", None) if cmake else None
    if text == "" and arg is not None and _only_option_of_genex(edits.data, arg, start, end):
        edits.drop(arg[0], arg[1], "nvcc option")  # `$<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>`: all of it
    elif text == "":
        edits.drop(start, end, "nvcc option")
    else:
        edits.replace(start, end, text, "nvcc option")


def _only_option_of_genex(data: bytes, arg, start: int, end: int) -> bool:
    """`$<$<COMPILE_LANGUAGE:CUDA>:OPTION>`: the argument is a generator expression around the option alone."""
    head, tail = data[arg[0]:start], data[end:arg[1]]
    return (head.startswith(b"$<") and head.endswith(b":") and tail and tail == b">" * len(tail)
            and head.count(b"$<") == len(tail) + head.count(b">"))


def _port_cmake_names(commands, data: bytes, edits: _Edits) -> None:
    """CUDA language variables, properties, generator expressions and compile features -> HIP's; the
    CUDA names with no HIP counterpart are listed."""
    names = re.compile(r"(?<![\w])(" + "|".join(map(re.escape, sorted(T.CMAKE_NAMES, key=len, reverse=True)))
                       + r")(?![\w])")
    manual = re.compile(r"(?<![\w])(" + "|".join(map(re.escape, T.CMAKE_MANUAL)) + r")(?![\w])|" + T.CMAKE_CUDA_NAME)
    feature = re.compile(T.CUDA_STD_FEATURE)
    for cmd in commands:
        if cmd.aware:
            continue
        text = data[cmd.start:cmd.end].decode("utf-8", "replace")
        if "CUDA" not in text and "cuda" not in text:
            continue
        raw = data[cmd.start:cmd.end]
        # Byte offsets of the text: the command is ASCII in practice; skip the rare one that is not.
        if len(raw) != len(text):
            continue
        for m in names.finditer(text):
            edits.replace(cmd.start + m.start(), cmd.start + m.end(), T.CMAKE_NAMES[m.group(1)], "CMake name")
        for m in feature.finditer(text):
            edits.replace(cmd.start + m.start(), cmd.start + m.end(), f"hip_std_{m.group(1)}", "CMake name")
        for m in LANGUAGE_LIST_GENEX.finditer(raw):
            langs = m.group(2).decode().split(",")
            if "CUDA" in langs:
                new = ",".join("HIP" if lang == "CUDA" else lang for lang in langs)
                edits.replace(cmd.start + m.start(2), cmd.start + m.end(2), new, "generator expression")
        for m in manual.finditer(text):
            name = m.group(0)
            if name in T.CMAKE_NAMES:
                continue
            advice = T.CMAKE_MANUAL.get(name, "a CUDA variable with no HIP counterpart: remove it or use the HIP "
                                              "language's (`CMAKE_HIP_...`, `hip_...` from `find_package(hip)`)")
            edits.note(cmd.start + m.start(), f"`{name}`: {advice}")


def _raise_minimum(commands, edits: _Edits) -> None:
    for cmd in commands:
        if cmd.name != "cmake_minimum_required":
            continue
        texts = cmd.arg_texts()
        if "VERSION" not in texts or texts.index("VERSION") + 1 >= len(texts):
            return
        arg = cmd.args[texts.index("VERSION") + 1]
        low = arg.text.split("...")[0]
        version = _version(low)
        if version is not None and version < T.HIP_LANGUAGE_MIN_CMAKE:
            new = "%d.%d" % T.HIP_LANGUAGE_MIN_CMAKE
            edits.replace(arg.start, arg.start + len(low), new, "cmake_minimum_required")
        return


# Makefiles -------------------------------------------------------------------------------------

_PATH_VAR = re.compile(r"\$[({](" + "|".join(T.MAKE_PATH_VARIABLES) + r")[)}]")
_INSTALL_PATH = re.compile(T.CUDA_INSTALL_PATH)
_SUBDIR = re.compile(r"/[A-Za-z0-9_./-]*")


def _port_make_word(raw: str, edits: _Edits, start: int, make_dir: str, facts: TreeFacts, command_word: bool) -> None:
    """Toolkit paths, nvcc, CUDA libraries and renamed sources inside one Makefile word."""
    word = raw.lstrip("@-+") if command_word else raw
    lead = len(raw) - len(word)
    if word == "nvcc":
        edits.replace(start + lead, start + len(raw), T.HIP_COMPILER, "hipcc")
        return
    m = re.fullmatch(r"-l([A-Za-z0-9_]+)", word)
    if m:
        lib = _library(m.group(1))
        if lib is not None:
            if lib[0]:
                edits.replace(start, start + len(raw), f"-l{lib[0]}", "library")
            else:
                edits.drop(start, start + len(raw), "library")
        return
    for pattern, replacement in ((_PATH_VAR, f"$({T.ROCM_PATH_VARIABLE})"), (_INSTALL_PATH, T.ROCM_DEFAULT_PATH)):
        for m in pattern.finditer(raw):
            edits.replace(start + m.start(), start + m.end(), replacement, "toolkit path")
            sub = _SUBDIR.match(raw, m.end())
            if sub is None:
                continue
            part = sub.group(0)
            for old, new in T.TOOLKIT_SUBDIRS.items():
                if part == old or part.startswith(old + "/"):
                    if old != new:
                        edits.replace(start + sub.start(), start + sub.start() + len(old), new, "toolkit path")
                    break
            else:
                edits.note(start, f"`{raw}`: a directory of the CUDA toolkit, now looked for under "
                                  f"`$({T.ROCM_PATH_VARIABLE})`; check ROCm has it")
    if _CU_NAME.search(raw.encode()) and _renamed_source(word, make_dir, facts):
        _rename_cu(edits, raw.encode(), start)


def _make_shape(lines) -> list:
    """What a port must keep of each logical line: the variable it assigns (a toolkit path variable under
    its ROCm name), whether it is a recipe line, a conditional."""
    return [(T.ROCM_PATH_VARIABLE if ml.variable in T.MAKE_PATH_VARIABLES else ml.variable, ml.recipe, bool(_make.CONDITIONAL.match(" ".join(ml.words())))
             or bool(_make.ENDIF.match(" ".join(ml.words())))) for ml in lines]


def port_make(rel: str, data: bytes, targets, facts: TreeFacts) -> Port:
    lines = _make.parse(Source(rel, data), per_backend=False)
    if any(ml.variable is not None and ml.value_tokens()
           and os.path.basename(ml.value_tokens()[0][0]) in HIP_COMPILERS for ml in lines):
        return Port(data)  # it already names a HIP compiler: its nvcc lines are the NVIDIA build
    edits = _Edits(data)
    make_dir = os.path.dirname(rel)
    for ml in lines:
        if ml.aware or not ml.tokens:
            continue
        taken = set()  # tokens an nvcc option (with its value) covers
        first_arch = True
        tokens = ml.command_tokens()
        for use in _nvcc.scan(tokens, ml.nvcc_context):
            _port_option(use, tokens, edits, targets, cmake=False, first_arch=first_arch)
            first_arch = first_arch and use.option.kind != "arch"
            taken.update(s for _, s, _ in tokens if use.start <= s < use.end)
            if use.option.pattern == r"-Xcompiler":
                nxt = next((t for t in tokens if t[1] >= use.end), None)
                if nxt is not None:
                    taken.add(nxt[1])
        if ml.variable in T.MAKE_PATH_VARIABLES:
            at = data.find(ml.variable.encode(), ml.start)
            edits.replace(at, at + len(ml.variable), T.ROCM_PATH_VARIABLE, "toolkit path")
        for i, (text, s, e) in enumerate(ml.tokens):
            if s in taken:
                continue
            raw = data[s:e].decode("utf-8", "replace")
            command_word = ml.recipe and (i == 0 or ml.tokens[i - 1][0] in ("&&", "||", ";", "|"))
            if ml.variable is not None and ml.value_tokens()[:1] == [(text, s, e)]:
                command_word = True  # NVCC = nvcc
            if s < ml.value_start and ml.variable is not None:
                continue  # the variable name and the operator
            _port_make_word(raw, edits, s, make_dir, facts, command_word)
    port = edits.apply()
    if port.changed and _make_shape(_make.parse(Source(rel, port.data), per_backend=False)) != _make_shape(lines):
        return Port(data, refused="the ported Makefile's lines no longer match the original's (assignments, "
                                  "recipes, conditionals)")
    return port


def unported_notes(data: bytes) -> list:
    """Checklist items for a build file hiplint does not port: [(line, what to do)] or []."""
    text = data.decode("utf-8", "replace")
    for pattern, advice in T.UNPORTED_ADVICE:
        m = re.search(pattern, text)
        if m:
            return [(text.count("\n", 0, m.start()) + 1, advice)]
    return []


# Entry point -----------------------------------------------------------------------------------

def port(rel: str, data: bytes, language: str, targets, facts: TreeFacts) -> Port:
    """The HIP-only version of one build file (`rel`: its path in the tree, with /)."""
    if language == CMAKE_LANGUAGE:
        return port_cmake(rel, data, targets, facts)
    if language == MAKE_LANGUAGE:
        return port_make(rel, data, targets, facts)
    return Port(data)
