"""The project's own AMD build: which sources it compiles as HIP, with which definitions, and which
build files only the NVIDIA build reads.

Projects that already build for AMD often keep one CUDA source tree and a separate HIP build of it:
`gpu-hip/CMakeLists.txt` runs `enable_language(HIP)`, globs `../gpu-cuda/*.cu`, sets them
`LANGUAGE HIP` and adds `target_compile_definitions(... X_USE_HIP)`. Then

- a source that build compiles is AMD-compiled, wherever it sits (a `cuda/` directory with a HIP twin
  too: hiplint.layout does not silence it), and the definitions that build sets (and the NVIDIA build
  does not) are HIP macros for it and the headers beside it: `#ifdef X_USE_HIP` / `#include
  "compat_hip.h"` is the AMD side, and the names that header maps are handled (hiplint.headers);
  a definition only the NVIDIA build sets is undefined on AMD (`#ifdef X_USE_CUDA ... #else`: the
  `#else` is the AMD code);
- the CUDA directory's own CMakeLists.txt, which the AMD build never `add_subdirectory`s, and CMake
  blocks for the NVIDIA build (`if(X_USE_CUDA)` where the project has `X_USE_HIP`, `if(NOT X_USE_HIP)`,
  the `else()` of an `if(X_USE_HIP)`) are the NVIDIA build's: the build rules do not report there.

The build is read once per repository (the nearest `.git` above a file; without one, the highest
directory a few levels up that holds a build file): CMake through tree-sitter-cmake, Makefiles by a
small line reader (`hipcc`, `-x hip`, `-D` flags of those lines). Only what is written literally is
understood (variables set in the same or a parent directory's file, `file(GLOB)`, `${CMAKE_CURRENT_SOURCE_DIR}`);
where nothing is learned (no build files, another generator) files are treated as before.
`hiplint scan --show-build` prints what was learned.
"""
from __future__ import annotations

import fnmatch
import glob
import hashlib
import os
import re
from dataclasses import dataclass, field

from hiplint.preproc import AMD_LIBRARY_WORDS
from hiplint.languages import is_makefile_name
from hiplint.lazy import lazy_re

