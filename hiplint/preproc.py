"""Which `#if` branches are compiled for AMD, and which only for NVIDIA.

Conditions are evaluated in two worlds, "hip" (AMD build) and "cuda" (nvcc build), with three-valued
logic: a macro hiplint knows is defined or undefined in a world, anything else is unknown. A branch
whose condition is false for CUDA and not false for HIP is HIP code (rules written for CUDA code stay
out of it); one false for HIP and true for CUDA is NVIDIA-only code beside a HIP alternative.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache

from tree_sitter import Node

from hiplint.cparse import error_ranges, for_parsing, iter_nodes
from hiplint.lazy import lazy_re

# Defined when compiling for AMD through HIP, never by nvcc. Projects add theirs with `hip-macros`.
HIP_MACROS = frozenset({
    "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__", "__HIP_PLATFORM_AMD", "__HIPCC__", "__HIP__",
    "__HIP_DEVICE_COMPILE__", "__HIPCC_RTC__", "__HIP_ROCclr__", "HIP_VERSION", "HIP_VERSION_MAJOR",
    "HIP_VERSION_MINOR", "USE_ROCM", "USE_HIP", "WITH_HIP", "WITH_ROCM", "GGML_USE_HIP", "GGML_USE_HIPBLAS",
    "HIP_PLATFORM_AMD", "__AMDGCN__", "__AMDGPU__", "__GFX9__", "__GFX10__", "__GFX11__", "__GFX12__",
    "__gfx90a__", "__gfx940__", "__gfx941__", "__gfx942__", "__gfx950__", "__gfx1100__", "__gfx1101__",
    "__gfx1102__", "__gfx1200__", "__gfx1201__", "__AMDGCN_WAVEFRONT_SIZE", "__AMDGCN_WAVEFRONT_SIZE__",
    "TORCH_HIP_VERSION", "ROCM_VERSION", "HIPRAND_VERSION", "HIPSOLVER_VERSION_MAJOR", "__HIP_NO_IMAGE_SUPPORT",
    "IS_HIP_EXTENSION", "CUB_USE_HIPCUB", "EIGEN_USE_HIP", "TF_USE_ROCM", "PADDLE_WITH_HIP", "MXNET_USE_ROCM",
})
# HIP's opt-outs, which a user defines to leave ROCm's default (`HIP_DISABLE_WARP_SYNC_BUILTINS` drops the
# `*_sync` warp functions ROCm 6.5+ declares by default): undefined unless `hip-macros` lists them.
HIP_OPT_OUT_MACROS = frozenset({"HIP_DISABLE_WARP_SYNC_BUILTINS"})
# Defined by nvcc or only on the NVIDIA platform of HIP, never in an AMD build.
CUDA_MACROS = frozenset({
    "__NVCC__", "__HIP_PLATFORM_NVIDIA__", "__HIP_PLATFORM_NVCC__", "__NVCOMPILER", "__CUDACC_VER_MAJOR__",
    "__CUDACC_VER_MINOR__", "CUDART_VERSION", "CUDA_VERSION", "__CUDA_ARCH_LIST__",
})
# The oldest toolkit hiplint assumes for the NVIDIA build (CUDA 11.0, 2020): an `#if` every such nvcc
# takes and AMD never does, with an `#else` (`#if CUDA_VERSION >= 9000 ... #else`), is NVIDIA code.
# Its `#else` is not thereby AMD code: it was written for old toolkits, and AMD compiles it as it stands.
NVCC_FLOOR = {"CUDA_VERSION": 11000, "CUDART_VERSION": 11000, "__CUDACC_VER_MAJOR__": 11}
# Defined by nvcc in one compilation pass only (device), and never for AMD: false on HIP, unknown on CUDA.
CUDA_PASS_MACROS = frozenset({"__CUDA_ARCH__", "__CUDA_ARCH_FEAT_SM90_ALL", "__CUDA_ARCH_SPECIFIC__"})

# Macros only NVIDIA's template libraries define (CUTLASS, CuTe: no ROCm build; AMD's counterparts are
# Composable Kernel and rocWMMA): undefined in every AMD compile.
NVIDIA_LIBRARY_MACRO = lazy_re(r"(?:CUTLASS|CUTE)_[A-Z0-9_]+$")

# Defined by clang compiling CUDA, never by clang compiling HIP (which defines __HIP__ instead; checked
# with clang 19 `-x hip -dM -E`) nor by nvcc: a test for clang's CUDA mode, false on AMD.
CLANG_CUDA_MACROS = frozenset({"__CUDA__"})

# Defined in one pass of an AMD build only (device): a branch on them is AMD code for that pass only.
HIP_PASS_MACROS = ("__HIP_DEVICE_COMPILE__",)

HIP, CUDA = "hip", "cuda"
# In a file's hip-macro set, "@rocm=7.0": the oldest ROCm the port supports (`rocm-version`). AMD's
# version macros compare against it: `#if HIP_VERSION >= 60000000` is true for every supported ROCm, and
# its `#else` (code for older ROCm) is compiled by none of them.
ROCM_FLOOR_MARK = "@rocm="
HIP_VERSION_MACROS = {"HIP_VERSION": lambda major, minor: major * 10_000_000 + minor * 100_000,
                      "HIP_VERSION_MAJOR": lambda major, minor: major, "ROCM_VERSION_MAJOR": lambda major, minor: major,
                      "ROCM_VERSION": lambda major, minor: major * 10_000 + minor * 100}
# In a file's hip-macro set, "!NAME": NAME is defined by the project's NVIDIA build and not by its AMD
# build (hiplint.amdbuild read both from the build files): true for nvcc, false on AMD.
NVIDIA_BUILD_MARK = "!"

# Defined by IDEs' code models only (CLion, Visual Studio IntelliSense, ReSharper, Qt Creator, Eclipse
# CDT): `#ifdef __CLION_IDE__ / #define __CUDA_ARCH__ 900` is for the editor, never for a build.
IDE_MACROS = frozenset({"__CLION_IDE__", "__JETBRAINS_IDE__", "__INTELLISENSE__", "__RESHARPER__",
                        "Q_CREATOR_RUN", "__CDT_PARSER__"})

# A project's own platform switches, learnt from where it defines them (`#if defined(__HIP_PLATFORM_AMD__)
# / #define LIB_DEVICE_HIP / #else / #define LIB_DEVICE_CUDA`): a macro defined only in NVIDIA-only code is
# undefined on AMD, one defined only in HIP-only code is undefined for nvcc, and one whose definitions
# outside NVIDIA-only code are all `0` (`#define LIB_HAS_TMA 0` in the `#else`) is 0 on AMD.
NVIDIA_ONLY, AMD_ONLY, ZERO_ON_AMD = "nvidia-only", "amd-only", "zero-on-amd"
# Defined (not as 0) where every AMD build compiles it (`#if __CUDA_ARCH__ >= 800 || defined(USE_AMD_ROCM)`
# / `#define FULL_BF16 1`): defined on AMD. Region kind "amd-sure" in the definitions given to derive_macros.
DEFINED_ON_AMD, AMD_SURE = "defined-on-amd", "amd-sure"
# The same in a branch only AMD takes (`#ifdef USE_ROCM`, or one written for AMD and newer nvcc): defined
# on AMD, undefined for nvcc.
AMD_ONLY_DEFINED, AMD_SURE_HIP = "amd-only-defined", "amd-sure-hip"


def derive_macros(defines) -> dict[str, str]:
    """{name: NVIDIA_ONLY | AMD_ONLY | ZERO_ON_AMD} from `defines`: (name, region kind, defined as 0?) for
    every `#define` seen, the region kind being PlatformMap.kind_at() of the definition."""
    seen: dict[str, list] = {}
    for name, kind, zero in defines:
        seen.setdefault(name, []).append((kind, zero))
    derived = {}
    for name, defs in seen.items():
        kinds = {kind for kind, _ in defs}
        if AMD_SURE_HIP in kinds and kinds <= {AMD_SURE_HIP, "hip"} and not all(zero for _, zero in defs):
            derived[name] = AMD_ONLY_DEFINED
            continue
        if kinds & {AMD_SURE, AMD_SURE_HIP}:
            sure_zero = all(zero for kind, zero in defs if kind in (AMD_SURE, AMD_SURE_HIP))
            derived[name] = ZERO_ON_AMD if sure_zero else DEFINED_ON_AMD
            continue
        if kinds == {"nvidia"}:
            derived[name] = NVIDIA_ONLY
        elif kinds == {"hip"}:
            derived[name] = AMD_ONLY
        elif "nvidia" in kinds and all(zero for kind, zero in defs if kind != "nvidia"):
            derived[name] = ZERO_ON_AMD
    return derived

# Defined only when clang compiles device code, some for one target only: AMD code, but not all of it.
AMD_TARGET_MACRO = lazy_re(r"__gfx[0-9a-f]+__|__GFX\d+__|__AMDGCN__|__AMDGPU__|__AMDGCN_WAVEFRONT_SIZE(__)?")

# Projects name their own "this is the HIP build" macro: USE_AMD_ROCM (Faiss), AMREX_USE_HIP,
# KOKKOS_ENABLE_HIP, ROCM_VERSION_MAJOR. A name with HIP, ROCM or an AMD library (ROCTX, RCCL, ...)
# as one of its words counts as one,
# unless a word says the opposite or names the other vendor (NO_ROCM, DISABLE_HIP, HIP_CUDA_COMPAT).
# AMD's libraries name a switch for the AMD build too (GROMACS GMX_USE_ROCTX beside GMX_USE_NVTX,
# XGBOOST_USE_RCCL); nvcc builds never set them.
AMD_LIBRARY_WORDS = {
    "NVTX": ("ROCTX",), "NCCL": ("RCCL",), "CUDNN": ("MIOPEN",), "CUBLAS": ("HIPBLAS", "ROCBLAS"),
    "CUBLASLT": ("HIPBLASLT",), "CUB": ("HIPCUB", "ROCPRIM"), "CURAND": ("HIPRAND", "ROCRAND"),
    "CUSOLVER": ("HIPSOLVER", "ROCSOLVER"), "CUSPARSE": ("HIPSPARSE", "ROCSPARSE"), "CUFFT": ("HIPFFT", "ROCFFT"),
    "NVSHMEM": ("ROCSHMEM",), "CUDA": ("HIP", "ROCM"),
    # NVIDIA's profiling interface; AMD's tracing and profiling libraries take its place (Caliper's
    # `WITH_CUPTI` beside `WITH_ROCTRACER`).
    "CUPTI": ("ROCTRACER", "ROCPROFILER"),
}
_HIP_WORDS = frozenset(w for words in AMD_LIBRARY_WORDS.values() for w in words)
_NOT_HIP_WORDS = frozenset({"NO", "NOT", "DISABLE", "DISABLED", "WITHOUT", "SKIP", "CUDA", "NVIDIA", "NVCC", "NV"})


def is_hip_macro(name: str, hip_macros: frozenset[str] = HIP_MACROS) -> bool:
    """Defined in an AMD build and never by nvcc: listed (defaults and `hip-macros`) or named so."""
    if name in hip_macros:
        return True
    if name in CUDA_MACROS or name in CUDA_PASS_MACROS or name in HIP_PASS_MACROS or name in CLANG_CUDA_MACROS:
        return False
    words = {w for w in name.split("_") if w}
    return not words.isdisjoint(_HIP_WORDS) and words.isdisjoint(_NOT_HIP_WORDS)


# A project's "this is the NVIDIA build" macro (AMREX_USE_CUDA, GGML_USE_CUDA, WITH_CUDA, __CUDACC__) is
# unknown on its own: some projects keep it on in HIP builds. Only a chain that offers a HIP branch after
# it (`#ifdef AMREX_USE_CUDA ... #elif defined(AMREX_USE_HIP)`) says it is off there.
_CUDA_WORDS = frozenset({"CUDACC", "NVCC", "NVIDIA", *AMD_LIBRARY_WORDS})
_NEGATING_WORDS = frozenset({"NO", "NOT", "DISABLE", "DISABLED", "WITHOUT", "SKIP"})


def is_cuda_build_macro(name: str, hip_macros: frozenset[str] = HIP_MACROS) -> bool:
    """Named for the CUDA build (a word CUDA, CUDACC, NVCC or NVIDIA, none naming HIP or negating)."""
    if is_hip_macro(name, hip_macros) or name in HIP_PASS_MACROS or AMD_TARGET_MACRO.fullmatch(name):
        return False
    words = {w for w in name.upper().split("_") if w}
    return not words.isdisjoint(_CUDA_WORDS) and words.isdisjoint(_NEGATING_WORDS) and words.isdisjoint(_HIP_WORDS)


# A project macro for NVIDIA's compilers (KOKKOS_COMPILER_NVCC, KOKKOS_COMPILER_NVHPC, PGI's `__PGI`):
# never an AMD build.
_NVIDIA_COMPILER_WORDS = frozenset({"NVCC", "NVIDIA", "NVHPC", "NVCOMPILER", "PGI"})


def names_nvidia_compiler(name: str) -> bool:
    """A word of the name is NVCC, NVIDIA, NVHPC, NVCOMPILER or PGI, and none is HIP or ROCM; or, HIP or
    not, it names the NVIDIA platform the way HIP's `__HIP_PLATFORM_NVIDIA__` does
    (GINKGO_HIP_PLATFORM_NVCC: HIP compiling for NVIDIA, never an AMD build)."""
    words = [w for w in name.upper().split("_") if w]
    if any(a == "PLATFORM" and b in ("NVCC", "NVIDIA") for a, b in zip(words, words[1:])):
        return True
    return not _NVIDIA_COMPILER_WORDS.isdisjoint(words) and _HIP_WORDS.isdisjoint(words)


# A project's macro for another host compiler (KOKKOS_COMPILER_GNU, X_COMPILER_INTEL, X_COMPILER_MSVC):
# hip-clang is clang, so an AMD build never sets it. (`__GNUC__` is not one: clang defines it.)
_OTHER_COMPILER_WORDS = frozenset({"GNU", "GCC", "INTEL", "ICC", "ICPC", "ICX", "MSVC", "XL", "IBM", "CRAY",
                                   "FUJITSU", "NEC", "PGI", "NVHPC", "NVCC"})


def names_other_compiler(name: str) -> bool:
    """`KOKKOS_COMPILER_GNU`: COMPILER followed by a compiler that is not clang."""
    words = [w for w in name.upper().split("_") if w]
    return any(a == "COMPILER" and b in _OTHER_COMPILER_WORDS for a, b in zip(words, words[1:]))


# In a HIP macro's name: AMD's platform, targets or runtime, never defined by HIP over nvcc.
_AMD_ONLY_WORD = lazy_re(r"AMD|GCN|GFX|ROCM|ROCCLR|HCC")


def _not(v):
    return None if v is None else (not v)


def _and(a, b):
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def _or(a, b):
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


# A file's bytes keep their hash, so this costs one search per file and name, not one per `#if` (ARC001
# evaluates each condition with a fresh evaluator).
@lru_cache(maxsize=64)
def _names_amd_twin(data: bytes, name: str) -> bool:
    words = name.split("_")
    for i, w in enumerate(words):
        if w.upper() == "CUDA":
            # `ARCH_cuda` beside `ARCH_amdgpu` (Taichi's runtime, compiled once per back end): case kept.
            for amd in ("HIP", "ROCM", "AMDGPU"):
                spelled = amd if w.isupper() else amd.lower() if w.islower() else amd.capitalize()
                twin = "_".join(words[:i] + [spelled] + words[i + 1:])
                if re.search(rb"\b" + re.escape(twin.encode()) + rb"\b", data):
                    return True
    return False


class _Eval:
    def __init__(self, data: bytes, hip_macros: frozenset[str], derived=None):
        self.data = data
        self.hip_macros = hip_macros
        self.derived = derived or {}  # the project's own platform macros (derive_macros)
        self.open_names: set[str] = set()  # macros left unknown on AMD: what derive_macros may settle
        self.hip_on_nvidia = False  # set per condition by truth()
        self._twins: dict[str, bool] = {}
        self.rocm_floor = _rocm_floor(hip_macros)

    def text(self, node: Node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def value_of(self, name: str, world: str) -> int | None:
        """The value the build gives `name` in `world`, where it gives each vendor its own number."""
        prefix = (name if world == HIP else NVIDIA_BUILD_MARK + name) + "="
        for m in self.hip_macros:
            if m.startswith(prefix):
                try:
                    return int(m[len(prefix):])
                except ValueError:
                    return None
        return None

    def defined(self, name: str, world: str):
        if name in IDE_MACROS:
            return False  # an IDE's code model defines it; no compiler does
        if self.value_of(name, world) is not None:
            return True
        if name in HIP_OPT_OUT_MACROS and name not in self.hip_macros:
            return False  # a switch a user sets to leave HIP's default; hiplint checks the default
        if name in HIP_PASS_MACROS:
            if world == HIP or self.hip_on_nvidia:
                # One pass only: unknown for the build as a whole. Also for NVIDIA in a condition that
                # names HIP's NVIDIA platform: hipcc over nvcc defines it in the device pass there.
                return None
            return False  # plain nvcc never defines it
        if world == CUDA and self.hip_on_nvidia and is_hip_macro(name, self.hip_macros) \
                and not _AMD_ONLY_WORD.search(name.upper()):
            # `defined(ENABLE_HIP) && defined(__HIP_PLATFORM_NVCC__)`: HIP over nvcc sets the project's HIP
            # switch too; only AMD's own platform and target macros stay off there.
            return True
        if AMD_TARGET_MACRO.fullmatch(name):
            # One target's device pass (`__gfx942__`, `__GFX11__`): the #else of such a test is still
            # AMD code for the other targets and the host pass.
            return None if world == HIP else False
        if name in self.hip_macros:
            return world == HIP
        if NVIDIA_BUILD_MARK + name in self.hip_macros or NVIDIA_BUILD_MARK + name.upper() in self.hip_macros:
            # (the build's switches are upper-cased: CMake's `Heffte_ENABLE_CUDA` is `#cmakedefine`d as written)
            return world == CUDA
        if name in CUDA_MACROS:
            return world == CUDA
        if name in CUDA_PASS_MACROS or name in CLANG_CUDA_MACROS:
            return False if world == HIP else None
        if world == HIP and NVIDIA_LIBRARY_MACRO.match(name):
            return False  # `CUTLASS_ARCH_MMA_SM100_SUPPORTED`: only NVIDIA's CUTLASS headers define it
        if is_hip_macro(name, self.hip_macros):
            return world == HIP
        if world == HIP and (names_nvidia_compiler(name) or names_other_compiler(name)):
            return False
        if world == HIP and self.has_amd_twin(name):
            return False  # `AMREX_USE_CUDA` where the file also names `AMREX_USE_HIP`: the backends exclude each other
        side = self.derived.get(name)
        if (side == NVIDIA_ONLY and world == HIP) or (side == AMD_ONLY and world == CUDA):
            return False
        if side in (DEFINED_ON_AMD, AMD_ONLY_DEFINED) and world == HIP:
            return True
        if side == AMD_ONLY_DEFINED and world == CUDA:
            return False
        if world == HIP and side is None:
            self.open_names.add(name)
        return None

    def _number(self, node: Node | None, world: str) -> int | None:
        """The integer an arithmetic `#if` operand has in `world`: literals, macros with a per-vendor value,
        macros undefined there (0), and `+ - * / %` over them; None where anything is unknown."""
        while node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1:
            node = node.named_children[0]
        if node is None:
            return None
        if node.type == "number_literal":
            try:
                return int(self.text(node).rstrip("uUlL"), 0)
            except ValueError:
                return None
        if node.type == "identifier":
            name = self.text(node)
            value = self.value_of(name, world)
            if value is None and self.defined(name, world) is False:
                value = 0
            return value
        if node.type == "unary_expression":
            op = node.child_by_field_name("operator")
            v = self._number(node.child_by_field_name("argument"), world)
            return -v if v is not None and op is not None and op.type == "-" else (v if op is not None and op.type == "+" else None)
        if node.type == "binary_expression":
            op = node.child_by_field_name("operator")
            a = self._number(node.child_by_field_name("left"), world)
            b = self._number(node.child_by_field_name("right"), world) if a is not None else None
            return _arith(op.type, a, b) if a is not None and b is not None and op is not None else None
        return None

    def has_amd_twin(self, name: str) -> bool:
        """A project's CUDA build switch whose HIP counterpart the same file names (`X_USE_CUDA` beside
        `X_USE_HIP` or `X_USE_ROCM`): the project picks one backend per build, so on AMD the CUDA
        switch is off. A switch with no such twin in the file stays unknown (some projects keep their
        `USE_CUDA` on in HIP builds)."""
        twins = self._twins.get(name)
        if twins is None:
            twins = is_cuda_build_macro(name, self.hip_macros) and _names_amd_twin(self.data, name)
            self._twins[name] = twins
        return twins

    def truth(self, node: Node | None, world: str):
        """Three-valued truth of a #if condition in `world`."""
        if node is None:
            return None
        cond = self.data[node.start_byte:node.end_byte]
        self.hip_on_nvidia = b"__HIP_PLATFORM_NVIDIA__" in cond or b"__HIP_PLATFORM_NVCC__" in cond
        try:
            return self._truth(node, world)
        finally:
            self.hip_on_nvidia = False

    def amd_or_newer_nvidia(self, node: Node | None) -> bool:
        """`defined(X_USE_HIP) || CUDART_VERSION >= 12000`: one disjunct is the AMD build's test, the
        others false on AMD (a toolkit or architecture test). The branch is written for AMD (and for
        newer NVIDIA toolkits); its `#else` is for older NVIDIA toolkits only."""
        while node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1:
            node = node.named_children[0]
        disjuncts, stack = [], [node]
        while stack:
            n = stack.pop()
            while n is not None and n.type == "parenthesized_expression" and n.named_child_count == 1:
                n = n.named_children[0]
            op = n.child_by_field_name("operator") if n is not None and n.type == "binary_expression" else None
            if op is not None and op.type == "||":
                stack.extend((n.child_by_field_name("left"), n.child_by_field_name("right")))
            elif n is not None:
                disjuncts.append(n)
        if len(disjuncts) < 2:
            return False
        values = [(self.truth(d, HIP), self.truth(d, CUDA)) for d in disjuncts]
        amd = [v for v in values if v == (True, False)]
        return bool(amd) and len(amd) < len(values) and all(v == (True, False) or v[0] is False for v in values)

    def _truth(self, node: Node | None, world: str):
        if node is None:
            return None
        t = node.type
        if t == "preproc_defined":
            ids = [c for c in node.named_children if c.type == "identifier"]
            return self.defined(self.text(ids[0]), world) if ids else None
        if t == "identifier":
            name = self.text(node)
            if world == HIP and self.derived.get(name) == ZERO_ON_AMD:
                return False
            # An undefined macro is 0 in #if; a defined platform macro is taken as non-zero.
            return self.defined(name, world)
        if t == "parenthesized_expression":
            inner = node.named_children
            return self._truth(inner[0], world) if inner else None
        if t == "unary_expression":
            op = node.child_by_field_name("operator")
            arg = node.child_by_field_name("argument")
            if op is not None and op.type == "!":  # the token's kind: `not` is parsed as `!` (cparse.for_parsing)
                return _not(self._truth(arg, world))
            return None
        if t == "binary_expression":
            op = node.child_by_field_name("operator")
            opt = op.type if op is not None else ""
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if opt == "&&":
                return _and(self._truth(left, world), self._truth(right, world))
            if opt == "||":
                return _or(self._truth(left, world), self._truth(right, world))
            if world == HIP and self.rocm_floor is not None and opt in (">", ">=", "<", "<=") and left is not None \
                    and left.type == "identifier" and self.text(left) in HIP_VERSION_MACROS \
                    and right is not None and right.type == "number_literal":
                # `HIP_VERSION >= 60000000` with every supported ROCm at least the floor: true.
                try:
                    n = int(self.text(right).rstrip("uUlL"), 0)
                except ValueError:
                    return None
                floor = HIP_VERSION_MACROS[self.text(left)](*self.rocm_floor)
                if opt == ">=" and floor >= n or opt == ">" and floor > n:
                    return True
                if opt == "<" and floor >= n or opt == "<=" and floor > n:
                    return False
                return None
            # `X >= N` with X undefined in this world compares 0, with X a per-vendor value of the build
            # (`VKFFT_BACKEND == 1`, hiplint.amdbuild.valued_switches) that value; anything else is unknown.
            if opt in (">", ">=", "==", "!=", "<", "<=") and left is not None and left.type == "identifier" \
                    and right is not None and right.type == "number_literal":
                name = self.text(left)
                value = self.value_of(name, world)
                if value is None and self.defined(name, world) is False:
                    value = 0
                if value is not None:
                    try:
                        n = int(self.text(right).rstrip("uUlL"), 0)
                    except ValueError:
                        return None
                    return {">": value > n, ">=": value >= n, "==": value == n, "!=": value != n, "<": value < n,
                            "<=": value <= n}[opt]
            if opt in (">", ">=", "==", "!=", "<", "<="):
                # Arithmetic over macros whose value in this world is known, an undefined one being 0:
                # `__CUDACC_VER_MAJOR__ * 10000 + __CUDACC_VER_MINOR__ * 100 >= 120400` is 0 >= 120400 on AMD.
                a, b = self._number(left, world), self._number(right, world)
                if a is not None and b is not None:
                    return {">": a > b, ">=": a >= b, "==": a == b, "!=": a != b, "<": a < b, "<=": a <= b}[opt]
            return None
        if t == "number_literal":
            try:
                return int(self.text(node).rstrip("uUlL"), 0) != 0
            except ValueError:
                return None
        if t == "call_expression":
            # A project's `defined` (PETSc's `PetscDefined(HAVE_CUDA)` beside `PetscDefined(HAVE_HIP)`):
            # read as `defined(HAVE_CUDA)`, so its switches count as the project's other switches do.
            fn, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
            names = [c for c in args.named_children] if args is not None else []
            if fn is not None and fn.type == "identifier" and self.text(fn).lower().endswith("defined") \
                    and len(names) == 1 and names[0].type == "identifier":
                return self.defined(self.text(names[0]), world)
            if world == HIP and fn is not None and self.text(fn) in ("__has_include", "__has_include_next") \
                    and len(names) == 1 and nvidia_only_header(self.text(names[0]).strip("<>\"")):
                return False  # `__has_include(<cudnn.h>)`: no ROCm installation has the header
        return None


