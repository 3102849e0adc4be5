"""What a rule sees of a file, and how it reports."""
from __future__ import annotations

import os
import re

from tree_sitter import Node

from hiplint.cparse import FUNCTION_TYPES, FunctionSpans, Unit, path_to
from hiplint.cudaversions import newer_cuda_only
from hiplint.model import Applicability, Edit, Finding, Fix, Impact, RelatedLocation, Severity
from hiplint.source import Source
from hiplint.lazy import lazy_re

_STATEMENT_TYPES = frozenset({"expression_statement", "declaration", "compound_statement", "function_definition",
                              "return_statement", "translation_unit", "preproc_def", "preproc_function_def"})


_NAME_OR_CALL = lazy_re(rb"\s*([A-Za-z_]\w*)\s*(?:\(.*)?\Z", re.S)
# A CUDA name a compatibility header may map for AMD: toolkit and library prefixes, intrinsics.
_CUDA_NAME = lazy_re(r"(?:cu|CU|cuda|CUDA|nv|NV|__)[A-Za-z0-9_]")
# A compatibility header's line `#define <CUDA name> <HIP or ROCm name>`: the name defined there.
_DEFINE_HEAD = lazy_re(rb"[ \t]*#[ \t]*define[ \t]+\Z")
_HIP_VALUE = lazy_re(rb"\b(?:hip|HIP|roc|__hip|__HIP)\w")
_AMD_NAME_HEAD = rb"(?:hip|HIP|roc|miopen|rccl|__hip|__HIP)\w"


_AMD_WORD = lazy_re(rb"(?i)(?<![a-z])(hip|rocm|amdgpu|gfx[0-9]|rccl|miopen|"
                       rb"roc(tx|blas|rand|prim|fft|solver|sparse|thrust|wmma|shmem))")


# A loader of an NVIDIA library: `dlopen("libcublas.so", ...)` or the name in a string the file passes to it.
_DLOPEN_NVIDIA_LIBRARY = lazy_re(rb'"lib(?:cublas|cublasLt|cudart|cudnn|cuda|nvrtc|cusparse|cusolver|cufft|curand|nccl|'
                                 rb'nvidia-ml)\b[^"\n]*"')
# ... that includes none of the library's headers (outside comments: `// #include <cublas_v2.h>` is none).
_NVIDIA_LIBRARY_INCLUDE = lazy_re(rb'(?m)^[ \t]*#[ \t]*include[ \t]*[<"](?:cublas|cublasLt|cuda_runtime|cuda|cudnn|nvrtc|'
                                  rb'cusparse|cusolver\w*|cufft|curand|nccl|nvml)(?:_v2|_api)?\.h[>"]')
_LIBRARY_API_FAMILIES = frozenset({"API", "LIB", "RND", "SLV"})


def _names_amd(data: bytes) -> bool:
    """Does a build file name HIP, ROCm or an AMD target outside its comments (`HIP_ARCHITECTURES`, `hipcc`,
    `gfx942`)?"""
    return bool(_AMD_WORD.search(re.sub(rb"#[^\n]*", b"", data)))


# A file or directory named for one recent NVIDIA architecture (`sm100_fmha_kernel.hpp`, `hstu_hopper/`,
# `cutlass_blackwell_fmha/`): Hopper/Blackwell code (TMA, wgmma, clusters), which has no HIP form.
# A Python module written in an NVIDIA-only kernel DSL: it imports the CuTe DSL (`cutlass`) or cuTile
# (`cuda.tile`) at its top level.
_NVIDIA_DSL_IMPORT = lazy_re(rb"(?m)^(?:import|from)[ \t]+(?:cutlass|cuda\.tile)\b")
# A module's top-level imports of dotted names (`from pkg.cute.interface import f`, `import pkg.cute`).
_TOP_IMPORT = lazy_re(rb"(?m)^(?:from[ \t]+([A-Za-z_][\w.]*)[ \t]+import|import[ \t]+([A-Za-z_][\w.]*))")