NVIDIA_BUILD_MARK = "!"  # in a file's hip-macro set, "!X": X is defined by the NVIDIA build only
C_FAMILY = frozenset({".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".cuinl", ".inl"})
HEADERS = frozenset({".cuh", ".h", ".hpp", ".hh", ".hxx", ".inl", ".cuinl", ".ipp", ".tpp"})
SKIP_DIRS = frozenset({"node_modules", "__pycache__", "site-packages"})
MAX_DIRS = 40000  # directories walked per repository
MAX_BUILD_FILES = 4000
MAX_BUILD_BYTES = 1024 * 1024
MAX_GLOB = 20000  # files one glob may name
GIT_LEVELS = 16  # directories looked up for `.git`
# An empty file that makes its directory a project of its own for reading the build (a sub-project of a
# monorepo, each sample project of hiplint's fixtures): its build files are not the enclosing project's.
PROJECT_MARKER = ".hiplint-project"
NO_GIT_LEVELS = 4  # without one: this far up for a build file
# Files that mark the top of a project in a copy without `.git` (a release tarball, a vendored tree):
# autotools' configure script source, and a CMakeLists.txt that calls project().
PROJECT_FILES = frozenset({"configure.ac", "configure.in"})
_CMAKE_PROJECT = lazy_re(rb"(?im)^[ \t]*project[ \t]*\(")
# Directories that hold other projects' code (GitHub linguist's vendor list, narrowed): a project below
# one that starts a project of its own (_starts_vendored_project) is vendored: someone else's code, with
# build files the including project's configure never reads.
VENDOR_DIR = lazy_re(r"^(?:third[-_]?part(?:y|ies)|3rd[-_]?party|vendor(?:s|ed)?|extern(?:al)?s?(?:_[a-z]+)?|"
                        r"_?deps|submodules?|tpls?)$", re.I)  # `tpls/`: "third-party libraries" (ExaTN, LLNL's BLT)
_LICENSE_FILE = lazy_re(r"^(?:LICEN[CS]E|COPYING)", re.I)

_HIP_WORDS = frozenset({"HIP", "ROCM", "AMD", "HIPCC", "AMDGPU"}) | frozenset(
    w for words in AMD_LIBRARY_WORDS.values() for w in words)
_CUDA_WORDS = frozenset({"CUDA", "NVCC", "NVIDIA", "CUDACXX", "NVGPU"})  # NVGPU: SV-Sim's `USE_NVGPU`
_NEGATIONS = frozenset({"NOT", "NO", "DISABLE", "DISABLED", "WITHOUT", "SKIP", "OFF"})
_WORD_SPLIT = lazy_re(r"[^A-Za-z0-9]+")
_DEF = lazy_re(r"^-D([A-Za-z_]\w*)(?:=.*)?$")
_PLAIN_DEF = lazy_re(r"^([A-Za-z_]\w*)(?:=.*)?$")
_VAR_REF = lazy_re(r"\$\{(\w+)\}")
_TARGET_COMMANDS = {"add_library": None, "add_executable": None, "cuda_add_library": "cuda",
                    "cuda_add_executable": "cuda", "hip_add_library": "hip", "hip_add_executable": "hip"}
_TARGET_KEYWORDS = frozenset({"STATIC", "SHARED", "MODULE", "OBJECT", "INTERFACE", "EXCLUDE_FROM_ALL",
                              "WIN32", "MACOSX_BUNDLE", "IMPORTED", "ALIAS", "GLOBAL", "PRIVATE", "PUBLIC"})


# A vendor word run on into "LIB" (SuperLU_DIST's `TPL_ENABLE_CUDALIB` beside `TPL_ENABLE_HIPLIB`).
_VENDOR_LIB = lazy_re(r"^(CUDA|HIP|ROCM)(LIBS?|LIBRARY|LIBRARIES)$")


def _words(text: str) -> set[str]:
    words = {w for w in _WORD_SPLIT.split(text.upper()) if w}
    for w in list(words):
        m = _VENDOR_LIB.match(w) if w.endswith(("LIB", "LIBS", "LIBRARY", "LIBRARIES")) else None
        if m:
            words.add(m.group(1))
    return words


def names_amd(text: str) -> bool:
    """A directory or switch named for the AMD build (`gpu-hip`, `rocm`, `X_USE_HIP`, `hipblas`)."""
    words = _words(text)
    return not words.isdisjoint(_HIP_WORDS) and words.isdisjoint(_NEGATIONS) and words.isdisjoint(_CUDA_WORDS)


def names_cuda(text: str) -> bool:
    words = _words(text)
    return not words.isdisjoint(_CUDA_WORDS) and words.isdisjoint(_NEGATIONS) and words.isdisjoint(_HIP_WORDS)


@dataclass(frozen=True)
class FileFacts:
    """What the AMD build says about one file."""
    amd_compiled: bool = False  # compiled by the AMD build (or a header beside such sources)
    amd_defines: frozenset = frozenset()  # set by the AMD build and not by the NVIDIA one
    nvidia_defines: frozenset = frozenset()  # set by the NVIDIA build only
    nvidia_build_file: bool = False  # a build file only the NVIDIA build reads
    nvidia_ranges: tuple = ()  # (start, end) bytes of a build file's blocks for the NVIDIA build
    nvidia_switches: frozenset = frozenset()  # the project's CUDA-build switches with an AMD twin (nvidia_switches())
    project_builds_for_amd: bool = False  # the project has an AMD build (read), or switches for both vendors
    nvidia_source: bool = False  # compiled only by NVIDIA-only targets (or a header beside only such sources)
    amd_build_file: bool = False  # a build file the AMD build reads (hiplint.amdbuild found the AMD build there)
    valued: tuple = ()  # ((name, AMD value, NVIDIA value), ...): a backend chosen by number, project-wide
    vendored: bool = False  # in a vendored project (third_party/x/ with its own build) the AMD build does not compile
    removed_names_defined: frozenset = frozenset()  # REMOVED_PLATFORM_NAMES the project's build defines itself
    # built for ROCm from hipified copies (PyTorch's extension build, a hipify-perl step): `__CUDACC__` reads
    # `__HIPCC__` there; otherwise hip-clang compiles the CUDA source itself and never defines `__CUDACC__`
    hipified_at_build: bool = False
    unbuilt: bool = False  # a source no build file names, no glob matches and no file includes (AmdBuild.unbuilt)
    gpu_defines: frozenset = frozenset()  # defined in every GPU build, AMD's included (gpu_build_defines())
    compiler_aliases: frozenset = frozenset()  # the project's names for __CUDACC__ (includers.compiler_aliases)
    hip_aliases: frozenset = frozenset()  # ... and for __HIPCC__: defined wherever hip-clang compiles
    # defined by the AMD build's compile lines and the NVIDIA build's alike (a Makefile's `-DALPAKA` for
    # hipcc and for nvcc): not a vendor's mark, so not among the HIP macros, but true wherever AMD compiles
    both_defines: frozenset = frozenset()

    @property
    def builds_for_amd(self) -> bool:
        """The project already builds for AMD: this file, or its build has an AMD path, or it names
        backend switches for both vendors."""
        return self.amd_compiled or self.project_builds_for_amd

    def macros(self) -> frozenset:
        """What to add to the file's HIP macros (hiplint.preproc): the AMD build's definitions, and the
        NVIDIA build's marked with NVIDIA_BUILD_MARK; the project's NVIDIA-build switches are marked so in
        every file of the project."""
        switches = frozenset(NVIDIA_BUILD_MARK + d for d in self.nvidia_switches) | frozenset(
            f for name, amd, nvidia in self.valued for f in (f"{name}={amd}", f"{NVIDIA_BUILD_MARK}{name}={nvidia}"))
        # A definition only the NVIDIA build makes (`if(QUDA_NVSHMEM) target_compile_definitions(quda
        # NVSHMEM_COMMS)` in the CUDA target's file) is undefined in every AMD compile, whatever the file.
        nvidia = frozenset(NVIDIA_BUILD_MARK + d for d in self.nvidia_defines)
        if self.project_builds_for_amd:
            nvidia |= {NVIDIA_BUILD_MARK + d for d in ONE_GPU_BACKEND_CUDA_MACROS}
        if self.project_builds_for_amd and not self.hipified_at_build:
            # hip-clang compiles the CUDA source as it stands and defines `__HIPCC__`, never `__CUDACC__`
            # (ROCm 7.2 `-E -dM`): a `#ifdef __CUDACC__` branch is NVIDIA code (ARC006 reports the test
            # itself where the branch holds GPU code AMD needs).
            nvidia |= {NVIDIA_BUILD_MARK + "__CUDACC__"}
            # and so are the project's own names for it (`#define EIGEN_CUDACC __CUDACC__`)
            nvidia |= {NVIDIA_BUILD_MARK + d for d in self.compiler_aliases}
        switches |= self.hip_aliases
        if self.project_builds_for_amd:
            switches |= self.gpu_defines
        if not self.amd_compiled:
            return switches | nvidia
        return self.amd_defines | nvidia | switches

    def signature(self) -> bytes:
        """For the cache key: a change to the build that changes this file's treatment lints it again."""
        if self == NOTHING:
            return b""
        return repr((self.amd_compiled, sorted(self.amd_defines), sorted(self.nvidia_defines),
                     self.nvidia_build_file, self.nvidia_ranges, sorted(self.nvidia_switches),
                     self.project_builds_for_amd, self.nvidia_source, self.amd_build_file, self.valued,
                     self.vendored, sorted(self.removed_names_defined), self.hipified_at_build,
                     self.unbuilt, sorted(self.gpu_defines), sorted(self.compiler_aliases),
                     sorted(self.hip_aliases), sorted(self.both_defines))).encode()


NOTHING = FileFacts()


@dataclass
class AmdBuild:
    root: str
    amd_build_files: set = field(default_factory=set)
    amd_sources: set = field(default_factory=set)
    amd_defines: set = field(default_factory=set)
    nvidia_defines: set = field(default_factory=set)
    nvidia_build_files: set = field(default_factory=set)
    nvidia_ranges: dict = field(default_factory=dict)  # build file -> [(start, end)]
    amd_dirs: set = field(default_factory=set)  # directories holding AMD-compiled sources
    include_dirs: list = field(default_factory=list)  # the project's own include directories (CMake)
    nvidia_switches: frozenset = frozenset()  # nvidia_switches(): known even where the AMD build is not
    python_amd: bool = False  # a Python build that builds for ROCm too (python_builds_for_amd)
    ci_amd: str = ""  # a CI job that configures the project for AMD (ci_builds_for_amd): its file
    meson_amd: bool = False  # the Meson files name an AMD path (hiplint.mesonread)
    bazel_amd: bool = False  # the Bazel files name an AMD path (hiplint.bazelread)
    torch_extension: bool = False  # ... through torch.utils.cpp_extension (CUDAExtension, BuildExtension)
    source_names: frozenset = frozenset()  # file names and stems the build files write (unbuilt())
    # Directories whose CMakeLists.txt nothing reaches and that no reached build file names (GauXC's
    # `attic/`): the project's build never configures them (unbuilt()).
    unreached_dirs: set = field(default_factory=set)
    source_globs: tuple = ()  # and their glob patterns (with the directory part they write)
    directory_names: frozenset = frozenset()  # the directory names they write (`src/x.cu`: src; a bare word)
    source_places: dict = field(default_factory=dict)  # source name -> where the tokens put it (_named_sources)
    loose_places: dict = field(default_factory=dict)  # names and stems written other than as a source's path -> where
    both_defines: set = field(default_factory=set)  # -D of the AMD and the NVIDIA compile lines alike (_read_make)

    def unbuilt(self, full: str) -> bool:
        """A source file no build compiles: in a project whose build hiplint read (CMake or Makefiles, and
        no other build system beside them), its name appears in no build file or build script (nor its
        stem: `kernel.o`), no glob pattern there matches it, another source of its directory is named
        (the directory's sources are listed one by one), and no file of the project includes it.
        SuperLU_DIST's `sSchCompUdt-cuda.c`, MAGMA's `testing/fortran2.cpp`."""
        name = os.path.basename(full)
        if self.unreached_dirs and any(full.startswith(d + os.sep) for d in self.unreached_dirs):
            from hiplint.includers import includers
            # Sources there, and headers only they include (a reached source including one builds it,
            # unless its include finds a namesake of its own: `attic/cuda/ext.hpp` beside `src/cuda/ext.hpp`).
            return all(any(p.startswith(d + os.sep) for d in self.unreached_dirs) or _includes_namesake(p, at, full)
                       for p, at in includers(full))
        suffix = os.path.splitext(name)[1].lower()
        if self.source_names and suffix in HEADERS:
            from hiplint.includers import includers
            # An implementation include (`.inl`, `.ipp`) no file includes, or a header no file includes in a
            # directory the build lists leave out (cuSZ's `_deprecated/`): nothing compiles it.
            return not includers(full) and (suffix in _INCLUDED_ONLY or self._cousins_named(os.path.dirname(full)))
        if not self.source_names or suffix not in _UNBUILT_SUFFIXES:
            return False
        if {name, os.path.splitext(name)[0], name.split(".", 1)[0]} & self.source_names and self._named(full, name):
            return False
        if any(_glob_matches(full, g) for g in self.source_globs):
            return False
        directory = os.path.dirname(full)
        try:
            siblings = [e for e in os.listdir(directory) if e != name
                        and os.path.splitext(e)[1].lower() in _UNBUILT_SUFFIXES]
        except OSError:
            return False
        if not any({e, os.path.splitext(e)[0]} & self.source_names for e in siblings) and \
                not self._cousins_named(directory):
            return False
        from hiplint.includers import includers
        return not includers(full)

    def _named(self, full: str, name: str) -> bool:
        """Does a build file name this source: a bare name, a path ending in its own (aphrodite's
        `kernels/attention/attention_kernels.cu` is not the `kernels/backup/` copy), or its stem as an
        object or a target (`x.o`)?"""
        for key in {name, os.path.splitext(name)[0], name.split(".", 1)[0]}:
            if any(_places(full, p) for p in self.loose_places.get(key, ())):
                return True  # `x.o`, a target `x`: written where the build file would find it
        places = self.source_places.get(name)
        if not places:
            return True  # named some other way (a stem shared with another source's name): kept as named
        return any(_places(full, p) for p in places)

    def _cousins_named(self, directory: str, depth: int = 0) -> bool:
        """A directory whose sources are listed one by one, as its sibling directories' are, none of its
        own: no build file in it, its name written nowhere as a directory, and a sibling directory with a
        source the build files name (aphrodite's `kernels/quantization/autoquant/` beside `awq/` and
        `aqlm/`, whose sources the CMake list names: it is left out of every target); or a directory so
        left out itself holds it (`punica/bgmv/`)."""
        if os.path.basename(directory) in self.directory_names or depth > 3:
            return False
        parent = os.path.dirname(directory)
        if parent != self.root and not parent.startswith(self.root + os.sep):
            return False
        try:
            if any(e in _BUILD_FILE_NAMES or e.endswith((".cmake", ".mk")) or is_makefile_name(e)
                   for e in os.listdir(directory)):
                return False
            cousins = [e.path for e in os.scandir(parent) if e.is_dir(follow_symlinks=False)
                       and e.path != directory]
            for cousin in cousins:
                for e in os.listdir(cousin):
                    if os.path.splitext(e)[1].lower() in _UNBUILT_SUFFIXES and \
                            {e, os.path.splitext(e)[0]} & self.source_names:
                        return True
        except OSError:
            return False
        return self._cousins_named(parent, depth + 1)

    @property
    def hipify_step(self) -> bool:
        """Does a build file run hipify (hipify-perl, hipify-clang, hipify_torch: MAGMA's and SLATE's
        generated `.hip` sources)? Then the AMD build compiles hipified copies."""
        return any(w.startswith("HIPIFY") for w in self.project_words)
    nvidia_sources: set = field(default_factory=set)  # compiled by NVIDIA-only targets alone
    nvidia_dirs: set = field(default_factory=set)  # directories holding only such sources
    project_words: frozenset = frozenset()  # identifiers of the build files, upper-cased
    valued: dict = field(default_factory=dict)  # valued_switches(): {name: (AMD value, NVIDIA value)}
    library_switches: frozenset = frozenset()  # cuda_library_switches(): their if() blocks are NVIDIA's
    nvidia_subdirs: set = field(default_factory=set)  # added only from NVIDIA blocks (add_subdirectory)
    autotools_nvidia_dirs: set = field(default_factory=set)  # autotools_nvidia_dirs()
    autotools_nvidia_files: set = field(default_factory=set)  # listed only in a Makefile.am's NVIDIA blocks
    python_nvidia_files: set = field(default_factory=set)  # python_nvidia_sources(): a Python build's CUDA branch
    preset_nvidia_files: set = field(default_factory=set)  # backend_presets(): cache presets that pick CUDA
    python_nvidia_dirs: set = field(default_factory=set)  # directories holding only those
    vendored_dirs: set = field(default_factory=set)  # vendored projects (_build_files): not read as the build
    removed_names_defined: frozenset = frozenset()  # removed_names_defined()
    gpu_defines: frozenset = frozenset()  # gpu_build_defines(): defined in every GPU build, AMD's included
    backend_choice: bool = False  # no AMD target read, but a variable picks CUDA or HIP (_chooses_cuda_or_hip)
    gpu_candidates: dict = field(default_factory=dict)  # _any_gpu_build_sets(), before the configured headers

    def vendored(self, full: str) -> bool:
        return any(full.startswith(d + os.sep) for d in self.vendored_dirs)

    @property
    def known(self) -> bool:
        return bool(self.amd_build_files)

    def _python_nvidia(self, full: str) -> bool:
        """Named only in a Python build's CUDA branch, or a header in (or below) a directory of such sources."""
        if full in self.python_nvidia_files:
            return True
        return os.path.splitext(full)[1].lower() in HEADERS and any(
            full.startswith(d + os.sep) for d in self.python_nvidia_dirs)

    def _cuda_dir_beside_amd(self, full: str) -> bool:
        """In a directory named for CUDA (`cont/cuda/`) whose sibling holds what the AMD build compiles
        (`cont/kokkos/`), or is named as such a sibling elsewhere in the project (`exec/kokkos/` beside
        `exec/cuda/`), while the AMD build compiles nothing below it: the NVIDIA back end of a project
        with its own AMD path (VTK-m's CUDA device adapter beside its Kokkos one; Taichi's `rhi/cuda/`
        beside `rhi/amdgpu/`). A header there that an AMD-compiled source includes is not."""
        if not self.amd_dirs:
            return False
        names = self._amd_backend_names()
        directory = os.path.dirname(full)
        while len(directory) > len(self.root) and directory.startswith(self.root + os.sep):
            parent, base = os.path.split(directory)
            if _names_cuda_dir(base) and not any(a == directory or a.startswith(directory + os.sep)
                                                 for a in self.amd_dirs):
                try:
                    siblings = [e for e in os.listdir(parent) if e != base and os.path.isdir(os.path.join(parent, e))]
                except OSError:
                    siblings = []
                if any(e.lower() in names or any(a.startswith(os.path.join(parent, e) + os.sep)
                                                 or a == os.path.join(parent, e) for a in self.amd_dirs)
                       for e in siblings):
                    if os.path.splitext(full)[1].lower() in HEADERS:
                        from hiplint.includers import includers
                        if any(p in self.amd_sources for p, _ in includers(full)):
                            return False
                    return True
            directory = parent
        return False

    def _amd_backend_names(self) -> frozenset:
        """Lower-cased names of the directories that hold the AMD build's sources and sit beside a
        directory named for CUDA (`kokkos` for VTK-m's `cont/kokkos/` beside `cont/cuda/`)."""
        cached = getattr(self, "_backend_names", None)
        if cached is not None:
            return cached
        out = set()
        for a in self.amd_dirs:
            d = a
            while len(d) > len(self.root) and d.startswith(self.root + os.sep):
                parent, base = os.path.split(d)
                try:
                    if any(_names_cuda_dir(e) and e != base and os.path.isdir(os.path.join(parent, e))
                           for e in os.listdir(parent)):
                        out.add(base.lower())
                except OSError:
                    pass
                d = parent
        self._backend_names = frozenset(out)
        return self._backend_names

    def facts_for(self, path: str) -> FileFacts:
        if not self.known:
            if not (self.nvidia_switches or self.python_amd or self.preset_nvidia_files or self.backend_choice
                    or self.ci_amd or self.meson_amd or self.bazel_amd):
                return FileFacts(removed_names_defined=self.removed_names_defined) if self.removed_names_defined \
                    else NOTHING
            full = os.path.abspath(path)
            return FileFacts(nvidia_switches=self.nvidia_switches, project_builds_for_amd=True,
                             nvidia_defines=frozenset(self.nvidia_defines),
                             nvidia_build_file=full in self.preset_nvidia_files,
                             nvidia_source=full in self.autotools_nvidia_files or full in self.nvidia_sources
                             or any(full.startswith(d + os.sep) for d in self.autotools_nvidia_dirs)
                             or any(full.startswith(d + os.sep) for d in self.nvidia_subdirs)
                             or self._python_nvidia(full),
                             vendored=self.vendored(full), removed_names_defined=self.removed_names_defined,
                             hipified_at_build=self.torch_extension or self.hipify_step,
                             gpu_defines=self.gpu_defines, compiler_aliases=self._compiler_aliases(),
                             hip_aliases=self._hip_aliases())
        full = os.path.abspath(path)
        compiled = full in self.amd_sources or (
            os.path.splitext(full)[1].lower() in HEADERS and os.path.dirname(full) in self.amd_dirs)
        nvidia_file = full in self.nvidia_build_files
        ranges = tuple(self.nvidia_ranges.get(full, ()))
        nvidia_source = not compiled and (full in self.nvidia_sources or full in self.autotools_nvidia_files or any(
            full.startswith(d + os.sep) for d in self.autotools_nvidia_dirs) or (
            os.path.splitext(full)[1].lower() in HEADERS and os.path.dirname(full) in self.nvidia_dirs)
            or any(full.startswith(d + os.sep) for d in self.nvidia_subdirs) or self._python_nvidia(full)
            or self._cuda_dir_beside_amd(full))
        return FileFacts(compiled, frozenset(self.amd_defines), frozenset(self.nvidia_defines), nvidia_file, ranges,
                         self.nvidia_switches, True, nvidia_source, full in self.amd_build_files,
                         tuple(sorted((n, a, v) for n, (a, v) in self.valued.items())),
                         vendored=not compiled and self.vendored(full),
                         removed_names_defined=self.removed_names_defined,
                         hipified_at_build=(self.torch_extension and not compiled) or self.hipify_step,
                         unbuilt=not compiled and not nvidia_source and self.unbuilt(full),
                         gpu_defines=self.gpu_defines, compiler_aliases=self._compiler_aliases(),
                         hip_aliases=self._hip_aliases(), both_defines=frozenset(self.both_defines))

    def _compiler_aliases(self) -> frozenset:
        """The project's own names for `__CUDACC__` (includers.compiler_aliases), where hip-clang compiles
        the CUDA sources as they are (no hipify step renames `__CUDACC__` to `__HIPCC__`)."""
        if self.torch_extension or self.hipify_step:
            return frozenset()
        from hiplint.includers import compiler_aliases
        return compiler_aliases(self.root)[0]

    def _hip_aliases(self) -> frozenset:
        from hiplint.includers import compiler_aliases
        return compiler_aliases(self.root)[1]

    def describe(self) -> str:
        """`--show-build`: what was learned, paths relative to the repository."""
        def rel(p):
            return os.path.relpath(p, self.root)

        from hiplint.includers import off_switches
        lines = [f"# AMD build read from {self.root}"]
        switches = ("nvidia-only-switches", sorted(self.nvidia_switches))
        # `//#define X` alone, set by no build file: `#ifdef X` code is compiled by no build (not reported).
        off = ("switches-shipped-off", sorted(off_switches(self.root)))
        vendored = ("vendored-projects", sorted(map(rel, self.vendored_dirs)))
        if self.python_amd:
            lines.append("# the Python build builds for ROCm too (setup.py / install scripts name hipcc, ROCM_HOME or a HIP switch)")
            if self.torch_extension:
                lines.append("# through PyTorch's extension build, which hipifies the CUDA sources first (`__CUDACC__` reads `__HIPCC__`)")
        if self.meson_amd:
            lines.append("# the Meson files name an AMD path: sources and definitions only their NVIDIA blocks "
                         "(`if cu_dart.found()`, `if get_option('cudnn')`) list are the NVIDIA build's")
        if self.bazel_amd:
            lines.append("# the Bazel files name an AMD path (`if_rocm`, `@local_config_rocm`): sources only "
                         "`if_cuda([...])`-style macros and CUDA `select()` branches list are the NVIDIA build's")
        if self.ci_amd and not self.known:
            lines.append(f"# a CI job configures the project for AMD ({rel(self.ci_amd)}): build files with no "
                         "HIP, ROCm or AMD word are the NVIDIA build's")
        if self.hipify_step:
            lines.append("# a build file runs hipify: the AMD build compiles hipified copies (`__CUDACC__` reads `__HIPCC__`)")
        elif self.known and not self.torch_extension:
            lines.append("# hip-clang compiles the CUDA sources as they are: `#ifdef __CUDACC__` branches are NVIDIA code")
        if not self.known:
            lines.append("# no AMD build found (no HIP CMake target, hipcc or `-x hip` rule): files are treated as before")
            if self.nvidia_switches:
                lines.append("# the build files name both backends' switches: the CUDA one is off in an AMD build")
                lines.append(f"{switches[0]} = [\n" + "".join(f"  {v!r},\n" for v in switches[1]) + "]")
            if self.gpu_defines:
                lines.append("gpu-build-definitions = [\n" + "".join(f"  {v!r},\n" for v in sorted(self.gpu_defines)) + "]")
            if self.autotools_nvidia_dirs or self.nvidia_subdirs:
                lines.append("nvidia-only-directories = [\n" + "".join(
                    f"  {v!r},\n" for v in sorted(map(rel, self.autotools_nvidia_dirs | self.nvidia_subdirs))) + "]")
            if self.backend_choice:
                lines.append("# a CMake variable picks the backend by value (`STREQUAL CUDA` / `STREQUAL HIP`): what only "
                             "its CUDA value adds is the NVIDIA build's")
            if self.autotools_nvidia_files or self.python_nvidia_files or self.nvidia_sources:
                lines.append("nvidia-only-sources = [\n" + "".join(f"  {v!r},\n" for v in sorted(
                    map(rel, self.autotools_nvidia_files | self.python_nvidia_files | self.nvidia_sources))) + "]")
            if self.nvidia_defines:
                lines.append("nvidia-only-definitions = [\n" + "".join(
                    f"  {v!r},\n" for v in sorted(self.nvidia_defines)) + "]")
            if self.python_nvidia_dirs:
                lines.append("nvidia-only-directories-python-build = [\n" + "".join(
                    f"  {v!r},\n" for v in sorted(map(rel, self.python_nvidia_dirs))) + "]")
            if self.vendored_dirs:
                lines.append(f"{vendored[0]} = [\n" + "".join(f"  {v!r},\n" for v in vendored[1]) + "]")
            if off[1]:
                lines.append(f"{off[0]} = [\n" + "".join(f"  {v!r},\n" for v in off[1]) + "]")
            return "\n".join(lines) + "\n"
        sections = [("amd-build-files", sorted(map(rel, self.amd_build_files))),
                    ("compiled-as-hip", sorted(map(rel, self.amd_sources))),
                    ("headers-beside-them", sorted(rel(d) + "/*.h, *.cuh, ..." for d in self.amd_dirs)),
                    ("amd-definitions", sorted(self.amd_defines)),
                    ("nvidia-only-definitions", sorted(self.nvidia_defines)),
                    *([("definitions-of-both-builds", sorted(self.both_defines))] if self.both_defines else []),
                    *([("gpu-build-definitions", sorted(self.gpu_defines))] if self.gpu_defines else []),
                    ("backend-values", [f"{n}: AMD {a}, NVIDIA {v}" for n, (a, v) in sorted(self.valued.items())]),
                    ("nvidia-only-build-files", sorted(map(rel, self.nvidia_build_files))),
                    ("nvidia-only-sources", sorted(map(rel, self.nvidia_sources))),
                    ("nvidia-only-directories", sorted(map(rel, self.nvidia_subdirs | self.autotools_nvidia_dirs))),
                    ("nvidia-only-blocks", [f"{rel(p)}:{_lines(p, s, e)}"
                                            for p, spans in sorted(self.nvidia_ranges.items()) for s, e in spans]),
                    ("unbuilt-directories", sorted(map(rel, self.unreached_dirs))),
                    switches] + ([vendored] if vendored[1] else []) + ([off] if off[1] else [])
        for name, values in sections:
            lines.append(f"{name} = [" + ("" if not values else "\n" + "".join(f"  {v!r},\n" for v in values)) + "]")
        return "\n".join(lines) + "\n"


def _lines(path: str, start: int, end: int) -> str:
    """`first-last` lines of bytes [start, end) of a file, blank edges left out."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(end)
    except OSError:
        return "?"
    body = data[start:end]
    start += len(body) - len(body.lstrip())
    end = start + len(data[start:end].rstrip())
    first, last = data[:start].count(b"\n") + 1, data[:max(start, end - 1)].count(b"\n") + 1
    return f"{first}" if first == last else f"{first}-{last}"


# Finding the repository and its build files -----------------------------------------------------

_BY_ROOT: dict[str, AmdBuild] = {}
_ROOT_OF_DIR: dict[str, str] = {}


def root_of(path: str) -> str:
    """The repository a file belongs to: the nearest directory with `.git` or a PROJECT_MARKER file;
    without one, the highest directory that starts a project (`configure.ac`, a CMakeLists.txt with
    `project()`), else the highest directory up to NO_GIT_LEVELS above the file that holds a build file
    (else the file's own)."""
    directory = os.path.dirname(os.path.abspath(path)) if not os.path.isdir(path) else os.path.abspath(path)
    known = _ROOT_OF_DIR.get(directory)
    if known is not None:
        return known
    current, found = directory, None
    for _ in range(GIT_LEVELS):
        if os.path.exists(os.path.join(current, ".git")) or os.path.exists(os.path.join(current, PROJECT_MARKER)):
            found = current
            break
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    if found is not None and not os.path.exists(os.path.join(found, PROJECT_MARKER)):
        found = _outer_repository(found)
    if found is None:
        # No `.git`: the highest directory (up to GIT_LEVELS) that starts a project (configure.ac, a
        # CMakeLists.txt with project()); a file 5 levels below it still belongs to it.
        current = directory
        for _ in range(GIT_LEVELS):
            if _starts_project(current):
                found = current
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
    if found is None:
        found = directory
        current = directory
        for _ in range(NO_GIT_LEVELS + 1):
            if _has_build_file(current):
                found = current
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
    _ROOT_OF_DIR[directory] = found
    return found


def _outer_repository(found: str) -> str:
    """A git submodule vendored under `third_party/` (or `external/`, ...) of an outer repository belongs
    to the outer one: its files are that project's vendored code (FileFacts.vendored), not a project
    of their own."""
    current = os.path.dirname(found)
    for _ in range(GIT_LEVELS):
        if os.path.exists(os.path.join(current, ".git")) or os.path.exists(os.path.join(current, PROJECT_MARKER)):
            between = os.path.relpath(found, current).split(os.sep)[:-1]
            return current if any(VENDOR_DIR.match(part) for part in between) else found
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return found


def _starts_vendored_project(directory: str) -> bool:
    """Below a vendor directory: a directory with its own project file, `.git` or licence."""
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    return ".git" in names or any(_LICENSE_FILE.match(n) for n in names) or _starts_project(directory)


def _starts_project(directory: str) -> bool:
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    if not PROJECT_FILES.isdisjoint(names):
        return True
    if "CMakeLists.txt" in names:
        try:
            with open(os.path.join(directory, "CMakeLists.txt"), "rb") as fh:
                return _CMAKE_PROJECT.search(fh.read(MAX_BUILD_BYTES)) is not None
        except OSError:
            return False
    return False


def _has_build_file(directory: str) -> bool:
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    return "CMakeLists.txt" in names or any(map(is_makefile_name, names))


def for_path(path: str) -> AmdBuild:
    root = root_of(path)
    build = _BY_ROOT.get(root)
    if build is None:
        build = _BY_ROOT[root] = read(root)
    return build


def project_include(path: str, include: str) -> str | None:
    """The project header an angle-bracket include names (`<LightGBM/cuda/cuda_rocm_interop.h>`), found
    in an include directory the project's build gives (where an AMD build was read), else, in a project
    that builds for AMD, the one file of the project whose path ends so; None otherwise."""
    try:
        build = for_path(path)
    except (OSError, RecursionError, ValueError):
        return None
    if build.known and build.include_dirs:
        found = _in_include_dirs(tuple(build.include_dirs), include)
        if found is not None:
            return found
    if build.known or build.nvidia_switches or build.python_amd:
        # Include directories set through the project's own CMake functions (Kokkos) are not read:
        # a header the include names by a path that ends only one file of the project is that file.
        return _unique_in_project(build.root, include)
    return None


_PROJECT_FILES: dict[str, dict] = {}
_SKIPPED_DIRS = frozenset({"node_modules", "_deps", "__pycache__", "build", "builds"})
MAX_INDEXED_FILES = 200_000


def _unique_in_project(root: str, include: str) -> str | None:
    index = _PROJECT_FILES.get(root)
    if index is None:
        index = _PROJECT_FILES[root] = {}
        count = 0
        for here, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS]
            for name in files:
                if os.path.splitext(name)[1].lower() in HEADERS:
                    index.setdefault(name, []).append(os.path.join(here, name))
            count += len(files)
            if count > MAX_INDEXED_FILES:
                break
    include = include.replace("\\", "/")
    tail = "/" + include.lstrip("/")
    found = [p for p in index.get(os.path.basename(include), ()) if p.replace(os.sep, "/").endswith(tail)]
    return found[0] if len(found) == 1 else None


_INCLUDE_CACHE: dict = {}


def _in_include_dirs(dirs: tuple, include: str) -> str | None:
    key = (dirs, include)
    if key not in _INCLUDE_CACHE:
        if len(_INCLUDE_CACHE) > 65536:
            _INCLUDE_CACHE.clear()
        _INCLUDE_CACHE[key] = next((os.path.join(d, include) for d in dirs
                                    if os.path.isfile(os.path.join(d, include))), None)
    return _INCLUDE_CACHE[key]


def facts_for(path: str | None) -> FileFacts:
    """What the AMD build of the file's repository says about it (NOTHING when unknown)."""
    if not path:
        return NOTHING
    try:
        return for_path(path).facts_for(path)
    except (OSError, RecursionError, ValueError):
        return NOTHING


def _build_files(root: str, make_includes: list | None = None,
                 vendored: set | None = None, scripts: list | None = None) -> tuple[list[str], list[str]]:
    """CMake files and Makefiles under root; `make_includes` collects make fragments (`Make.defs`, `*.mak`).
    Vendored projects (VENDOR_DIR) are left out and collected in `vendored`."""
    cmake, make = [], []
    dirs = 0
    below_vendor = {root: False}
    for directory, subdirs, files in os.walk(root):
        dirs += 1
        if dirs > MAX_DIRS or len(cmake) + len(make) > MAX_BUILD_FILES:
            break
        if "CMakeCache.txt" in files:  # a CMake build directory: generated, never the project's own build
            subdirs[:] = []
            continue
        subdirs[:] = sorted(d for d in subdirs if not d.startswith(".") and d.lower() not in SKIP_DIRS
                            and not d.lower().startswith("cmake-build")
                            and not os.path.exists(os.path.join(directory, d, PROJECT_MARKER)))
        inside = below_vendor.pop(directory, False)
        if inside:
            kept = []
            for d in subdirs:
                if _starts_vendored_project(os.path.join(directory, d)):
                    if vendored is not None:
                        vendored.add(os.path.join(directory, d))
                else:
                    kept.append(d)
            subdirs[:] = kept
        for d in subdirs:
            below_vendor[os.path.join(directory, d)] = inside or VENDOR_DIR.match(d) is not None
        for name in sorted(files):
            full = os.path.join(directory, name)
            if name == "CMakeLists.txt" or name.endswith(".cmake"):
                cmake.append(full)
            elif is_makefile_name(name) or name.endswith(".mk"):
                make.append(full)
            elif make_includes is not None and _SWITCH_EXTRA_FILES.search(name):
                make_includes.append(full)
            elif scripts is not None and _BUILD_SCRIPT.search(name) and len(scripts) < MAX_BUILD_FILES:
                scripts.append(full)
    return cmake, make


# Where a build names the AMD architectures it compiles for: CMake's and the project's target variables
# (`CMAKE_HIP_ARCHITECTURES`, `AMDGPU_TARGETS`, `GPU_TARGETS`, Cycles' `CYCLES_HIP_BINARIES_ARCH`, a
# Makefile's `HIP_ARCH ?= gfx90a`) and clang's option (`--offload-arch=gfx942`). A gfx name elsewhere
# (`if(arch MATCHES gfx90a)` picking a flag) is no target list.
_TARGET_VARIABLE = lazy_re(r"(?i)^\w*(?:HIP|AMD|ROCM|GPU|OFFLOAD)\w*(?:ARCH|ARCHS|ARCHITECTURES|TARGETS?)$")
_CMAKE_SET = lazy_re(rb"(?im)^[ \t]*set\s*\(\s*(\w+)([^)]*)\)")
_MAKE_TARGET_ASSIGN = lazy_re(rb"(?m)^[ \t]*(?:export[ \t]+|override[ \t]+)?(\w+)[ \t]*[:?+]?=([^\n]*)")
_OFFLOAD_ARCH = lazy_re(rb"--(?:offload-arch|amdgpu-target)[= ]\s*([\w:+\-,;]+)")
_GFX = lazy_re(r"\bgfx[0-9a-f]{3,4}\b")


def declared_targets(root: str) -> tuple[tuple[str, ...], str]:
    """The AMD architectures the project's build files list (in hiplint's order of KNOWN_TARGETS), and
    the first `file:line` that lists one; ((), "") where none does. Names hiplint does not know are
    left out (a typo in a build file is not hiplint's to report)."""
    from hiplint.config import KNOWN_TARGETS

    cmake, make = _build_files(root)
    found: set[str] = set()
    where = ""
    for path in cmake + make:
        data = _read_bytes(path)
        if not data or b"gfx" not in data:
            continue
        data = _BUILD_COMMENT.sub(b"", data)
        pattern = _CMAKE_SET if path in cmake else _MAKE_TARGET_ASSIGN
        # `set(X_HIP_ARCH "" CACHE STRING "e.g. gfx906,gfx908")`: the value is what comes before CACHE
        spans = [(m.start(2), re.split(rb"\bCACHE\b", m.group(2))[0]) for m in pattern.finditer(data)
                 if _TARGET_VARIABLE.match(m.group(1).decode("ascii", "replace"))]
        spans += [(m.start(1), m.group(1)) for m in _OFFLOAD_ARCH.finditer(data)]
        for start, text in sorted(spans):
            names = [n for n in _GFX.findall(text.decode("utf-8", "replace")) if n in KNOWN_TARGETS]
            if names and not where:
                line = data.count(b"\n", 0, start) + 1
                where = f"{os.path.relpath(path, root)}:{line}"
            found.update(names)
    return tuple(t for t in KNOWN_TARGETS if t in found), where


def _includes_namesake(includer: str, at: int, header: str) -> bool:
    """Does the quoted include at byte `at` of `includer` resolve (beside it, then in its parents) to a file
    other than `header`?"""
    from hiplint.headers import resolve

    data = _read_bytes(includer) or b""
    m = re.match(rb'\s*#\s*include\s*"([^"]+)"', data[at:at + 512])
    found = resolve(m.group(1).decode("utf-8", "replace"), os.path.dirname(includer)) if m else None
    return found is not None and os.path.abspath(found) != header


def _read_bytes(path: str) -> bytes | None:
    try:
        if os.path.getsize(path) > MAX_BUILD_BYTES:
            return None
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


# CMake --------------------------------------------------------------------------------------------

@dataclass
class _Command:
    name: str
    args: list  # argument texts, quotes removed
    start: int
    end: int
    scope: str | None  # "hip", "cuda" or None (both builds) by the if() blocks around it
    condition: tuple = ()  # the words of the innermost if()/elseif() around it (empty under else())


@dataclass
class _CMakeFile:
    path: str
    commands: list
    nvidia_blocks: list  # (start, end) of branch bodies for the NVIDIA build
    scope: str | None = None  # the whole file's, once known
    functions: list = field(default_factory=list)  # (name, body start, body end)


def _cmake_commands(data: bytes, context_text: bytes, project_words: frozenset = frozenset(),
                    library_switches: frozenset = frozenset(),
                    nvidia_flags: frozenset = frozenset(),
                    numbered: dict | None = None) -> tuple[list[_Command], list, list]:
    from hiplint.rules.build._cmake import _argument, _parser

    tree = _parser().parse(data)
    commands: list[_Command] = []
    blocks: list[tuple[int, int]] = []
    functions: list[tuple[str, int, int]] = []  # (name, body start, body end) of function()/macro()

    def head_args(head) -> list[str]:
        lists = [c for c in head.children if c.type == "argument_list"]
        return [_argument(a, data).text for a in (lists[0].children if lists else ()) if a.type == "argument"]

    stack = [(tree.root_node, None, ())]
    guard_end = len(data) + 1
    while stack:
        node, scope, condition = stack.pop()
        if node.type in ("function_def", "macro_def"):
            heads = [c for c in node.children if c.type in ("function_command", "macro_command")]
            bodies = [c for c in node.children if c.type == "body"]
            names = head_args(heads[0]) if heads else []
            if names and bodies:
                functions.append((names[0].lower(), bodies[0].start_byte, bodies[0].end_byte))
        if node.type == "foreach_command":
            commands.append(_Command("foreach", head_args(node), node.start_byte, node.end_byte, scope, condition))
            continue
        if node.type == "normal_command":
            ident = node.children[0] if node.children else None
            name = data[ident.start_byte:ident.end_byte].decode("utf-8", "replace").lower() if ident else ""
            args = []
            for c in node.children:
                if c.type == "argument_list":
                    args = [_argument(a, data).text for a in c.children if a.type == "argument"]
            commands.append(_Command(name, args, node.start_byte, node.end_byte, scope, condition))
            continue
        if node.type == "if_condition" and scope is None and node.parent is not None \
                and node.parent.type == "source_file" and _returns_unless_cuda(node, data, head_args, context_text,
                                                                                project_words, numbered):
            # `if(NOT CUDAToolkit_FOUND) message(...) return() endif()`: what follows in the file only a
            # build with CUDA reads (SuperBench's gpu_stream)
            guard_end = min(guard_end, node.end_byte)
        if node.type == "if_condition":
            branch_scope, previous = scope, []
            branch_condition: tuple = ()
            children = []
            for c in node.children:
                if c.type in ("if_command", "elseif_command"):
                    words = head_args(c)
                    tested = _branch_scope(words, context_text, project_words, library_switches, nvidia_flags,
                                           numbered)
                    previous.append(tested)
                    branch_scope = tested or scope
                    branch_condition = tuple(words)
                elif c.type == "else_command":
                    # else() of `if(X_USE_HIP)`: the other builds; of `if(NOT X_USE_HIP)`: the AMD one.
                    # (The else() of `if(X_USE_CUDA)` may be a CPU build as well as the AMD one: neither;
                    # so is the else() of `if(X STREQUAL CUDA) ... elseif(X STREQUAL HIP)`: HiPACE++'s FFTW.)
                    tested = "cuda" if "hip" in previous and "cuda" not in previous else None
                    branch_scope = tested or scope
                    branch_condition = ()
                elif c.type == "body":
                    if branch_scope is None and _enables_cuda_alone(data[c.start_byte:c.end_byte]) \
                            and any(names_amd(w) for w in project_words):
                        # `if(USE_VLLM) enable_language(CUDA) ... add_library(vllm_objs ...)` in a project
                        # with an AMD build (TVM): a feature the block builds with nvcc alone.
                        branch_scope = "cuda"
                    if branch_scope == "cuda" and scope != "cuda":
                        blocks.append((c.start_byte, c.end_byte))
                if c.type == "body":
                    children.append((c, branch_scope, branch_condition))
                else:
                    children.append((c, scope, condition))
            stack.extend(reversed(children))
            continue
        for c in reversed(node.children):
            stack.append((c, scope, condition))
    commands.sort(key=lambda c: c.start)
    if guard_end <= len(data):
        for c in commands:
            if c.start >= guard_end and c.scope is None:
                c.scope = "cuda"
        blocks.append((guard_end, len(data)))
    return commands, blocks, functions


def _returns_unless_cuda(node, data: bytes, head_args, context_text: bytes, project_words: frozenset,
                         numbered: dict | None) -> bool:
    """An `if(NOT <CUDA test>) ... return() endif()` with no other branch: the rest of the file is the
    NVIDIA build's (the CUDA test as _branch_scope reads one: `CUDAToolkit_FOUND` in a project with an
    AMD path, `X_USE_CUDA` with an AMD twin)."""
    heads = [c for c in node.children if c.type in ("if_command", "elseif_command", "else_command")]
    if len(heads) != 1 or heads[0].type != "if_command":
        return False
    words = head_args(heads[0])
    if len(words) < 2 or words[0].upper() != "NOT" or \
            _branch_scope(words[1:], context_text, project_words, numbered=numbered) != "cuda":
        return False
    for body in (c for c in node.children if c.type == "body"):
        for cmd in body.children:
            if cmd.type == "normal_command" and cmd.children and \
                    data[cmd.children[0].start_byte:cmd.children[0].end_byte].lower() == b"return":
                return True
    return False


_ENABLES_CUDA = lazy_re(rb"(?i)\benable_language\s*\(\s*CUDA\b")
_NAMES_AMD = lazy_re(rb"(?i)\b(hip|rocm|amdgpu|hipcc)\b|\bHIP_|_HIP\b|ROCM_|_ROCM\b")
# CMake's own commands: a project command whose first argument is GLOB is a `file(GLOB)` wrapper.
_KNOWN_COMMANDS = frozenset({"set", "list", "string", "message", "add_library", "add_executable", "target_sources",
                             "install", "foreach", "option", "if", "elseif", "include", "find_package"})


def _enables_cuda_alone(body: bytes) -> bool:
    """A block that enables the CUDA language and names nothing of AMD's."""
    return _ENABLES_CUDA.search(body) is not None and _NAMES_AMD.search(body) is None


# Packages found only where NVIDIA's toolkit is: the toolkit itself, and NVIDIA-only libraries an optional
# feature is built on (Horovod's `if(NVTX_FOUND)` / `add_definitions(-DHAVE_NVTX=1)`).
_FOUND_CUDA = lazy_re(r"(CUDA|CUDATOOLKIT)_FOUND", re.I)
_FOUND_NVIDIA_LIBRARY = lazy_re(r"(NVTX3?|CUPTI|NVML|CUDNN|NCCL|CUTLASS|TENSORRT|NVSHMEM|CUSPARSELT)_FOUND", re.I)
_FOUND_AMD = lazy_re(r"(?:HIP|ROC)\w*_FOUND")  # HIP_FOUND, hipblas_FOUND, rocsolver_FOUND (upper-cased)
_HIP_PLATFORM_VARIABLES = frozenset({"HIP_PLATFORM", "CMAKE_HIP_PLATFORM", "HIP_COMPILER_PLATFORM"})


def negated_conjunct(upper: list[str], i: int) -> bool:
    return i > 0 and upper[i - 1] == "NOT"


def _branch_scope(words: list[str], context_text: bytes, project_words: frozenset = frozenset(),
                  library_switches: frozenset = frozenset(), nvidia_flags: frozenset = frozenset(),
                  numbered: dict | None = None) -> str | None:
    """"hip" for `if(X_USE_HIP)`, `if(GPU_RUNTIME STREQUAL "HIP")`; "cuda" for `if(NOT X_USE_HIP)`,
    `if(X_USE_CUDA)` where the project names X_USE_HIP (or _ROCM) too, `if(GPU STREQUAL "CUDA")`,
    `if(X_BACKENDS MATCHES "CUDA")`.
    `if(NOT X_USE_CUDA)` is neither: a CPU-only build takes it too."""
    words = [w.strip('"') for w in words]
    words = [w[2:-1] if w.startswith("${") and w.endswith("}") else w for w in words]
    upper = [w.upper() for w in words]
    if not words:
        return None
    if "OR" in upper:
        # `if(X_USE_CUDA OR X_HIP_TARGET STREQUAL "CUDA")`, `if(WITH_DEVICE_CUDA OR WITH_DEVICE_OPTIX)`: every
        # alternative the NVIDIA build's. Mixed with AND or NOT, the grouping is not read.
        if "AND" in upper or "NOT" in upper:
            return None
        alternatives, current = [], []
        for w in words + ["OR"]:
            if w.upper() == "OR":
                alternatives.append(current)
                current = []
            else:
                current.append(w)
        if any(not a for a in alternatives):
            return None
        scopes = {_branch_scope(a, context_text, project_words, library_switches, nvidia_flags, numbered)
                  for a in alternatives}
        return "cuda" if scopes == {"cuda"} else None
    for i in range(len(upper) - 1):
        # `if(TARGET CUDA::nvToolsExt AND REALM_ENABLE_CUDA)`: the CUDA toolkit's imported target exists
        # only where CUDA is found.
        if upper[i] == "TARGET" and upper[i + 1].startswith("CUDA::") and (i == 0 or upper[i - 1] == "AND") \
                and not negated_conjunct(upper, i):
            return "cuda"
    for i in range(len(upper) - 2):
        # `if(ENABLE_HIP AND HIP_PLATFORM STREQUAL "nvcc")`: HIP over nvcc is an NVIDIA build, whatever
        # else the condition says; `HIP_PLATFORM STREQUAL "amd"` (or hcc) is the AMD one.
        if upper[i] in _HIP_PLATFORM_VARIABLES and upper[i + 1] in ("STREQUAL", "MATCHES") \
                and (i == 0 or upper[i - 1] == "AND") and (i + 3 == len(upper) or upper[i + 3] == "AND"):
            if upper[i + 2] in ("NVCC", "NVIDIA"):
                return "cuda"
            if upper[i + 2] in ("AMD", "HCC") and not negated_conjunct(upper, i):
                return "hip"
    if len(parts_only := [w for w in upper if w != "AND"]) >= 1 and any(
            w in nvidia_flags for w in parts_only) and all(w in nvidia_flags or _SWITCH.fullmatch(w) for w in parts_only) \
            and "NOT" not in upper:
        # `if(CUSOLVER_AVAILABLE)`: a variable set true only in NVIDIA blocks (hiplint.amdbuild._nvidia_flags)
        return "cuda"
    if numbered and len(words) == 3 and upper[1] in ("EQUAL", "STREQUAL") and upper[0] in numbered \
            and words[2].isdigit():
        # `if(${VKFFT_BACKEND} EQUAL 1)`: a backend chosen by number (numbered_backends)
        amd, nvidia = numbered[upper[0]]
        return "hip" if int(words[2]) == amd else "cuda" if int(words[2]) in nvidia else None
    if len(words) == 3 and upper[1] in ("STREQUAL", "MATCHES"):
        # `if(X_BACKENDS MATCHES "CUDA")`: a backend list holding CUDA (the HIP one is tested beside it)
        value = upper[2]
        if value in ("HIP", "ROCM", "AMD", "HCC"):
            return "hip"
        if value in ("CUDA", "NVIDIA", "NVCC"):
            return "cuda"
        return None
    if "AND" in upper and not any(w in ("(", ")") for w in words) and any(names_amd(w) for w in project_words):
        # `if(CUDAToolkit_FOUND AND NOT CUDAToolkit_VERSION VERSION_LESS 11.8)`: true only where a CUDA
        # toolkit is found, whatever the other conjuncts test (SuperBench's cublaslt_gemm)
        conjuncts, current = [], []
        for w in upper + ["AND"]:
            if w == "AND":
                conjuncts.append(current)
                current = []
            else:
                current.append(w)
        if any(len(c) == 1 and _FOUND_CUDA.fullmatch(c[0]) for c in conjuncts):
            return "cuda"
    if any(u in _NOT_SWITCH_TESTS for u in upper) or any(not _SWITCH.fullmatch(w) for w in words):
        # `if(NOT DEFINED CMAKE_HIP_STANDARD)`, `elseif(DEFINED ENV{ROCM_PATH})`, `if(EXISTS /opt/rocm)`:
        # set-up of a toolchain, not a choice between the builds.
        return None
    negated = upper[0] == "NOT"
    rest = words[1:] if negated else words
    parts = [w for w in rest if w.upper() != "AND"]
    if not parts or (negated and len(parts) > 1):
        return None
    if len(parts) == 1 and _FOUND_CUDA.fullmatch(parts[0].upper()) and not names_amd(parts[0]) \
            and any(_FOUND_AMD.fullmatch(w) or names_amd(w) for w in project_words):
        # `if(CUDAToolkit_FOUND)` beside `if(HIP_FOUND)`: the backend the build found (SLATE's `auto`); or
        # in a project with an AMD switch (`TRACCC_BUILD_HIP`): what only a CUDA toolkit brings (traccc's
        # NVTX ranges) is missing where ROCm alone is installed
        return None if negated else "cuda"
    if len(parts) == 1 and parts[0].upper() in ("HIP_FOUND", "ROCM_FOUND"):
        # `find_package(hip QUIET)` / `if(hip_FOUND)`: the HIP runtime found, the build goes the AMD way
        # (SuperBench's micro-benchmarks: `if(CUDAToolkit_FOUND) ... else() ... if(hip_FOUND)`)
        return "cuda" if negated else "hip"
    if len(parts) == 1 and _FOUND_NVIDIA_LIBRARY.fullmatch(parts[0].upper()) and not negated \
            and any(names_amd(w) for w in project_words):
        # `if(NVTX_FOUND)` / `add_definitions(-DHAVE_NVTX=1)` in a project with an AMD build (Horovod's
        # HOROVOD_GPU=ROCM): an optional feature on an NVIDIA-only library, found only where NVIDIA's is.
        return "cuda"
    if not _is_build_switch(parts[0]):
        return None  # `if(CMAKE_HIP_COMPILER) ... else() message(FATAL_ERROR ...)`: a check, not a choice
    if len(parts) == 1 and not negated and _other_vendor_switch(parts[0], context_text, project_words):
        # `if(X_USE_SYCL)` beside `X_USE_ROCM`: another vendor's build, off wherever the AMD one is on
        # (ktransformers' backends are exclusive); for AMD it is as foreign as the NVIDIA build's.
        return "cuda"
    if names_amd(parts[0]) and len(parts) <= 2:
        return "cuda" if negated else "hip"
    if len(parts) == 1 and names_cuda(parts[0]) and _has_amd_twin(parts[0], context_text, project_words):
        return None if negated else "cuda"  # `if(NOT X_USE_CUDA)`: a CPU build, or the AMD one
    if not negated and "NOT" not in upper and any(
            names_cuda(p) and _is_build_switch(p) and _has_amd_twin(p, context_text, project_words) for p in parts):
        return "cuda"  # `if(X_USE_CUDA AND TORCH_HAS_CUDA)`: true only where the NVIDIA build's switch is
    if len(parts) == 1 and parts[0].upper() in library_switches:
        return None if negated else "cuda"  # `if(BUILD_X_CUSPARSE)`: a feature the project keeps to NVIDIA
    return None


_KEYWORD = lazy_re(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # a project function's keyword argument: `CUDA_SPECIFIC_SRCS`
_NOT_SWITCH_TESTS = frozenset({"DEFINED", "EXISTS", "IS_DIRECTORY", "IS_ABSOLUTE", "COMMAND", "POLICY", "TARGET",
                               "TEST", "MATCHES", "VERSION_LESS", "VERSION_GREATER", "VERSION_EQUAL",
                               "VERSION_GREATER_EQUAL", "VERSION_LESS_EQUAL", "IN_LIST"})
_SWITCH = lazy_re(r"[A-Za-z_][A-Za-z0-9_]*")
_SWITCH_WORDS = frozenset({"USE", "USING", "GPU", "ENABLE", "ENABLED", "WITH", "BUILD", "BACKEND", "HAVE", "HAS", "COMPILING"})
_BACKEND_WORDS = frozenset({"HIP", "ROCM", "CUDA"})
_NOT_A_SWITCH = frozenset({"CMAKE", "FIND", "ENV"})


def _is_build_switch(name: str) -> bool:
    """`X_USE_HIP`, `GINKGO_BUILD_CUDA`, `WITH_ROCM`, `USE_ROCM`, `GKO_COMPILING_HIP`, and a project
    prefix with the backend last (`AMReX_CUDA`, `AMReX_HIP`): an option choosing a build.
    (`CMAKE_CUDA`... and `HIP_PATH`, `CUDA_ARCH` are not.)"""
    words = _words(name)
    if not words.isdisjoint(_NOT_A_SWITCH):
        return False
    parts = [w for w in _WORD_SPLIT.split(name.upper()) if w]
    return not words.isdisjoint(_SWITCH_WORDS) or words <= _BACKEND_WORDS or (
        len(parts) == 2 and parts[1] in _BACKEND_WORDS and parts[0] not in _BACKEND_WORDS)


def _twins(switch: str) -> list[str]:
    """`X_USE_CUDA` -> [`X_USE_HIP`, `X_USE_ROCM`]; `AMReX_CUDA` -> [`AMReX_HIP`, ...]; `GMX_USE_NVTX` ->
    [`GMX_USE_ROCTX`]: the same name with one NVIDIA word replaced by its AMD counterpart, case kept."""
    parts = switch.split("_")
    out = []
    for i, part in enumerate(parts):
        # `TI_WITH_CUDA` beside `TI_WITH_AMDGPU` (Taichi's LLVM back ends): AMDGPU names the AMD build too.
        for amd in AMD_LIBRARY_WORDS.get(part.upper(), ()) + (("AMDGPU",) if part.upper() in ("CUDA", "NVGPU") else ()):
            spelled = amd if part.isupper() else amd.lower() if part.islower() else amd.capitalize()
            out.append("_".join(parts[:i] + [spelled] + parts[i + 1:]))
        vendor_lib = _VENDOR_LIB.match(part.upper())
        if vendor_lib is not None and vendor_lib.group(1) == "CUDA":
            for amd in ("HIP", "ROCM"):
                spelled = amd if part.isupper() else amd.lower() if part.islower() else amd.capitalize()
                out.append("_".join(parts[:i] + [spelled + part[4:]] + parts[i + 1:]))
        library = _library_prefix(part)
        if library is not None:
            # `KRS_ENABLE_NVSHMEMSPACE` -> `KRS_ENABLE_ROCSHMEMSPACE`: a library word with more after it
            for amd in AMD_LIBRARY_WORDS[library]:
                spelled = amd if part.isupper() else amd.lower() if part.islower() else amd.capitalize()
                out.append("_".join(parts[:i] + [spelled + part[len(library):]] + parts[i + 1:]))
    return out


# Other GPU vendors' build words: a project that names a switch per vendor builds one at a time.
# Other accelerators' builds (Intel, Moore Threads, MetaX, Huawei, Apple; Hygon's DCU toolkit, whose CUDA-named
# libraries a `USE_HYGON` block links; Cambricon, Iluvatar CoreX): off wherever the AMD switch is on.
OTHER_VENDOR_WORDS = frozenset({"SYCL", "DPCPP", "ONEAPI", "XPU", "MUSA", "MACA", "CANN", "NPU", "METAL", "MPS",
                                "HYGON", "DCU", "MLU", "COREX"})


def _other_vendor_switch(switch: str, text: bytes, project_words: frozenset = frozenset()) -> bool:
    """`X_USE_SYCL` (or `_MUSA`, ...) whose AMD twin (`X_USE_ROCM`, `X_USE_HIP`) the project names."""
    parts = switch.split("_")
    for i, part in enumerate(parts):
        if part.upper() not in OTHER_VENDOR_WORDS:
            continue
        for amd in ("HIP", "ROCM", "AMD", "AMDGPU"):
            spelled = amd if part.isupper() else amd.lower() if part.islower() else amd.capitalize()
            twin = "_".join(parts[:i] + [spelled] + parts[i + 1:])
            if twin.upper() in project_words or re.search(
                    rb"(?i)(?<![\w])" + re.escape(twin.encode()) + rb"(?![\w])", text):
                return True
    return False


def _library_prefix(part: str) -> str | None:
    """The twinned NVIDIA library word a name part starts with and goes on after (`NVSHMEMSPACE`), or None.
    Short words (CUB, CUDA) are left out: too many names start with them."""
    upper = part.upper()
    for library in _TWINNED_LIBRARIES:
        if len(library) >= 5 and upper.startswith(library) and len(upper) > len(library):
            return library
    return None


def _has_amd_twin(switch: str, text: bytes, project_words: frozenset = frozenset()) -> bool:
    """The switch's AMD twin is named in `text` (this build file and those above it) or anywhere in the
    project's build files (`project_words`, upper-cased)."""
    for twin in _twins(switch):
        if twin.upper() in project_words:
            return True
        if re.search(rb"(?i)(?<![\w])" + re.escape(twin.encode()) + rb"(?![\w])", text):
            return True
    return False


_BUILD_WORD = lazy_re(r"(?<![\w$])(?:-D)?([A-Za-z_][A-Za-z0-9_]*)")
# Autotools (`Makefile.am`, `configure.ac`, `config/m4/rocm.m4`) too: `AM_CONDITIONAL([HAVE_CUDA], ...)` beside
# `if HAVE_ROCM` names a switch per backend, as a CMake option would.
# Configured headers (`config.hpp.in` with `#cmakedefine AXOM_USE_CUDA` beside `AXOM_USE_HIP`) name them too.
# Bazel too (`BUILD`, `*.bzl`): JAX's `defines = ["JAX_GPU_HIP=1"]` in rocm/BUILD beside `JAX_GPU_CUDA=1`.
_SWITCH_EXTRA_FILES = lazy_re(r"\.(mak|mk|defs|rules|am|m4|bzl)$|^Make\.|^GNUmakefile|^configure\.(ac|in)$|"
                                 r"^BUILD(\.bazel)?$|\.(h|hh|hpp|hxx)\.(in|cmake|cmakein)$|\.in\.(h|hh|hpp|hxx)$", re.I)


def _switch_words(paths: list[str]) -> frozenset:
    """Every identifier of the project's build files (CMake, Makefiles and make includes such as
    `Make.defs`, `*.mak`), upper-cased: where a project names its backend switches."""
    words: set[str] = set()
    for path in paths:
        data = _read_bytes(path)
        if data is None:
            continue
        words.update(m.group(1).upper() for m in _BUILD_WORD.finditer(data.decode("utf-8", "replace")))
    return frozenset(words)


_PY_BUILD_FILES = ("setup.py", "pyproject.toml", "setup.cfg")
_PY_BUILD_DIRS = ("install", "setup", "build_tools", "tools/setup_helpers")
_TORCH_EXTENSION = lazy_re(rb"\bCUDAExtension\b|\bBuildExtension\b")
_PY_AMD = lazy_re(rb"\bROCM_HOME\b|\bIS_HIP_EXTENSION\b|\bROCM_PATH\b|\bhipcc\b|\b[A-Za-z_]*USE_HIP\b|\buse_hip\b|torch\.version\.hip")
# Also an install that picks its ROCm variant, in code (not a comment): a platform compared with "rocm", or
# AMD's tools run as a probe (Liger-Kernel's `get_platform()` runs `rocm-smi` and installs the ROCm extras).
_PY_AMD_VARIANT = lazy_re(rb"==\s*[\"']rocm[\"']|[\"'](?:rocm-smi|amd-smi|rocminfo)[\"']")
_PY_COMMENT = lazy_re(rb"(?m)(?:^|(?<=\s))#[^\n]*")


def python_builds_for_amd(root: str) -> bool:
    """A Python build that also builds for ROCm: the root's `setup.py` / `pyproject.toml` / `setup.cfg`,
    or the build scripts under `install/`, `setup/`, ... name hipcc, ROCM_HOME, a `*USE_HIP` switch,
    `torch.version.hip` or PyTorch's `IS_HIP_EXTENSION` (CuPy's `CUPY_INSTALL_USE_HIP`; a PyTorch extension built through hipify),
    or pick a ROCm variant (`platform == "rocm"`, a `rocm-smi` / `amd-smi` / `rocminfo` probe)."""
    for path in _python_build_paths(root):
        data = _read_bytes(path)
        if data and (_PY_AMD.search(data) or _PY_AMD_VARIANT.search(_PY_COMMENT.sub(b"", data))):
            return True
    return False


# A Python build that needs nvcc itself: it runs `nvcc -V` through CUDA_HOME, or passes nvcc's
# `-gencode` (flash-attention's `csrc/layer_norm/setup.py`). On ROCm, PyTorch's CUDA_HOME is None.
_NEEDS_NVCC = lazy_re(rb"get_cuda_bare_metal_version|[\"']-gencode[\"']|/bin/nvcc\b|[\"']nvcc[\"'],\s*[\"']-V[\"']")
_NAMES_ROCM = lazy_re(rb"(?i)\b(?:hip\w*|rocm\w*|amdgpu)\b|IS_HIP_EXTENSION|torch\.version\.hip")
MAX_SUBPACKAGE_FILES = 2000


# `project(X LANGUAGES CXX CUDA)` or `enable_language(CUDA)`: a CMake build that compiles CUDA.
_CMAKE_CUDA_PROJECT = lazy_re(rb"(?i)\bproject\s*\([^)]*\bCUDA\b[^)]*\)|\benable_language\s*\(\s*CUDA\b")
_CMAKE_COMMENT = lazy_re(rb"#[^\n]*")


def _cmake_modules(directory: str) -> list[str]:
    try:
        return [os.path.join(directory, n) for n in sorted(os.listdir(directory))[:50] if n.endswith(".cmake")]
    except OSError:
        return []


def nvcc_only_subpackages(root: str, vendored: set) -> tuple[set[str], set[str]]:
    """Nested Python packages (a `setup.py` or `pyproject.toml` below the root, outside vendored projects)
    whose build needs nvcc, or whose own CMake build compiles CUDA, and names nothing of ROCm's: their
    directories are NVIDIA-only extensions of a project whose own build goes to ROCm.
    Returns (their C-family sources, their directories)."""
    files, dirs = set(), set()
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith(".") and d.lower() not in SKIP_DIRS
                            and os.path.join(directory, d) not in vendored)
        if directory == root or ("setup.py" not in names and "pyproject.toml" not in names):
            continue
        data = b"".join(_read_bytes(os.path.join(directory, n)) or b"" for n in ("setup.py", "pyproject.toml")
                        if n in names)
        # A CMake build of the subpackage's own counts too (Liger-Kernel's `liger_cute_kernels/`:
        # `project(... LANGUAGES CXX CUDA)`, sm_90a/sm_100a only): its CMake files must name no ROCm either.
        cmake = b""
        if "CMakeLists.txt" in names:
            cmake = _read_bytes(os.path.join(directory, "CMakeLists.txt")) or b""
            for extra in _cmake_modules(os.path.join(directory, "cmake")):
                cmake += _read_bytes(extra) or b""
        if not (_NEEDS_NVCC.search(data) or _CMAKE_CUDA_PROJECT.search(cmake)) or _NAMES_ROCM.search(data) \
                or _NAMES_ROCM.search(_CMAKE_COMMENT.sub(b"", cmake)):
            continue
        dirs.add(directory)
        count = 0
        for here, below, inner in os.walk(directory):
            below[:] = [d for d in below if not d.startswith(".")]
            for name in inner:
                if os.path.splitext(name)[1].lower() in C_FAMILY:
                    files.add(os.path.join(here, name))
                    count += 1
            if count > MAX_SUBPACKAGE_FILES:
                break
    return files, dirs


def _python_build_paths(root: str) -> list[str]:
    paths = [os.path.join(root, n) for n in _PY_BUILD_FILES]
    for d in _PY_BUILD_DIRS:
        top = os.path.join(root, d)
        if os.path.isdir(top):
            for directory, subdirs, files in os.walk(top):
                subdirs[:] = [x for x in subdirs if not x.startswith(".")][:50]
                paths.extend(os.path.join(directory, f) for f in files if f.endswith(".py"))
                if len(paths) > 400:
                    break
    return [p for p in paths[:400] if os.path.isfile(p)]


# A Python build's switch for the ROCm build: `IS_ROCM`, `is_hip`, `USE_ROCM`, `BUILD_FOR_AMD`, `ROCM_VERSION`,
# `IS_HIP_EXTENSION` (torch.utils.cpp_extension's), or `torch.version.hip` itself.
_PY_AMD_SWITCH = lazy_re(r"(?i)^(?:is_|use_|build_(?:for_)?|with_|enable_|on_)?(?:rocm|hip|amd)(?:_build|_extension|_backend|_platform|_version)?$")
_PY_SOURCE = lazy_re(r"\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp|hip)$")


def _py_amd_polarity(test, assigned: dict | None = None, depth: int = 0) -> bool | None:
    """True when an `if` test holds only in the ROCm build (`if IS_ROCM:`), False when only in the
    CUDA build (`if not SKIP_CUDA_BUILD and not IS_ROCM:`, `if torch.version.cuda:`), None when it says
    neither. A name the build script assigns once (`assigned`: name -> value) is read through its value
    (AutoAWQ's `CUDA_VERSION = os.getenv("CUDA_VERSION") or torch.version.cuda` / `if CUDA_VERSION:`)."""
    import ast

    def again(node):
        return _py_amd_polarity(node, assigned, depth + 1) if depth < 4 else None

    if isinstance(test, ast.Name):
        if _PY_AMD_SWITCH.match(test.id):
            return True
        value = (assigned or {}).get(test.id)
        return again(value) if value is not None else None
    if isinstance(test, ast.Attribute):
        if test.attr in ("hip", "cuda") and isinstance(test.value, ast.Attribute) and test.value.attr == "version":
            return test.attr == "hip"  # torch.version.hip / torch.version.cuda (None on the other vendor's build)
        return True if _PY_AMD_SWITCH.match(test.attr) else None
    if isinstance(test, ast.Call) and test.args and isinstance(test.args[0], ast.Constant) and \
            isinstance(test.args[0].value, str) and ast.unparse(test.func) in _PY_ENV_READS:
        # `os.getenv("ROCM_VERSION")`, `os.environ.get("CUDA_VERSION")`: the toolkit the builder names
        key = test.args[0].value.upper()
        return True if _PY_AMD_SWITCH.match(key) else False if key in _PY_CUDA_ENV else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = again(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        polarities = [again(v) for v in test.values]
        sides = set(polarities) - {None}
        if len(sides) != 1:
            return None
        side = sides.pop()
        # `a and not IS_ROCM` holds only in CUDA builds; `a or IS_ROCM` does not say which.
        return side if isinstance(test.op, ast.And) else (side if None not in polarities else None)
    return None


_PY_ENV_READS = frozenset({"os.getenv", "os.environ.get", "getenv", "environ.get"})
_PY_CUDA_ENV = frozenset({"CUDA_VERSION"})


def _py_stem(path: str) -> tuple[str, str]:
    """Where a source and its hipified copy meet: the directory with `cuda` read as `hip`, and the name
    without extension and vendor words (`csrc/cuda/kernels.cu` and `csrc/hip/kernels_hip.hip`)."""
    stem = os.path.splitext(os.path.basename(path))[0].lower()
    stem = re.sub(r"(?:^|[_.-])(?:cuda|hip|rocm|nv|amd)(?=$|[_.-])", "", stem).strip("_.-") or stem
    return os.path.dirname(path).lower().replace("cuda", "hip"), stem


def python_nvidia_sources(root: str) -> tuple[set[str], set[str]]:
    """Sources a Python build that also builds for ROCm names only in its CUDA branch, and the
    directories that hold only such sources: `if not IS_ROCM: CUDAExtension(sources=[...])` beside
    `else: ... sources = ["csrc/x_ck/..."]` (flash-attention's csrc/flash_attn beside csrc/flash_attn_ck).
    String literals and `glob.glob` patterns that name C/C++/CUDA sources are read, relative to the
    build file; a source also named outside the CUDA branch is not NVIDIA-only, nor one whose name
    the ROCm branch gives a file the build makes (`csrc/kernels.hip`, hipify's output of
    `csrc/kernels.cu`). The directories are those of the NVIDIA-only sources that hold no other
    source the build names."""
    import ast
    import glob as globmod

    nvidia: set[str] = set()
    other: set[str] = set()
    generated: set = set()  # _py_stem of sources the ROCm branch (or both) names that do not exist yet
    for path in _python_build_paths(root):
        if not path.endswith(".py"):
            continue
        data = _read_bytes(path)
        if not data or not _PY_AMD.search(data):
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError, RecursionError):
            continue
        base = os.path.dirname(path)
        assigned: dict = {}
        for n in ast.walk(tree):  # the first assignment of each name, module level first
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                assigned.setdefault(n.targets[0].id, n.value)

        def names(node, branch) -> set[str]:
            found = set()
            for n in ast.walk(node):
                if isinstance(n, ast.Constant) and isinstance(n.value, str) and _PY_SOURCE.search(n.value) \
                        and len(n.value) < 300 and "\n" not in n.value:
                    pattern = os.path.normpath(os.path.join(base, n.value))
                    if not pattern.startswith(root):
                        continue
                    if any(c in n.value for c in "*?["):
                        found.update(os.path.abspath(f) for f in globmod.glob(pattern, recursive=True)[:2000])
                    elif os.path.isfile(pattern):
                        found.add(os.path.abspath(pattern))
                    elif branch != "nvidia":
                        generated.add(_py_stem(pattern))  # made at build time (hipify's `kernels.hip`)
            return found

        def visit(body, branch) -> None:  # branch: "nvidia", "amd" or None (both builds)
            for stmt in body:
                if isinstance(stmt, ast.If):
                    polarity = _py_amd_polarity(stmt.test, assigned)
                    then_branch = branch if polarity is None else ("amd" if polarity else "nvidia")
                    else_branch = branch if polarity is None else ("nvidia" if polarity else "amd")
                    (nvidia if branch == "nvidia" else other).update(names(stmt.test, branch))
                    visit(stmt.body, then_branch)
                    visit(stmt.orelse, else_branch)
                    continue
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.While,
                                     ast.With, ast.Try)):
                    # Code reached from elsewhere (a function called in either build): both builds.
                    inner = [x for f in ("body", "orelse", "finalbody") for x in getattr(stmt, f, [])]
                    inner += [x for h in getattr(stmt, "handlers", []) for x in h.body]
                    visit(inner, branch if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                   ast.ClassDef)) else None)
                    continue
                (nvidia if branch == "nvidia" else other).update(names(stmt, branch))

        visit(tree.body, None)
    only = {f for f in nvidia - other if _py_stem(f) not in generated}
    dirs = {os.path.dirname(f) for f in only} - {os.path.dirname(f) for f in other | (nvidia - only)}
    dirs = {d for d in dirs if d != root and not any(o.startswith(d + os.sep) for o in other)}
    return only, dirs