# Headers of NVIDIA libraries and tools that no ROCm installation has (ROCm ships `thrust/` through
# rocThrust, so that is not one), by the start of their file name.
_NVIDIA_ONLY_HEADERS = lazy_re(r"(?i)^(?:cudnn|nvinfer|nvonnxparser|nvparsers|cublas|cusparse|cufft|curand|cusolver|"
                               r"nccl|nvml|cupti|nvrtc|nvtoolsext|nvtx3/|cuda_runtime|cuda\.h$|cudart|cutensor|"
                               r"nvshmem|cutlass/|cub/|cuda/|cuda_fp16|cuda_bf16|cuda_fp8|nvjpeg|npp)")


def nvidia_only_header(name: str) -> bool:
    """Is `name` (as an include writes it) a header only NVIDIA's toolkit or libraries install?"""
    return _NVIDIA_ONLY_HEADERS.match(name.strip()) is not None


def _arith(op: str, a: int, b: int) -> int | None:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op in ("/", "%"):
        return None if b == 0 else (int(a / b) if op == "/" else a - b * int(a / b))  # C truncates
    return None


def _rocm_floor(hip_macros) -> tuple[int, int] | None:
    for m in hip_macros:
        if m.startswith(ROCM_FLOOR_MARK):
            try:
                major, minor = m[len(ROCM_FLOOR_MARK):].split(".")[:2]
                return int(major), int(minor)
            except ValueError:
                return None
    return None


