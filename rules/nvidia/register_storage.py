import os
import re

from hiplint import CudaRule, Edit, Fix, Impact, Severity
from hiplint.includers import c_only_header
from hiplint.lazy import lazy_re

# A GNU explicit register variable (`register int r asm("ebx");`) needs the keyword, and clang accepts
# it in C++17: left alone, and never fixed (without `register` the asm label means something else).
_ASM_LABEL = lazy_re(rb"\b(?:asm|__asm|__asm__)\s*(?:volatile\s*)?\(")
# C, where `register` is valid (and forbids taking the address): not reported.
C_EXTENSIONS = frozenset({".c"})


# `#pragma GCC diagnostic ignored "-Wregister"` (or `clang`): clang honours it, `-Wregister` being an error
# only by default; push/pop scope it.
_DIAGNOSTIC_PRAGMA = lazy_re(rb'(?m)^[ \t]*#[ \t]*pragma[ \t]+(?:GCC|clang)[ \t]+diagnostic[ \t]+'
                             rb'(push|pop|ignored|warning|error)\b[ \t]*(?:"([^"\n]*)")?')


def register_allowed_ranges(data: bytes) -> list[tuple[int, int]]:
    """Byte ranges of the file where a diagnostic pragma turns `-Wregister` off."""
    ranges, stack, since = [], [], None
    for m in _DIAGNOSTIC_PRAGMA.finditer(data):
        what, option = m.group(1), m.group(2)
        if what == b"push":
            stack.append(since is not None)
            continue
        if what == b"pop":
            allowed = stack.pop() if stack else False
            if since is not None and not allowed:
                ranges.append((since, m.start()))
                since = None
            elif since is None and allowed:
                since = m.end()
            continue
        if option != b"-Wregister":
            continue
        if what == b"ignored" and since is None:
            since = m.end()
        elif what != b"ignored" and since is not None:
            ranges.append((since, m.start()))
            since = None
    if since is not None:
        ranges.append((since, len(data)))
    return ranges


# The project's own C++ dialect, set at the top of its build: `set(CMAKE_CXX_STANDARD 14)` (outside
# comments), or `-std=c++14` / `-std=gnu++11` in a top-level Makefile.
_CMAKE_STANDARD = lazy_re(rb"(?im)^[ \t]*set[ \t]*\([ \t]*CMAKE_CXX_STANDARD[ \t]+\"?(\d+)")
_MAKE_STANDARD = lazy_re(rb"-std=(?:c|gnu)\+\+(\d+|[0-9a-z]+)")
_DIALECTS = {b"98": 98, b"03": 3, b"0x": 11, b"11": 11, b"1y": 14, b"14": 14, b"1z": 17, b"17": 17, b"2a": 20,
             b"20": 20, b"2b": 23, b"23": 23, b"2c": 26, b"26": 26}
GPU_SOURCE_EXTENSIONS = frozenset({".cu", ".cuh", ".hip"})


def _before_cxx17(value: int) -> bool:
    return value in (3, 11, 14) or value == 98


def project_pins_pre17(root: str) -> bool:
    """Does the project's top-level build pin a C++ dialect before C++17 (every `CMAKE_CXX_STANDARD` its
    top CMakeLists.txt sets, or every `-std=` of its top Makefile)? Then its C++ sources, compiled as
    CXX by whatever compiler (hipcc too), only get clang's deprecation warning for `register`."""
    for name, pattern in (("CMakeLists.txt", _CMAKE_STANDARD), ("Makefile", _MAKE_STANDARD)):
        try:
            with open(os.path.join(root, name), "rb") as fh:
                data = re.sub(rb"#[^\n]*", b"", fh.read(1024 * 1024))
        except OSError:
            continue
        values = [_DIALECTS.get(m.group(1), 0 if name == "Makefile" else int(m.group(1)))
                  for m in pattern.finditer(data)]
        if values:
            return all(_before_cxx17(v) for v in values)
    return False


