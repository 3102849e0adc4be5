"""The compile oracle: does a fixture compile as CUDA with nvcc, and as HIP for AMD targets?

Compilers, all set up by tests/oracle/setup.sh:
- CUDA: nvcc `-arch=sm_90 -std=c++17 -c`, with the cuRAND, cuSOLVER and cuBLAS headers from NVIDIA's PyPI
  wheels (in the cache, never in the repository).
- ROCm 7.2 (the main HIP compiler): clang 22 with the HIP 7.2 host and device headers, the ROCm 7.2 device
  libraries and the ROCm libraries' headers (hipBLAS 3, hipCUB/rocPRIM, hipSOLVER, hipRAND, ...): Debian's
  ROCm 7.2 packages in a sid chroot (rocm72_chroot.sh), `-c` for gfx90a, gfx942 and gfx1100. It has the
  real `*_sync` family with its 64-bit-mask static_assert and a non-constexpr `warpSize`.
- HIP 5.2: Debian bookworm's clang-19 with Debian's HIP 5.2 headers, `-c` for the same targets. Only for
  a fixture written for an older ROCm (`hl-config: rocm-version` below 6), where the old headers are the
  point; they lack the `*_sync` family, as ROCm before 6.2 does.
- HIP (device only, ROCm 7.2): clang-19 with `hiprtc_runtime.h` from the `rocm-llvm-python` wheel,
  AMD's own flattened ROCm 7.2 device header. Only for kernel-only files (host API calls do not resolve there).

The "plain rename" baseline stands for what hipify does with device code: a textual rename of headers and
`cuda*`/`curand*` names (see RENAMES) and nothing else. Fixtures show that such a rename still fails
for AMD where `hiplint fix` followed by the same rename compiles.

A fixture that needs more flags says so itself: `// hl-oracle: nvcc-flags "..."` (nvcc) and
`// hl-oracle: hip-flags "..."` (the HIP compilers: the definitions its AMD build sets, say).

Run as a script for one file: `python tests/oracle/toolchain.py FILE [--cuda|--rocm72|--hip52]`.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("HIPLINT_ORACLE_CACHE")
             or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "hiplint-oracle")
CUDA_INCLUDE = CACHE / "cuda-include"
ROCM72_HEADER = CACHE / "rocm72" / "hiprtc_runtime.h"
HIP_ARCHS = ("gfx90a", "gfx942", "gfx1100")
CUDA_ARCH = "sm_90"
CLANG = os.environ.get("HIPLINT_ORACLE_CLANG", "clang++-19")
NVCC = os.environ.get("NVCC", "nvcc")
SYSTEM_DEVICE_LIBS = Path("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode")
TIMEOUT = 300

# Plain rename (the baseline). Headers first, then names. Longest header names first so that
# `curand_kernel.h` is not caught by `curand.h`.
HEADER_RENAMES = {
    "cuda_runtime.h": "hip/hip_runtime.h",
    "cuda_runtime_api.h": "hip/hip_runtime_api.h",
    "cuda.h": "hip/hip_runtime.h",
    "cuda_fp16.h": "hip/hip_fp16.h",
    "cooperative_groups.h": "hip/hip_cooperative_groups.h",
    "curand_kernel.h": "hiprand/hiprand_kernel.h",
    "curand.h": "hiprand/hiprand.h",
    "device_launch_parameters.h": "hip/hip_runtime.h",
    "cub/cub.cuh": "hipcub/hipcub.hpp",  # and `cub::` -> `hipcub::` (hipify-perl does both)
}
NAME_RENAMES = (
    (re.compile(r"\bcuda(?=[A-Z_])"), "hip"),      # cudaMalloc, cudaStream_t, cudaError_t
    # CUDA_R_32F and friends (not __CUDA_ARCH__). Not CUDA_VERSION: HIPIFY lists its HIP_VERSION mapping as
    # unsupported, so hipify leaves it and AMD sees it undefined.
    (re.compile(r"\bCUDA_(?=[A-Z])(?!VERSION\b)"), "HIP_"),
    (re.compile(r"\bcurand"), "hiprand"),          # curand_init, curandState, curandCreateGenerator
    (re.compile(r"\bCURAND_"), "HIPRAND_"),
    (re.compile(r"(?<![\w:])cub::"), "hipcub::"),  # cub::WarpReduce; not hipcub:: again
)
INCLUDE_RE = re.compile(r'(#\s*include\s*[<"])([^>"]+)([>"])')


def plain_rename(text: str, add_runtime: bool = True) -> str:
    """What hipify does to a file, reduced to its textual renames (the baseline; no warp changes)."""
    def header(m):
        return m.group(1) + HEADER_RENAMES.get(m.group(2), m.group(2)) + m.group(3)
    text = INCLUDE_RE.sub(header, text)
    for pattern, repl in NAME_RENAMES:
        text = pattern.sub(repl, text)
    if add_runtime and "hip/hip_runtime.h" not in text:  # hipify adds it too: device code needs it under clang
        text = '#include "hip/hip_runtime.h"\n' + text
    return text


# Vendor libraries this oracle may lack. A file including one of their headers cannot be compiled on that
# side here; the tests skip that side and name the header. Checked on disk (for HIP, in the headers of the
# compiler that compiles the file), so installing a library later brings its fixtures into the oracle
# without a change here.
CUDA_LIBRARIES_NOT_SET_UP = ("cudnn", "nccl", "cufft", "NvInfer", "NvOnnxParser", "cutlass", "cute", "nvrtc",
                             "cusparse", "npp", "nvjpeg", "cudss", "cutensor", "nvshmem", "nvshmemx")
HIP_LIBRARIES = ("hipcub", "hipblas", "hipblaslt", "hipsolver", "hipfft", "hipsparse", "rocblas",
                 "rocsolver", "rocfft", "rccl", "miopen", "roctracer", "rocwmma", "rocthrust",
                 "thrust", "migraphx", "hip_fp8.h", "hip_bf16.h", "hipsparselt", "ck")
CUDA_INCLUDE_DIRS = (CUDA_INCLUDE, Path("/usr/local/cuda/include"), Path("/usr/local/cuda/targets/x86_64-linux/include"))
HIP52_INCLUDE_DIRS = (Path("/usr/include"),)


def missing_library_headers(text: str, side: str) -> list[str]:
    """Library headers `text` includes that this oracle does not have: side "cuda" (nvcc), "hip" (the
    ROCm 7.2 toolchain) or "hip52" (Debian's HIP 5.2)."""
    libraries = CUDA_LIBRARIES_NOT_SET_UP if side == "cuda" else HIP_LIBRARIES
    dirs = CUDA_INCLUDE_DIRS if side == "cuda" else HIP52_INCLUDE_DIRS if side == "hip52" else \
        (ROCM72_ROOT / "usr/include",)
    out = []
    for name in re.findall(r"#\s*include\s*<([^>]+)>", text):
        stems = [part.split(".")[0] for part in name.split("/")]
        named = any(name.endswith("/" + lib) or name == lib if lib.endswith(".h") else
                    any(stem.startswith(lib) for stem in stems) for lib in libraries)
        if named and not any((d / name).exists() for d in dirs):
            out.append(name)
    return out


@dataclass
class Result:
    ok: bool
    what: str
    log: str
    seconds: float

    def __str__(self):
        head = f"{'PASS' if self.ok else 'FAIL'} {self.what} ({self.seconds:.1f}s)"
        return head if self.ok else head + "\n" + _first_errors(self.log)


def _first_errors(log: str, n: int = 6) -> str:
    lines = [l for l in log.splitlines() if "error" in l]
    return "\n".join(lines[:n]) or log[-2000:]


# Toolchain presence ---------------------------------------------------------------------------

def missing() -> list[str]:
    """What the oracle lacks on this machine; empty when everything is installed."""
    out = []
    if shutil.which(NVCC) is None:
        out.append("nvcc")
    if shutil.which(CLANG) is None:
        out.append(CLANG)
    if shutil.which("clang-offload-bundler-19") is None and shutil.which("clang-offload-bundler") is None:
        out.append("clang-tools-19")
    if shutil.which("ld.lld-19") is None and shutil.which("ld.lld") is None:
        out.append("lld-19")
    if not Path("/usr/include/hip/hip_runtime.h").exists():
        out.append("libamdhip64-dev (HIP headers)")
    if not Path("/usr/include/hiprand/hiprand_kernel.h").exists():
        out.append("libhiprand-dev")
    if not (SYSTEM_DEVICE_LIBS / "ocml.bc").exists():
        out.append("rocm-device-libs")
    if not (CUDA_INCLUDE / "curand_kernel.h").exists() or not (CUDA_INCLUDE / "cusolverDn.h").exists():
        out.append(f"CUDA library headers in {CUDA_INCLUDE}")
    if not ROCM72_HEADER.exists():
        out.append(f"ROCm 7.2 device header {ROCM72_HEADER}")
    if rocm72_full_missing():
        out.append(rocm72_full_missing())
    return out


def _isa_version(arch: str) -> int:
    """gfx942 -> 9402, gfx90a -> 9010, gfx1100 -> 11000 (major*1000 + minor*100 + stepping, stepping in hex)."""
    n = arch[3:]
    major, minor, stepping = int(n[:-2]), int(n[-2], 16), int(n[-1], 16)
    return major * 1000 + minor * 100 + stepping


def device_libs() -> Path:
    """Debian's device libraries plus the ISA-version files bookworm lacks (gfx942, gfx1100).

    Each oclc_isa_version_*.bc holds one constant, so the missing ones are generated; the rest are links.
    """
    version = subprocess.run([CLANG, "-dumpversion"], capture_output=True, text=True).stdout.strip()
    overlay = CACHE / f"devlibs-clang{version}"
    overlay.mkdir(parents=True, exist_ok=True)
    for bc in SYSTEM_DEVICE_LIBS.glob("*.bc"):
        link = overlay / bc.name
        if not link.exists():
            try:
                link.symlink_to(bc)
            except FileExistsError:
                pass
    for arch in HIP_ARCHS:
        target = overlay / f"oclc_isa_version_{arch[3:]}.bc"
        if target.exists():
            continue
        with tempfile.TemporaryDirectory() as tmp:
            ll = Path(tmp) / "isa.ll"
            ll.write_text('target triple = "amdgcn-amd-amdhsa"\n'
                          f"@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) "
                          f"constant i32 {_isa_version(arch)}, align 4\n")
            out = Path(tmp) / "isa.bc"
            subprocess.run([CLANG, "-nogpulib", "--target=amdgcn-amd-amdhsa", "-c", "-emit-llvm", str(ll), "-o", str(out)],
                           check=True, capture_output=True)
            shutil.move(str(out), str(target))
    return overlay


# Compiling ------------------------------------------------------------------------------------

def _run(cmd: list[str], what: str, cwd: str) -> Result:
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, cwd=cwd)
        ok, log = p.returncode == 0, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        ok, log = False, f"timed out after {TIMEOUT}s: {' '.join(cmd)}"
    return Result(ok, what, log, time.monotonic() - start)