class _FloorEval(_Eval):
    """NVIDIA's truth with the toolkit at least NVCC_FLOOR: `CUDA_VERSION >= 9000` is true there."""

    def _truth(self, node, world):
        if node is not None and node.type == "binary_expression" and world == CUDA:
            op, left, right = (node.child_by_field_name(f) for f in ("operator", "left", "right"))
            opt = op.type if op is not None else ""
            if opt in (">", ">=", "==", "!=", "<", "<=") and left is not None and right is not None \
                    and right.type == "number_literal" and self.text(left) in NVCC_FLOOR:
                try:
                    n = int(self.text(right).rstrip("uUlL"), 0)
                except ValueError:
                    return None
                floor = NVCC_FLOOR[self.text(left)]
                if floor > n or (floor == n and opt in (">=", "<")):
                    return opt in (">", ">=", "!=")  # every toolkit from the floor on agrees
                return None
        return super()._truth(node, world)


class _CudaOffEval(_Eval):
    """The HIP world with the project's CUDA-build macros taken as undefined."""

    def defined(self, name: str, world: str):
        value = super().defined(name, world)
        if value is None and world == HIP and is_cuda_build_macro(name, self.hip_macros):
            return False
        return value


# An include of an AMD library's header, and of its NVIDIA counterpart's.
_AMD_LIBRARY_INCLUDE = re.compile(rb"(?m)^[ \t]*#[ \t]*include[ \t]*[<\"](?:hip/|rccl/|rccl\.h|hipblas|hipblaslt|hipfft|"
                                  rb"hiprand|hipsparse|hipsolver|hipcub/|rocblas|rocprim/|rocrand|rocsparse|rocsolver|"
                                  rb"rocfft|roctracer/|roctx|miopen/|rocm_smi/|amd_smi/)")
