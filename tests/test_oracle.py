"""The compile oracle over the fixtures (see tests/oracle/toolchain.py and docs/oracle.md).

- every C-family fixture input compiles as CUDA with nvcc (sm_90);
- every `*.fixed.*` result compiles with nvcc too (fixed code stays valid CUDA);
- every fixture's end state (its unsafe.fixed result, else its .fixed one; for fixtures/oracle/ the
  safe .fixed one) compiles, after the plain rename and with the fixed versions of the headers beside it,
  as HIP for gfx90a, gfx942 and gfx1100 with the full ROCm 7.2 toolchain (clang 22, HIP 7.2 host and
  device headers and libraries), and, when it is kernel-only, against AMD's ROCm 7.2 hipRTC device
  header; a fixture written for an older ROCm (`hl-config: rocm-version` below 6) with Debian's HIP 5.2
  instead of ROCm 7.2;
- every fixture under fixtures/oracle/ fails for gfx942 (ROCm 7.2) after the plain rename alone.

Compiles run in parallel (one job per core) when the first oracle test asks for its result.
Without the toolchain these tests skip with one line; in CI (CI=true) they fail instead, so a broken
install cannot pass as green. Install: `tests/oracle/setup.sh` (root).
A fixture can opt out with a reason: `// hl-oracle: cuda-only "why"` (no HIP compile) or
`// hl-oracle: skip "why"` (no compile at all), or ask for flags: `// hl-oracle: nvcc-flags "-rdc=true"`,
`// hl-oracle: hip-flags "-DPROJ_USE_HIP"` (what its AMD build defines).
"""
from __future__ import annotations

import os
import re
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import FIXTURES
from hiplint.testing import fixed_path, fixture_files, input_dir, is_fixed_output
from hiplint.languages import language_of
from oracle import toolchain as tc

pytestmark = pytest.mark.oracle  # slow: deselected by default, run by `python -m pytest -m oracle` (.ci/run)

ORACLE_DIR = FIXTURES / "oracle"
KNOWN_FAILURES = tomllib.loads((Path(tc.__file__).parent / "known_failures.toml").read_text())
MIN_ORACLE_KERNELS = 20
OPT_OUT = re.compile(r'//\s*hl-oracle:\s*(?P<kind>cuda-only|skip)\s*"(?P<why>[^"]+)"')

C_FAMILY = [p for p in fixture_files(FIXTURES) if language_of(str(p)) == "cuda"]
INPUTS = [p for p in C_FAMILY if not is_fixed_output(p)]
FIXED = [p for p in C_FAMILY if is_fixed_output(p)]
ORACLE_INPUTS = [p for p in INPUTS if p.parent == ORACLE_DIR]


def _final_fix(p: Path) -> bool:
    """The end state of a fixture: its unsafe.fixed output, or its .fixed one when there is no unsafe one.

    A safe-only result may still hold findings whose fix is unsafe (a 32-bit mask macro, say), and they can
    be compile errors on AMD that hiplint keeps reporting; the oracle fixtures must compile after safe fixes alone.
    """
    if ".unsafe.fixed." in p.name or p.parent == ORACLE_DIR:
        return True
    return not p.with_name(p.name.replace(".fixed.", ".unsafe.fixed.", 1)).exists()


AMD_TARGETS = [p for p in FIXED if _final_fix(p)]


def _id(p: Path) -> str:
    return str(p.relative_to(FIXTURES))


def _opt_out(path: Path) -> tuple[str, str] | None:
    m = OPT_OUT.search(path.read_text(encoding="utf-8", errors="replace"))
    return (m.group("kind"), m.group("why")) if m else None


HIP_INCLUDE = re.compile(r'#\s*include\s*[<"]hip/hip_runtime(_api)?\.h[>"]')


def _is_hip_source(path: Path) -> bool:
    """Already HIP (a .hip file, or one that includes hip/hip_runtime.h): not compiled with nvcc, not renamed."""
    return path.suffix == ".hip" or bool(HIP_INCLUDE.search(path.read_text(encoding="utf-8", errors="replace")))


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="surrogateescape")


# Jobs: (kind, path) -> a function returning a toolchain.Result ---------------------------------

