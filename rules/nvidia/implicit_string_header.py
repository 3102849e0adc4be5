import os
import re

from hiplint import CudaRule, Edit, Fix, Impact, Severity
from hiplint.cparse import iter_nodes
from hiplint.headers import project_headers, resolve

from .._cuda import device_function, file_defined_names
from hiplint.lazy import lazy_re

# The <string.h> functions a host program calls (C11 7.24, plus POSIX strdup/strndup).
STRING_FUNCTIONS = ("memcpy", "memmove", "memset", "memcmp", "memchr", "strlen", "strcpy", "strncpy", "strcat",
                    "strncat", "strcmp", "strncmp", "strchr", "strrchr", "strstr", "strtok", "strspn", "strcspn",
                    "strpbrk", "strerror", "strcoll", "strxfrm", "strdup", "strndup")
# Headers that declare them.
STRING_HEADERS = frozenset({"string.h", "cstring", "memory.h"})
# Headers checked not to bring <string.h> in with ROCm 7.2 (clang 22, libstdc++ 15, glibc): any other
# angle-bracket header may (hipRAND's hiprand_kernel.h does, through rocRAND), so a file including one is
# left alone, as is one including a project header that cannot be read.
KNOWN_WITHOUT_STRING_H = frozenset("""
cuda_runtime.h cuda_runtime_api.h cuda.h device_launch_parameters.h cooperative_groups.h cuda_fp16.h curand.h
hip/hip_runtime.h hip/hip_runtime_api.h hip/hip_cooperative_groups.h hip/hip_fp16.h hiprand/hiprand.h
iostream fstream sstream string vector algorithm cstdlib stdlib.h stdio.h cstdio cmath math.h sys/time.h time.h
ctime memory iomanip cassert assert.h chrono random map set list functional thread mutex limits climits float.h
cfloat stdint.h cstdint numeric utility exception stdexcept typeinfo unistd.h fcntl.h sys/types.h sys/stat.h
pthread.h omp.h array tuple type_traits atomic deque queue stack unordered_map iterator complex valarray cctype
ctype.h errno.h cerrno stdarg.h cstdarg stddef.h cstddef inttypes.h cinttypes signal.h malloc.h dirent.h getopt.h
error.h strings.h sys/mman.h sys/resource.h libgen.h sys/wait.h sys/socket.h sys/utsname.h locale.h setjmp.h wchar.h
cwchar bitset regex
""".split())
_INCLUDE = lazy_re(rb'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)


def _string_h_may_come(files) -> bool:
    """Does any of these (directory, text) include a <string.h> header, a header not known to go
    without it, or a project header that cannot be found (`#include "cuda.h"` finds the toolkit's)?"""
    for directory, data in files:
        for kind, name in _INCLUDE.findall(data):
            name = name.decode("utf-8", "replace").strip()
            if name in STRING_HEADERS:
                return True
            if name in KNOWN_WITHOUT_STRING_H:
                continue
            if kind == b"<" or resolve(name, directory) is None:
                return True
    return False


class ImplicitStringHeader(CudaRule):
    """Host `memcpy`, `strlen`, ... in a `.cu` file that never includes `<cstring>`: nvcc brought it in.

    ## What it does
    Reports the first host call of a `<string.h>` function (`memcpy`, `memset`, `memcmp`, `strlen`,
    `strcpy`, `strcmp`, `strncpy`, `strcat`, `strchr`, `strstr`, `strtok`, `strdup`, ...) in a `.cu`
    file that includes neither `<cstring>` nor `<string.h>` (nor `<memory.h>`), directly or through its
    project headers. Calls inside `__global__` and `__device__`-only functions are not reported (HIP
    declares device `memcpy` and `memset`). A file that includes a header this rule does not know
    (`<helper_cuda.h>`, `<hiprand/hiprand_kernel.h>`), or a project header that cannot be read, is left
    alone: that header may bring `<string.h>` in (`#include "cuda.h"` with no such file in the project
    names the toolkit's header, which is known).

    ## Why it breaks on AMD
    nvcc includes `cuda_runtime.h` in every `.cu` file, and its `crt/common_functions.h` includes
    `<string.h>` (checked with CUDA 13.0's `nvcc -E`), so CUDA programs call `memcpy` and `strlen`
    without including anything; g++ with the same `#include <cuda_runtime.h>` fails. ROCm 7's
    `hip/hip_runtime.h` no longer brings `<string.h>` in (ROCm 7.2, clang 22, libstdc++: host `memcpy`
    and `memset` give "no matching function for call to 'memcpy'", because only HIP's device overloads
    are declared, and `strlen` gives "use of undeclared identifier 'strlen'"; HIP 5.2's header still
    included it). Every AMD target. In the 52 cuda-samples and Rodinia programs of docs/migrate.md
    it breaks three (Rodinia's dwt2d, nn and hotspot3D; the hand port of dwt2d fails the same way).

    ## Example
    ```cuda
    #include <stdio.h>
    int main(int argc, char** argv) {
        char name[64];
        strcpy(name, argv[0]);
        return (int)strlen(name);
    }
    ```

    ## Use instead
    ```cuda
    #include <cstring>
    #include <stdio.h>
    int main(int argc, char** argv) {
        char name[64];
        strcpy(name, argv[0]);
        return (int)strlen(name);
    }
    ```

    ## Fix
    Safe: inserts `#include <cstring>` before the file's first `#include` outside any `#if`
    (at the start of the file when there is none). It declares the same functions nvcc's implicit
    include did (libstdc++ and libc++ declare them in the global namespace too), so the code means the
    same on NVIDIA and compiles on AMD.

    ## References
    - HIP 7.0 changes, "HIP header clean up" (unneeded standard headers no longer included): https://rocm.docs.amd.com/projects/HIP/en/latest/hip-7-changes.html (added in https://github.com/ROCm/hip/pull/3821)
    - The same break fixed in ROCm's own projects: https://github.com/ROCm/rccl-tests/pull/132 (`strncpy`), https://github.com/ROCm/rccl/pull/1859 (`memcpy`)
    - C++ `<cstring>`: https://en.cppreference.com/w/cpp/header/cstring
    - NVIDIA CUDA compiler driver (nvcc includes `cuda_runtime.h` implicitly): https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/
    """

    code = "NV009"
    name = "implicit-string-header"
    summary = "host <string.h> function in a .cu file without <cstring>: nvcc's runtime include brought it, ROCm 7's does not"
    severity = Severity.ERROR
    impact = Impact.COMPILE
    fix_availability = "always"
    report_in_hip_branches = True  # an error wherever AMD compiles it
    in_macros = False
    checklist = "Include <cstring> where host code calls memcpy/memset/strlen/...: ROCm 7's hip_runtime.h no longer brings <string.h> in."
    # check_unit reports only the calls check collected: a file that names none of them has none.
    triggers = STRING_FUNCTIONS
    query = ("((call_expression function: (identifier) @fn) @call (#any-of? @fn %s))"
             % " ".join(f'"{n}"' for n in STRING_FUNCTIONS))

    def check(self, ctx, captures):
        call = captures["call"][0]
        if device_function(ctx, call) is not None:
            return  # HIP has device memcpy/memset; others would fail on NVIDIA too
        ctx.cache.setdefault(("NV009", "calls"), []).append(call)

    def check_unit(self, ctx):
        calls = ctx.cache.pop(("NV009", "calls"), [])
        if not calls or ctx.unit.is_macro or os.path.splitext(ctx.path)[1].lower() != ".cu":
            return
        names = sorted({ctx.text(c.child_by_field_name("function")) for c in calls})
        if set(names) & file_defined_names(ctx):
            return  # the file declares its own
        here = os.path.dirname(os.path.abspath(ctx.fs_path))
        files = [(here, ctx.source.data)] + [(os.path.dirname(p), data) for p, data in project_headers(ctx)]
        if _string_h_may_come(files):
            return
        root = ctx.units[0].root
        top = [n for n in iter_nodes(root, frozenset({"preproc_include"})) if n.parent is not None
               and n.parent.type == "translation_unit"]
        at = ctx.file_range(min(top, key=lambda n: n.start_byte))[0] if top else 0
        fix = Fix.safe("Include <cstring>", Edit(at, at, "#include <cstring>\n"))
        first = min(calls, key=lambda n: n.start_byte)
        listed = ", ".join(f"`{n}`" for n in names)
        ctx.report(first, f"{listed} on the host without <cstring>: nvcc's implicit cuda_runtime.h brings <string.h> "
                          "into every .cu file, ROCm 7's hip_runtime.h does not (\"no matching function for call to "
                          "'memcpy'\", \"use of undeclared identifier 'strlen'\"). Include <cstring>", fix=fix)