def nvidia_dsl_module(path: str, data: bytes) -> bool:
    """A Python module of an NVIDIA-only kernel DSL: it imports the CuTe DSL or cuTile at its top level,
    or a module of its own project that does (a test of such a backend: `from pkg.cute.interface import`).
    The project's module is looked for in the file's directory and the directories above it."""
    import os

    if _NVIDIA_DSL_IMPORT.search(data) or _guarded_dsl_import(data):
        return True
    here = os.path.dirname(os.path.abspath(path))
    for m in _TOP_IMPORT.finditer(data):
        dotted = (m.group(1) or m.group(2)).decode()
        if "." not in dotted:
            continue
        rel = dotted.replace(".", os.sep)
        directory = here
        for _ in range(6):
            for candidate in (os.path.join(directory, rel + ".py"), os.path.join(directory, rel, "__init__.py")):
                if os.path.isfile(candidate):
                    try:
                        with open(candidate, "rb") as fh:
                            if _NVIDIA_DSL_IMPORT.search(fh.read(200_000)):
                                return True
                    except OSError:
                        pass
                    break
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
    return False


_INDENTED_DSL_IMPORT = lazy_re(rb"(?m)^[ \t]+(?:import|from)[ \t]+(?:cutlass|cuda\.tile)\b")
_MODULE_BLOCK = lazy_re(rb"^(?:if|elif|else|try|except|finally)\b")


def _guarded_dsl_import(data: bytes) -> bool:
    """An import of the DSL in a block at the module's top level (`if CUTE_AVAILABLE:` / `try:`), not
    inside a function: the module is written for it, only loaded where it exists."""
    for m in _INDENTED_DSL_IMPORT.finditer(data):
        start = m.start()
        while start > 0:
            line_start = data.rfind(b"\n", 0, start - 1) + 1
            line = data[line_start:start - 1] if start > 0 else b""
            start = line_start
            if line.strip() and not line[:1].isspace() and not line.lstrip().startswith(b"#"):
                if _MODULE_BLOCK.match(line):
                    return True
                break
    return False


_NVIDIA_ARCH_PART = lazy_re(r"(?:^|[_.-])(?:sm_?(?:9\d|1\d\d)a?|hopper|blackwell)(?:[_.-]|$)", re.I)


def _names_nvidia_arch(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    return any(_NVIDIA_ARCH_PART.search(p) for p in parts)


def _names_cuda_module(path: str) -> bool:
    """A CMake module named for CUDA (`CUDA.cmake`, `CudaToolkit.cmake`, `SetupCUDA.cmake`, `FindNVTX.cmake`),
    or a find module for one NVIDIA library (`FindcuRAND.cmake`, `FindCUDNN.cmake`, `FindNVSHMEM.cmake`):
    only the NVIDIA build's `find_package(cuRAND)` reads it."""
    import os

    from hiplint.amdbuild import NVIDIA_LIBRARY_WORDS, names_cuda
    name = os.path.basename(path)
    if not name.endswith(".cmake"):
        return False
    if name.startswith("Find") and name[4:-6].upper() in NVIDIA_LIBRARY_WORDS:
        return True
    words = re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name[:-6])  # FindCUDAToolkit: Find_CUDA_Toolkit
    return names_cuda(words)


def _cuda_find_module(path: str) -> bool:
    """A find module for CUDA or an NVIDIA library (`FindCUDAExaTN.cmake`, `FindcuDNN.cmake`), or a helper
    of CMake's FindCUDA kept in its `FindCUDA/` directory (`run_nvcc.cmake`, `select_compute_arch.cmake`)."""
    import os

    parts = os.path.normpath(path).split(os.sep)
    if len(parts) > 1 and parts[-2] == "FindCUDA":
        return True
    name = parts[-1]
    return name.startswith("Find") and name.endswith(".cmake") and _names_cuda_module(name)