def _headers(path: Path) -> dict[str, Path]:
    """The headers beside a fixture; for a fixed result, their fixed versions where they exist."""
    out = {}
    unsafe = ".unsafe.fixed." in path.name
    for name, h in tc.headers_beside(input_dir(path)).items():
        if is_fixed_output(h):
            continue
        if is_fixed_output(path):
            for candidate in ([fixed_path(h, True)] if unsafe else []) + [fixed_path(h, False)]:
                if candidate.exists():
                    h = candidate
                    break
        out[name] = h
    return out


def _job(kind: str, path: Path):
    text, inc, headers = _text(path), input_dir(path), _headers(path)
    hip_text = text if _is_hip_source(path) else tc.plain_rename(text)
    what = _id(path)
    return {
        "cuda": lambda: tc.compile_cuda(text, inc, what=what, headers=headers),
        "hip52": lambda: tc.compile_hip(hip_text, include_dir=inc, what=what, headers=headers),
        "rocm72": lambda: tc.compile_rocm72(hip_text, include_dir=inc, what=what, headers=headers),
        "rocm72-full": lambda: tc.compile_rocm72_full(hip_text, include_dir=inc, what=what, headers=headers),
        "renamed-gfx942": lambda: _renamed_gfx942(hip_text, inc, what, headers),
    }[kind]


def _renamed_gfx942(text: str, inc: Path, what: str, headers) -> tc.Result:
    """Does the renamed file compile for gfx942 with ROCm 7.2?"""
    return tc.compile_rocm72_full(text, archs=("gfx942",), include_dir=inc, what=what, headers=headers)


# The AMD compile of every end state is the full ROCm 7.2 toolchain (host and device, real headers and
# libraries, gfx90a + gfx942 + gfx1100). Debian's HIP 5.2 only where an older ROCm is the point: a fixture
# configured for ROCm 5.x (`hl-config: rocm-version = "5.7"`), whose code must build with old headers.
ROCM_VERSION = re.compile(r'hl-config:\s*rocm-version\s*=\s*"(\d+)\.(\d+)')
OLDER_ROCM = (6, 0)


def _older_rocm(path: Path) -> bool:
    m = ROCM_VERSION.search(_text(path))
    return m is not None and (int(m.group(1)), int(m.group(2))) < OLDER_ROCM


def _hip_side(path: Path) -> str:
    """Which HIP headers compile the file: "hip" (ROCm 7.2) or "hip52" (an older ROCm is the point)."""
    return "hip52" if _older_rocm(path) else "hip"


def _jobs_for(test_name: str, path: Path) -> list[str]:
    if test_name.startswith("test_cuda_original"):
        return ["cuda"]
    if test_name.startswith("test_fixed_is_valid_cuda"):
        return ["cuda"]
    if test_name.startswith("test_fixed_compiles_for_amd"):
        if _older_rocm(path):
            return ["hip52"]
        return ["rocm72-full"] + (["rocm72"] if tc.is_kernel_only(tc.plain_rename(_text(path))) else [])
    if test_name.startswith("test_plain_rename_fails"):
        return ["renamed-gfx942"]
    return []


def _missing_libraries(path: Path, side: str) -> list[str]:
    """Library headers the file (or a header beside it) includes that the oracle lacks on `side`
    ("cuda", "hip": ROCm 7.2, "hip52")."""
    texts = [_text(path)] + [_text(h) for h in _headers(path).values()]
    if side != "cuda" and not _is_hip_source(path):
        texts = [tc.plain_rename(t) for t in texts]
    return sorted({h for t in texts for h in tc.missing_library_headers(t, side)})


def _expect_known_failure(request, check: str, path: Path):
    entry = KNOWN_FAILURES.get(f"{check}:{_id(path)}")
    if entry:
        request.applymarker(pytest.mark.xfail(reason=entry["reason"], strict=True))


def _skip_missing_libraries(path: Path, side: str):
    missing = _missing_libraries(path, side)
    if missing:
        pytest.skip(f"{_id(path)}: the oracle has no {', '.join(missing)} on the {side} side (see docs/oracle.md)")