HEADER_SUFFIXES = (".h", ".cuh", ".hpp", ".hh", ".inl", ".cuinl")


def headers_beside(directory: Path | None) -> dict[str, Path]:
    """The headers next to a file, by the name an #include uses."""
    if directory is None:
        return {}
    return {h.name: h for h in sorted(directory.iterdir()) if h.is_file() and h.suffix in HEADER_SUFFIXES}


def _with_source(text: str, suffix: str, fn, headers: dict[str, Path] | None = None, rename: bool = False):
    """Write `text` to a temporary directory, with its headers beside it (renamed like the file), and run fn."""
    with tempfile.TemporaryDirectory(prefix="hiplint-oracle-") as tmp:
        for name, h in (headers or {}).items():
            body = h.read_text(encoding="utf-8", errors="surrogateescape")
            (Path(tmp) / name).write_text(plain_rename(body, add_runtime=False) if rename else body,
                                          encoding="utf-8", errors="surrogateescape")
        src = Path(tmp) / f"input{suffix}"
        src.write_text(text, encoding="utf-8", errors="surrogateescape")
        return fn(str(src), tmp)


# A fixture that needs more flags says so itself: `// hl-oracle: nvcc-flags "-rdc=true"` (dynamic
# parallelism needs relocatable device code), `// hl-oracle: hip-flags "-DPROJ_USE_HIP"` (the definitions
# its AMD build sets). Its fixed outputs keep the comment.
NVCC_FLAGS = re.compile(r'//\s*hl-oracle:\s*nvcc-flags\s*"(?P<flags>[^"]+)"')
HIP_FLAGS = re.compile(r'//\s*hl-oracle:\s*hip-flags\s*"(?P<flags>[^"]+)"')