class FileContext:
    def __init__(self, path: str, source: Source, settings, language: str, fs_path: str | None = None):
        self.path = path
        self.fs_path = fs_path or path  # where the file is on disk (its includes are found from there)
        self.source = source
        self.settings = settings
        self.language = language
        self.units: list[Unit] = []
        self.unit: Unit | None = None
        self.platform = None  # preproc.PlatformMap for C-family files
        self.findings: list[Finding] = []
        self.rule = None  # the rule instance being run
        self.cache: dict = {}  # per-file artefacts shared between rules (e.g. a libcst module)
        self.parse_errors: list[tuple[int, int]] = []
        # Spans the rules saw altered (bytes not UTF-8, bodies blanked by engine._amd_view): no fix writes there.
        self.blanked: list[tuple[int, int]] = []
        self.depends: dict[str, str] = {}  # other files read (hiplint.headers): path -> digest
        self._cuda_backend: bool | None = None
        self._build_facts = None

    @property
    def build_facts(self):
        """What the project's own AMD build says about this file (hiplint.amdbuild)."""
        if self._build_facts is None:
            from hiplint.amdbuild import facts_for
            self._build_facts = facts_for(self.fs_path)
        return self._build_facts

    @property
    def hip_macros(self) -> frozenset[str]:
        """The HIP macros for this file: the settings', and the definitions the project's AMD build sets
        for it (hiplint.amdbuild)."""
        cached = self.cache.get("hip_macros")
        if cached is None:
            from hiplint.preproc import ROCM_FLOOR_MARK
            major, minor = self.settings.rocm_version
            extra = self.build_facts.macros() | {f"{ROCM_FLOOR_MARK}{major}.{minor}"}
            cached = self.cache["hip_macros"] = self.settings.hip_macros | extra
        return cached

    # Reading ----------------------------------------------------------------------------------
    def text(self, node: Node) -> str:
        # Unit.text inlined: rules call this ~400 times per file.
        return self.unit.data[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def file_range(self, node: Node) -> tuple[int, int]:
        return self.unit.file_range(node)

    def options(self) -> dict:
        return self.settings.rule_options.get(self.rule.code, {})

    @property
    def wave64(self) -> bool:
        return 64 in self.settings.wave_sizes

    @property
    def rocm_version(self) -> tuple[int, int]:
        return self.settings.rocm_version

    def enclosing(self, node: Node, types) -> Node | None:
        """The innermost ancestor of `node` of one of `types`, or None."""
        for unit in (self.unit, *(self.units[:1] if self.units else ())):
            path = path_to(unit.root, node) if unit is not None else None
            if path is not None:  # one walk down from the unit's root: linear in the depth
                return next((n for n in reversed(path[:-1]) if n.type in types), None)
        n = node.parent
        while n is not None:
            if n.type in types:
                return n
            n = n.parent
        return None

    def enclosing_function(self, node: Node) -> Node | None:
        """The innermost function or lambda around `node` (not `node` itself), by byte range among the
        unit's functions (cparse.FunctionSpans)."""
        unit = self.unit
        if unit is None or unit.root.descendant_for_byte_range(node.start_byte, node.end_byte) != node:
            return self.enclosing(node, FUNCTION_TYPES)  # not the current unit's node (or not the smallest there)
        spans = self.cache.get(("function_spans", id(unit)))
        if spans is None:
            spans = self.cache[("function_spans", id(unit))] = FunctionSpans(unit.root)
        return spans.innermost(node.start_byte, node.end_byte, strict=True)

    def function_scope(self, node: Node) -> Node:
        """The function around `node`, or the unit's root (a macro body's wrapper counts as a function)."""
        fn = self.enclosing_function(node)
        return fn if fn is not None else self.unit.root

    @property
    def _nvidia_header(self) -> bool:
        cached = self.cache.get("nvidia_header")
        if cached is None:
            from hiplint.includers import nvidia_only_header
            cached = self.cache["nvidia_header"] = bool(self.fs_path) and self.build_facts.builds_for_amd \
                and nvidia_only_header(self.fs_path)
        return cached

    @property
    def _dead_header(self) -> bool:
        cached = self.cache.get("dead_header")
        if cached is None:
            from hiplint.includers import dead_header
            cached = self.cache["dead_header"] = bool(self.fs_path) and self.build_facts.builds_for_amd \
                and dead_header(self.fs_path)
        return cached

    @property
    def _off_switch_ranges(self) -> list[tuple[int, int]]:
        """File byte ranges of the `#ifdef X` / `#if defined(X) || defined(Y)` branches whose switches the
        project ships turned off (hiplint.includers.off_switches)."""
        cached = self.cache.get("off_switch_ranges")
        if cached is None:
            cached = self.cache["off_switch_ranges"] = _off_switch_ranges(self)
        return cached

    @property
    def _uncalled_ranges(self) -> list[tuple[int, int]]:
        """In a `setup.py` (a script no module imports), the byte ranges of its top-level functions that
        nothing in it calls or names: a check whose only call is commented out runs in no build."""
        cached = self.cache.get("uncalled_ranges")
        if cached is None:
            cached = self.cache["uncalled_ranges"] = _uncalled_setup_functions(self)
        return cached

    def in_off_switch_branch(self, file_byte: int) -> bool:
        """Is `file_byte` where the body of a branch on a switch the project ships off begins (its
        `#ifdef`'s test ends there)? No build compiles that branch."""
        return any(s <= file_byte < e for s, e in self._off_switch_ranges)

    @property
    def _nvidia_dsl(self) -> bool:
        cached = self.cache.get("nvidia_dsl")
        if cached is None:
            cached = self.cache["nvidia_dsl"] = bool(self.fs_path) and nvidia_dsl_module(self.fs_path, self.source.data)
        return cached

    @property
    def _nvidia_library_loader(self) -> bool:
        """Does the file load an NVIDIA library with dlopen and declare its API itself (no NVIDIA header
        included)? hidet's `runtime/cuda/cublas.cpp`: `dlopen("libcublas.so")`, its own enum copies and
        function-pointer typedefs. It is built without the CUDA toolkit and never hipified; the project
        loads the AMD library in another file. Its uses of the library's names are no port."""
        cached = self.cache.get("nvidia_library_loader")
        if cached is None:
            data = self.source.data
            cached = b"dlopen" in data and _DLOPEN_NVIDIA_LIBRARY.search(data) is not None and \
                _NVIDIA_LIBRARY_INCLUDE.search(data) is None
            self.cache["nvidia_library_loader"] = cached
        return cached

    @property
    def in_cuda_backend(self) -> bool:
        """Is the file part of a CUDA backend with a HIP twin (hiplint.layout)? Asked on first report."""
        if self._cuda_backend is None:
            from hiplint.layout import hip_twin
            # A source the project's AMD build compiles is its input, twin or not (hiplint.amdbuild).
            facts = self.build_facts
            # A header counts as compiled for sitting beside AMD sources; one with an AMD twin of its own
            # beside it (`svsim_nvgpu_omp.cuh` and `svsim_amdgpu_omp.hpp`) is not what they include.
            twin = hip_twin(self.fs_path, whole_directory=facts.project_builds_for_amd)
            if twin is None:
                self._cuda_backend = False
            elif not facts.amd_compiled:
                self._cuda_backend = True
            else:
                from hiplint.amdbuild import HEADERS
                header = os.path.splitext(self.path)[1].lower() in HEADERS
                self._cuda_backend = header and os.path.dirname(twin) == os.path.dirname(os.path.abspath(self.fs_path))
        return self._cuda_backend

    def platform_kind(self, file_byte: int) -> str | None:
        return self.platform.kind_at(file_byte) if self.platform is not None else None

    # Editing ----------------------------------------------------------------------------------
    def replace(self, node: Node, content: str) -> Edit:
        s, e = self.file_range(node)
        return Edit(s, e, content)

    def insert_after(self, node: Node, content: str) -> Edit:
        _, e = self.file_range(node)
        return Edit(e, e, content)

    def insert_before(self, node: Node, content: str) -> Edit:
        s, _ = self.file_range(node)
        return Edit(s, s, content)

    # Reporting --------------------------------------------------------------------------------
    def _silenced(self, start: int) -> bool:
        """Whether the current rule stays quiet about file byte `start` (a branch AMD never compiles...)."""
        rule = self.rule
        if rule.code[:3] in _LIBRARY_API_FAMILIES and self.language == "cuda" and self._nvidia_library_loader:
            return True  # a dlopen loader with its own copy of the NVIDIA library's API: no header to hipify
        if not self.settings.report_nvidia_branches and not rule.code.startswith("HL") and self.in_cuda_backend:
            return True  # the file has a HIP twin (`cuda/` beside `hip/`): AMD compiles that one instead
        if not self.settings.report_nvidia_branches and not rule.code.startswith("HL") and self.language != "cuda":
            facts = self.build_facts
            if facts.nvidia_build_file or any(s <= start < e for s, e in facts.nvidia_ranges):
                return True  # a build file (or block) only the NVIDIA build reads: the AMD build is elsewhere
            if facts.project_builds_for_amd and self.language == "cmake" and _names_cuda_module(self.path):
                return True  # `cmake/deps/CUDA.cmake`, `FindCUDAToolkit.cmake`: the CUDA build's module
            if self.language == "cmake" and _cuda_find_module(self.path):
                # A project's copy of CMake's FindCUDA (`FindCUDA_X.cmake`, `FindCUDA/run_nvcc.cmake`): only
                # `find_package(CUDA)` reads it, and that call is where a port's work is; the copy stays NVIDIA's.
                return True
            if facts.project_builds_for_amd and self.language in ("cmake", "make") and not _names_amd(self.source.data):
                return True  # a build file with no HIP path in a project whose AMD build is elsewhere: NVIDIA's
        if not self.settings.report_nvidia_branches and not rule.code.startswith("HL") and self.build_facts.vendored:
            return True  # another project vendored under third_party/ that the project's AMD build does not compile
        if not self.settings.report_nvidia_branches and not rule.code.startswith("HL") and \
                self.build_facts.builds_for_amd and not self.build_facts.amd_compiled and _names_nvidia_arch(self.path):
            return True  # `sm100_*.hpp`, `hopper/`: one NVIDIA architecture's code, in a project whose AMD build is elsewhere
        if not self.settings.report_nvidia_branches and not rule.code.startswith("HL") and self.build_facts.nvidia_source:
            return True  # only NVIDIA-only targets compile it (`if(X_BUILD_CUDA) add_subdirectory(cuda)`)
        if not self.settings.report_nvidia_branches and not rule.code.startswith("HL") and self.build_facts.unbuilt:
            return True  # no build compiles it: named by no build file, matched by no glob, included by no file
        if not self.settings.report_nvidia_branches and not rule.code.startswith("HL") and self.language == "python" \
                and self.build_facts.project_builds_for_amd and self._nvidia_dsl:
            return True  # a module of the project's NVIDIA backend written in the CuTe DSL or cuTile (or its test)
        if not self.settings.report_nvidia_branches and not rule.code.startswith("HL") and self._dead_header:
            return True  # a header beside sources that nothing includes and no build file names: no compile sees it
        if not self.settings.report_nvidia_branches and not rule.code.startswith("HL") and self._nvidia_header:
            return True  # a header the project includes from NVIDIA-only code alone (hiplint.includers)
        if not rule.code.startswith("HL") and self.language == "python" and \
                os.path.basename(self.path) == "setup.py" and any(s <= start < e for s, e in self._uncalled_ranges):
            return True  # a `setup.py` function nothing calls (its one call commented out): no build runs it
        if not self.settings.report_nvidia_branches and not rule.code.startswith("HL") and \
                any(s <= start < e for s, e in self._off_switch_ranges):
            return True  # `#ifdef USE_TEXTURES_FIELDS`, offered only as `//#define USE_TEXTURES_FIELDS`: no build takes it
        if self.platform is not None:
            kind = self.platform.kind_at(start)
            if kind == "hip" and not rule.report_in_hip_branches:
                return True
            if kind == "nvidia" and not self.settings.report_nvidia_branches:
                return True
            if kind == "never":
                return True  # `#if 0`, an IDE-only block: no compiler sees it
            if not self.settings.report_nvidia_branches and not rule.code.startswith("HL") \
                    and self.build_facts.builds_for_amd and self.platform.off_on_amd(start):
                # A project that already builds for AMD skips this branch there by its own choice
                # (`#if CUDART_VERSION >= 12020` with no HIP test): its AMD build never compiles it.
                return True
            if not self.settings.report_nvidia_branches and not rule.code.startswith("HL") \
                    and self.language == "cuda" and newer_cuda_only(self.source.data, start):
                # `#if (CUDA_VERSION / 1000) >= 13`: code for toolkits newer than the CUDA 12 API HIP
                # follows. AMD skips it as a CUDA 12 build does, and goes the CUDA 12 way (ARC001).
                return True
            if rule.nvidia_feature and not self.settings.report_nvidia_branches and self.platform.off_on_amd(start):
                # PTX in a lone `#if __CUDA_ARCH__ >= 700`: AMD's compiler never sees it, and ARC001
                # reports the branch AMD silently skips; what to write for AMD there is new code.
                return True
        return False

    def _mapped_for_amd(self, start: int, end: int) -> bool:
        """Is the reported text a name (or a call of one) that a project header maps for the AMD build
        (`#ifdef X_USE_HIP` / `#include "compat_hip.h"` / `#define cublasGemmEx hipblasGemmEx`)? The
        project handled that name for AMD; the header itself is checked where it is linted."""
        if self.language != "cuda" or self.units is None or not self.units or self.rule.code.startswith("HL"):
            return False
        m = _NAME_OR_CALL.match(self.source.data[start:end])
        if m is None:
            return False
        from hiplint.headers import amd_macros
        name = m.group(1).decode("utf-8", "replace")
        if not _CUDA_NAME.match(name):
            return False  # the project's own name (`MIN_BLOCKS` per vendor): the rule weighs it itself
        data = self.source.data
        line_start = data.rfind(b"\n", 0, start) + 1
        line_end = data.find(b"\n", end)
        if _DEFINE_HEAD.match(data, line_start, start) is not None and \
                _HIP_VALUE.search(data, end, len(data) if line_end < 0 else line_end) is not None:
            return True  # `#define cublasGetStatusName hipblasStatusToString`: the mapping itself, not a use
        found = amd_macros(self).get(name)
        if found is None:
            return False
        return found.hip_only or self.maps_to_amd(found, name)

    def maps_to_amd(self, found, name: str) -> bool:
        """Does the definition map the CUDA name to a HIP or ROCm one (`#define cudnnHandle_t
        miopenHandle_t`)? Such a mapping is for the AMD build wherever it stands: no NVIDIA build spells
        CUDA's names as AMD's."""
        if found.header is None:
            text = self.source.data
        else:
            texts = self.cache.setdefault("header_texts", {})
            text = texts.get(found.header)
            if text is None:
                from hiplint.headers import MAX_HEADER_BYTES
                try:
                    with open(found.header, "rb") as fh:
                        text = fh.read(MAX_HEADER_BYTES)
                except OSError:
                    text = b""
                texts[found.header] = text
        pattern = re.compile(rb"(?m)^[ \t]*#[ \t]*define[ \t]+" + re.escape(name.encode()) +
                             rb"(?:\([^)\n]*\))?[ \t]+\(?[ \t]*" + _AMD_NAME_HEAD)
        return pattern.search(text) is not None

    def related(self, node: Node, message: str = "") -> RelatedLocation | None:
        """A related location for `node` (see Finding.add_related), or None where the rule would not
        report (a branch AMD never compiles)."""
        start, end = self.file_range(node)
        return self.related_range(start, end, message)

    def related_range(self, start: int, end: int, message: str = "") -> RelatedLocation | None:
        if self._silenced(start):
            return None
        line, col = self.source.position(start)
        end_line, end_col = self.source.position(end)
        return RelatedLocation(self.path, line, col, end_line, end_col, message)

    def relate(self, finding: Finding | None, node: Node, message: str = "") -> None:
        """Add `node` as a related location of `finding` (nothing if either is None)."""
        if finding is not None:
            loc = self.related(node, message)
            if loc is not None:
                finding.add_related(loc)

    def report(self, node: Node, message: str | None = None, fix: Fix | None = None,
               checklist: str | None = None, severity: Severity | None = None, group: str | None = None,
               impact: Impact | None = None) -> Finding | None:
        start, end = self.file_range(node)
        return self.report_range(start, end, message, fix, checklist, severity, group, impact)

    def report_range(self, start: int, end: int, message: str | None = None, fix: Fix | None = None,
                     checklist: str | None = None, severity: Severity | None = None,
                     group: str | None = None, impact: Impact | None = None) -> Finding | None:
        """Report [start, end) of the file. Findings of the rule given the same `group` key are merged
        after suppressions into the first one left, the others its related locations (a build file's
        nvcc options: one finding). Findings with a fix are never merged."""
        rule = self.rule
        if self._silenced(start) or self._mapped_for_amd(start, end):
            return None
        if fix is not None and fix.applicability == Applicability.SAFE:
            macro = self._project_macro_call(fix)
            if macro is not None:
                # `#define __shfl(v, s) __shfl_sync(FULL, v, s)`: adding `, 32` to a use of the project's
                # own macro breaks nvcc ("macro passed 3 arguments"). No fix edits such a call: it is
                # shown, never applied; the macro's definition is where the change belongs.
                fix = Fix.display(f"{fix.title} (not applied: `{macro}` is the project's own macro; "
                                  "change its definition)", *fix.edits)
        line, col = self.source.position(start)
        end_line, end_col = self.source.position(end)
        f = Finding(
            code=rule.code, name=rule.name, message=message or rule.summary,
            severity=severity or rule.severity, path=self.path, line=line, column=col,
            end_line=end_line, end_column=end_col, start_byte=start, end_byte=end, fix=fix,
            impact=impact or rule.impact, checklist=checklist or rule.checklist or None,
            source_line=self.source.line_text(line), group=group,
        )
        self.findings.append(f)
        return f

    def _project_macro_call(self, fix: Fix) -> str | None:
        """The name of a macro the project defines (in the file or a project header) whose call an
        edit of `fix` changes: the innermost call around the edit, its name or its arguments."""
        if not self.units:
            return None
        main = self.units[0]
        for edit in fix.edits:
            lo, hi = edit.start - main.delta, edit.end - main.delta
            if lo < 0 or hi > len(main.data):
                continue
            node = main.root.descendant_for_byte_range(lo, hi)
            for _ in range(8):  # the call is a few levels up: identifier/literal -> argument_list -> call
                if node is None or node.type in _STATEMENT_TYPES:
                    break
                if node.type == "call_expression":
                    fn, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
                    # Rewriting inside one argument keeps the macro's arity; adding an argument or
                    # renaming the call does not.
                    within_argument = args is not None and "," not in edit.content and any(
                        a.start_byte <= lo and hi <= a.end_byte for a in args.named_children)
                    if fn is not None and fn.type == "identifier" and not within_argument:
                        name = main.text(fn)
                        if name in self._project_macro_names():
                            return name
                    break
                node = node.parent
        return None

    def _project_macro_names(self) -> frozenset[str] | set[str]:
        names = self.cache.get("project_macro_names")
        if names is None:
            from hiplint.cparse import iter_nodes
            from hiplint.headers import amd_macros
            main = self.units[0]
            names = {main.text(n.child_by_field_name("name"))
                     for n in iter_nodes(main.root, {"preproc_def", "preproc_function_def"})
                     if n.child_by_field_name("name") is not None}
            names.update(amd_macros(self))
            self.cache["project_macro_names"] = names
        return names


_TOKEN = lazy_re(r"\w+|\|\||&&|\S")


def _off_switch_ranges(ctx) -> list[tuple[int, int]]:
    if not ctx.fs_path or ctx.language != "cuda" or not ctx.units or ctx.units[0].delta != 0:
        return []
    import os

    from hiplint.amdbuild import root_of
    from hiplint.cparse import iter_nodes
    from hiplint.includers import off_switches
    data = ctx.source.data
    names = {n for n in off_switches(root_of(os.path.abspath(ctx.fs_path))) if n.encode() in data}
    if not names:
        return []
    main = ctx.units[0]
    out = []
    for node in iter_nodes(main.root, {"preproc_ifdef", "preproc_if", "preproc_elif"}):
        head = node.child_by_field_name("condition") or node.child_by_field_name("name")
        if head is None:
            continue
        if node.type == "preproc_ifdef":
            if node.child(0) is None or node.child(0).type != "#ifdef" or main.text(head) not in names:
                continue
        else:
            # `defined(X)`, `X`, and such terms joined by `||` alone: false while every X is off.
            tokens = _TOKEN.findall(main.text(head))
            words = [t for t in tokens if t[0].isalnum() or t[0] == "_"]
            if not words or all(w == "defined" for w in words):
                continue
            any_of = not any(t not in ("(", ")", "||") for t in tokens if t not in words) and \
                not any(w != "defined" and w not in names for w in words)
            # `defined __CUDACC__ && defined X_NSIGHT_DEBUG`: a conjunction of positive terms with an off
            # switch among them is false too, whatever the other terms.
            all_of = not any(t not in ("(", ")", "&&") for t in tokens if t not in words and t != "and") and \
                "||" not in tokens and "or" not in words and "not" not in words and \
                any(w in names for w in words if w != "defined")
            if not (any_of or all_of):
                continue
        alternative = node.child_by_field_name("alternative")
        out.append((head.end_byte, alternative.start_byte if alternative is not None else node.end_byte))
    return out


def _uncalled_setup_functions(ctx) -> list[tuple[int, int]]:
    from hiplint import pyparse
    from hiplint.lazy import libcst as cst

    py = pyparse.get(ctx)
    if py is None:
        return []
    # Functions of the script itself (also under a module-level `if`), not methods or inner functions.
    # A decorated one (`@atexit.register`) is used through its decorator, whatever calls it.
    defs = [fn for fn in py.nodes(cst.FunctionDef) if not fn.decorators
            and not any(isinstance(a, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) for a in py.ancestors(fn))]
    if not defs:
        return []
    names = {fn.name.value for fn in defs}
    own = {id(fn.name) for fn in defs}
    # A use inside a function that defines an inner function of the same name is the inner one's.
    inner = {(id(anc), fn.name.value) for fn in py.nodes(cst.FunctionDef) for anc in py.ancestors(fn)
             if isinstance(anc, cst.FunctionDef)}
    uses = [(node.value, node) for node in py.nodes(cst.Name) if node.value in names and id(node) not in own
            and not any(isinstance(a, cst.FunctionDef) and (id(a), node.value) in inner for a in py.ancestors(node))]
    strings = {pyparse.string_value(x) for x in py.nodes(cst.SimpleString)} & names  # `getattr(mod, "f")`
    dead: list = []
    while True:  # a function only dead functions call is dead too
        inside = lambda node: any(any(a is fn for a in py.ancestors(node)) for fn in dead)  # noqa: E731
        live = {name for name, node in uses if not inside(node)} | strings
        now = [fn for fn in defs if fn.name.value not in live]
        if len(now) == len(dead):
            break
        dead = now
    return [py.span(fn) for fn in dead]