class Oracle:
    """Submits every compile the selected tests need at once; tests wait for their own."""

    def __init__(self, items):
        self.pool = ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1))
        self.futures = {}
        for item in items:
            path = getattr(item, "callspec", None) and item.callspec.params.get("path")
            out = _opt_out(path) if isinstance(path, Path) else None
            if not isinstance(path, Path) or (out and out[0] == "skip"):
                continue
            for kind in _jobs_for(item.name, path):
                if out and kind != "cuda":
                    continue  # cuda-only: its nvcc compile is still submitted now, in order
                if not _missing_libraries(path, "cuda" if kind == "cuda" else _hip_side(path)):
                    self.submit(kind, path)

    def submit(self, kind, path):
        key = (kind, path)
        if key not in self.futures:
            self.futures[key] = self.pool.submit(_job(kind, path))
        return self.futures[key]

    def result(self, kind: str, path: Path) -> tc.Result:
        return self.submit(kind, path).result()


@pytest.fixture(scope="session")
def oracle(request):
    missing = tc.missing()
    if missing:
        message = "compile oracle toolchain missing: " + ", ".join(missing) + " (run tests/oracle/setup.sh as root)"
        if os.environ.get("CI") == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    tc.device_libs()  # build the device-library overlay once, before the workers need it
    o = Oracle(request.session.items)
    yield o
    o.pool.shutdown(wait=False, cancel_futures=True)


def _skip_opted_out(path: Path, hip: bool):
    out = _opt_out(path)
    if out and (out[0] == "skip" or hip):
        pytest.skip(f"{_id(path)}: {out[1]}")


@pytest.mark.parametrize("path", [p for p in INPUTS if not _is_hip_source(p)], ids=_id)
def test_cuda_original_compiles_with_nvcc(oracle, path, request):
    _expect_known_failure(request, "cuda", path)
    _skip_opted_out(path, hip=False)
    _skip_missing_libraries(path, "cuda")
    r = oracle.result("cuda", path)
    assert r.ok, str(r)


@pytest.mark.parametrize("path", [p for p in FIXED if not _is_hip_source(p)], ids=_id)
def test_fixed_is_valid_cuda(oracle, path, request):
    """Fixes keep one source for both vendors: the fixed file still compiles with nvcc."""
    _expect_known_failure(request, "cuda", path)
    _skip_opted_out(path, hip=False)
    _skip_missing_libraries(path, "cuda")
    r = oracle.result("cuda", path)
    assert r.ok, str(r)


@pytest.mark.parametrize("path", AMD_TARGETS, ids=_id)
def test_fixed_compiles_for_amd(oracle, path, request):
    _expect_known_failure(request, "amd", path)
    _skip_opted_out(path, hip=True)
    _skip_missing_libraries(path, _hip_side(path))
    failures = [str(oracle.result(kind, path)) for kind in _jobs_for("test_fixed_compiles_for_amd", path)]
    failures = [f for f in failures if f.startswith("FAIL")]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("path", ORACLE_INPUTS, ids=_id)
def test_plain_rename_fails_for_gfx942(oracle, path):
    r = oracle.result("renamed-gfx942", path)
    assert not r.ok, f"{_id(path)} compiles for gfx942 after a plain rename: not an oracle case"


def test_known_failures_name_existing_fixtures():
    for key in KNOWN_FAILURES:
        check, _, rel = key.partition(":")
        assert check in ("cuda", "amd") and (FIXTURES / rel).exists(), key


def test_oracle_fixtures_cover_the_target():
    """At least MIN_ORACLE_KERNELS kernels that a plain rename breaks and `hiplint fix` + rename repairs."""
    with_fix = [p for p in ORACLE_INPUTS if fixed_path(p, False).exists()]  # repaired by safe fixes alone
    assert len(with_fix) >= MIN_ORACLE_KERNELS, [p.name for p in ORACLE_INPUTS if p not in with_fix]


# The baseline itself (no toolchain needed) ------------------------------------------------------