# HIP's platform macro that ROCm 6.0 removed (rules/api/removed_platform_macro.py): a project that keeps
# using it often defines it in its build (`-D__HIP_PLATFORM_HCC__`, CuPy's `define_macros`).
REMOVED_PLATFORM_NAMES = ("__HIP_PLATFORM_HCC__",)


def removed_names_defined(root: str, project_words: frozenset) -> frozenset:
    """The removed platform names the project's build files (CMake, make, autotools, Python) name:
    they have no reason to, other than to define them."""
    found = {n for n in REMOVED_PLATFORM_NAMES if n in project_words}
    if "HIPCONFIG" in project_words and "CPP_CONFIG" in project_words:
        found.add("__HIP_PLATFORM_HCC__")  # ROCm 7.2's `hipconfig --cpp_config` still prints -D__HIP_PLATFORM_HCC__=
    if len(found) < len(REMOVED_PLATFORM_NAMES):
        for path in _python_build_paths(root):
            data = _read_bytes(path) or b""
            found.update(n for n in REMOVED_PLATFORM_NAMES if n.encode() in data)
    return frozenset(found)


_AMD_WORD = lazy_re(rb"(?i)\b(hip\w*|rocm\w*|amdgpu|gfx\d+)\b")  # hipcc, ROCM_PATH, gfx90a
_PRESET = lazy_re(rb"(?im)^\s*set\s*\(\s*([A-Za-z_]\w*)\s+\"?(CUDA|NVIDIA|HIP|ROCM|AMD)\"?\s+CACHE\b")