_NVIDIA_LIBRARY_INCLUDE = re.compile(rb"(?m)^[ \t]*#[ \t]*include[ \t]*[<\"](?:cuda|nccl\.h|cublas|cufft|curand|"
                                     rb"cusparse|cusolver|cub/|cudnn|nvtx|nvToolsExt|nvml\.h)")


def _settle_by_library_headers(chain: list, data: bytes) -> list:
    """A chain whose branches include one vendor's library headers each (TVM's `#if TVM_NCCL_RCCL_SWITCH
    == 0` / `#include <nccl.h>` / `#else` / `#include <rccl/rccl.h>`): the build picks the vendor with a
    switch of its own, so a branch that AMD may take but that includes only NVIDIA's headers is NVIDIA's."""
    if len(chain) < 2:
        return chain
    kinds = []
    for start, end, _, _ in chain:
        body = data[start:end]
        amd, nvidia = _AMD_LIBRARY_INCLUDE.search(body) is not None, _NVIDIA_LIBRARY_INCLUDE.search(body) is not None
        kinds.append("amd" if amd and not nvidia else "nvidia" if nvidia and not amd else None)
    if "amd" not in kinds or "nvidia" not in kinds:
        return chain
    return [(start, end, {**cond, HIP: False}, tests_hip) if kind == "nvidia" and cond[HIP] is not True
            else (start, end, cond, tests_hip) for (start, end, cond, tests_hip), kind in zip(chain, kinds)]


def _settle_cuda_branches(chain: list, hip_truth_without_cuda) -> list:
    """In a chain with a HIP branch, a branch before it that tests the project's CUDA-build macro is
    not taken on AMD. `hip_truth_without_cuda(i)` evaluates branch i with those macros undefined."""
    last_hip = max((i for i, entry in enumerate(chain) if entry[3]), default=-1)
    out = []
    for i, (start, end, cond, tests_hip) in enumerate(chain):
        if i < last_hip and cond[HIP] is None and hip_truth_without_cuda(i) is False:
            cond = {**cond, HIP: False}
        out.append((start, end, cond, tests_hip))
    return out