def test_plain_rename_is_textual_and_leaves_device_code_alone():
    src = ('#include <cuda_runtime.h>\n#include <curand_kernel.h>\n#include "my_cuda_utils.h"\n'
           "__global__ void k(curandState* s, float* o) { o[0] = curand_uniform(s) + __shfl_xor_sync(0xffffffff, 1.f, 1);\n"
           "#if __CUDA_ARCH__ >= 800\n#endif\n}\n"
           "void h(float* p) { cudaStream_t st; cudaMalloc(&p, 4); cudaMemcpyAsync(p, p, 4, cudaMemcpyDeviceToDevice, st); }\n")
    out = tc.plain_rename(src)
    assert "#include <hip/hip_runtime.h>" in out and "#include <hiprand/hiprand_kernel.h>" in out
    assert '#include "my_cuda_utils.h"' in out
    assert "hiprandState* s" in out and "hiprand_uniform(s)" in out
    assert "hipStream_t st; hipMalloc(&p, 4); hipMemcpyAsync(p, p, 4, hipMemcpyDeviceToDevice, st)" in out
    assert "__shfl_xor_sync(0xffffffff, 1.f, 1)" in out and "__CUDA_ARCH__" in out


def test_kernel_only_detection():
    assert tc.is_kernel_only("#include <cuda_runtime.h>\n__global__ void k(int* p) { p[0] = 1; }\n")
    assert not tc.is_kernel_only("void h() { hipMalloc(&p, 4); }")
    assert not tc.is_kernel_only("void h() { k<<<1, 1>>>(p); }")
    assert not tc.is_kernel_only("#include <hiprand/hiprand_kernel.h>\n")


def test_nvcc_flags_come_from_the_fixture():
    assert tc.nvcc_flags('// hl-oracle: nvcc-flags "-rdc=true"\n__global__ void k() {}\n') == ["-rdc=true"]
    assert tc.nvcc_flags('// hl-oracle: nvcc-flags "-rdc=true -DX=1"\n') == ["-rdc=true", "-DX=1"]
    assert tc.nvcc_flags('// nvcc-flags "-rdc=true" without the marker\n') == []


def test_hip_flags_come_from_the_fixture():
    assert tc.hip_flags('// hl-oracle: hip-flags "-DPROJ_USE_HIP -DPROJ_GPU_TUNED"\n') == ["-DPROJ_USE_HIP", "-DPROJ_GPU_TUNED"]
    assert tc.hip_flags('// hl-oracle: nvcc-flags "-rdc=true"\n') == []
    assert tc.nvcc_flags('// hl-oracle: hip-flags "-DPROJ_USE_HIP"\n') == []


def test_older_rocm_fixtures_are_compiled_with_hip52():
    assert _older_rocm(FIXTURES / "memory" / "pointer_attributes.fixed.cu")  # rocm-version = "5.7"
    assert not _older_rocm(FIXTURES / "warp" / "macros_and_versions.fixed.cu")  # "6.2": ROCm 7.2
    assert not _older_rocm(FIXTURES / "oracle" / "block_reduce.fixed.cu")  # no version: ROCm 7.2


def test_isa_version_numbers():
    # The values Debian's own bitcode files hold (gfx90a = 9010, gfx940 = 9400, gfx1030 = 10300).
    assert tc._isa_version("gfx90a") == 9010
    assert tc._isa_version("gfx940") == 9400
    assert tc._isa_version("gfx942") == 9402
    assert tc._isa_version("gfx1030") == 10300
    assert tc._isa_version("gfx1100") == 11000


# Without the toolchain: skip on a developer's machine, fail in CI -------------------------------

@pytest.mark.parametrize("ci,outcome", [("", "skipped"), ("true", "error")])
def test_missing_toolchain_skips_locally_and_fails_in_ci(ci, outcome):
    import subprocess
    import sys
    env = dict(os.environ, HIPLINT_ORACLE_CLANG="clang-not-installed-19", CI=ci)
    here = Path(__file__).resolve()
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(here),
                        "-m", "oracle", "-k", "test_cuda_original_compiles_with_nvcc and warp_reduce_sum"],
                       capture_output=True, text=True, env=env, cwd=here.parent.parent, timeout=300)
    out = r.stdout
    assert f"1 {outcome}" in out, out
    assert "compile oracle toolchain missing: clang-not-installed-19" in out, out
    assert r.returncode == (0 if outcome == "skipped" else 1)