def backend_presets(cmake_files: list[str]) -> set:
    """Initial-cache presets (`cmake -C cmake/summit.cmake`) of a project that picks its GPU backend with
    one variable: `set(AMReX_GPU_BACKEND CUDA CACHE STRING "")` in some `.cmake` files and `... HIP
    CACHE ...` in others (Quokka's per-machine host files). The project builds for AMD with the HIP
    presets; the files that pick CUDA and name nothing of AMD's are the NVIDIA machines' settings."""
    picks: dict[str, dict[str, set]] = {}
    for path in cmake_files:
        if os.path.basename(path) == "CMakeLists.txt":
            continue
        data = _read_bytes(path)
        if data is None:
            continue
        for m in _PRESET.finditer(data):
            vendor = "cuda" if m.group(2).upper() in (b"CUDA", b"NVIDIA") else "hip"
            picks.setdefault(m.group(1).decode().upper(), {}).setdefault(vendor, set()).add(path)
    out = set()
    for by_vendor in picks.values():
        if "cuda" in by_vendor and "hip" in by_vendor:
            out |= {p for p in by_vendor["cuda"] if not _picks_amd(_read_bytes(p) or b"")}
    return out


# What an initial-cache file sets for AMD: a backend value, a HIP/ROCm switch turned on, an AMD architecture,
# an AMD compiler. A test in a condition (`if(${DEV} STREQUAL "HIP" OR ...)`) sets nothing.
_SETS_AMD = lazy_re(rb"(?im)^\s*set\s*\(\s*(?:\w*(?:HIP|ROCM|AMD)\w*\s+\"?(?:ON|TRUE|YES|1)\"?|\w+\s+\"?(?:HIP|ROCM|AMD)\"?)\s+CACHE\b"
                    rb"|\bgfx[0-9a-f]{3,4}\b|\b(?:hipcc|amdclang\+\+)\b")