def nvcc_flags(text: str) -> list[str]:
    """The extra nvcc flags a file asks for with `// hl-oracle: nvcc-flags "..."`."""
    return [f for m in NVCC_FLAGS.finditer(text) for f in shlex.split(m.group("flags"))]


def hip_flags(text: str) -> list[str]:
    """The extra flags a file asks for on the HIP side with `// hl-oracle: hip-flags "..."`."""
    return [f for m in HIP_FLAGS.finditer(text) for f in shlex.split(m.group("flags"))]


def compile_cuda(text: str, include_dir: Path | None = None, what: str = "nvcc", headers: dict | None = None) -> Result:
    extra = nvcc_flags(text)

    def go(src, tmp):
        cmd = [NVCC, f"-arch={CUDA_ARCH}", "-std=c++17", *extra, f"-I{CUDA_INCLUDE}", "-x", "cu", "-c", src, "-o", f"{tmp}/out.o"]
        if include_dir:
            cmd.insert(1, f"-I{include_dir}")
        return _run(cmd, f"{what} {CUDA_ARCH}{''.join(' ' + f for f in extra)}", tmp)
    return _with_source(text, ".cu", go, headers if headers is not None else headers_beside(include_dir))


def compile_hip(text: str, archs=HIP_ARCHS, include_dir: Path | None = None, what: str = "hip",
                headers: dict | None = None) -> Result:
    """Debian's HIP 5.2 headers; full -c (codegen and device link) for every arch in one call. For code
    written for an older ROCm: 5.2 has no `*_sync` warp functions, as ROCm before 6.2 has none."""
    libs = device_libs()
    extra = hip_flags(text)

    def go(src, tmp):
        cmd = [CLANG, "-x", "hip", "-std=c++17", "--rocm-path=/usr", f"--rocm-device-lib-path={libs}",
               "-Wno-unused-result", "-DROCRAND_DISABLE_INLINE_ASM", "-O1", *extra]
        cmd += [f"--offload-arch={a}" for a in archs]
        if include_dir:
            cmd.append(f"-I{include_dir}")
        cmd += ["-c", src, "-o", f"{tmp}/out.o"]
        return _run(cmd, f"{what} HIP 5.2 {'+'.join(archs)}{''.join(' ' + f for f in extra)}", tmp)
    return _with_source(text, ".hip", go, headers if headers is not None else headers_beside(include_dir), rename=True)


