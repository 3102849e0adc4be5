"""Curated facts for compile_rand_solver_tables.py: sources, families, and documented differences."""
from __future__ import annotations

import re
from pathlib import Path

from compile_rand_solver_tables import (cuda_names, hip_candidate, idents_at, keep, not_supported_functions,
                                        since_map, write_table)

RAND_SOURCES = {
    "cu-rand": "https://pypi.org/project/nvidia-curand/10.4.0.35/ (include/curand*.h, CUDA 13.0): the CUDA names",
    "hiprand-h": "https://github.com/ROCm/hipRAND/tree/2d9a226/library/include/hiprand (hiprand.h, hiprand_kernel_rocm.h, hiprand_mtgp32_host.h): the HIP names; absent there = unsupported",
    "hiprand-tags": "https://github.com/ROCm/hipRAND/tags: `since` is the first rocm-X.Y.Z tag whose headers declare the HIP name (5.1.0 = that or earlier)",
    "hiprand-src": "https://github.com/ROCm/hipRAND/blob/2d9a226/library/src/amd_detail/hiprand.cpp (AMD backend)",
    "hiprand-cl": "https://github.com/ROCm/hipRAND/blob/2d9a226/CHANGELOG.md (hipRAND 2.11.0 for ROCm 6.2.0: ordering API)",
    "rr-compat": "https://rocm.docs.amd.com/projects/rocRAND/en/latest/conceptual/curand-compatibility.html",
    "rr-pg": "https://rocm.docs.amd.com/projects/rocRAND/en/latest/conceptual/programmers-guide.html#ordering",
}

SOLVER_SOURCES = {
    "cu-solver": "https://pypi.org/project/nvidia-cusolver/12.0.4.66/ (include/cusolver*.h, CUDA 13.0): the CUDA names",
    "hipsolver-h": "https://github.com/ROCm/hipSOLVER/tree/2b17b58/library/include (hipSOLVER 2.3.0, ROCm 6.3.0): the HIP names; absent there = unsupported",
    "hipsolver-tags": "https://github.com/ROCm/hipSOLVER/tags: `since` is the first rocm-X.Y.Z tag whose headers declare the HIP name (4.5.0 = that or earlier; 6.3.0 = hipSOLVER 2.3.0)",
    "hipsolver-amd": "https://github.com/ROCm/hipSOLVER/tree/2b17b58/library/src/amd_detail (rocSOLVER backend: bodies that return HIPSOLVER_STATUS_NOT_SUPPORTED)",
    "hs-usage": "https://rocm.docs.amd.com/projects/hipSOLVER/en/latest/howto/usage.html (Using hipSOLVER: compatibility-API considerations)",
    "cu-solver-12": "https://docs.nvidia.com/cuda/archive/12.6.0/cusolver/index.html (the legacy 64-bit cusolverDn<Function> API of cuSOLVER 11-12, no longer in the CUDA 13.0 headers)",
    "hs-cl": "https://github.com/ROCm/hipSOLVER/blob/2b17b58/CHANGELOG.md (2.2.0 / 2.3.0: compatibility-only 64-bit functions)",
    "hs-cl-7": "https://github.com/ROCm/rocm-libraries/blob/2ed5055/projects/hipsolver/CHANGELOG.md (hipSOLVER 2.4.0 = ROCm 6.4.0, 3.0.0 = ROCm 7.0.0), checked against ROCm 7.2's hipsolver/internal/hipsolver-sparse.h",
}
# Names hipSOLVER declared after the 2.3.0 headers the table is compiled from: (regex, since, note).
LATER_SOLVER = [
    (r"cusolverSp[SD]csrlsvqr$", "6.4.0",
     "compatibility-only; the rocSOLVER backend converts the sparse matrix to a dense one and runs the dense QR solver (n*n memory, slow for large n)"),
    (r"cusolverSp[CZ]csrlsvqr$", "7.0.0",
     "compatibility-only; the rocSOLVER backend converts the sparse matrix to a dense one and runs the dense QR solver (n*n memory, slow for large n)"),
]