def _picks_amd(data: bytes) -> bool:
    return _SETS_AMD.search(re.sub(rb"#[^\n]*", b"", data)) is not None


def nvidia_switches(project_words: frozenset) -> frozenset:
    """The project's NVIDIA-build switches: a switch-like name for the CUDA build (`AMREX_USE_CUDA`,
    `GKO_COMPILING_CUDA`, `USE_CUDA`, `AMReX_CUDA`) whose AMD twin (`AMREX_USE_HIP`, ...) the project's
    build files name too. Such a project picks one backend per build (a build for AMD sets the HIP
    switch, not the CUDA one), so in its sources `#ifdef AMREX_USE_CUDA` is NVIDIA code wherever it
    sits, not only in files that name the twin themselves (hiplint.preproc). Upper-cased."""
    from hiplint.preproc import is_cuda_build_macro

    out = set()
    for word in project_words:
        parts = [w for w in word.split("_") if w]
        if len(parts) >= 2 and _is_build_switch(word) and is_cuda_build_macro(word) and \
                any(t.upper() in project_words for t in _twins(word)):
            out.add(word)
        elif len(parts) >= 2 and _NOT_A_SWITCH.isdisjoint(parts) and _VALUE_WORDS.isdisjoint(parts) and \
                _NEGATIONS.isdisjoint(parts) and any(p in _TWINNED_LIBRARIES or _library_prefix(p) for p in parts) and \
                any(t.upper() in project_words for t in _twins(word)):
            # `GRID_TRACING_NVTX` beside `GRID_TRACING_ROCTX` (configure.ac's AC_DEFINEs): one option per
            # vendor's library, even without a switch word; the NVIDIA one is off in an AMD build. Not a
            # negated one (`X_HAS_NO_CURAND`): that one an AMD build turns on.
            out.add(word)
    return frozenset(out)


# NVIDIA library words whose AMD twin makes a pair of per-vendor options (`X_TRACING_NVTX` / `X_TRACING_ROCTX`),
# and words of names that hold a value (an architecture, a path), not an on/off choice. NCCL is left out:
# RCCL keeps the nccl* API, so a `USE_NCCL` branch is often the ROCm build's too.
_TWINNED_LIBRARIES = frozenset({"NVTX", "CUBLAS", "CUBLASLT", "CUFFT", "CURAND", "CUSOLVER", "CUSPARSE",
                                "CUDNN", "NVSHMEM", "CUPTI"})
_VALUE_WORDS = frozenset({"ARCH", "ARCHS", "ARCHITECTURE", "ARCHITECTURES", "PATH", "DIR", "ROOT", "HOME", "VERSION",
                          "FLAGS", "COMPILER", "LIBRARY", "LIBRARIES", "LIB", "LIBS", "INCLUDE", "INCLUDES",
                          "FOUND", "TARGET", "TARGETS", "HEADER", "HEADERS", "NAME", "FILE", "FILES"})


# NVIDIA libraries with no AMD library under the same API, and the words of the AMD libraries a project
# would name if it used one in their place.
# OptiX (ray tracing) has none: AMD's HIPRT is another API behind its own switch (Cycles' WITH_CYCLES_DEVICE_HIPRT).
# Nor do the profiling and management libraries: rocprofiler/roctracer and AMD SMI are other APIs that no
# rename reaches, behind switches of their own (timemory's TIMEMORY_USE_CUPTI beside TIMEMORY_USE_ROCTRACER).
NVIDIA_ONLY_LIBRARIES = {"NVSHMEM": ("ROCSHMEM",), "CUDNN": ("MIOPEN",), "CUTLASS": ("CK", "COMPOSABLE_KERNEL"),
                         "TENSORRT": ("MIGRAPHX",), "CUFFTMP": (), "CUDSS": (), "CUTENSOR": ("HIPTENSOR",),
                         "OPTIX": (), "CUPTI": (), "NVML": (), "NVPERF": ()}


def nvidia_library_switches(project_words: frozenset) -> frozenset:
    """In a project that builds for AMD: switches for an NVIDIA-only library (`GMX_NVSHMEM`,
    `X_USE_CUDNN`, `WITH_TENSORRT`) where the project's build files name no AMD library in its place
    (rocSHMEM, MIOpen, ...). A working AMD build cannot link that library, so the switch is off there:
    `#if GMX_NVSHMEM` is NVIDIA code. Upper-cased."""
    out = set()
    for word in project_words:
        parts = [w for w in word.split("_") if w]
        libraries = [p for p in parts if p in NVIDIA_ONLY_LIBRARIES]
        if len(parts) < 2 or not libraries or not _NOT_A_SWITCH.isdisjoint(parts):
            continue
        # `TIMEMORY_USE_CUPTI_NVPERF`: every library it names is NVIDIA's alone
        switch_like = not _SWITCH_WORDS.isdisjoint(parts) or (len(parts) == 2 and parts[1] == libraries[0])
        amd = [a for lib in libraries for a in NVIDIA_ONLY_LIBRARIES[lib]]
        if switch_like and not any(a in w.split("_") or ("_" in a and a in w) for a in amd for w in project_words):
            out.add(word)
    return frozenset(out)


# CUDA libraries a build switch may be named for. NCCL and NVTX are left out: projects keep `USE_NCCL` /
# `USE_NVTX` on in ROCm builds, with RCCL and roctx behind the same names.
# The CUDA backend macros of libraries that build for one GPU backend at a time, each beside its HIP one
# (AMReX_Config.H: AMREX_USE_CUDA / AMREX_USE_HIP; KokkosCore_config.h: KOKKOS_ENABLE_CUDA / _HIP, one
# device backend per build; RAJA's config.hpp, camp's config.hpp, Umpire's config.hpp, MFEM's config.hpp,
# hypre's HYPRE_config.h). In a project that builds for AMD, code under them is the NVIDIA build's,
# whether or not the project's own build files name them (PelePhysics tests AMReX's).
ONE_GPU_BACKEND_CUDA_MACROS = frozenset({
    "AMREX_USE_CUDA", "KOKKOS_ENABLE_CUDA", "RAJA_ENABLE_CUDA", "CAMP_HAVE_CUDA", "UMPIRE_ENABLE_CUDA",
    "MFEM_USE_CUDA", "HYPRE_USING_CUDA"})
_CUDA_LIBRARIES = frozenset({"CUBLAS", "CUBLASLT", "CUSPARSE", "CUSOLVER", "CUSOLVERSP", "CUFFT", "CURAND",
                             "CUDNN", "NVSHMEM", "CUTLASS", "TENSORRT", "CUFFTMP", "CUDSS", "CUTENSOR", "OPTIX"})
# Names of NVIDIA libraries a find module may be named for (`FindcuRAND.cmake`), upper-cased. NCCL is left
# out: RCCL keeps its API and a FindNCCL module often finds RCCL on ROCm.
NVIDIA_LIBRARY_WORDS = _CUDA_LIBRARIES | {"NVTX", "NVTX3", "CUPTI", "NVML", "NVRTC", "CUDART", "CUSPARSELT", "NVCOMP"}


def cuda_variant_switches(project_words: frozenset, switches: frozenset) -> frozenset:
    """Switches that name CUDA and hold every word of one of the project's NVIDIA-build switches
    (`RAJA_ENABLE_CLANG_CUDA` beside `RAJA_ENABLE_CUDA`, whose twin `RAJA_ENABLE_HIP` the project names):
    a kind of CUDA build, so off in an AMD one. Upper-cased."""
    split = {n: {w for w in n.split("_") if w} for n in switches}
    out = set()
    for word in project_words:
        parts = {w for w in word.split("_") if w}
        if word in switches or not names_cuda(word) or not _is_build_switch(word) \
                or not _NOT_A_SWITCH.isdisjoint(parts) or not _VALUE_WORDS.isdisjoint(parts):
            continue
        if any(len(p) >= 2 and p < parts for p in split.values()):
            out.add(word)
    return frozenset(out)


def cuda_library_switches(project_words: frozenset) -> frozenset:
    """Build switches named for one CUDA library (`BUILD_SUNMATRIX_CUSPARSE`, `X_USE_CUFFT`) with no AMD
    twin among the build files' names (`..._HIPSPARSE`, `..._ROCSPARSE`): in a project whose AMD build
    hiplint read, a module the project keeps to NVIDIA, so an `if()` on the switch is an NVIDIA block
    (its sources NVIDIA-only). Upper-cased."""
    out = set()
    for word in project_words:
        parts = [w for w in word.split("_") if w]
        libraries = [p for p in parts if p in _CUDA_LIBRARIES]
        if len(parts) < 2 or len(libraries) != 1 or not _NOT_A_SWITCH.isdisjoint(parts):
            continue
        if (not _SWITCH_WORDS.isdisjoint(parts) or parts[-1] == libraries[0]) and \
                not any(t.upper() in project_words for t in _twins(word)):
            out.add(word)
    return frozenset(out)


def _dir_scope(directory: str, root: str) -> str | None:
    rel = os.path.relpath(directory, root)
    if rel == ".":
        return None
    last = None
    for part in rel.split(os.sep):
        if names_amd(part):
            last = "hip"
        elif names_cuda(part):
            last = "cuda"
    return last


def _expand(text: str, variables: dict, here: str, root: str, source: str | None = None) -> list[str]:
    """`text` with its variables replaced: `here` is the directory of the file being read
    (`CMAKE_CURRENT_LIST_DIR`), `source` the directory of the CMakeLists.txt processed
    (`CMAKE_CURRENT_SOURCE_DIR`: for a `.cmake` file another includes, the includer's)."""
    builtins = {"CMAKE_CURRENT_SOURCE_DIR": source or here, "CMAKE_CURRENT_LIST_DIR": here, "PROJECT_SOURCE_DIR": root,
                "CMAKE_SOURCE_DIR": root, "CMAKE_HOME_DIRECTORY": root}
    unknown = False

    def sub(m):
        nonlocal unknown
        name = m.group(1)
        if name in builtins:
            return builtins[name]
        if name in variables:
            return ";".join(variables[name])
        unknown = True
        return ""

    for _ in range(4):
        new = _VAR_REF.sub(sub, text)
        if new == text:
            break
        text = new
    if unknown and not text.strip(";").strip():
        return []
    return [p for p in re.split(r"[;\s]+", text) if p and not p.startswith("$<")]


_BUILTIN_VARS = frozenset({"CMAKE_CURRENT_SOURCE_DIR", "CMAKE_CURRENT_LIST_DIR", "PROJECT_SOURCE_DIR",
                           "CMAKE_SOURCE_DIR", "CMAKE_HOME_DIRECTORY"})


def patterns_known(args: list[str], variables: dict) -> bool:
    """Every variable the glob patterns use is known (else the pattern means something else)."""
    return all(m.group(1) in variables or m.group(1) in _BUILTIN_VARS for a in args for m in _VAR_REF.finditer(a))


def _files(items: list[str], here: str) -> list[str]:
    out = []
    for item in items:
        path = item if os.path.isabs(item) else os.path.join(here, item)
        path = os.path.normpath(path)
        if os.path.splitext(path)[1].lower() in C_FAMILY:
            out.append(path)
    return out


def _glob(patterns: list[str], here: str, recurse: bool, root: str) -> list[str]:
    """Files matching `patterns` (from `here`), inside the repository only: a pattern that lost an unknown
    variable (`${EXT_DIR}/*.h` read as `/*.h`) must not walk the disk."""
    out = []
    for pattern in patterns:
        full = os.path.normpath(pattern if os.path.isabs(pattern) else os.path.join(here, pattern))
        if not full.startswith(root.rstrip(os.sep) + os.sep) or not glob.has_magic(full):
            continue
        if recurse:
            d, base = os.path.split(full)
            full = os.path.join(d, "**", base)
        for p in glob.iglob(full, recursive=recurse):
            out.append(os.path.normpath(p))
            if len(out) >= MAX_GLOB:
                return out
    return sorted(out)


_TRUE = frozenset({"TRUE", "ON", "YES", "1"})
_VAR_COPY = lazy_re(r"\$\{\w+\}")
# Commands whose arguments are no file the build uses (a message naming one, a condition).
_NVCC_FLAG_VARIABLE = lazy_re(r"^(CUDA_NVCC_FLAGS|CMAKE_CUDA_FLAGS)(_[A-Z]+)?$")
_NOT_FILE_USERS = frozenset({"message", "if", "elseif", "else", "endif", "option", "mark_as_advanced"})
_SCRIPT_OR_SOURCE = frozenset({".py", ".sh"}) | C_FAMILY


def _nvidia_flags(files) -> frozenset:
    """Variables set true only inside NVIDIA blocks (`if(ENABLE_HIP AND HIP_PLATFORM STREQUAL "nvcc")` /
    `set(CUSOLVER_AVAILABLE TRUE)`, or a copy of another variable) and never so set elsewhere:
    `if(CUSOLVER_AVAILABLE)` is an NVIDIA block. Upper-cased."""
    nvidia, elsewhere, refused = set(), set(), set()
    for f in files:
        for c in f.commands:
            if c.name == "set" and len(c.args) == 2 and _FOUND_CUDA.fullmatch(c.args[1].strip("${}\"")) \
                    and c.args[1].strip("\"").startswith("${"):
                # `set(CUDA_MPI ${CUDAToolkit_FOUND})` (OPS): a name for "a CUDA toolkit was found", true only
                # where the NVIDIA build can be
                nvidia.add(c.args[0].upper())
            elif c.name == "set" and len(c.args) >= 2 and (c.args[1].upper() in _TRUE or _VAR_COPY.fullmatch(c.args[1])):
                # `set(REALM_USE_NVTX ${Legion_USE_NVTX})` in the CUDA block (Legion): a user's choice that
                # only the NVIDIA build passes on
                (nvidia if c.scope == "cuda" else elsewhere).add(c.args[0].upper())
            elif c.name == "option" and c.args:
                elsewhere.add(c.args[0].upper())  # a user's choice, whichever build
            elif c.name == "cmake_dependent_option" and len(c.args) >= 4 and _only_cuda_switch(c.args[3]):
                # `cmake_dependent_option(HIOP_USE_RESOLVE "cuSolver LU" ON "HIOP_USE_CUDA" OFF)`: offered
                # only when the CUDA build is on
                nvidia.add(c.args[0].upper())
            elif c.name == "message" and c.args and c.args[0].upper() == "FATAL_ERROR" and c.scope == "hip":
                # `elseif(WITH_HIP) ... if(WITH_FLASH_ATTN) message(FATAL_ERROR "incompatible")`: a feature
                # the AMD build refuses is off there
                words = [w for w in c.condition if w.upper() != "AND" and not names_amd(w)]
                if len(words) == 1 and _SWITCH.fullmatch(words[0]) and _is_build_switch(words[0]) \
                        and "NOT" not in (w.upper() for w in c.condition):
                    refused.add(words[0].upper())
    return frozenset((nvidia - elsewhere) | refused)


def _only_cuda_switch(condition: str) -> bool:
    """`"HIOP_USE_CUDA"`, `"X_ENABLE_CUDA;X_USE_MPI"`: a dependency list that needs the CUDA build (and no HIP)."""
    words = [w for w in re.split(r"[;\s]+", condition.strip()) if w]
    return any(names_cuda(w) and _is_build_switch(w) for w in words) and not any(
        names_amd(w) or w.upper() in ("NOT", "OR") for w in words)


_NUMBER_TEST = lazy_re(rb"(?im)^[ \t]*(?:else)?if[ \t]*\([ \t]*\"?\$?\{?([A-Za-z_]\w*)\}?\"?[ \t]+(?:EQUAL|STREQUAL)"
                          rb"[ \t]+\"?([0-9]+)\"?[ \t]*\)")
_BRANCH_END = lazy_re(rb"(?im)^[ \t]*(?:elseif|else|endif)[ \t]*\(")
_HIP_MARKS = lazy_re(rb"(?i)find_package[ \t]*\([ \t]*hip\b|\bhip::|\broc::|enable_language[ \t]*\([ \t]*HIP\b|"
                        rb"LANGUAGE[ \t]+HIP\b")
_CUDA_MARKS = lazy_re(rb"(?i)find_package[ \t]*\([ \t]*CUDA(?:Toolkit)?\b|\bCUDA::|enable_language[ \t]*\([ \t]*CUDA\b|"
                         rb"LANGUAGE[ \t]+CUDA\b|CUDA_ARCHITECTURES|\$\{CUDA_LIBRARIES\}")