def compile_rocm72(text: str, archs=HIP_ARCHS, include_dir: Path | None = None, what: str = "hip",
                   headers: dict | None = None) -> Result:
    """Device code only, against ROCm 7.2's hiprtc_runtime.h (real *_sync family, non-constexpr warpSize)."""
    extra = hip_flags(text)  # the fixture's AMD build definitions, as the full compiles take them

    def go(src, tmp):
        stub = Path(tmp) / "stub" / "hip"
        stub.mkdir(parents=True)
        (stub / "hip_runtime.h").write_text("// hipRTC provides the runtime header itself\n")
        cmd = [CLANG, "-x", "hip", "-std=c++17", "--cuda-device-only", "-nogpuinc", "-nogpulib", "-D__HIPCC_RTC__",
               "-include", str(ROCM72_HEADER), f"-I{tmp}/stub", "-fsyntax-only", *extra]
        cmd += [f"--offload-arch={a}" for a in archs]
        if include_dir:
            cmd.append(f"-I{include_dir}")
        cmd.append(src)
        return _run(cmd, f"{what} ROCm 7.2 device {'+'.join(archs)}", tmp)
    return _with_source(text, ".hip", go, headers if headers is not None else headers_beside(include_dir), rename=True)


# The full ROCm 7.2 toolchain (clang 22, HIP 7.2 host and device headers, hipBLAS 3, hipCUB, hipSOLVER,
# hipRAND, ...) from Debian's packages in a sid chroot: rocm72_chroot.sh, run by setup.sh.
# The oracle's main HIP compiler: real `*_sync` functions with their 64-bit-mask static_assert, a
# non-constexpr `warpSize`, headers that no longer bring <cstring> in. Needs root (chroot).
ROCM72_ROOT = Path(os.environ.get("HIPLINT_ROCM72_ROOT") or CACHE / "sid-rocm72")
ROCM72_CLANG = "/usr/lib/llvm-22/bin/clang++"