class _KnownEval(_Eval):
    """Truth of conditions given which macros are defined (True), undefined (False) or unknown (None)."""

    def __init__(self, data: bytes, known):
        super().__init__(data, frozenset())
        self.known = known

    def defined(self, name: str, world: str):
        return self.known(name)


def excluded_when(offset: int, data: bytes, known) -> bool:
    """Is byte `offset` of `data` in an `#if` branch that is surely not compiled when `known(name)`
    tells which macros are defined (True) or undefined (False)? E.g. `tex1Dfetch` in the `#else` of
    `#if defined(__gfx942__)`, for a gfx942 build. Read from the text, so unparsable files count;
    unknown (None) conditions keep the code in."""
    for group in _groups_of(data):
        if not group[0][3] <= offset < group[-1][4]:
            continue
        if not any(body_start <= offset < body_end for _, _, _, body_start, body_end in group):
            continue  # on a directive line of the group (`#elif X`): no branch of it holds the offset
        for kind, cond, _, body_start, body_end in group:
            value = _known_truth(kind, cond, known)
            if body_start <= offset < body_end:
                if value is False:
                    return True  # this branch's own test fails
                break
            if value is True:
                return True  # an earlier branch is taken instead
    return False


@lru_cache(maxsize=8)
def _groups_of(data: bytes):
    return directive_groups(data)


def _known_truth(kind: str, cond: bytes, known):
    if kind == "else":
        return True
    if kind in ("ifdef", "ifndef", "elifdef", "elifndef"):
        names = re.findall(rb"[A-Za-z_]\w*", cond)
        value = known(names[0].decode()) if names else None
        return _not(value) if kind.endswith("ndef") else value
    node, snippet = _parse_condition(cond)
    return _KnownEval(snippet, known).truth(node, HIP)


# Defined in every AMD device pass: HIP-Clang is clang and claims GCC 4 (`clang++-19 -x hip
# --cuda-device-only -E -dM`); nvcc's __CUDACC__ is not among them, but hipify renames it to __HIPCC__.
AMD_DEVICE_PASS_MACROS = frozenset({"__clang__", "__GNUC__", "__HIP__", "__HIPCC__", "__HIP_DEVICE_COMPILE__",
                                    "__AMDGCN__", "__AMDGPU__"})


def amd_truth(node: Node, data: bytes, hip_macros: frozenset[str] = HIP_MACROS, unknown=lambda name: False,
              device_pass: bool = False, derived=None):
    """Truth of a `#if` condition in an AMD build (its device pass with `device_pass`), the macros
    `unknown(name)` names left unknown: not None means the condition is settled there whatever they are."""
    platform = _Eval(data, hip_macros, derived)

    def known(name: str):
        if unknown(name):
            return None
        if device_pass and name in AMD_DEVICE_PASS_MACROS:
            return True
        return platform.defined(name, HIP)

    return _KnownEval(data, known).truth(node, HIP)


def condition_truth(node: Node, data: bytes, world: str, hip_macros: frozenset[str] = HIP_MACROS, derived=None):
    """Three-valued truth of a `#if` condition node in `world` ("hip" or "cuda"); None when unknown."""
    return _Eval(data, hip_macros, derived).truth(node, world)


def masked_on_amd(cond: Node, data: bytes, names, hip_macros: frozenset[str] = HIP_MACROS, derived=None) -> bool:
    """Does every use of `names` in `cond` sit where its value cannot matter on AMD: inside `a && b` whose
    other operand is false there, or `a || b` whose other operand is true (`defined(__NVCC__) &&
    defined(__CUDA_ARCH__)`, `!defined(__NVCC__) || __CUDACC_VER_MAJOR__ >= 11`)? False when no use."""
    ev = _Eval(data, hip_macros, derived)
    wanted = names if callable(names) else names.__contains__
    uses = [i for i in iter_nodes(cond, {"identifier"}) if wanted(data[i.start_byte:i.end_byte].decode("utf-8", "replace"))]
    if cond.type == "identifier" and wanted(data[cond.start_byte:cond.end_byte].decode("utf-8", "replace")):
        uses = [cond]
    if not uses:
        return False
    for use in uses:
        node, masked = use, False
        while node is not None and (node.start_byte, node.end_byte) != (cond.start_byte, cond.end_byte) and not masked:
            parent = node.parent
            if parent is None:
                break
            op = parent.child_by_field_name("operator") if parent.type == "binary_expression" else None
            if op is not None and op.type in ("&&", "||"):
                left, right = parent.child_by_field_name("left"), parent.child_by_field_name("right")
                other = right if (left.start_byte, left.end_byte) == (node.start_byte, node.end_byte) else left
                # Only an operand free of the names decides (`defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800`
                # is false on AMD because of the very macro).
                free = not any(wanted(data[i.start_byte:i.end_byte].decode("utf-8", "replace"))
                               for i in [other, *iter_nodes(other, {"identifier"})] if i.type == "identifier")
                masked = free and ev.truth(other, HIP) is (op.type == "||")  # `false && x`, `true || x`
            node = parent
        if not masked:
            return False
    return True


@dataclass(frozen=True)
class Region:
    start: int
    end: int
    kind: str  # "hip", "nvidia", or "never" (no build compiles it: `#if 0`)


def _body_start(node: Node) -> int:
    cond = node.child_by_field_name("condition") or node.child_by_field_name("name")
    if cond is not None:
        return cond.end_byte
    first = node.child(0)
    return first.end_byte if first is not None else node.start_byte


def _body_end(node: Node) -> int:
    alt = node.child_by_field_name("alternative")
    if alt is not None:
        return alt.start_byte
    last = node.child(node.child_count - 1) if node.child_count else None
    if last is not None and last.type == "#endif":
        return last.start_byte
    return node.end_byte


def _tests_hip_macro(branch: Node, data: bytes, hip_macros: frozenset[str], derived=None) -> bool:
    """Does the branch test a HIP macro, or a project switch set by such a test (derive_macros)?"""
    cond = branch.child_by_field_name("condition") or branch.child_by_field_name("name")
    if cond is None:
        return False
    for ident in iter_nodes(cond, {"identifier"}):
        name = data[ident.start_byte:ident.end_byte].decode("utf-8", "replace")
        if name not in HIP_PASS_MACROS and (is_hip_macro(name, hip_macros) or (derived and name in derived)):
            return True
    return False


# A project's per-vendor selector macro, named by its arguments' backends in order: AMReX's
# `AMREX_HIP_OR_CUDA(hip_code, cuda_code)`, `AMREX_HIP_OR_CUDA_OR_SYCL(h, c, s)`. The argument for
# CUDA is the NVIDIA build's code, the one for HIP the AMD build's.
_VENDOR_WORDS = ("HIP", "CUDA", "SYCL", "DPCPP", "CPU", "HOST", "OMP", "OPENMP")
_VENDOR_SELECTOR = lazy_re(r"(?:^|_)((?:%s)(?:_OR_(?:%s))+)$" % ("|".join(_VENDOR_WORDS), "|".join(_VENDOR_WORDS)))
_VENDOR_HINT = lazy_re(rb"_OR_(?:CUDA|HIP)\b|(?:CUDA|HIP)_OR_")


_VENDOR_CALL = lazy_re(rb"\b([A-Za-z_]\w*)[ \t]*(?:\\?\r?\n[ \t]*)*\(")


def _vendor_argument_regions(root: Node, data: bytes) -> list[Region]:
    """Read from the text (the arguments are often statements, `AMREX_HIP_OR_CUDA(f();, g();)`, which the
    grammar cannot take as a call)."""
    if not _VENDOR_HINT.search(data):
        return []
    regions = []
    for m in _VENDOR_CALL.finditer(data):
        name = m.group(1).decode("ascii", "replace")
        selector = _VENDOR_SELECTOR.search(name)
        if selector is None:
            continue
        line_start = data.rfind(b"\n", 0, m.start()) + 1
        if data[line_start:m.start()].lstrip().startswith(b"#"):
            continue  # the selector's own `#define`
        vendors = selector.group(1).split("_OR_")
        if "HIP" not in vendors or "CUDA" not in vendors:
            continue
        args = _top_level_arguments(data, m.end())
        if args is None or len(args) != len(vendors):
            continue
        for vendor, (a, b) in zip(vendors, args):
            if vendor in ("HIP", "CUDA"):
                regions.append(Region(a, b, "hip" if vendor == "HIP" else "nvidia"))
    return regions