def numbered_backends(texts) -> dict[str, tuple[int, frozenset]]:
    """{variable: (AMD value, NVIDIA values)} for a backend chosen by number (VkFFT's
    `set(VKFFT_BACKEND 0 CACHE STRING "0 - Vulkan, 1 - CUDA, 2 - HIP")` with `if(${VKFFT_BACKEND} EQUAL 2)
    find_package(hip)` and `elseif(${VKFFT_BACKEND} EQUAL 1) enable_language(CUDA)`): the value whose
    blocks set up HIP and nothing of CUDA is the AMD build's, those that set up CUDA alone the NVIDIA one's."""
    seen: dict[str, dict[int, set]] = {}
    for data in texts:
        for m in _NUMBER_TEST.finditer(data):
            end = _BRANCH_END.search(data, m.end())
            block = data[m.end():end.start() if end else len(data)]
            kinds = seen.setdefault(m.group(1).decode().upper(), {}).setdefault(int(m.group(2)), set())
            if _HIP_MARKS.search(block):
                kinds.add("hip")
            if _CUDA_MARKS.search(block):
                kinds.add("cuda")
    out = {}
    for name, values in seen.items():
        amd = [v for v, k in values.items() if k == {"hip"}]
        nvidia = frozenset(v for v, k in values.items() if k == {"cuda"})
        if len(amd) == 1 and nvidia and not any(k == {"hip", "cuda"} for k in values.values()):
            out[name] = (amd[0], nvidia)
    return out


def _read_cmake(root: str, paths: list[str], build: AmdBuild) -> None:
    words = build.project_words
    files: dict[str, _CMakeFile] = {}
    texts: dict[str, bytes] = {}
    for path in paths:
        data = _read_bytes(path)
        if data is not None:
            texts[path] = data
    numbered = numbered_backends(texts.values())
    for name, (amd, nvidia) in numbered.items():
        if len(nvidia) == 1:
            build.valued[name] = (amd, next(iter(nvidia)))

    def parse_all(nvidia_flags: frozenset) -> None:
        for path, data in texts.items():
            # A CUDA switch's HIP twin counts where this file or the CMakeLists.txt above it names it.
            context = [data]
            d = os.path.dirname(path)
            while True:
                above = os.path.join(d, "CMakeLists.txt")
                if above != path and above in texts:
                    context.append(texts[above])
                if d == root or os.path.dirname(d) == d or not d.startswith(root):
                    break
                d = os.path.dirname(d)
            try:
                commands, blocks, functions = _cmake_commands(data, b"\n".join(context), words,
                                                              build.library_switches, nvidia_flags, numbered)
            except Exception:  # a file the grammar cannot take: read nothing from it
                continue
            files[path] = _CMakeFile(path, commands, blocks, functions=functions)

    parse_all(frozenset())
    flags = _nvidia_flags(files.values())
    if flags:
        parse_all(flags)  # their if() blocks are NVIDIA blocks too
        flags = _nvidia_flags(files.values())  # and what they set in turn (`if(X_ENABLE_NVPROF) set(X_HAS_NVPROF ON)`)
        # As C macros (`#cmakedefine AL_HAS_NVPROF` in a configured header, `-DX` under `if(X)`), they are
        # undefined in every AMD compile.
        build.nvidia_defines.update(flags)

    # Who reads each CMakeLists.txt: add_subdirectory from which scope.
    reached: dict[str, set] = {}
    modules: dict[str, list] = {}  # `include(AMReX_SetupCUDA)`: a module found on CMAKE_MODULE_PATH
    for path in files:
        if path.endswith(".cmake"):
            modules.setdefault(os.path.basename(path)[:-6], []).append(path)
    def read_by(f, here: str, include_only: bool = False):
        for c in f.commands:
            if c.name in ("add_subdirectory", "include") and c.args and not (include_only and c.name != "include"):
                target = _expand(c.args[0], {}, here, root)
                if not target:
                    continue
                t = target[0] if os.path.isabs(target[0]) else os.path.join(here, target[0])
                t = os.path.normpath(os.path.join(t, "CMakeLists.txt") if c.name == "add_subdirectory" else t)
                found = modules.get(target[0], ())
                if c.name == "include" and t not in files and "/" not in target[0] and len(found) == 1:
                    t = found[0]
                yield t, c

    # An included `.cmake` file runs in its includer's directory: its relative paths are the includer's
    # (cuSZ's `cmake/cuda.cmake` says `add_subdirectory(codec/fzg)` for the top directory's `codec/fzg`).
    includer_dirs: dict[str, set] = {}
    for f in files.values():
        if os.path.basename(f.path) == "CMakeLists.txt":
            for t, _ in read_by(f, os.path.dirname(f.path), include_only=True):
                if t.endswith(".cmake"):
                    includer_dirs.setdefault(t, set()).add(os.path.dirname(f.path))
    for f in files.values():
        here = os.path.dirname(f.path)
        for t, c in read_by(f, here):
            if t not in files and f.path in includer_dirs:
                t = next((t2 for d in sorted(includer_dirs[f.path]) for t2, c2 in read_by(f, d)
                          if c2 is c and t2 in files), t)
            reached.setdefault(t, set()).add((f.path, c.scope))

    build.unreached_dirs = _unreached_dirs(root, files, texts, reached)

    def file_scope(path: str, seen=()) -> str | None:
        f = files.get(path)
        if f is None:
            return None
        if f.scope is not None:
            return f.scope
        if path in seen:
            return None
        readers = reached.get(path)
        scope = None
        if readers:
            scopes = {s or file_scope(p, seen + (path,)) for p, s in readers}
            scope = scopes.pop() if len(scopes) == 1 else None
        if scope is None and not readers:
            scope = _dir_scope(os.path.dirname(path), root)
            if scope == "cuda":
                scope = "cuda?"  # settled below: only where the project has an AMD build of its sources
        f.scope = scope or ""
        return scope

    for path in files:
        file_scope(path)
    for path, f in files.items():
        # `cuda/CMakeLists.txt` beside `hip/CMakeLists.txt`, neither added by a name hiplint can read
        # (stdgpu's `add_subdirectory(${STDGPU_BACKEND_DIRECTORY})`): one backend per build, and this is
        # the NVIDIA one.
        here = os.path.dirname(path)
        if f.scope == "cuda?" and _hip_twin_dir(here) and any(
                os.path.dirname(p) != here and os.path.dirname(os.path.dirname(p)) == os.path.dirname(here)
                and files[p].scope != "cuda?" and _dir_scope(os.path.dirname(p), root) == "hip" for p in files):
            f.scope = "cuda"
    # `if(BUILD_X_CUSPARSE) add_subdirectory(cusparse)`: that directory is the NVIDIA build's, whatever
    # function its CMakeLists.txt builds its targets with (SUNDIALS's `sundials_add_library`).
    build.nvidia_subdirs = {os.path.dirname(p) for p, f in files.items()
                            if f.scope == "cuda" and os.path.basename(p) == "CMakeLists.txt" and reached.get(p)}

    # name -> [{"scope", "sources", "defines", "file"}]: one per add_library (`if(HIP) add_library(p)
    # else() add_library(p)` defines one per build)
    targets: dict[str, list] = {}

    def target(name: str, scope):
        records = targets.get(name) or [None]
        return next((r for r in reversed(records) if r is not None and r["scope"] == scope), records[-1])

    hip_language: set[str] = set()
    cuda_added: set[str] = set()  # sources an NVIDIA block adds to a shared target
    hip_removed: set[str] = set()  # sources the AMD build removes from a list (list(REMOVE_ITEM) in a HIP block)
    files_used: dict[str, set] = {"cuda": set(), "other": set()}  # project files named by commands, by scope
    defines_by_scope: dict[str | None, set] = {"hip": set(), "cuda": set(), None: set()}
    hip_files: set[str] = set()
    order = sorted(files, key=lambda p: (p.count(os.sep), p))
    variables_of_dir: dict[str, tuple] = {}

    def source_dir(path: str, seen=()) -> str:
        """CMAKE_CURRENT_SOURCE_DIR while `path` runs: a module's includer's (TVM's `cmake/modules/CUDA.cmake`,
        included from the top CMakeLists.txt, globs `src/runtime/...` from the top)."""
        if os.path.basename(path) == "CMakeLists.txt" or path in seen:
            return os.path.dirname(path)
        readers = {p for p, _ in reached.get(path, ()) if p != path}
        return source_dir(readers.pop(), seen + (path,)) if len(readers) == 1 else os.path.dirname(path)

    for path in order:
        f = files[path]
        here = os.path.dirname(path)
        src = source_dir(path)  # where relative source paths and globs start
        parent_vars = ({}, {})
        d = here
        while d.startswith(root) and d != os.path.dirname(d):
            d = os.path.dirname(d)
            if d in variables_of_dir:
                parent_vars = variables_of_dir[d]
                break
        # Two views of the variables: all assignments, and those an AMD build makes (not the ones in an
        # NVIDIA block: `if(ENABLE_CUDA) set(SRCS ${SRCS} cuda/x.cpp)` then `elseif(X_HIP) add_library(t ${SRCS})`).
        # Targets outside NVIDIA blocks take their sources from the AMD view.
        variables, amd_variables = dict(parent_vars[0]), dict(parent_vars[1])
        fscope = f.scope if f.scope in ("hip", "cuda") else None
        enables_hip = False
        for c in f.commands:
            # A file only the NVIDIA build reads (Legion's `if(REALM_USE_CUDA) add_subdirectory(cuda_interop)`)
            # is NVIDIA's throughout, its own `elseif(... ROCM) hip_add_executable(...)` included: no AMD build gets there.
            scope = "cuda" if fscope == "cuda" else c.scope or fscope
            args = c.args
            views = (variables,) if scope == "cuda" else (variables, amd_variables)
            if c.name == "enable_language" and any(a.upper() == "HIP" for a in args):
                enables_hip = True
            elif scope == "hip" and _uses_hip_runtime(c):
                # `if(AMReX_HIP) ... find_package(hip) / target_link_libraries(amrex hip::device)`: an AMD
                # build (compiled with hipcc or amdclang++ as the C++ compiler) whose block this is.
                build.amd_build_files.add(path)
            elif c.name == "project" and any(a.upper() == "HIP" for a in args[1:]):
                enables_hip = True
            elif c.name == "set" and args:
                if _NVCC_FLAG_VARIABLE.match(args[0]):
                    # `set(CUDA_NVCC_FLAGS "... -DAER_THRUST_CUDA")`: definitions only nvcc is given (qiskit-aer)
                    defines_by_scope["cuda"].update(_definitions(
                        [w for a in args[1:] for w in a.split()], variables, here, root, dashed=True))
                for v in views:
                    v[args[0]] = sum((_expand(a, v, here, root, src) for a in args[1:]
                                      if a not in ("CACHE", "PARENT_SCOPE", "FORCE")), [])
            elif c.name == "foreach" and len(args) >= 2:
                # The loop variable stands for every item (LightGBM: `foreach(file IN LISTS SOURCES)` /
                # `list(APPEND CU_FILES "${file}")` / `set_source_files_properties(${CU_FILES} ... HIP)`).
                items = args[3:] if len(args) >= 3 and args[1].upper() == "IN" and args[2].upper() == "LISTS" \
                    else args[2:] if args[1].upper() == "IN" else args[1:]
                for v in views:
                    if len(args) >= 3 and args[1].upper() == "IN" and args[2].upper() == "LISTS":
                        v[args[0]] = sum((v.get(x, []) for x in items), [])
                    else:
                        v[args[0]] = sum((_expand(a, v, here, root, src) for a in items
                                          if a.upper() not in ("ITEMS", "LISTS", "RANGE")), [])
            elif c.name == "list" and len(args) >= 2 and args[0].upper() in ("APPEND", "PREPEND"):
                for v in views:
                    v[args[1]] = v.get(args[1], []) + sum((_expand(a, v, here, root, src) for a in args[2:]), [])
            elif c.name == "list" and len(args) >= 3 and args[0].upper() == "REMOVE_ITEM" and scope == "hip":
                # CTranslate2's `elseif(WITH_HIP) list(REMOVE_ITEM CUDA_SOURCES src/ops/awq/gemm_gpu.cu)`: sources the
                # AMD build drops
                removed = sum((_expand(a, amd_variables, here, root, src) for a in args[2:]), [])
                hip_removed.update(_files(removed, src))
                gone = set(removed) | set(_files(removed, src))
                amd_variables[args[1]] = [x for x in amd_variables.get(args[1], []) if x not in gone
                                          and os.path.normpath(os.path.join(here, x)) not in gone]
            elif (c.name == "file" or c.name not in _KNOWN_COMMANDS) and len(args) >= 3 \
                    and args[0].upper() in ("GLOB", "GLOB_RECURSE"):
                # `file(GLOB ...)`, or a project's wrapper called the same way (TVM's `tvm_file_glob(GLOB V ...)`)
                rest = [a for a in args[2:] if a.upper() not in ("CONFIGURE_DEPENDS", "LIST_DIRECTORIES")]
                if rest and rest[0].upper() == "RELATIVE":
                    rest = rest[2:]
                for v in views:
                    patterns = sum((_expand(a, v, here, root, src) for a in rest), [])
                    v[args[1]] = _glob(patterns, src, args[0].upper() == "GLOB_RECURSE", root) \
                        if not _VAR_REF.search(" ".join(rest)) or patterns_known(rest, v) else []
            elif c.name in _TARGET_COMMANDS and args:
                if any(a.upper() in ("IMPORTED", "ALIAS") for a in args[1:]):
                    continue
                tscope = scope if fscope == "cuda" else _TARGET_COMMANDS[c.name] or scope
                items = sum((_expand(a, variables if tscope == "cuda" else amd_variables, here, root, src) for a in args[1:]
                             if a.upper() not in _TARGET_KEYWORDS), [])
                targets.setdefault(args[0], []).append({"scope": tscope, "file": path,
                                                        "sources": _files(items, src), "defines": set()})
            elif c.name == "target_sources" and args and args[0] in targets:
                items = sum((_expand(a, variables if scope == "cuda" else amd_variables, here, root, src) for a in args[1:]
                             if a.upper() not in ("PRIVATE", "PUBLIC", "INTERFACE")), [])
                record = target(args[0], scope)
                if scope == "cuda" and record["scope"] != "cuda":
                    # Sources the NVIDIA build adds to a target both builds define: the NVIDIA build's alone.
                    cuda_added.update(_files(items, src))
                elif scope is None:
                    # Outside any backend block: every build's definition of the target gets them (SuperLU_DIST's
                    # `if(HIPLIB) add_library(t ${hipsources}) else() add_library(t "") endif()` then
                    # `target_sources(t PRIVATE ${sources})`).
                    for r in targets[args[0]]:
                        if r is not None:
                            r["sources"].extend(_files(items, src))
                else:
                    record["sources"].extend(_files(items, src))
            elif c.name in ("set_source_files_properties", "set_property"):
                upper = [a.upper() for a in args]
                if "LANGUAGE" in upper and upper.index("LANGUAGE") + 1 < len(upper) \
                        and upper[upper.index("LANGUAGE") + 1] == "HIP" and scope != "cuda":
                    until = upper.index("PROPERTIES") if "PROPERTIES" in upper else upper.index("PROPERTY") \
                        if "PROPERTY" in upper else len(upper)
                    names = [a for a in args[:until] if a.upper() not in ("SOURCE", "DIRECTORY")]
                    items = sum((_expand(a, amd_variables, here, root, src) for a in names), [])
                    hip_language.update(_files(items, src))
                    build.amd_build_files.add(path)
            elif c.name == "target_compile_definitions" and args and (args[0] in targets or scope in ("hip", "cuda")):
                defs = _definitions(args[1:], variables, here, root)
                # `if(X_USE_CUDA) target_compile_definitions(t X_COMPILING_CUDA)`, or the same in a file only the
                # NVIDIA build includes (QUDA's `targets/cuda/target_cuda.cmake` on the common target)
                if scope in ("hip", "cuda"):
                    defines_by_scope[scope].update(defs)
                else:
                    target(args[0], scope)["defines"].update(defs)
            elif c.name in ("include_directories", "target_include_directories"):
                items = args if c.name == "include_directories" else args[1:]
                for a in items:
                    if a.upper() in ("SYSTEM", "BEFORE", "AFTER", "PRIVATE", "PUBLIC", "INTERFACE"):
                        continue
                    a = re.sub(r"^\$<BUILD_INTERFACE:(.*)>$", r"\1", a)
                    for d in _expand(a, variables, here, root, src):
                        d = os.path.normpath(d if os.path.isabs(d) else os.path.join(here, d))
                        if d.startswith(root) and os.path.isdir(d) and d not in build.include_dirs:
                            build.include_dirs.append(d)
            elif c.name in ("add_compile_definitions", "add_definitions"):
                defs = _definitions(args, variables, here, root)
                defines_by_scope[scope].update(defs)
            elif c.name == "target_compile_options" and args and args[0] in targets:
                target(args[0], scope)["defines"].update(_definitions(args[1:], variables, here, root, dashed=True))
            if c.name not in _NOT_FILE_USERS:
                # `add_test(... ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu.py)`, `gmx_add_libgromacs_sources(x.cu)` (a
                # project's own function) in an NVIDIA block: a file only the NVIDIA build compiles, runs or
                # installs, unless a command elsewhere names it too
                # A keyword of the call naming one vendor (FBGEMM's `gpu_cpp_library(... CUDA_SPECIFIC_SRCS
                # ${cuda_files} HIP_SPECIFIC_SRCS ${hip_files})`) scopes the files after it.
                keyword_scope = scope
                for a in args:
                    if _KEYWORD.fullmatch(a) and c.name not in _TARGET_COMMANDS:
                        keyword_scope = "cuda" if names_cuda(a) else scope
                        continue
                    # Outside NVIDIA blocks, variables hold what the AMD build gives them: deepmd-kit's
                    # `add_library(op ${OP_SRC})` after `if(USE_CUDA_TOOLKIT) list(APPEND OP_SRC x.cu)` does not
                    # make x.cu a file both builds use.
                    view = variables if keyword_scope == "cuda" else amd_variables
                    for item in (_expand(a, view, here, root, src) if "$" in a else [a]):
                        full = os.path.normpath(item if os.path.isabs(item) else os.path.join(src, item))
                        if full.startswith(root + os.sep) and os.path.splitext(full)[1].lower() in _SCRIPT_OR_SOURCE \
                                and os.path.isfile(full):
                            (files_used["cuda"] if keyword_scope == "cuda" else files_used["other"]).add(full)
        variables_of_dir[here] = (variables, amd_variables)
        if enables_hip and fscope != "cuda":
            hip_files.add(path)
            build.amd_build_files.add(path)

    nvidia_sources: set[str] = set()  # of targets only the NVIDIA build defines (`if(X_BUILD_CUDA) add_subdirectory(...)`)
    other_sources: set[str] = set()
    for t in (r for records in targets.values() for r in records):
        scope = t["scope"]
        if scope is None and (t["file"] in hip_files and files[t["file"]].scope == "hip"
                              or any(s in hip_language for s in t["sources"])):
            scope = "hip"
        t["scope"] = scope
        if scope == "hip":
            build.amd_build_files.add(t["file"])
            build.amd_sources.update(s for s in t["sources"] if os.path.isfile(s))
        elif scope == "cuda":
            nvidia_sources.update(s for s in t["sources"] if os.path.isfile(s))
        else:
            other_sources.update(t["sources"])
        defines_by_scope.setdefault(scope, set()).update(t["defines"])
    build.amd_sources.update(s for s in hip_language if os.path.isfile(s))
    nvidia_sources |= {s for s in cuda_added | hip_removed if os.path.isfile(s)}
    nvidia_sources |= files_used["cuda"] - files_used["other"]
    build.nvidia_sources = nvidia_sources - build.amd_sources - other_sources
    shared_dirs = {os.path.dirname(s) for s in build.amd_sources | other_sources}
    build.nvidia_dirs = {os.path.dirname(s) for s in build.nvidia_sources} - shared_dirs
    for path, f in files.items():
        if f.scope == "hip" and any(c.name in _TARGET_COMMANDS for c in f.commands):
            build.amd_build_files.add(path)
    build.valued.update(valued_switches(defines_by_scope["hip"], defines_by_scope["cuda"]))
    valued = {d for scope in defines_by_scope.values() for d in scope if "=" in d}
    for scope in defines_by_scope.values():
        scope -= valued  # `NAME=2` entries serve valued_switches only
    build.amd_defines.update(defines_by_scope["hip"] - defines_by_scope["cuda"] - defines_by_scope[None])
    build.nvidia_defines.update(defines_by_scope["cuda"] - defines_by_scope["hip"] - defines_by_scope[None])
    # A function called only for the NVIDIA build (Ginkgo's `ginkgo_benchmark_cusparse_linops`, called in
    # `if(GINKGO_BUILD_CUDA)`): its body is an NVIDIA block.
    for _ in range(3):  # a function called only from such a function's body is one too
        calls: dict[str, set] = {}
        for f in files.values():
            fscope = f.scope if f.scope in ("hip", "cuda") else None
            for c in f.commands:
                inside = any(s <= c.start < e for s, e in f.nvidia_blocks)
                calls.setdefault(c.name, set()).add("cuda" if inside else (c.scope or fscope))
        added = False
        for f in files.values():
            for name, start, end in f.functions:
                if calls.get(name) == {"cuda"} and not any(s <= start and end <= e for s, e in f.nvidia_blocks):
                    f.nvidia_blocks.append((start, end))
                    added = True
        if not added:
            break
    _nvidia_only_variables(files)
    build.gpu_candidates = _any_gpu_build_sets(files, texts, build, numbered)
    for f in files.values():
        f.nvidia_blocks.sort()
    amd_dirs = {os.path.dirname(s) for s in build.amd_sources}
    for path, f in files.items():
        here = os.path.dirname(path)
        if f.scope == "cuda" or (f.scope == "cuda?" and (here in amd_dirs or _hip_twin_dir(here))):
            if build.known or f.scope == "cuda":
                build.nvidia_build_files.add(path)
        elif f.nvidia_blocks:
            build.nvidia_ranges[path] = f.nvidia_blocks


