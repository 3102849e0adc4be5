"""Compile rules/curand/api.toml and rules/cusolver/api.toml from headers and documentation.

Not part of the installed package. It documents how the tables were made and lets them be remade:

    python tools/compile_rand_solver_tables.py CUDA_INCLUDE HIPRAND_GIT HIPSOLVER_GIT

- CUDA_INCLUDE: the `include/` directory of NVIDIA's PyPI wheels nvidia-curand==10.4.0.35 and
  nvidia-cusolver==12.0.4.66 (CUDA 13.0). Every CUDA name of a row comes from these headers.
- HIPRAND_GIT / HIPSOLVER_GIT: git directories of ROCm/hipRAND (2d9a226) and ROCm/hipSOLVER
  (2b17b58, hipSOLVER 2.3.0 = ROCm 6.3.0). The HIP name of a row is the hipify-style rename of the
  CUDA name (cu -> hip prefix) when the AMD-side headers declare it; `since` is the first
  `rocm-X.Y.Z` tag whose headers declare it (the oldest tag checked means "that or earlier").
- Statuses beyond supported/unsupported: functions whose AMD implementation (library/src/amd_detail)
  unconditionally returns HIPSOLVER_STATUS_NOT_SUPPORTED, and the curated differences below, each
  taken from hipSOLVER's "Using hipSOLVER" page, hipRAND's header comments or rocRAND's
  cuRAND-compatibility page.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


def strip(text: str) -> str:
    return COMMENT.sub(" ", text)


def cuda_names(text: str) -> dict[str, str]:
    """name -> kind (function | type | enumerator) declared in one CUDA header."""
    text = strip(text)
    text = re.sub(r"^\s*#.*?(?<!\\)$", " ", text, flags=re.M)  # preprocessor lines
    out: dict[str, str] = {}
    for m in re.finditer(r"(?:CURANDAPI|CUSOLVERAPI)\s*(\w+)\s*\(", text):
        out[m.group(1)] = "function"
    for m in re.finditer(r"^\s*(?:static\s+)?(?:curandStatus_t|cusolverStatus_t)\s+(\w+)\s*\(", text, re.M):
        out.setdefault(m.group(1), "function")  # plain definitions (curand_mtgp32_host.h)
    for m in re.finditer(r"QUALIFIERS[^;{()]*?\b([A-Za-z_]\w*)\s*\(", text):
        out.setdefault(m.group(1), "function")
    for m in re.finditer(r"\benum\s*(\w*)\s*\{(.*?)\}\s*(\w*)\s*;", text, re.S):
        tag, body, alias = m.groups()
        for e in re.finditer(r"(?:^|,)\s*([A-Za-z_]\w*)\s*(?==|,|$)", body.strip()):
            out[e.group(1)] = "enumerator"
        for n in (tag, alias):
            if n:
                out.setdefault(n, "type")
    for m in re.finditer(r"\bstruct\s+(\w+)\s*\{", text):
        out.setdefault(m.group(1), "type")
    for m in re.finditer(r"\btypedef\s+[^;{}]*?\b(\w+)\s*(?:\[[^\]]*\])?\s*;", text):
        out.setdefault(m.group(1), "type")
    return out


PREFIXES = ("curand", "CURAND", "cusolver", "CUSOLVER", "skipahead", "syevjInfo", "gesvdjInfo", "mtgp32",
            "csrqrInfo", "csrcholInfo", "csrluInfo", "cudaLibMg", "CUDALIBMG")


def keep(name: str) -> bool:
    return name.startswith(PREFIXES) and not name.endswith(("_st", "_H_", "_H", "Impl")) and not name.startswith("_")


ALIASES = {  # CUDA name -> HIP name where the hipSOLVER/hipRAND spelling is not the plain prefix swap
    "syevjInfo_t": "hipsolverSyevjInfo_t",
    "gesvdjInfo_t": "hipsolverGesvdjInfo_t",
    "syevjInfo": "hipsolverSyevjInfo",
    "gesvdjInfo": "hipsolverGesvdjInfo",
}


def hip_candidate(name: str) -> str:
    if name in ALIASES:
        return ALIASES[name]
    for cu, hip in (("curand", "hiprand"), ("CURAND", "HIPRAND"), ("cusolver", "hipsolver"), ("CUSOLVER", "HIPSOLVER")):
        if name.startswith(cu):
            return hip + name[len(cu):]
    return name


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", repo, *args], capture_output=True, text=True, check=True).stdout


def idents_at(repo: str, rev: str, keep_file) -> set[str]:
    names: set[str] = set()
    for path in git(repo, "ls-tree", "-r", "--name-only", rev, "library/include").split():
        if path.endswith((".h", ".hpp", ".h.in")) and keep_file(path):
            names |= set(IDENT.findall(strip(git(repo, "show", f"{rev}:{path}"))))
    return names


def versions(repo: str) -> list[tuple[str, str]]:
    tags = [t for t in git(repo, "tag").split() if re.fullmatch(r"rocm-\d+\.\d+(\.\d+)?", t)]
    key = lambda t: tuple(int(x) for x in t[5:].split("."))
    return [(t, t[5:] if t.count(".") == 2 else t[5:] + ".0") for t in sorted(tags, key=key)]


def since_map(repo: str, names: set[str], keep_file, head_version: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for tag, ver in versions(repo) + [("HEAD", head_version)]:
        present = idents_at(repo, tag, keep_file) & names
        for n in present:
            found.setdefault(n, ver)
    return found


def not_supported_functions(repo: str) -> set[str]:
    """AMD-backend functions whose whole body is `return HIPSOLVER_STATUS_NOT_SUPPORTED;`."""
    out = set()
    for path in git(repo, "ls-tree", "-r", "--name-only", "HEAD", "library/src/amd_detail").split():
        if path.endswith(".cpp"):
            src = strip(git(repo, "show", f"HEAD:{path}"))
            for m in re.finditer(r"\b(hipsolver\w+)\s*\([^;{]*?\)\s*try\s*\{\s*return\s+HIPSOLVER_STATUS_NOT_SUPPORTED\s*;\s*\}", src, re.S):
                out.add(m.group(1))
    return out


def toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_table(path: Path, header: str, rows: list[dict]) -> None:
    lines = [header.rstrip(), ""]
    for r in rows:
        lines.append("[[api]]")
        for k in ("cuda", "hip", "kind", "family", "status", "since", "note", "source"):
            if r.get(k):
                lines.append(f"{k} = {toml_str(r[k])}")
        lines.append("")
    path.write_text("\n".join(lines))
    # The parsed copy the rules read (hiplint.rules._apitable: the TOML is parsed only when it is stale).
    from hiplint.rules._apitable import PARSED_NAME, _parsed_copy
    path.with_name(PARSED_NAME).write_text(_parsed_copy(path.read_bytes()), encoding="utf-8")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from rand_solver_curation import build  # the curated facts live beside this script
    build(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