# (regex over the CUDA name, status, note, extra source keys). First match wins.
RAND_CURATED = [
    (r"curandGenerate(Log)?Normal(Double)?$", "differs",  # conditional on n: reported by RND006
     "n must be even and output aligned to 2 elements on cuRAND (CURAND_STATUS_LENGTH_NOT_MULTIPLE); hipRAND's AMD backend forwards to rocRAND without that check", "hiprand-src"),
    (r"curandSetGeneratorOrdering$", "differs",
     "since hipRAND 2.11 (ROCm 6.2); orderings map to rocRAND's, whose memory layouts differ from cuRAND's", "hiprand-cl rr-pg"),
    (r"CURAND_ORDERING_PSEUDO_DYNAMIC$", "differs",
     "rocRAND: output may vary between GPU models and rocRAND versions; not for host generators", "rr-pg"),
    (r"curand_init$", "differs",
     "hiprand_init has no MTGP32 overload (static_assert; use hiprandMakeMTGP32KernelState); XORWOW subsequence skip-ahead is costly", ""),
    (r"skipahead$", "differs", "no MTGP32 overload in hipRAND (static_assert)", ""),
    (r"curandMakeMTGP32KernelState$|curandMakeMTGP32Constants$", "supported",
     "MTGP32 states are built on the host; rocRAND's MTGP32 kernel state is block-cooperative", ""),
    (r"CURAND_RNG_(PSEUDO|QUASI)_", None,
     "sequence differs from cuRAND for the same seed except Sobol32/Sobol64", "rr-compat"),
]

SOLVER_CURATED = [
    (r"cusolverDn[SDCZ]gesvd_bufferSize$", "differs",
     "takes no jobu/jobv: the rocSOLVER backend computes the maximum workspace over all of them (slower, may be larger)", "hs-usage"),
    (r"cusolverDn[SDCZ]getrf$", "differs",
     "takes no lwork: the rocSOLVER backend calls getrf_bufferSize again internally", "hs-usage"),
    (r"cusolverDn[SDCZ](getrs|potrs|potrsBatched|potrfBatched)$", "differs",
     "takes no work/lwork: the rocSOLVER backend allocates workspace itself (device reallocations)", "hs-usage"),
    (r"cusolverDn(SS|DD|CC|ZZ)(gesv|gels)$", "differs",
     "niters is not referenced: rocSOLVER has no iterative refinement; in-place in rocSOLVER, so X != B costs copies", "hs-usage"),
    (r"cusolverDn(SS|DD|CC|ZZ)(gesv|gels)_bufferSize$", "differs",
     "the regular hipSOLVER API drops the unused dwork argument; rocSOLVER solves in place", "hs-usage"),
    (r"cusolverDn[SDCZ]gesvdaStridedBatched$", "differs", "hRnrmF is not referenced by the rocSOLVER backend", "hs-usage"),
    (r"cusolverDnX(gesvdj|syevj)Get(Residual|Sweeps)$", "differs",
     "returns NOT_SUPPORTED on the rocSOLVER backend when the info was used by a batched call", "hipsolver-amd"),
    (r"cusolverSp[SD]csrlsvchol(Host)?$", "differs",
     "reorder=1 (symrcm) silently becomes AMD (approximate minimum degree) reordering; single precision is copied to double for SuiteSparse; symbolic factorization on the host", "hs-usage"),
    (r"cusolverDnX(getrf|getrs|potrf|potrs|geqrf)(_bufferSize)?$", "supported",
     "64-bit generic API: compatibility-only in hipSOLVER (no regular-API counterpart)", "hs-cl"),
]

# Legacy 64-bit API (CUDA 11-12) that old code still calls; CUDA 13 headers no longer declare it.
LEGACY_SOLVER = [f"cusolverDn{f}{b}" for f in ("Potrf", "Getrf", "Geqrf", "Syevd", "Syevdx", "Gesvd") for b in ("", "_bufferSize")] + \
    ["cusolverDnPotrs", "cusolverDnGetrs"]