_SOURCE_DIRS = frozenset({"PROJECT_SOURCE_DIR", "CMAKE_SOURCE_DIR", "CMAKE_CURRENT_SOURCE_DIR", "CMAKE_CURRENT_LIST_DIR"})


_NVCC_WORD = lazy_re(rb"(?<![\w-])(?:nvcc|NVCC)(?![\w-])")
_MAKE_AMD_WORD = lazy_re(rb"(?i)(?<![a-z])(?:hip|hipcc|rocm|amdgpu|gfx[0-9]+)(?![a-z])")


def _nvidia_make_dirs(root: str, make: list[str], cmake: list[str]) -> set:
    """Directories of a CMake project that hold a Makefile of their own compiling with nvcc and naming
    nothing of AMD's, no CMakeLists.txt, and whose name no CMake file writes (DPLASMA's `tools/gemmpeak`:
    a standalone CUDA benchmark beside the CMake build): NVIDIA-only code the AMD build never reaches."""
    top = os.path.join(root, "CMakeLists.txt")
    if top not in cmake or _CMAKE_PROJECT.search(_read_bytes(top) or b"") is None:
        return set()
    cmake_text = b"\n".join(_BUILD_COMMENT.sub(b"", _read_bytes(p) or b"") for p in cmake)
    out = set()
    for path in make:
        d = os.path.dirname(path)
        if d == root or os.path.exists(os.path.join(d, "CMakeLists.txt")):
            continue
        text = _BUILD_COMMENT.sub(b"", _read_bytes(path) or b"")
        if not _NVCC_WORD.search(text) or _MAKE_AMD_WORD.search(text):
            continue
        if re.search(rb"(?<![\w.\-])" + re.escape(os.path.basename(d).encode()) + rb"(?![\w\-])", cmake_text):
            continue
        out.add(d)
    return {d for d in out if not any(d.startswith(o + os.sep) for o in out)}


def _unreached_dirs(root: str, files: dict, texts: dict, reached: dict) -> set:
    """Top directories of CMakeLists.txt files that no add_subdirectory reaches (GauXC's `attic/src/
    integrator/CMakeLists.txt`, kept from an old layout): the highest directory above one, below a
    directory whose own CMakeLists.txt is read, whose name no reached build file writes, and which starts
    no project of its own (`project()`: a subproject built on its own). Only where the
    project's top CMakeLists.txt starts a project and every add_subdirectory names its directory outright
    (a `${VAR}` one may reach anything)."""
    top = os.path.join(root, "CMakeLists.txt")
    if top not in files or _CMAKE_PROJECT.search(texts.get(top, b"")) is None:
        return set()
    for f in files.values():
        for c in f.commands:
            if c.name == "add_subdirectory" and (not c.args or not _SOURCE_DIRS.issuperset(_VAR_REF.findall(c.args[0]))):
                return set()
    lists = {os.path.dirname(p) for p in files if os.path.basename(p) == "CMakeLists.txt"}
    # One that starts a project of its own (FlexFlow's `triton/`, built on its own) is not dead code.
    unreached = {p for p in files if os.path.basename(p) == "CMakeLists.txt" and p != top and not reached.get(p)
                 and _CMAKE_PROJECT.search(texts.get(p, b"")) is None}
    live_texts = [texts[p] for p in files if p not in unreached and p in texts]
    out = set()
    for path in unreached:
        d = os.path.dirname(path)
        while os.path.dirname(d) not in lists and os.path.dirname(d).startswith(root + os.sep):
            d = os.path.dirname(d)
        if d in lists and d != os.path.dirname(path):
            continue  # a directory with a CMakeLists.txt of its own that is reached: not this one
        word = re.compile(rb"(?<![\w.\-])" + re.escape(os.path.basename(d).encode()) + rb"(?![\w\-])")
        if not any(word.search(t) for t in live_texts):
            out.add(d)
    return {d for d in out if not any(d.startswith(o + os.sep) for o in out)}


def _nvidia_only_variables(files: dict) -> None:
    """`set(CUDA_LIBS CUDA::cudart CUDA::cublas)` whose every `${CUDA_LIBS}` sits in an NVIDIA block
    (Faiss links it in the `else()` of `if(FAISS_ENABLE_ROCM)`): the `set` is the NVIDIA build's too."""
    def nvidia(f, at: int) -> bool:
        return f.scope == "cuda" or any(s <= at < e for s, e in f.nvidia_blocks)

    refs: dict[str, list[bool]] = {}
    for f in files.values():
        for c in f.commands:
            for a in c.args:
                for name in _VAR_REF.findall(a):
                    refs.setdefault(name, []).append(nvidia(f, c.start))
    for f in files.values():
        for c in f.commands:
            if c.name == "set" and c.args and not nvidia(f, c.start):
                uses = refs.get(c.args[0])
                if uses and all(uses):
                    f.nvidia_blocks.append((c.start, c.end))


def _names_cuda_dir(name: str) -> bool:
    """`cuda`, `backend-cuda`, `cuda_impl`, `Cuda`: a directory name with a word CUDA (not `cudaq`)."""
    return any(w == "cuda" for w in re.split(r"[_.\-]", name.lower()))


def _uses_hip_runtime(c: _Command) -> bool:
    if c.name == "find_package" and c.args:
        return c.args[0].lower() in ("hip", "hiprand", "rocrand", "rocprim", "hipblas", "rocblas", "hipcub")
    if c.name == "target_link_libraries":
        return any(a.startswith(("hip::", "roc::")) for a in c.args[1:])
    return False


def _hip_twin_dir(directory: str) -> bool:
    """`backend-cuda/` beside `backend-hip/`, `cuda/` beside `hip/`: a separate HIP backend directory."""
    parent, base = os.path.split(directory)
    pattern = re.compile(r"(?i)cuda")
    if not pattern.search(base):
        return False
    for amd in ("hip", "rocm", "HIP", "ROCm", "Hip"):
        twin = pattern.sub(amd, base)
        if os.path.isdir(os.path.join(parent, twin)):
            return True
    return False


def _any_gpu_condition(words: tuple, context: bytes, build: AmdBuild, numbered: dict) -> bool:
    """`if(X_BUILD_WITH_HIP OR X_BUILD_WITH_CUDA)`: each alternative picks one vendor's build, both vendors
    among them, so the block runs in every GPU build (and in no CPU-only one)."""
    parts: list[list[str]] = [[]]
    for w in words:
        if w.upper() == "OR":
            parts.append([])
        else:
            parts[-1].append(w)
    if len(parts) < 2 or any(not p for p in parts):
        return False
    scopes = {_branch_scope(p, context, build.project_words, frozenset(), frozenset(), numbered) for p in parts}
    return scopes == {"hip", "cuda"}


_TRUE_VALUES = frozenset({"TRUE", "ON", "YES", "1"})


def _any_gpu_build_sets(files: dict, texts: dict, build: AmdBuild, numbered: dict) -> dict[str, str]:
    """What a block run by every GPU build defines: `set(X_GPU_SUPPORT TRUE)` (a macro only where a
    configured header writes it: "set") or `add_compile_definitions(X_GPU)` / `add_definitions(-DX_GPU)`
    ("define")."""
    out: dict[str, str] = {}
    for path, f in files.items():
        for c in f.commands:
            if not c.condition or "OR" not in (w.upper() for w in c.condition):
                continue
            if c.name == "set" and len(c.args) >= 2 and c.args[1].upper() in _TRUE_VALUES:
                kind, names = "set", {c.args[0]}
            elif c.name in ("add_compile_definitions", "add_definitions"):
                kind, names = "define", _definitions(c.args, {}, os.path.dirname(path), build.root,
                                                     dashed=c.name == "add_definitions")
            else:
                continue
            if names and _any_gpu_condition(c.condition, texts.get(path, b""), build, numbered):
                for n in names:
                    if "=" not in n:
                        out.setdefault(n, kind)
    return out


def gpu_build_defines(candidates: dict, fragments: list[str]) -> frozenset:
    """Macros every GPU build defines, the AMD one included: waLBerla's `set(WALBERLA_BUILD_WITH_GPU_SUPPORT
    TRUE)` under `if(WALBERLA_BUILD_WITH_HIP OR WALBERLA_BUILD_WITH_CUDA)`, written out by `#cmakedefine
    WALBERLA_BUILD_WITH_GPU_SUPPORT` in a configured header. The `#else` of `#if defined(...)` on one is
    then the CPU-only build's code, which hip-clang never compiles."""
    if not candidates:
        return frozenset()
    configured = b"\n".join(_read_bytes(p) or b"" for p in fragments
                             if re.search(r"\.(h|hh|hpp|hxx)\.(in|cmake|cmakein)$|\.in\.(h|hh|hpp|hxx)$", p, re.I))
    out = set()
    for name, kind in candidates.items():
        if kind == "define" or re.search(rb"(?m)^[ \t]*#[ \t]*cmakedefine[ \t]+" + re.escape(name.encode()) + rb"\b",
                                          configured):
            out.add(name)
    return frozenset(out)


def _definitions(args: list[str], variables: dict, here: str, root: str, dashed: bool = False) -> set[str]:
    out = set()
    for a in args:
        if a.upper() in ("PRIVATE", "PUBLIC", "INTERFACE", "BEFORE"):
            continue
        for item in _expand(a, variables, here, root):
            m = _DEF.match(item) or (None if dashed else _PLAIN_DEF.match(item))
            if m:
                out.add(m.group(1))
                value = _INT_VALUE.match(item.removeprefix("-D"))
                if value:
                    out.add(value.group(0))  # `VKFFT_BACKEND=2`: a per-vendor value (valued_switches)
    return out


_INT_VALUE = lazy_re(r"^[A-Za-z_]\w*=[0-9]+$")


def valued_switches(amd: set, nvidia: set) -> dict[str, tuple[int, int]]:
    """{name: (AMD value, NVIDIA value)} for a definition the AMD build and the NVIDIA build each give one
    integer value, different (`VKFFT_BACKEND=2` beside `VKFFT_BACKEND=1`): a backend chosen by number."""
    def values(defs):
        out: dict[str, set] = {}
        for d in defs:
            if "=" in d:
                name, value = d.split("=", 1)
                out.setdefault(name, set()).add(int(value))
        return out

    a, n = values(amd), values(nvidia)
    return {name: (next(iter(a[name])), next(iter(n[name]))) for name in a.keys() & n.keys()
            if len(a[name]) == 1 and len(n[name]) == 1 and a[name] != n[name]}


# Makefiles ----------------------------------------------------------------------------------------

_MAKE_ASSIGN = lazy_re(r"^\s*(?:override\s+|export\s+)?([A-Za-z_][\w.-]*)\s*(?:\+|\?|::?|!)?=\s*(.*)$")
_MAKE_REF = lazy_re(r"\$[({]([A-Za-z_][\w.-]*)[)}]")
_WILDCARD = lazy_re(r"\$[({]wildcard\s+([^)}]*)[)}]")


def _read_make(root: str, paths: list[str], build: AmdBuild) -> None:
    nvcc_only: list[tuple[str, list[str]]] = []  # Makefiles that run nvcc and nothing of AMD's
    amd_texts: list[str] = []
    for path in paths:
        data = _read_bytes(path)
        if data is None:
            continue
        text = re.sub(r"\\\r?\n", " ", data.decode("utf-8", "replace"))
        lines = [re.sub(r"(?<!\\)#.*$", "", line) for line in text.splitlines()]
        if not any(_hip_line(line) for line in lines):
            if any(re.search(r"(?<![\w/-])nvcc\b|\$[({]NVCC[)}]", line) for line in lines):
                nvcc_only.append((path, lines))
            continue
        amd_texts.append(text)
        nvcc = any(re.search(r"(?<![\w/-])nvcc\b|\$[({]NVCC[)}]", line) for line in lines)
        here = os.path.dirname(path)
        variables: dict[str, str] = {}
        for line in lines:
            m = _MAKE_ASSIGN.match(line)
            if m and not line.startswith("\t"):
                variables[m.group(1)] = (variables.get(m.group(1), "") + " " + m.group(2)) if "+=" in line else m.group(2)

        def expand(s: str, depth: int = 0) -> str:
            if depth > 4:
                return s
            s = _WILDCARD.sub(lambda w: " ".join(_glob(expand(w.group(1), depth + 1).split(), here, False, root)), s)
            new = _MAKE_REF.sub(lambda r: variables.get(r.group(1), ""), s)
            return new if new == s else expand(new, depth + 1)

        hip_vars = {name for name, value in variables.items() if _hip_line(value) or names_amd(name)}
        sources, defines, nvidia_defines = set(), set(), set()
        for i, line in enumerate(lines):
            m = _MAKE_ASSIGN.match(line) if not line.startswith("\t") else None
            is_hip = _hip_line(line) or any(f"$({v})" in line or "${%s}" % v in line for v in hip_vars) \
                or (m is not None and m.group(1) in hip_vars)
            runs_nvcc = bool(re.search(r"(?<![\w/-])nvcc\b|\$[({]NVCC[)}]", line)) or \
                (m is not None and names_cuda(m.group(1)))
            words = expand(line).split()
            defs = {d.group(1) for d in map(_DEF.match, words) if d}
            if is_hip and not runs_nvcc:
                defines |= defs
                if not m or not nvcc:
                    sources.update(w for w in words if os.path.splitext(w)[1].lower() in C_FAMILY)
            elif runs_nvcc and not is_hip:
                nvidia_defines |= defs
        # A HIP rule's prerequisites: `%.o: %.cu` with a hipcc recipe compiles the sources the Makefile names.
        if not nvcc:
            for value in variables.values():
                sources.update(w for w in expand(value).split() if os.path.splitext(w)[1].lower() in C_FAMILY)
        found = [os.path.normpath(s if os.path.isabs(s) else os.path.join(here, s)) for s in sources]
        build.amd_sources.update(s for s in found if os.path.isfile(s))
        build.amd_defines.update(defines - nvidia_defines)
        build.both_defines.update(d for d in defines & nvidia_defines if "=" not in d)
        build.nvidia_defines.update(nvidia_defines - defines)
        build.amd_build_files.add(path)
    _nvcc_only_makefiles(nvcc_only, amd_texts, build)


def _nvcc_only_makefiles(nvcc_only: list, amd_texts: list[str], build: AmdBuild) -> None:
    """A Makefile that runs nvcc and names nothing of AMD's, in a project whose other Makefiles do build for
    AMD (gpu-benches: `cuda-memcpy/Makefile` beside `gpu-stream/Makefile`, which hipifies and runs hipcc),
    builds a program the project keeps to NVIDIA: it and the sources it names in its own directory are
    NVIDIA's (a shared `../dtime.hpp` is not). Not a
    Makefile above an AMD one (it may drive both), nor one whose directory an AMD Makefile names."""
    amd_dirs = {os.path.dirname(p) for p in build.amd_build_files if not p.endswith((".txt", ".cmake"))}
    if not amd_dirs:
        return
    for path, lines in nvcc_only:
        here = os.path.dirname(path)
        if any(d == here or d.startswith(here + os.sep) for d in amd_dirs):
            continue
        name = re.escape(os.path.basename(here))
        if any(re.search(rf"(?<![\w.-]){name}(?![\w.-])", t) for t in amd_texts):
            continue
        build.nvidia_build_files.add(path)
        for line in lines:
            for w in line.replace("$<", " ").split():
                w = w.rstrip(":")
                if os.path.splitext(w)[1].lower() in C_FAMILY and "$" not in w:
                    full = os.path.normpath(w if os.path.isabs(w) else os.path.join(here, w))
                    if full.startswith(here + os.sep) and os.path.isfile(full) and full not in build.amd_sources:
                        build.nvidia_sources.add(full)


_SCRIPT_NVCC = lazy_re(r"(?<![\w/.-])nvcc\b")


def _nvcc_only_scripts(scripts: list, build: AmdBuild) -> None:
    """A build script (`build.sh`) that runs nvcc and names nothing of AMD's, in a project whose build files
    do build for AMD, compiles a program the project keeps to NVIDIA (Astaroth's cuDNN sample, whose
    MIOpen twin has a hipcc script): the sources its nvcc lines name in its own directory are NVIDIA's.
    Not a script above an AMD build file (it may drive that build), nor one whose directory an AMD build
    file names, nor a source the AMD build compiles."""
    amd_files = [p for p in build.amd_build_files]
    amd_dirs = {os.path.dirname(p) for p in amd_files}
    amd_texts = None
    for path in scripts:
        if _TOOLING_SCRIPT.search(os.path.basename(path)):
            continue
        lines = _BUILD_COMMENT.sub(b"", _read_bytes(path) or b"").decode("utf-8", "replace").splitlines()
        if not any(_SCRIPT_NVCC.search(line) for line in lines) or any(_hip_line(line) for line in lines):
            continue
        here = os.path.dirname(path)
        if any(d == here or d.startswith(here + os.sep) for d in amd_dirs):
            continue
        if amd_texts is None:
            amd_texts = [(_read_bytes(p) or b"").decode("utf-8", "replace") for p in amd_files]
        name = re.escape(os.path.basename(here))
        if any(re.search(rf"(?<![\w.-]){name}(?![\w.-])", t) for t in amd_texts):
            continue
        for line in lines:
            if not _SCRIPT_NVCC.search(line):
                continue
            for w in line.split():
                w = w.strip("\"'")
                if os.path.splitext(w)[1].lower() in C_FAMILY and "$" not in w:
                    full = os.path.normpath(w if os.path.isabs(w) else os.path.join(here, w))
                    if full.startswith(here + os.sep) and os.path.isfile(full) and full not in build.amd_sources:
                        build.nvidia_sources.add(full)