class RegisterStorageClass(CudaRule):
    """The `register` storage class, which C++17 removed: a compile error under hip-clang.

    ## What it does
    Finds the `register` storage class specifier in declarations and parameters
    (`register int i = ...;`, `for (register int j = 0; ...)`, `void f(register float x)`), in
    device and host code alike. Not HLSL's `register(u8)` binding in a shader header kept beside
    the C++ sources.

    ## Why it breaks on AMD
    C++17 removed `register` as a storage class (P0001R1); the keyword stays reserved. HIP code is
    compiled by clang, whose default language is C++17 (`gnu++17` since Clang 16), and clang makes
    "ISO C++17 does not allow 'register' storage class specifier" (`-Wregister`) an error by
    default. Checked here: clang 19 with HIP 5.2 headers (`clang++ -x hip`, with and without
    `-std=c++17`) and ROCm 7.2's clang 22 both stop with that error, in the device pass and in the
    host pass. nvcc accepts the same file: its device front end says nothing, and GCC, as the host
    compiler, only warns (`-Wregister`), so CUDA projects carry the keyword for years unnoticed.
    Only with an explicit older dialect (`-std=c++14`; HIP 5.x's Perl `hipcc` passed `-std=c++11`)
    is it a deprecation warning (`-Wdeprecated-register`). So a C++ source (not `.cu`, `.cuh`, `.hip`)
    of a project whose top-level build pins C++14 or older (`set(CMAKE_CXX_STANDARD 14)` in its top
    CMakeLists.txt, `-std=c++11` in its top Makefile: every such setting there) is not reported: CMake
    passes that dialect to whatever compiles it as C++, hipcc included.

    The keyword has had no effect in C++ for a long time (compilers allocate registers themselves,
    and C++11 deprecated it), so the fix is to drop it.

    Not reported: the word in comments, strings and other identifiers (`registers`, `__register`);
    GNU explicit register variables (`register int r asm("ebx");`), which need the keyword and which
    clang accepts in C++17; `.c` files, where `register` is valid C; and `.h` headers with no C++ or
    CUDA syntax of their own that only `.c` sources of the project include (directly or through other
    such headers: Open MPI's `opal_fifo.h`). Other headers are reported: a HIP source that includes
    one compiles it as C++17. Nor where the file turns the diagnostic off, from
    `#pragma GCC diagnostic ignored "-Wregister"` (or `clang`) to the `#pragma ... diagnostic pop` that
    ends its scope: `-Wregister` is an error only by default, and clang honours the pragma (checked
    with ROCm 7.2's clang 22 for gfx942 and gfx1100).

    ## Example
    ```cuda
    __global__ void scale(float* out, const float* in, int n) {
        register int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = 2.0f * in[i];
    }
    ```

    ## Use instead
    ```cuda
    __global__ void scale(float* out, const float* in, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = 2.0f * in[i];
    }
    ```

    ## Fix
    Removes the keyword and the blanks after it. Safe: in C++ `register` never changed what a
    program means (unlike C, even taking the variable's address is allowed), and nvcc and GCC ignore
    it, so the code means the same on NVIDIA and compiles on AMD. Never offered for an explicit
    register variable (those are not reported).

    ## References
    - P0001R1, "Remove Deprecated Use of the register Keyword" (C++17): https://www.open-std.org/jtc1/sc22/wg21/docs/papers/2015/p0001r1.html
    - cppreference, storage class specifiers (`register` removed in C++17, keyword reserved): https://en.cppreference.com/w/cpp/language/storage_duration
    - Clang diagnostics reference, `-Wregister` (an error by default): https://clang.llvm.org/docs/DiagnosticsReference.html#wregister
    - Clang 16 release notes (default C++ language mode is `gnu++17`): https://releases.llvm.org/16.0.0/tools/clang/docs/ReleaseNotes.html
    - GCC, explicit register variables (`register int r asm("reg")`): https://gcc.gnu.org/onlinedocs/gcc/Explicit-Register-Variables.html
    - HIP porting guide (HIP code is compiled by clang, hipcc wraps it): https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html
    """

    code = "NV008"
    name = "register-storage-class"
    summary = "`register` storage class: removed in C++17, an error under hip-clang (nvcc only warns)"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    fix_availability = "always"
    report_in_hip_branches = True  # an error wherever AMD compiles it
    checklist = "Remove the `register` keyword (C++17 removed it; clang rejects it, nvcc ignored it)."
    query = """((storage_class_specifier) @spec (#eq? @spec "register"))"""

    def check(self, ctx, captures):
        spec = captures["spec"][0]
        if os.path.splitext(ctx.path)[1].lower() in C_EXTENSIONS:
            return
        if ctx.fs_path and c_only_header(ctx.fs_path):
            return  # a C header that only C sources include: compiled as C
        if ctx.fs_path and os.path.splitext(ctx.path)[1].lower() not in GPU_SOURCE_EXTENSIONS \
                and _pins_pre17(ctx.fs_path):
            return  # a C++ source of a project built as C++14 or older: a deprecation warning there
        decl = spec.parent
        if decl is not None and _ASM_LABEL.search(ctx.unit.data[decl.start_byte:decl.end_byte]):
            return  # an explicit register variable: valid, and needs the keyword
        start, end = ctx.file_range(spec)
        data = ctx.source.data
        after = end
        while after < len(data) and data[after] in b" \t":
            after += 1
        if data[after:after + 1] == b"(":
            return  # HLSL's resource binding (`RWBuffer<float> x : register(u8);`, a shader header): no C++ keyword
        allowed = ctx.cache.get("register_allowed")
        if allowed is None:
            allowed = ctx.cache["register_allowed"] = register_allowed_ranges(data)
        if any(s <= start < e for s, e in allowed):
            return  # the file turns `-Wregister` off here: hip-clang compiles it
        while end < len(data) and data[end] in b" \t":
            end += 1
        fix = Fix.safe("Remove `register`", Edit(start, end, ""))
        ctx.report(spec, "`register` storage class: C++17 removed it, and hip-clang rejects it "
                         "(\"ISO C++17 does not allow 'register' storage class specifier\"); nvcc only warns. "
                         "Remove the keyword", fix=fix)


_PINNED: dict = {}


def _pins_pre17(path: str) -> bool:
    from hiplint.amdbuild import root_of

    root = root_of(path)
    if root not in _PINNED:
        _PINNED[root] = project_pins_pre17(root)
    return _PINNED[root]