HIP_OVERRIDES = {"cusolver_int_t": "int"}  # a typedef of int; hipify writes int

DEFAULT_NOTES = {
    ("rand", "supported"): "renamed by hipify; same signature",
    ("rand", "unsupported"): "no hipRAND equivalent (hipRAND 2.11, ROCm 6.2/6.3)",
    ("solver", "supported"): "renamed by hipify; same signature (hipSOLVER compatibility API)",
    ("solver", "unsupported"): "no hipSOLVER equivalent (hipSOLVER 2.3.0, ROCm 6.3)",
    ("solver", "unsupported", "mg"): "cusolverMg has no HIP equivalent: split the matrix over devices by hand (one hipSOLVER/rocSOLVER handle per GPU)",
    ("solver", "unsupported", "sp"): "no hipsolverSp equivalent (hipsolverSp covers only csrlsvchol/csrlsvcholHost and, from ROCm 6.4/7.0, csrlsvqr): use rocSPARSE/rocSOLVER building blocks",
    ("solver", "unsupported", "dn-64"): "no hipSOLVER 64-bit equivalent: use the typed 32-bit API when sizes fit in int, else rocSOLVER's 64-bit API",
    ("solver", "unsupported", "dn-irs"): "no hipSOLVER equivalent: rocSOLVER has no iterative-refinement solvers; use the same-precision gesv/gels",
    ("solver", "not-supported-at-runtime"): "compiles, but the rocSOLVER backend returns HIPSOLVER_STATUS_NOT_SUPPORTED",
}

RAND_FAMILIES = {"curand.h": "host", "curand_discrete.h": "host"}
SOLVER_FAMILIES = {"cusolver_common.h": "common", "cusolverDn.h": "dn", "cusolverSp.h": "sp",
                   "cusolverSp_LOWLEVEL_PREVIEW.h": "sp", "cusolverRf.h": "rf", "cusolverMg.h": "mg"}


def solver_family(name: str, header_family: str) -> str:
    if header_family == "dn":
        if re.match(r"cusolverDnX", name) or name in ("cusolverDnParams_t", "cusolverDnCreateParams", "cusolverDnDestroyParams", "cusolverDnSetAdvOptions"):
            return "dn-64"
        if re.search(r"syevj|gesvdj|sygvj|hegvj|heevj", name, re.I):
            return "dn-jacobi"
        if re.search(r"IRS|[SDCZ][SDCZHBXKEY](gesv|gels)", name):
            return "dn-irs"
    return header_family