_AM_IF = lazy_re(r"^if\s+(!?)(\w+)\s*$")
_AM_CUDA = lazy_re(r"\$[({](?:CUDA|NVCC)\w*[)}]|-lcuda(?:rt)?\b|\bnvcc\b")
_AM_AMD = lazy_re(r"ROCM|HIP|rocm|hip(?:cc)?\b|amdhip|AMDGPU")


def autotools_nvidia_dirs(fragments: list[str], switches: frozenset, files_out: set | None = None) -> set:
    """Directories whose `Makefile.am` builds for NVIDIA alone, in an autotools project with a switch per
    vendor: the whole file sits in `if HAVE_CUDA` ... `endif`, or, outside its blocks for the NVIDIA
    switches, it still uses CUDA's flags or libraries (`$(CUDA_CPPFLAGS)`, `$(CUDA_LIBS)`) and names nothing
    of AMD's (UCX's GPU-direct module, built when configure found CUDA). A directory whose CUDA lines all
    sit in such blocks (`if HAVE_CUDA` / `LIBS += $(CUDA_LIBS)` / `endif`) builds for every vendor.
    `files_out` receives the sources listed only inside such blocks (`if HAVE_CUDA` / `test_SOURCES +=
    test_cuda.cc` / `endif`)."""
    out = set()
    inside_files, outside_files = set(), set()
    for path in fragments:
        if os.path.basename(path) != "Makefile.am":
            continue
        data = _read_bytes(path)
        if data is None:
            continue
        kept, stack, code = [], [], []  # stack: is each enclosing branch an NVIDIA switch's?
        for line in data.decode("utf-8", "replace").splitlines():
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            code.append(stripped)
            m = _AM_IF.match(stripped)
            if m is not None:
                name = m.group(2).upper()  # `if HAVE_CUDA`, `if IODEMO_CUDA`: the CUDA part of a common file
                stack.append(not m.group(1) and (name in switches or "CUDA" in name.split("_")))
            elif stripped == "else" and stack:
                stack[-1] = False
            elif stripped.startswith("endif") and stack:
                stack.pop()
            elif not any(stack):
                kept.append(stripped)
            if m is None and files_out is not None:
                names = {os.path.normpath(os.path.join(os.path.dirname(path), w)) for w in stripped.split()
                         if os.path.splitext(w)[1].lower() in C_FAMILY}
                (inside_files if any(stack) else outside_files).update(names)
        rest = "\n".join(kept)
        wrapped = bool(code) and _AM_IF.match(code[0]) is not None and not kept
        if wrapped or (_AM_CUDA.search(rest) and not _AM_AMD.search("\n".join(code))):
            out.add(os.path.dirname(path))
    if files_out is not None:
        files_out.update(f for f in inside_files - outside_files if os.path.isfile(f))
    return out


def _hip_line(line: str) -> bool:
    return bool(re.search(r"(?<![\w-])hipcc\b|\$[({]HIPCC[)}]|-x\s*hip\b|--offload-arch=gfx", line))


# The whole build --------------------------------------------------------------------------------

def read(root: str) -> AmdBuild:
    build = AmdBuild(root)
    fragments: list[str] = []
    scripts: list[str] = []
    cmake, make = _build_files(root, fragments, build.vendored_dirs, scripts)
    build.project_words = _switch_words(cmake + make + fragments[:MAX_BUILD_FILES])
    build.python_amd = python_builds_for_amd(root)
    build.ci_amd = ci_builds_for_amd(root)
    build.torch_extension = build.python_amd and any(
        _TORCH_EXTENSION.search(_read_bytes(p) or b"") for p in _python_build_paths(root) if p.endswith(".py"))
    if build.python_amd:
        build.python_nvidia_files, build.python_nvidia_dirs = python_nvidia_sources(root)
        # Extensions with a `setup.py` of their own that needs nvcc (flash-attention's `csrc/layer_norm`):
        # the project's ROCm build never builds them.
        nested_files, nested_dirs = nvcc_only_subpackages(root, build.vendored_dirs)
        build.python_nvidia_files |= nested_files
        build.python_nvidia_dirs |= nested_dirs
    build.removed_names_defined = removed_names_defined(root, build.project_words)
    build.nvidia_switches = nvidia_switches(build.project_words)
    if not build.python_amd:  # a build that hipifies at build time keeps its CUDA switches on for ROCm
        build.library_switches = cuda_library_switches(build.project_words)
        variants = cuda_variant_switches(build.project_words, build.nvidia_switches)
        build.nvidia_switches |= variants
        build.library_switches |= variants
        # `if(KRS_ENABLE_NVSHMEMSPACE)` beside `KRS_ENABLE_ROCSHMEMSPACE`: a per-vendor library option's block
        build.library_switches |= {w for w in build.nvidia_switches if not names_cuda(w)}
    if cmake:
        _read_cmake(root, cmake, build)
    if make:
        _read_make(root, make, build)
    if build.known or build.nvidia_switches or build.python_amd:
        build.nvidia_switches |= nvidia_library_switches(build.project_words)
    if build.nvidia_switches:
        build.autotools_nvidia_dirs = autotools_nvidia_dirs(fragments, build.nvidia_switches,
                                                           build.autotools_nvidia_files)
    if not build.known:
        # A project that names both backends' switches but builds for AMD with plain CXX (kokkos-tools:
        # `if(Kokkos_ENABLE_CUDA) add_subdirectory(nvtx-connector)` beside the HIP switch's roctx one)
        # keeps what it adds only under the CUDA switch to NVIDIA, as autotools blocks do.
        kept = set(build.nvidia_subdirs) if build.nvidia_switches else set()
        # A project that picks its backend by a variable's value, CUDA or HIP among them, and builds for AMD
        # through a dependency (HiPACE++'s `HiPACE_COMPUTE` handed to AMReX): the sources it adds only when
        # the value is CUDA are the NVIDIA build's (`WrapCuFFT.cpp` beside `WrapRocFFT.cpp`).
        build.backend_choice = _chooses_cuda_or_hip(cmake)
        chosen = set(build.nvidia_sources) if build.backend_choice else set()
        build.nvidia_sources.clear()
        build.nvidia_sources |= chosen
        build.nvidia_dirs.clear()
        build.nvidia_build_files.clear()
        build.nvidia_ranges.clear()
        build.nvidia_subdirs = kept
        build.amd_defines.clear()
        build.nvidia_defines.clear()
        build.both_defines.clear()
    if build.known:
        build.nvidia_subdirs |= _nvidia_make_dirs(root, make, cmake)
        _nvcc_only_scripts(scripts, build)
    if os.path.isfile(os.path.join(root, "meson.build")):
        from hiplint import mesonread
        meson = mesonread.read(root)
        if meson.amd:
            build.meson_amd = True
            build.nvidia_sources |= meson.nvidia_files
            build.nvidia_defines.update(meson.nvidia_defines)
    from hiplint import bazelread
    if bazelread.is_bazel_project(root):
        bazel = bazelread.read(root)
        if bazel.amd:
            build.bazel_amd = True
            build.nvidia_sources |= bazel.nvidia_files
    build.gpu_defines = gpu_build_defines(build.gpu_candidates, fragments)
    build.preset_nvidia_files = backend_presets(cmake)
    build.nvidia_build_files |= build.preset_nvidia_files
    build.amd_defines -= build.nvidia_defines & build.amd_defines
    build.amd_dirs = {os.path.dirname(s) for s in build.amd_sources}
    if build.known and not any(os.path.exists(os.path.join(root, n)) for n in _OTHER_BUILD_SYSTEMS):
        build.source_names, build.source_globs, build.directory_names, build.source_places, build.loose_places = _named_sources(
            cmake + make + fragments + [p for p in scripts if not _TOOLING_SCRIPT.search(os.path.basename(p))]
            + _python_build_paths(root))
        # A directory no CMake file reaches may still be built by a Makefile, a script or setup.py.
        others = [_BUILD_COMMENT.sub(b"", _read_bytes(p) or b"") for p in make + fragments + scripts + _python_build_paths(root)]
        build.unreached_dirs = {d for d in build.unreached_dirs if not any(
            re.search(rb"(?<![\w.\-])" + re.escape(os.path.basename(d).encode()) + rb"(?![\w\-])", t) for t in others)}
    else:
        build.unreached_dirs = set()  # Meson, Bazel or another build hiplint does not read may build them
    return build


# A CI job that configures the project itself for AMD GPUs: a CMake switch for HIP or ROCm turned on
# (`-DKokkos_ENABLE_HIP=ON`, `-DX_USE_ROCM=1`), AMD architectures (`-DCMAKE_HIP_ARCHITECTURES=gfx90a`,
# `-DGPU_TARGETS=gfx942`, `--offload-arch=gfx90a`) or hipcc as the compiler.
_CI_AMD = lazy_re(rb"(?i)-D\s*\w*(?:_HIP|_ROCM|HIP_|ROCM_)\w*\s*=\s*(?:ON|TRUE|YES|1)\b|-D\s*\w*(?:ARCHITECTURES|TARGETS|ARCH)\s*="
                  rb"\s*[\"']?gfx[0-9a-f]{3,4}|--offload-arch[= ]gfx[0-9a-f]{3,4}|-DCMAKE_(?:CXX|HIP)_COMPILER=\S*hipcc\b")
_CI_FILES = (".github/workflows", ".gitlab-ci.yml", ".gitlab/ci", ".circleci", "Jenkinsfile", ".ci", "ci")
MAX_CI_FILES = 200


def ci_builds_for_amd(root: str) -> str:
    """A CI job of the project (GitHub workflows, GitLab CI, CircleCI, Jenkins) that configures it for AMD
    (PennyLane-Lightning's ROCm wheel: `-DKokkos_ENABLE_HIP=ON`): the project builds for AMD even where
    its build files say so only through a dependency's switch. The job's file, or ""."""
    seen = 0
    for name in _CI_FILES:
        path = os.path.join(root, name)
        paths = [path] if os.path.isfile(path) else []
        if os.path.isdir(path):
            for here, subdirs, files in os.walk(path):
                subdirs.sort()
                paths += [os.path.join(here, f) for f in sorted(files)
                          if f.endswith((".yml", ".yaml", ".sh", ".groovy")) or f == "Jenkinsfile"]
        for p in paths:
            seen += 1
            if seen > MAX_CI_FILES:
                return ""
            data = _read_bytes(p)
            if data and _CI_AMD.search(re.sub(rb"(?m)^\s*#[^\n]*", b"", data)):
                return p
    return ""


_VALUE_TEST = lazy_re(rb'(?i)\b(?:else)?if\s*\(\s*"?\$?\{?([A-Za-z_]\w*)\}?"?\s+STREQUAL\s+"?(CUDA|HIP)"?\s*\)')


def _chooses_cuda_or_hip(cmake_files: list[str]) -> bool:
    """Does one variable choose between the builds by value, `if(X STREQUAL CUDA)` and `if(X STREQUAL
    HIP)` both tested in the CMake files?"""
    seen: dict[bytes, set] = {}
    for path in cmake_files:
        for m in _VALUE_TEST.finditer(_read_bytes(path) or b""):
            values = seen.setdefault(m.group(1).upper(), set())
            values.add(m.group(2).upper())
            if len(values) == 2:
                return True
    return False


# Build systems whose files hiplint does not read: where one is present, a source no CMake file or
# Makefile names may well be compiled, so none is taken for unbuilt.
_OTHER_BUILD_SYSTEMS = ("meson.build", "SConstruct", "BUILD", "BUILD.bazel", "WORKSPACE", "MODULE.bazel",
                        "premake5.lua", "build.ninja", "xmake.lua")
_BUILD_SCRIPT = lazy_re(r"\.(?:sh|bash|pl|in)$")
# A directory holding one of these builds its own sources (unbuilt(): not a directory a list left out).
_BUILD_FILE_NAMES = frozenset({"CMakeLists.txt", "setup.py", "pyproject.toml", "meson.build", "BUILD", "BUILD.bazel",
                               "configure.ac", "Makefile.am", "SConscript", "SConstruct", "build.sh"})
_FILE_TOKEN = lazy_re(rb"[A-Za-z0-9_.+\-/${}*?\[\]]+")
_UNBUILT_SUFFIXES = frozenset({".c", ".cc", ".cpp", ".cxx", ".cu", ".hip"})
_INCLUDED_ONLY = frozenset({".inl", ".cuinl", ".ipp", ".tpp"})  # read only through an #include
# A `#` comment to the end of its line: at the line's start or after a blank (not `$#`, `"#define"`).
_BUILD_COMMENT = lazy_re(rb"(?m)(?:^|(?<=[ \t]))#(?![a-z]+\s*<)[^\n\"']*$")


def _glob_with_directory(token: str, name_pattern: str) -> str:
    """`kernels/generated/*.cu` for the token `"${SRC}/kernels/generated/*.cu"`: its directory part, each
    variable a `*`, leading `./` and `../` dropped; the name pattern alone where the token has none."""
    token = token.rstrip(")}\"',")
    if "/" not in token:
        return name_pattern
    directory = re.sub(r"\$[({][^)}]*[)}]|\$\w+", "*", token.rsplit("/", 1)[0])
    parts = [p for p in directory.split("/") if p not in ("", ".", "..")]
    if not parts or all(p in ("*", "**") for p in parts):
        return name_pattern
    return "/".join(parts) + "/" + name_pattern


def _glob_matches(full: str, pattern: str) -> bool:
    """Does a build file's glob pattern (its directory part, if any) match the source at `full`? The
    directory part matches the end of the source's directory path, at any depth below it (`*` spans `/`,
    as GLOB_RECURSE and `**` do)."""
    if "/" not in pattern:
        return fnmatch.fnmatch(os.path.basename(full), pattern)
    full = full.replace(os.sep, "/")
    return fnmatch.fnmatch(full, pattern if pattern.startswith("*") else "*/" + pattern)


# Scripts that format, lint or check the sources name every `*.cu` of the tree without building one
# (`find kernels/ -name '*.cu' | xargs clang-format`): not read for the names a build compiles.
_TOOLING_SCRIPT = lazy_re(r"(?i)(?:^|[-_.])(?:(?:clang[-_])?format(?:ting)?|lint(?:ing|er)?|(?:clang[-_])?tidy|style|"
                          r"codespell|spell(?:check)?|licen[cs]es?|copyright)(?:[-_.]|$)")  # not `information.sh`


# pyproject.toml tables of linters, formatters and test runners: the paths they name are not built.
_TOOLING_TABLE = lazy_re(rb"(?ms)^\[tool\.(?:ruff|mypy|black|isort|yapf|codespell|pytest|coverage|pylint|flake8|"
                         rb"typos|pyright|pydocstyle|bandit|autopep8|docformatter)\b[^\n]*\n.*?(?=^\[(?!tool\.(?:ruff|mypy|"
                         rb"black|isort|yapf|codespell|pytest|coverage|pylint|flake8|typos|pyright|pydocstyle|bandit|"
                         rb"autopep8|docformatter)\b)|\Z)")


_UNDER = "under:"  # source_places entry: a bare name, placed in this directory or below it


def _places(full: str, place: str) -> bool:
    """Does a source_places/loose_places entry put the source at `full`? "" anywhere, `under:DIR` in DIR
    or below, else a glob pattern with its directory part."""
    if not place:
        return True
    if place.startswith(_UNDER):
        return full.startswith(place[len(_UNDER):] + os.sep)
    return _glob_matches(full, place)
# Build files whose bare names may name a source anywhere in the tree (Bazel packages aside, none here
# resolves names against its own directory only in every use): kept as "named anywhere".
_TREE_WIDE_BUILD_FILES = frozenset({"BUILD", "BUILD.bazel", "SConscript", "SConstruct"})


def _named_sources(paths: list[str]) -> tuple[frozenset, tuple, frozenset, dict, dict]:
    """The file names (and their stems) the build files and scripts write, the glob patterns they
    write (`*.cu`, `kernel_*.cpp`, `$(wildcard src/*.c)`), the directory names they write (each
    directory part of a path, and a bare word: `add_subdirectory(punica)`), where each source name is
    placed ({`x.cu`: {`kernels/attention/x.cu`, or "" for a bare name}}) and the names and stems written
    otherwise (`x.o`, a target named `x`)."""
    names: set[str] = set()
    globs: set[str] = set()
    directories: set[str] = set()
    placed: dict[str, set] = {}
    loose: dict[str, set] = {}
    for path in paths:
        data = _read_bytes(path)
        if not data:
            continue
        # A name in a comment builds nothing (Legion's `# set(HIPSRC_cuda_arrays cuda_arrays_gpu.cu)`, left
        # out of the HIP build until a bug is fixed). CMake, Make, shell and Python all comment with `#`.
        data = _BUILD_COMMENT.sub(b"", data)
        if os.path.basename(path) == "pyproject.toml":
            data = _TOOLING_TABLE.sub(b"", data)  # `[tool.ruff] exclude = ["kernels/x/gen.py"]` builds nothing
        for m in _FILE_TOKEN.finditer(data):
            token = m.group(0).decode("utf-8", "replace").rstrip(")}\"',")
            base = token.rsplit("/", 1)[-1]
            directories.update(token.split("/")[:-1])
            if "." not in base:
                directories.add(base)
            if not base:
                continue
            if any(c in base for c in "*?[") or "$" in base:
                pattern = re.sub(r"\$[({][^)}]*[)}]", "*", base)
                suffix = pattern.rsplit(".", 1)[1].lower() if "." in pattern else ""
                if suffix == "*" or "." + suffix in C_FAMILY or any(c in suffix for c in "?["):
                    # `*.cu`, `kernel_*.cpp`, `${NAME}.cu`, `*.*` (not a lone `*`: comments); with the directory
                    # part the token writes (`generated/*.cu` matches no source outside a `generated/`).
                    globs.add(_glob_with_directory(m.group(0).decode("utf-8", "replace"), pattern))
                continue
            names.add(base)
            names.add(os.path.splitext(base)[0])
            names.add(base.split(".", 1)[0])
            if os.path.splitext(base)[1].lower() in _UNBUILT_SUFFIXES:
                # where the token puts the source (`kernels/attention/x.cu`; "" for a variable path). A bare
                # name (`nvcc main.cu`, `add_executable(x main.cu)`) is relative to the build file: it
                # names that file's directory or one below it (`VPATH`), not every `main.cu` of the tree.
                where = _glob_with_directory(token, base)
                if "/" in where:
                    placed.setdefault(base, set()).add(where)
                elif token == base and os.path.basename(path) not in _TREE_WIDE_BUILD_FILES:
                    placed.setdefault(base, set()).add(_UNDER + os.path.dirname(os.path.abspath(path)))
                else:
                    placed.setdefault(base, set()).add("")
            else:
                # `x.o`, a target `x`: a bare one is the build file's own (its directory or below)
                where = "" if token != base or os.path.basename(path) in _TREE_WIDE_BUILD_FILES \
                    else _UNDER + os.path.dirname(os.path.abspath(path))
                for key in (base, os.path.splitext(base)[0], base.split(".", 1)[0]):
                    loose.setdefault(key, set()).add(where)
    return frozenset(names), tuple(sorted(globs)), frozenset(directories), placed, loose


def digest(root: str) -> str:
    return hashlib.sha256(for_path(root).describe().encode()).hexdigest()[:16]
