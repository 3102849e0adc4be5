"""The HIP compile oracle for tests and bench scripts: Debian's clang-19 with the HIP 5.2 headers.

`compile_hip(path, archs)` compiles host and device code (`-c`, codegen included) for the given AMD
targets. Debian's rocm-device-libs 5.2 lack the ISA bitcode for gfx942 and gfx11, so an overlay
directory of symlinks plus synthesized one-constant `.bc` files is built once (see
/work/shared/oracle/README.md for how the values were checked against the shipped files).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

CLANG = os.environ.get("HIP_CLANG", "clang++-19")
SYSTEM_DEVICE_LIBS = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode"
HIP_HEADER = "/usr/include/hip/hip_runtime.h"
ARCHS = ("gfx90a", "gfx942", "gfx1100")
APT_PACKAGES = "clang-19 lld-19 clang-tools-19 libamdhip64-dev libhiprand-dev librocrand-dev rocm-device-libs"


@dataclass
class CompileResult:
    ok: bool
    stderr: str


def missing() -> str:
    """Why the toolchain cannot run here ('' when it can)."""
    if shutil.which(CLANG) is None:
        return f"{CLANG} not installed (apt-get install {APT_PACKAGES})"
    if not os.path.exists(HIP_HEADER):
        return f"HIP headers not installed (apt-get install libamdhip64-dev)"
    if not os.path.isdir(SYSTEM_DEVICE_LIBS):
        return "rocm-device-libs not installed"
    return ""


def _isa_version(arch: str) -> int:
    n = arch[3:]  # gfx942 -> 9402, gfx90a -> 9010, gfx1100 -> 11000 (stepping is a hex digit)
    major, minor, step = int(n[:-2]), int(n[-2]), int(n[-1], 16)
    return major * 1000 + minor * 100 + step


def device_lib_overlay(archs=ARCHS) -> str:
    cache = os.environ.get("HIPLINT_ORACLE_CACHE") or os.path.join(tempfile.gettempdir(), "hiplint-oracle")
    version = subprocess.run([CLANG, "-dumpversion"], capture_output=True, text=True).stdout.strip()
    overlay = os.path.join(cache, f"devlibs-{version}")
    os.makedirs(overlay, exist_ok=True)
    for name in os.listdir(SYSTEM_DEVICE_LIBS):
        link = os.path.join(overlay, name)
        if name.endswith(".bc") and not os.path.lexists(link):
            os.symlink(os.path.join(SYSTEM_DEVICE_LIBS, name), link)
    for arch in archs:
        bc = os.path.join(overlay, f"oclc_isa_version_{arch[3:]}.bc")
        if os.path.exists(bc):
            continue
        ll = bc[:-3] + ".ll"
        with open(ll, "w") as fh:
            fh.write('target triple = "amdgcn-amd-amdhsa"\n'
                     f"@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant i32 "
                     f"{_isa_version(arch)}, align 4\n")
        tmp = f"{bc}.{os.getpid()}"
        subprocess.run([CLANG, "-nogpulib", "--target=amdgcn-amd-amdhsa", "-c", "-emit-llvm", ll, "-o", tmp], check=True)
        os.replace(tmp, bc)
        os.unlink(ll)
    return overlay


def compile_hip(path: str, archs=ARCHS, extra=(), include_dirs=()) -> CompileResult:
    overlay = device_lib_overlay(archs)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [CLANG, "-x", "hip", "-std=c++17", "--rocm-path=/usr", f"--rocm-device-lib-path={overlay}",
               "-Wno-unused-result", "-DROCRAND_DISABLE_INLINE_ASM", "-O1", "-c", "-o", os.path.join(tmp, "out.o")]
        cmd += [f"--offload-arch={a}" for a in archs]
        cmd += [f"-I{d}" for d in include_dirs] + list(extra) + [path]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return CompileResult(proc.returncode == 0, proc.stderr)