def _rows(lib, headers, families, hip_names, since, curated, sources_default, runtime_ns):
    seen: dict[str, dict] = {}
    for header in headers:
        fam = families.get(header.name, "device" if lib == "rand" else None)
        if fam is None:
            continue
        for name, kind in cuda_names(header.read_text()).items():
            if not keep(name) or name in seen:
                continue
            family = solver_family(name, fam) if lib == "solver" else fam
            hip = hip_candidate(name)
            row = {"cuda": name, "kind": kind, "family": family}
            if name in HIP_OVERRIDES:
                row.update(hip=HIP_OVERRIDES[name], status="supported", source=sources_default,
                           note="a typedef of int in cuSOLVER; hipify writes int")
            elif hip in hip_names:
                row["hip"] = hip
                row["status"] = "not-supported-at-runtime" if hip in runtime_ns else "supported"
                row["since"] = since.get(hip, "")
                row["source"] = sources_default + (" hipsolver-amd" if hip in runtime_ns else "")
            else:
                row["status"] = "unsupported"
                row["source"] = sources_default
            row["note"] = DEFAULT_NOTES.get((lib, row["status"], family)) or DEFAULT_NOTES[(lib, row["status"])]
            later = next((entry for entry in LATER_SOLVER if re.match(entry[0], name)), None) if lib == "solver" else None
            if later is not None and row["status"] == "unsupported":
                row.update(hip=hip, status="differs", since=later[1], note=later[2], source=sources_default + " hs-cl-7")
                seen[name] = row
                continue
            if kind != "function":
                row["note"] = row["note"].replace("; same signature", "")
            for pattern, status, note, extra in curated:
                if re.match(pattern, name):
                    if status is None or row["status"] == "unsupported":
                        if row["status"] != "unsupported":
                            row["note"] = note
                    else:
                        row["status"], row["note"] = status, note
                    if extra and row["status"] != "unsupported":
                        row["source"] += " " + extra
                    break
            seen[name] = row
    if lib == "solver":
        for name in LEGACY_SOLVER:
            hip = hip_candidate(name)
            row = {"cuda": name, "kind": "function", "family": "dn-64", "source": "cu-solver-12 hipsolver-h"}
            if hip in hip_names:
                row.update(hip=hip, status="supported", since=since.get(hip, ""), note="legacy 64-bit API")
            else:
                row.update(status="unsupported", note="legacy 64-bit API (removed in CUDA 13): no hipSOLVER equivalent; use the typed 32-bit API or rocSOLVER")
            seen.setdefault(name, row)
    return sorted(seen.values(), key=lambda r: (r["family"], r["cuda"]))


def header_text(title, sources, lib_note):
    out = [f"# {title}", "# Generated by tools/compile_rand_solver_tables.py; see its docstring for the method.",
           "# status: supported | differs (supported with differences) | unsupported | not-supported-at-runtime",
           f"# {lib_note}", "", "[sources]"]
    out += [f'{k} = "{v}"' for k, v in sources.items()]
    return "\n".join(out) + "\n"


def build(cuda_inc: Path, hiprand_git: str, hipsolver_git: str) -> None:
    root = Path(__file__).resolve().parent.parent / "rules"
    rand_file = lambda p: "nvcc" not in p  # the AMD-side headers only
    rand_hip = idents_at(hiprand_git, "HEAD", rand_file)
    rand_headers = sorted(p for p in cuda_inc.glob("curand*.h"))
    rand_names = {hip_candidate(n) for h in rand_headers for n in cuda_names(h.read_text())}
    rand_since = since_map(hiprand_git, rand_names & rand_hip, rand_file, "6.3.0")
    rows = _rows("rand", rand_headers, RAND_FAMILIES, rand_hip, rand_since, RAND_CURATED, "cu-rand hiprand-h", set())
    for r in rows:
        if r.get("hip"):
            r["source"] += " hiprand-tags"
    write_table(root / "curand" / "api.toml",
                header_text("cuRAND -> hipRAND API table", RAND_SOURCES,
                            "family: host (curand.h) | device (curand_kernel.h and the headers it includes)"), rows)
    all_file = lambda p: True
    sol_hip = idents_at(hipsolver_git, "HEAD", all_file)
    sol_headers = [cuda_inc / h for h in SOLVER_FAMILIES]
    sol_names = {hip_candidate(n) for h in sol_headers for n in cuda_names(h.read_text())} | \
        {hip_candidate(n) for n in LEGACY_SOLVER}
    sol_since = since_map(hipsolver_git, sol_names & sol_hip, all_file, "6.3.0")
    rows = _rows("solver", sol_headers, SOLVER_FAMILIES, sol_hip, sol_since, SOLVER_CURATED, "cu-solver hipsolver-h",
                 not_supported_functions(hipsolver_git))
    for r in rows:
        if r.get("hip"):
            r["source"] += " hipsolver-tags"
    write_table(root / "cusolver" / "api.toml",
                header_text("cuSOLVER -> hipSOLVER API table", SOLVER_SOURCES,
                            "family: common | dn | dn-64 (cusolverDnX*) | dn-jacobi | dn-irs | sp | rf | mg"), rows)