def rocm72_full_missing() -> str:
    """Why the full ROCm 7.2 toolchain cannot run here ('' when it can)."""
    if not (ROCM72_ROOT / ROCM72_CLANG.lstrip("/")).exists():
        return f"ROCm 7.2 chroot {ROCM72_ROOT} (tests/oracle/setup.sh)"
    if not (ROCM72_ROOT / "usr/include/hip/hip_runtime.h").exists():
        return f"HIP 7.2 headers in {ROCM72_ROOT}"
    if os.geteuid() != 0:
        return "root (the ROCm 7.2 compiler runs in a chroot)"
    return ""


def _rocm72_device_libs() -> str:
    found = sorted((ROCM72_ROOT / "usr/lib/llvm-22/lib/clang").glob("*/amdgcn/bitcode"))
    return "/" + str(found[0].relative_to(ROCM72_ROOT)) if found else "/usr/lib/llvm-22/lib/clang/22/amdgcn/bitcode"


def compile_rocm72_full(text: str, archs=HIP_ARCHS, include_dir: Path | None = None, what: str = "hip",
                        headers: dict | None = None, rename_headers: bool = True) -> Result:
    """Host and device code with the real ROCm 7.2 headers: full -c for every arch in one call.

    The headers beside the file get the plain rename unless they are HIP already (`rename_headers=False`,
    e.g. `migrate` output, whose headers keep user names such as `cudaScale`)."""
    extra = hip_flags(text)
    src_root = ROCM72_ROOT / "src"
    src_root.mkdir(exist_ok=True)
    headers = headers if headers is not None else headers_beside(include_dir)
    with tempfile.TemporaryDirectory(prefix="oracle-", dir=src_root) as tmp:
        for name, h in headers.items():
            body = h.read_text(encoding="utf-8", errors="surrogateescape")
            body = plain_rename(body, add_runtime=False) if rename_headers else body
            (Path(tmp) / name).write_text(body, encoding="utf-8", errors="surrogateescape")
        (Path(tmp) / "input.hip").write_text(text, encoding="utf-8", errors="surrogateescape")
        inside = "/" + str(Path(tmp).relative_to(ROCM72_ROOT))
        cmd = ["chroot", str(ROCM72_ROOT), ROCM72_CLANG, "-x", "hip", "-std=c++17", "--rocm-path=/usr",
               f"--rocm-device-lib-path={_rocm72_device_libs()}", "-Wno-unused-result", "-O1", *extra]
        cmd += [f"--offload-arch={a}" for a in archs]
        cmd += [f"-I{inside}", "-c", f"{inside}/input.hip", "-o", f"{inside}/out.o"]
        return _run(cmd, f"{what} ROCm 7.2 {'+'.join(archs)}{''.join(' ' + f for f in extra)}", tmp)


def is_kernel_only(text: str) -> bool:
    """No host API: nothing the device-only ROCm 7.2 check cannot resolve."""
    return not re.search(r"\b(cuda|hip|curand|hiprand|cusolver|cublas)[A-Z]\w*\s*\(|<<<|\bmain\s*\(|#\s*include\s*[<\"](?!(cuda_runtime|hip/hip_runtime|cooperative_groups|hip/hip_cooperative_groups)\b)", text)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--cuda", action="store_true", help="compile the file with nvcc")
    ap.add_argument("--rocm72", action="store_true", help="plain-rename it and compile it with the ROCm 7.2 toolchain")
    ap.add_argument("--hip52", action="store_true", help="plain-rename it and compile it with Debian's HIP 5.2")
    args = ap.parse_args()
    if missing():
        raise SystemExit("oracle toolchain missing: " + ", ".join(missing()) + " (run tests/oracle/setup.sh)")
    text = Path(args.file).read_text(encoding="utf-8", errors="surrogateescape")
    inc = Path(args.file).resolve().parent
    chosen = [k for k in ("cuda", "rocm72", "hip52") if getattr(args, k)] or ["cuda", "rocm72"]
    rc = 0
    for kind in chosen:
        r = (compile_cuda(text, inc) if kind == "cuda" else
             compile_hip(plain_rename(text), include_dir=inc) if kind == "hip52" else
             compile_rocm72_full(plain_rename(text), include_dir=inc))
        print(r)
        rc |= not r.ok
    raise SystemExit(rc)