def _top_level_arguments(data: bytes, at: int, limit: int = 20000):
    """(start, end) of each top-level argument of the call whose `(` ends just before `at`; None when
    the parentheses do not close within `limit` bytes."""
    depth, start, out, i, end = 0, at, [], at, min(len(data), at + limit)
    while i < end:
        c = data[i]
        if c in (0x22, 0x27):  # a string or character literal
            quote = c
            i += 1
            while i < end and data[i] != quote:
                i += 2 if data[i] == 0x5C else 1
        elif c in (0x28, 0x5B, 0x7B):  # ( [ {
            depth += 1
        elif c in (0x29, 0x5D, 0x7D):  # ) ] }
            if depth == 0:
                out.append((start, i))
                return out
            depth -= 1
        elif c == 0x2C and depth == 0:  # ,
            out.append((start, i))
            start = i + 1
        i += 1
    return None


def _tests_nvidia_switch(branch: Node, data: bytes, switches: frozenset[str]) -> bool:
    """Does the branch test one of the project's NVIDIA-build switches (hiplint.amdbuild), or a macro
    named for NVIDIA's platform or compilers (`USE_NVIDIA_CUVS`, `KOKKOS_COMPILER_NVHPC`)?"""
    cond = branch.child_by_field_name("condition") or branch.child_by_field_name("name")
    if cond is None:
        return False
    idents = [cond] if cond.type == "identifier" else iter_nodes(cond, {"identifier"})
    for i in idents:
        name = data[i.start_byte:i.end_byte].decode("utf-8", "replace")
        if name in switches or name.upper() in switches or names_nvidia_compiler(name):
            return True
    return False


# Conditional directives, read as the preprocessor reads them: by line, continuations included.
_DIRECTIVE = lazy_re(rb"^[ \t]*#[ \t]*(ifdef|ifndef|if|elifdef|elifndef|elif|else|endif)\b((?:[^\n\\]|\\\r?\n|\\.)*)",
                        re.M)
_TRAILING_COMMENT = lazy_re(rb"(?:\s|\\\r?\n)*(//.*|/\*.*)?$", re.S)
_CONTINUATION = lazy_re(rb"\\\r?\n")


# What can hide a `#` at the start of a line: block comments and raw strings (found after skipping line
# comments and ordinary literals, which may hold `/*` or `R"(`).
_LEXEME = lazy_re(rb"//(?:[^\n\\]|\\.)*"             # line comment (continued by a backslash)
                     rb"|/\*.*?(?:\*/|\Z)"                # block comment
                     rb'|R"([^()\\\s"]{0,16})\(.*?\)\1"'  # raw string
                     rb'|"(?:[^"\\\n]|\\.)*"'             # string
                     rb"|'(?:[^'\\\n]|\\.)*'", re.S)      # character


def _hidden_spans(data: bytes) -> list[tuple[int, int]]:
    """Block comments and raw strings that run over a line end: a directive-looking line inside is text."""
    if b"/*" not in data and b'R"' not in data:
        return []
    return [m.span() for m in _LEXEME.finditer(data)
            if data[m.start():m.start() + 1] in (b"/", b"R") and not data.startswith(b"//", m.start())
            and b"\n" in data[m.start():m.end()]]


def directive_groups(data: bytes) -> list[list[tuple[str, bytes, int, int, int]]]:
    """Each `#if ... #endif` group of the file as its branches, from the text alone (a file tree-sitter
    cannot parse keeps its directives): (kind, condition, the directive's `#`, body start, body end)."""
    stack: list[list] = []
    groups = []
    hidden = _hidden_spans(data)
    hidden_starts = [start for start, _ in hidden]
    for m in _DIRECTIVE.finditer(data):
        i = bisect.bisect_right(hidden_starts, m.start()) - 1
        if i >= 0 and m.start() < hidden[i][1]:
            continue  # inside a block comment or a raw string
        kind = m.group(1).decode()
        cond = m.group(2)
        if kind == "else":
            cond, body = b"", m.start(1) + 4
        else:
            cond = cond[:len(cond) - len(_TRAILING_COMMENT.search(cond).group(0))] if cond else cond
            body = m.start(2) + len(cond)
        at = m.start() + len(m.group(0)) - len(m.group(0).lstrip(b" \t"))  # the '#'
        cond = _CONTINUATION.sub(b" ", cond).strip()
        if kind in ("if", "ifdef", "ifndef"):
            stack.append([(kind, cond, at, body)])
        elif kind == "endif":
            if stack:
                group = stack.pop()
                ends = [b[2] for b in group[1:]] + [m.start()]
                groups.append([(*b, e) for b, e in zip(group, ends)])
        elif stack:
            stack[-1].append((kind, cond, at, body))
    return groups


_DEFINE_NAME = lazy_re(rb"#[ \t]*define[ \t]+(\w+)")


def _first_define(data: bytes, at: int) -> bytes | None:
    """The name of the `#define` that is the first thing after `at` (whitespace and comments skipped)."""
    n = len(data)
    while at < n:
        if data[at] in b" \t\r\n\f\v":
            at += 1
        elif data.startswith(b"//", at):
            end = data.find(b"\n", at)
            at = n if end < 0 else end + 1
        elif data.startswith(b"/*", at):
            end = data.find(b"*/", at + 2)
            at = n if end < 0 else end + 2
        else:
            m = _DEFINE_NAME.match(data, at)
            return m.group(1) if m else None
    return None


def unreported_spans(data: bytes, hip_macros: frozenset[str] = HIP_MACROS) -> list[tuple[int, int]]:
    """Bodies of the branches whose findings are never shown by default, from the text alone: NVIDIA
    code beside an AMD branch or kept from AMD by a HIP test (`#if !defined(USE_ROCM)`), and code no
    compiler takes (`#if 0`). Merged, in order. Include guards are no test, whatever their name."""
    spans = []
    for group in directive_groups(data):
        kind, cond, _, body, _ = group[0]
        name = re.fullmatch(rb"!\s*defined\s*\(?\s*(\w+)\s*\)?", cond) if kind == "if" else None
        guarded = cond if kind == "ifndef" else (name.group(1) if name else None)
        if guarded and len(group) == 1 and _first_define(data, body) == guarded:
            continue
        chain = []
        for kind, cond, _, body_start, body_end in group:
            values, tests_hip = _text_branch(kind, cond, hip_macros)
            chain.append((body_start, body_end, values, tests_hip))
        if any(entry[3] for entry in chain[1:]):
            chain = _settle_cuda_branches(chain, lambda i, group=group: _text_branch(
                *group[i][:2], hip_macros, _CudaOffEval)[0][HIP])
        for region in _chain_regions(chain):
            if region.kind == "nvidia":
                spans.append((region.start, region.end))
        if all(values[HIP] is False and values[CUDA] is False for _, _, values, _ in chain[:1]):
            spans.append((chain[0][0], chain[0][1]))  # `#if 0`: no compiler
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        elif end > start:
            merged.append((start, end))
    return merged


@lru_cache(maxsize=4096)
def _text_branch(kind: str, cond: bytes, hip_macros: frozenset[str], evaluator=None, derived: frozenset = frozenset()):
    """({world: truth}, tests a HIP macro) of one textual branch (`derived`: derive_macros' items)."""
    evaluator = evaluator or _Eval
    if kind == "else":
        return {HIP: True, CUDA: True}, False
    switches = dict(derived)
    ev = evaluator(cond, hip_macros, switches)
    names = [n.decode("utf-8", "replace") for n in re.findall(rb"[A-Za-z_]\w*", cond)]
    names_hip = any(n not in HIP_PASS_MACROS and (is_hip_macro(n, hip_macros) or n in switches) for n in names)
    if kind in ("ifdef", "ifndef", "elifdef", "elifndef"):
        values = {w: ev.defined(names[0], w) if names else None for w in (HIP, CUDA)}
        if kind.endswith("ndef"):
            values = {w: _not(v) for w, v in values.items()}
        return values, names_hip
    node, snippet = _parse_condition(cond)
    ev = evaluator(snippet, hip_macros, switches)
    return {w: ev.truth(node, w) for w in (HIP, CUDA)}, names_hip


def _tree_truth(ev: _Eval, kind: str, cond: Node | None):
    """HIP-world truth of one branch of a parsed chain."""
    if kind == "preproc_else":
        return True
    if cond is None:
        return None
    if kind in ("preproc_ifdef", "preproc_elifdef"):
        value = ev.defined(ev.text(cond), HIP)
        negated = cond.prev_sibling is not None and cond.prev_sibling.type in ("#ifndef", "#elifndef")
        return _not(value) if negated else value
    return ev.truth(cond, HIP)


def _parse_condition(cond: bytes):
    """The condition node of `#if cond` parsed on its own, and the bytes it was parsed from."""
    snippet = b"#if " + cond + b"\n#endif\n"
    top = _snippet_parser().parse(for_parsing(snippet)).root_node.named_children
    node = top[0].child_by_field_name("condition") if top and top[0].type == "preproc_if" else None
    return node, snippet


@lru_cache(maxsize=1)
def _snippet_parser():
    from hiplint.cparse import new_parser
    return new_parser()


def _chain_regions(chain: list, amd_off: list | None = None, switch_starts=frozenset(),
                   branches_out: list | None = None) -> list[Region]:
    """Regions of one #if/#elif/#else chain, given per branch (start, end, {world: condition},
    tests a HIP macro). `amd_off` receives (start, end) of every branch AMD surely skips, NVIDIA-only
    or not (a lone `#if __CUDACC_VER_MAJOR__ >= 11`): where a define is not made on AMD. A branch whose
    start is in `switch_starts` tests the project's NVIDIA-build switch (`#if defined(AMREX_USE_CUDA) &&
    defined(PROFILING)`): if AMD never takes it, it is the NVIDIA backend's code, not a feature to port."""
    prior = {HIP: True, CUDA: True}
    names_hip = False  # does the chain so far test a HIP macro (an explicit AMD alternative)?
    branches = []
    for start, end, cond, tests_hip in chain:
        names_hip = names_hip or tests_hip
        taken = {w: _and(prior[w], cond[w]) for w in (HIP, CUDA)}
        branches.append((start, end, taken, names_hip))
        prior = {w: _and(prior[w], _not(cond[w])) for w in (HIP, CUDA)}
    # A branch AMD never compiles is NVIDIA-only when nvcc surely compiles it, or when the chain
    # has a HIP branch beside it (`#if AMD ... #elif __CUDA_ARCH__ >= 800 ... #else ...`), if only
    # for AMD's device pass (`#elif defined(__CUDA_ARCH__) ... #elif defined(__HIP_DEVICE_COMPILE__)`).
    # Also NVIDIA-side: a branch kept from AMD builds by a HIP macro test earlier in the chain
    # (`#elif CUDART_VERSION >= ...` after `#if defined(__HIP_PLATFORM_AMD__)`, `&& !defined(USE_ROCM)`).
    has_hip = any(t[CUDA] is False and t[HIP] is not False for _, _, t, _ in branches)
    regions = []
    for start, end, taken, hip_named in branches:
        hip_named = hip_named or start in switch_starts
        if amd_off is not None and taken[HIP] is False:
            amd_off.append((start, end))
        if branches_out is not None:
            branches_out.append((start, end, taken[HIP]))  # for surely_on_amd
        if taken[CUDA] is False and taken[HIP] is not False:
            regions.append(Region(start, end, "hip"))
        elif taken[HIP] is False and (taken[CUDA] is True or (taken[CUDA] is None and (has_hip or hip_named))):
            regions.append(Region(start, end, "nvidia"))
    return regions


def _never_compiled(node: Node, data: bytes) -> bool:
    """`#if 0`, `#ifdef __CLION_IDE__`, `#if defined(__INTELLISENSE__)`: a branch for no compiler."""
    if node.type == "preproc_ifdef":
        name = node.child_by_field_name("name")
        return node.child(0) is not None and node.child(0).type == "#ifdef" and name is not None \
            and data[name.start_byte:name.end_byte].decode("utf-8", "replace") in IDE_MACROS
    return _always_false(node.child_by_field_name("condition"), data)


def _always_false(cond: Node | None, data: bytes) -> bool:
    """`0`, `0 && anything`, `defined(__CLION_IDE__)`: false for every compiler."""
    while cond is not None and cond.type == "parenthesized_expression" and cond.named_child_count == 1:
        cond = cond.named_children[0]
    if cond is None:
        return False
    if cond.type == "number_literal":
        return data[cond.start_byte:cond.end_byte].strip() in (b"0", b"0L", b"0U")
    if cond.type == "preproc_defined":
        ids = [c for c in cond.named_children if c.type == "identifier"]
        return bool(ids) and data[ids[0].start_byte:ids[0].end_byte].decode("utf-8", "replace") in IDE_MACROS
    if cond.type == "binary_expression":
        op = cond.child_by_field_name("operator")
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        if op is not None and op.type == "&&":
            return _always_false(left, data) or _always_false(right, data)
        if op is not None and op.type == "||":
            return _always_false(left, data) and _always_false(right, data)
    return False


def _is_include_guard(name: Node, data: bytes) -> bool:
    """`#ifndef X` whose first line defines X."""
    after = name.next_named_sibling
    return after is not None and after.type == "preproc_def" and \
        data[name.start_byte:name.end_byte] == _defined_name(after, data)


def _wraps_file(node: Node) -> bool:
    """A top-level #if/#ifndef with nothing but comments after it: what an include guard wraps."""
    if node.parent is None or node.parent.parent is not None:
        return False
    after = node.next_named_sibling
    while after is not None and after.type == "comment":
        after = after.next_named_sibling
    return after is None


def _guarded_name(node: Node, data: bytes) -> bytes | None:
    """X of `#if !defined(X)` (or `!defined X`) whose first line defines X, without an #else: an
    include guard."""
    cond = node.child_by_field_name("condition")
    if cond is None or cond.type != "unary_expression" or node.child_by_field_name("alternative") is not None:
        return None
    op, arg = cond.child_by_field_name("operator"), cond.child_by_field_name("argument")
    while arg is not None and arg.type == "parenthesized_expression" and arg.named_child_count == 1:
        arg = arg.named_children[0]
    if op is None or op.type != "!" or arg is None or arg.type != "preproc_defined":
        return None
    ids = [c for c in arg.named_children if c.type == "identifier"]
    after = cond.next_named_sibling
    if len(ids) != 1 or after is None or after.type != "preproc_def":
        return None
    name = data[ids[0].start_byte:ids[0].end_byte]
    return name if name == _defined_name(after, data) else None


def _defined_name(define: Node, data: bytes) -> bytes:
    n = define.child_by_field_name("name")
    return data[n.start_byte:n.end_byte] if n is not None else b""


class PlatformMap:
    """Byte ranges of a file that are HIP-only or NVIDIA-only code."""

    def __init__(self, root: Node, data: bytes, hip_macros: frozenset[str] = HIP_MACROS,
                 errors: list[tuple[int, int]] | None = None, derived: dict[str, str] | None = None):
        self.derived = derived or {}
        ev = _Eval(data, hip_macros, self.derived)
        cuda_off = _CudaOffEval(data, hip_macros, self.derived)
        regions: list[Region] = []
        amd_off: list[tuple[int, int]] = []
        branches: list[tuple[int, int, bool | None]] = []  # every branch: (start, end, taken on AMD?)
        switch_starts: set[int] = set()
        nvidia_switches = frozenset(m[1:] for m in hip_macros if m.startswith(NVIDIA_BUILD_MARK))
        seen = set()
        guards: set[str] = set()
        for node in iter_nodes(root, {"preproc_if", "preproc_ifdef"}):
            seen.add(node.start_byte)
            # Walk the #if / #elif / #else chain, carrying "no earlier branch was taken".
            branch = node
            chain = []
            conditions = []
            while branch is not None:
                t = branch.type
                if t == "preproc_if" and _wraps_file(branch) and _guarded_name(branch, data):
                    guards.add(_guarded_name(branch, data).decode("utf-8", "replace"))
                    cond = {HIP: True, CUDA: True}  # `#if !defined(X_HIP_H)` + `#define X_HIP_H`: a guard
                elif t in ("preproc_if", "preproc_elif"):
                    cond = {w: ev.truth(branch.child_by_field_name("condition"), w) for w in (HIP, CUDA)}
                    if cond[HIP] is True and cond[CUDA] is None and \
                            ev.amd_or_newer_nvidia(branch.child_by_field_name("condition")):
                        cond = {HIP: True, CUDA: False}  # AMD code (and newer nvcc's); the #else is older nvcc's
                elif t in ("preproc_ifdef", "preproc_elifdef"):
                    name = branch.child_by_field_name("name")
                    neg = branch.child(0) is not None and branch.child(0).type in ("#ifndef", "#elifndef")
                    cond = {}
                    for w in (HIP, CUDA):
                        d = ev.defined(ev.text(name), w) if name is not None else None
                        cond[w] = _not(d) if neg else d
                    if neg and name is not None and _is_include_guard(name, data):
                        guards.add(ev.text(name))
                        if _wraps_file(branch):
                            # Every compiler enters a header's guard once, whatever it is named
                            # (`#ifndef MYPROJ_HIP_REDUCE_H` is not a test for HIP).
                            cond = {HIP: True, CUDA: True}
                elif t == "preproc_else":
                    cond = {HIP: True, CUDA: True}
                else:
                    break
                start = _body_start(branch) if t != "preproc_else" else (branch.child(0).end_byte if branch.child(0) else branch.start_byte)
                end = _body_end(branch) if t != "preproc_else" else branch.end_byte
                cond_node = branch.child_by_field_name("condition") or branch.child_by_field_name("name")
                chain.append((start, end, cond, _tests_hip_macro(branch, data, hip_macros, self.derived)))
                if _tests_nvidia_switch(branch, data, nvidia_switches):
                    switch_starts.add(start)
                conditions.append((t, cond_node))
                branch = branch.child_by_field_name("alternative")
            if any(entry[3] for entry in chain[1:]):
                chain = _settle_cuda_branches(chain, lambda i: _tree_truth(cuda_off, *conditions[i]))
            chain = _settle_by_library_headers(chain, data)
            regions.extend(_chain_regions(chain, amd_off, switch_starts, branches))
        # `#if 0` and `#ifdef __CLION_IDE__`: no compiler at all takes it (the plain C++ #else of an
        # nvcc/hipcc chain is a host compiler's, so "neither world" is not enough).
        for node in iter_nodes(root, {"preproc_if", "preproc_ifdef"}):
            if _never_compiled(node, data):
                regions.append(Region(_body_start(node), _body_end(node), "never"))
        # `#if CUDA_VERSION >= 9000 ... #else`: every supported nvcc takes the first branch, AMD the other
        # (which stays open: written for old toolkits, not for AMD). A lone `#if` is a feature AMD loses;
        # its code is what a port has to bring over, so it stays open too.
        floor = _FloorEval(data, hip_macros, self.derived)
        known = {r.start for r in regions}
        for node in iter_nodes(root, {"preproc_if"}):
            cond = node.child_by_field_name("condition")
            if cond is None or node.child_by_field_name("alternative") is None \
                    or not any(m.encode() in data[cond.start_byte:cond.end_byte] for m in NVCC_FLOOR):
                continue
            on_amd, on_nvidia = ev.truth(cond, HIP), floor.truth(cond, CUDA)
            if on_amd is False and on_nvidia is True and _body_start(node) not in known:
                regions.append(Region(_body_start(node), _body_end(node), "nvidia"))
            alt = node.child_by_field_name("alternative")
            if on_amd is True and on_nvidia is False and alt.type == "preproc_else":
                # `#if CUDA_VERSION < 9000 ... #else`: the #else is the NVIDIA code
                start = alt.child(0).end_byte if alt.child(0) else alt.start_byte
                if start not in known:
                    regions.append(Region(start, alt.end_byte, "nvidia"))
        # Directives inside regions tree-sitter could not parse are lost from the tree: read those
        # groups from the text (the preprocessor itself is line-based).
        if errors is None:
            errors = error_ranges(root) if root.has_error else []
        if errors:
            starts = [s for s, _ in errors]
            for group in directive_groups(data):
                at = group[0][2]
                i = bisect.bisect_right(starts, at) - 1
                if at in seen or i < 0 or at >= errors[i][1]:
                    continue
                chain = []
                switches = frozenset(self.derived.items())
                for kind, cond, _, body_start, body_end in group:
                    values, tests_hip = _text_branch(kind, cond, hip_macros, None, switches)
                    chain.append((body_start, body_end, values, tests_hip))
                if any(entry[3] for entry in chain[1:]):
                    chain = _settle_cuda_branches(chain, lambda i, group=group: _text_branch(
                        *group[i][:2], hip_macros, _CudaOffEval, switches)[0][HIP])
                regions.extend(_chain_regions(chain, amd_off, branches_out=branches))
        regions.extend(_vendor_argument_regions(root, data))
        regions.sort(key=lambda r: (r.start, -r.end))
        # Left unknown on AMD: what the project's headers may settle. An include guard is no switch.
        self.open_names = frozenset(ev.open_names - guards)
        self.regions = regions
        self._starts = [r.start for r in regions]
        self._amd_off = sorted(amd_off)
        self._branches = sorted(branches, key=lambda b: (b[0], b[1]))  # two readings of one branch may differ in truth
        # `#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)` around `#if defined(__HIP_DEVICE_COMPILE__)
        # ... #else`: each branch alone is taken by one of AMD's passes, the inner #else by neither (the host
        # pass skips the outer branch, the device pass the #else). Asked per pass, from the text.
        self._passes = None
        if b"__HIP_DEVICE_COMPILE__" in data:
            platform = _Eval(data, hip_macros, self.derived)

            def pass_known(device: bool):
                def known(name: str):
                    if name in HIP_PASS_MACROS:
                        return device
                    if device and name in AMD_DEVICE_PASS_MACROS:
                        return True
                    return platform.defined(name, HIP)
                return known
            self._passes = (data, pass_known(False), pass_known(True))

    def surely_on_amd(self, byte: int) -> bool:
        """Does every conditional branch around `byte` surely compile on AMD (an include guard, `#if
        defined(USE_ROCM) || __CUDA_ARCH__ >= 800`)? Then a `#define` there is made in every AMD build."""
        i = bisect.bisect_right(self._branches, (byte, float("inf"), True))
        return all(taken is True for start, end, taken in self._branches[:i] if start <= byte < end)

    def off_on_amd(self, byte: int) -> bool:
        """Does `byte` lie in a branch an AMD build surely skips (whatever NVIDIA does)?"""
        i = bisect.bisect_right(self._amd_off, (byte, float("inf")))
        if any(start <= byte < end for start, end in self._amd_off[:i]):
            return True
        if self._passes is not None:
            data, host, device = self._passes
            return excluded_when(byte, data, host) and excluded_when(byte, data, device)
        return False

    def kind_at(self, byte: int) -> str | None:
        """'hip', 'nvidia' or 'never' if `byte` lies in such a branch (innermost wins), else None."""
        i = bisect.bisect_right(self._starts, byte)
        kind = None
        best = None
        for r in self.regions[:i]:
            if r.start <= byte < r.end and (best is None or r.start >= best.start):
                best, kind = r, r.kind
        return kind
