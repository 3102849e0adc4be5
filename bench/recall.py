"""Recall of hiplint on hand-written HIP ports: does hiplint flag the places a port really changed?

    python bench/recall.py CUDA HIP [--json out.json]             # one pair: two files or two trees
    python bench/recall.py --ifdef TREE_OR_FILE                   # #if HIP ... #else (CUDA) ... #endif
    python bench/recall.py --pairs bench/recall_pairs.toml --trees DIR [--labels labels.toml]

For each pair of files (CUDA source, its hand port), both sides are normalized for hipify's mechanical
renames (cuda* -> hip*, CUDA_ -> HIP_, cuRAND/cuBLAS/cuSPARSE/cuFFT/CUB -> hip*, the runtime headers,
hipify-perl's old forms hipThreadIdx_x, hipLaunchKernelGGL and hipLaunchParm), comments and
whitespace, and aligned line by line with difflib. Every non-equal block of the alignment is a hunk: a
changed site, located by its CUDA-side lines (a pure insertion by the CUDA lines either side of it).
Intrinsic changes such as __shfl_down_sync(mask, ...) -> __shfl_down(...) are not mechanical and stay
as sites.

hiplint scans the CUDA side (`--report-nvidia-branches --isolated --select ALL` unless --select
says otherwise). A hunk is found when a finding's line range meets the hunk's lines; "with related"
also counts a finding's related locations. Reported per pair: hunks, found hunks, recall with and
without related locations, and findings per 1,000 unchanged lines; per category (the rule family,
letters of the code) the hunks each category finds and its density on unchanged lines.

With --labels FILE (TOML: a table per pair name, or top level for a single pair, mapping
"relpath:line" -> "needed" / "not-needed", where line is any CUDA-side line of the hunk, as printed by
--hunks), recall is also given on the hunks labelled "needed".

Pairs file (TOML):

    [[pair]]
    name = "rodinia-hotspot"
    repo = "github:ROCm-Developer-Tools/HIP-Examples"   # where to fetch it (documentation only)
    commit = "..."
    cuda = "HIP-Examples/rodinia_3.0/cuda/hotspot"      # relative to --trees
    hip = "HIP-Examples/rodinia_3.0/hip/hotspot"
    exclude = ["cusrc/*", "*/cusrc/*"]                  # globs on the HIP side (relative)
    # exclude_cuda = ["test/*"]                         # globs on the CUDA side
    # rename_identifiers = true                         # also the project's own names (CudaExecutor)
    # files = [["a.cu", "b.hip"]]                       # explicit file pairs (relative), optional
    # mode = "ifdef"; tree = "..."                      # one tree with both branches instead

Files of two trees are paired by a key: the relative path, lower-cased, with the renames applied,
".hip" and a trailing "_hip" dropped from the stem, and the suffix reduced to header or source.
"""
from __future__ import annotations

import argparse
import difflib
import fnmatch
import json
import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

SOURCE_SUFFIXES = {".cu", ".cpp", ".cc", ".cxx", ".c", ".hip"}
HEADER_SUFFIXES = {".cuh", ".h", ".hpp", ".hh", ".hxx", ".inl"}

# ---------------------------------------------------------------- normalization (mechanical renames)

RENAMES = [
    (re.compile(r"\bcuda(?=[A-Z_])"), "hip"),
    (re.compile(r"\bCUDA_"), "HIP_"),
    (re.compile(r"\bcu(rand|blas|sparse|fft|solver)"), r"hip\1"),
    (re.compile(r"\bCU(RAND|BLAS|SPARSE|FFT|SOLVER)_"), r"HIP\1_"),
    (re.compile(r"\bcub::"), "hipcub::"),
    (re.compile(r"\bcublasLt"), "hipblasLt"),
]
HEADER_MAP = [
    (re.compile(r'#\s*include\s*[<"](cuda_runtime|cuda_runtime_api|cuda|hip/hip_runtime|hip/hip_runtime_api)\.h[>"]'),
     "#include <hip/hip_runtime.h>"),
    (re.compile(r'#\s*include\s*[<"]curand_kernel\.h[>"]'), "#include <hiprand/hiprand_kernel.h>"),
    (re.compile(r'#\s*include\s*[<"]curand\.h[>"]'), "#include <hiprand/hiprand.h>"),
    (re.compile(r'#\s*include\s*[<"]cublas_v2\.h[>"]'), "#include <hipblas/hipblas.h>"),
    (re.compile(r'#\s*include\s*[<"]cusparse\.h[>"]'), "#include <hipsparse/hipsparse.h>"),
    (re.compile(r'#\s*include\s*[<"]cub/'), "#include <hipcub/"),
]
# With a pair's `rename_identifiers = true`: the project's own names that follow the platform
# (CudaExecutor -> HipExecutor, as_cuda_type -> as_hip_type, GKO_ASSERT_NO_CUBLAS_ERRORS, cuda/ paths).
IDENT_RENAMES = [(re.compile(p), r) for p, r in [
    (r"cublas", "hipblas"), (r"cusparse", "hipsparse"), (r"curand", "hiprand"), (r"cufft", "hipfft"),
    (r"CUBLAS", "HIPBLAS"), (r"CUSPARSE", "HIPSPARSE"), (r"CURAND", "HIPRAND"), (r"CUFFT", "HIPFFT"),
    (r"Cublas", "Hipblas"), (r"Cusparse", "Hipsparse"), (r"Curand", "Hiprand"),
    (r"cuda", "hip"), (r"CUDA", "HIP"), (r"Cuda", "Hip"), (r"nvtx", "roctx"), (r"\.cuh\b", ".hip.hpp")]]
OLD_HIP_INDEX = re.compile(r"\bhip(Thread|Block)(Idx|Dim)_([xyz])\b|\bhipGridDim_([xyz])\b")
HIP_RUNTIME_INCLUDE = re.compile(r'^#\s*include\s*[<"]hip/hip_runtime(_api)?\.h[>"]\s*$')


def _old_index(m: re.Match) -> str:
    if m.group(4):
        return f"gridDim.{m.group(4)}"
    return f"{m.group(1).lower()}{m.group(2)}.{m.group(3)}"


def strip_comments(text: str) -> str:
    """Blank out // and /* */ comments (keeping newlines), leaving string literals alone."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_top(s: str) -> tuple[list[str], int]:
    """Split s at top-level commas up to the first unmatched ')'; return parts and the end index."""
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(s):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                parts.append(s[start:k])
                return parts, k
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(s[start:k])
            start = k + 1
    parts.append(s[start:])
    return parts, len(s)


def _unwrap(arg: str) -> str:
    a = arg.strip()
    m = re.fullmatch(r"dim3\s*\((.*)\)", a)
    if m and split_top(m.group(1))[1] == len(m.group(1)) and len(split_top(m.group(1))[0]) == 1:
        a = m.group(1).strip()
    m = re.fullmatch(r"(?:HIP_KERNEL_NAME\s*)?\((.*)\)", a)
    if m and "," not in m.group(1):
        a = m.group(1).strip()
    return a


def _launch(name: str, cfg: list[str]) -> str:
    cfg = [_unwrap(c) for c in cfg]
    while len(cfg) > 2 and cfg[-1] in ("0", "NULL", "nullptr", "0x0"):
        cfg.pop()
    return f"{name}<<<{','.join(cfg)}>>>("


def canon_launch(line: str) -> str:
    m = re.search(r"\bhipLaunchKernelGGL\s*\(", line)
    if m:
        parts, end = split_top(line[m.end():])
        if len(parts) >= 5:
            rest_parts = parts[5:]
            tail = line[m.end():][end:] if end < len(line[m.end():]) else ""
            name = _unwrap(parts[0])
            rest = ",".join(rest_parts)
            return line[:m.start()] + _launch(name, parts[1:5]) + rest + tail
    m = re.search(r"([\w:<>]+?)\s*<<<(.*?)>>>\s*\(", line)
    if m:
        cfg, _ = split_top(m.group(2))
        return line[:m.start()] + _launch(m.group(1), cfg) + line[m.end():]
    return line


def normalize(line: str, idents: bool = False) -> str:
    s = line.strip()
    if not s:
        return ""
    for rx, rep in HEADER_MAP:
        s = rx.sub(rep, s)
    s = OLD_HIP_INDEX.sub(_old_index, s)
    for rx, rep in RENAMES:
        s = rx.sub(rep, s)
    s = re.sub(r"\bhipLaunchParm\s+\w+\s*,?\s*", "", s)
    s = canon_launch(s)
    if idents:
        for rx, rep in IDENT_RENAMES:
            s = rx.sub(rep, s)
    s = re.sub(r"\s+", " ", s)
    s = re.sub(r" ?([^\w ]) ?", r"\1", s)
    return s.rstrip("\\").strip()


def norm_lines(text: str, hip_side: bool, idents: bool = False) -> list[tuple[int, str]]:
    """(1-based line, normalized text) for lines that keep any code."""
    out = []
    for k, raw in enumerate(strip_comments(text).split("\n"), 1):
        if hip_side and HIP_RUNTIME_INCLUDE.match(raw.strip()):
            continue  # hipify adds this include
        s = normalize(raw, idents)
        if s:
            out.append((k, s))
    return out


# ---------------------------------------------------------------- hunks

@dataclass
class Hunk:
    pair: str
    path: str            # CUDA file (absolute)
    rel: str             # relative to the pair's CUDA root
    lines: tuple[int, int]   # inclusive CUDA-side line range that a finding must meet
    kind: str            # replace / delete / insert / branch
    cuda_text: list[str] = field(default_factory=list)
    hip_text: list[str] = field(default_factory=list)
    found: list[str] = field(default_factory=list)           # codes of findings on the hunk
    found_related: list[str] = field(default_factory=list)   # codes, counting related locations
    label: str | None = None

    @property
    def anchor(self) -> str:
        return f"{self.rel}:{self.lines[0]}"


def diff_hunks(pair: str, cuda_path: Path, rel: str, cuda_text: str, hip_text: str,
               idents: bool = False) -> tuple[list[Hunk], set[int]]:
    a = norm_lines(cuda_text, False, idents)
    b = norm_lines(hip_text, True, idents)
    raw_a, raw_b = cuda_text.split("\n"), hip_text.split("\n")
    sm = difflib.SequenceMatcher(None, [s for _, s in a], [s for _, s in b], autojunk=False)
    hunks, unchanged = [], set()
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            unchanged.update(a[k][0] for k in range(i1, i2))
            continue
        hip_lines = [raw_b[b[k][0] - 1] for k in range(j1, j2)]
        if tag == "replace" and "".join(s for _, s in a[i1:i2]).replace(" ", "") == \
                "".join(s for _, s in b[j1:j2]).replace(" ", ""):
            unchanged.update(a[k][0] for k in range(i1, i2))   # the same code, wrapped differently
            continue
        if tag == "insert":
            lo = a[i1 - 1][0] if i1 > 0 else (a[0][0] if a else 1)
            hi = a[i1][0] if i1 < len(a) else lo
            hunks.append(Hunk(pair, str(cuda_path), rel, (lo, hi), tag, [], hip_lines))
        else:
            lo, hi = a[i1][0], a[i2 - 1][0]
            hunks.append(Hunk(pair, str(cuda_path), rel, (lo, hi), tag, raw_a[lo - 1:hi], hip_lines))
    return hunks, unchanged


# ---------------------------------------------------------------- #if HIP / #else pairs in one file

HIP_MARK = re.compile(r"\bUSE_ROCM\b|USE_AMD_ROCM|__HIP_PLATFORM_(AMD|HCC)__|__HIPCC__|__HIP__\b|"
                      r"__HIP_DEVICE_COMPILE__|\w*_USE_HIP\b|\w*COMPILING_HIP\b|\bUSE_HIP\b|GINKGO_HIP_PLATFORM_HCC|\bHIPIFY")
CUDA_MARK = re.compile(r"\w*_USE_CUDA\b|\w*COMPILING_CUDA\b|\bUSE_CUDA\b|__HIP_PLATFORM_(NVIDIA|NVCC)__|GINKGO_HIP_PLATFORM_NVCC")
DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)")


def branch_side(directive: str, cond: str) -> tuple[bool | None, bool | None]:
    """Which platform compiles this branch, and which compiles the code after its #else: True for
    HIP, False for CUDA, None when both or neither. `HIP || A` -> (True, False); `HIP && A` -> (True,
    None); a test naming both platforms or mixing || and && -> (None, None)."""
    hm, cm = HIP_MARK.search(cond), CUDA_MARK.search(cond)
    if bool(hm) == bool(cm):
        return None, None
    m = hm or cm
    neg = directive == "ifndef" or bool(re.search(r"!\s*(defined\s*\(?\s*)?$", cond[:m.start()]))
    side = (hm is not None) != neg
    has_or, has_and = "||" in cond, "&&" in cond
    if has_or and has_and:
        return None, None
    if has_and:
        return side, None
    return side, not side


def ifdef_hunks(pair: str, path: Path, rel: str, text: str) -> tuple[list[Hunk], set[int]]:
    """Pair the HIP branch and the CUDA branch of each #if that tests the platform (USE_ROCM,
    __HIP_PLATFORM_AMD__, *_USE_HIP, *_USE_CUDA...); diff them. Only the outermost platform test of a
    nest pairs branches: tests nested inside a branch are part of its text."""
    lines = text.split("\n")
    stack: list[dict] = []
    groups = []
    for k, raw in enumerate(lines, 1):
        m = DIRECTIVE.match(raw)
        if not m:
            continue
        d, cond = m.group(1), m.group(2).split("//")[0]
        j = k
        while lines[j - 1].rstrip().endswith("\\") and j < len(lines):   # a directive continued on the next line
            cond = cond.rstrip().rstrip("\\") + " " + lines[j].split("//")[0]
            j += 1
        if d in ("if", "ifdef", "ifndef"):
            outer = any(g["plat"] for g in stack)
            side, else_side = (None, None) if outer else branch_side(d, cond)
            stack.append({"plat": side is not None, "outer": outer, "else": else_side,
                          "branches": [[k, None, side]]})
        elif not stack:
            continue
        elif d in ("elif", "else"):
            g = stack[-1]
            g["branches"][-1][1] = k
            side = None
            if not g["outer"]:
                if d == "elif":
                    side = branch_side("if", cond)[0]
                elif len(g["branches"]) == 1:
                    side = g["else"]
                else:
                    seen = {b[2] for b in g["branches"] if b[2] is not None}
                    side = (not seen.pop()) if len(seen) == 1 else None
            g["plat"] = g["plat"] or side is not None
            g["branches"].append([k, None, side])
        else:
            g = stack.pop()
            g["branches"][-1][1] = k
            if g["plat"]:
                groups.append(g)
    hunks, in_branch, kept = [], set(), set()
    for g in groups:
        hip_b = [b for b in g["branches"] if b[2] is True]
        cuda_b = [b for b in g["branches"] if b[2] is False]
        if not cuda_b:
            continue
        for b in g["branches"]:
            in_branch.update(range(b[0], b[1] + 1))
        cb = cuda_b[0]
        ctext = "\n".join([""] * cb[0] + lines[cb[0]:cb[1] - 1])   # keep real line numbers
        htext = "\n".join(lines[hip_b[0][0]:hip_b[0][1] - 1]) if hip_b else ""
        hs, same = diff_hunks(pair, path, rel, ctext, htext)
        kept.update(same)
        for h in hs:
            h.kind = "branch-" + h.kind
        if not hip_b:
            hs = [Hunk(pair, str(path), rel, (cb[0], cb[1]), "branch-only", lines[cb[0] - 1:cb[1]], [])]
        hunks.extend(hs)
    # unchanged: the shared code outside platform tests, and the CUDA-branch lines the HIP branch repeats
    unchanged = {k for k, raw in enumerate(lines, 1) if raw.strip() and k not in in_branch} | kept
    return hunks, unchanged


# ---------------------------------------------------------------- pairing files of two trees

def file_key(rel: str) -> str | None:
    p = Path(rel.lower())
    suf = p.suffix
    stem = p.name[: -len(suf)] if suf else p.name
    if suf not in SOURCE_SUFFIXES | HEADER_SUFFIXES:
        return None
    kind = "h" if suf in HEADER_SUFFIXES else "s"
    if stem.endswith(".hip"):
        stem = stem[:-4]
    s = "/".join([*p.parent.parts, stem])
    for rx, rep in [(re.compile(r"cuda"), "hip"), (re.compile(r"cu(rand|blas|sparse|fft|solver)"), r"hip\1"),
                    (re.compile(r"nvtx"), "roctx")]:
        s = rx.sub(rep, s)
    s = re.sub(r"_hip$", "", s)
    return f"{s}|{kind}"


def walk(root: Path, exclude: list[str]) -> dict[str, str]:
    out = {}
    for dp, dns, fns in os.walk(root):
        dns.sort()
        for fn in sorted(fns):
            rel = os.path.relpath(os.path.join(dp, fn), root)
            if any(fnmatch.fnmatch(rel, g) for g in exclude):
                continue
            k = file_key(rel)
            if k and k not in out:
                out[k] = rel
    return out


def pair_files(cuda: Path, hip: Path, exclude_cuda: list[str], exclude_hip: list[str]):
    if cuda.is_file():
        return [(cuda, hip, cuda.name)], [], []
    a, b = walk(cuda, exclude_cuda), walk(hip, exclude_hip)
    pairs = [(cuda / a[k], hip / b[k], a[k]) for k in sorted(a) if k in b]
    return pairs, sorted(a[k] for k in a if k not in b), sorted(b[k] for k in b if k not in a)


# ---------------------------------------------------------------- hiplint

def run_hiplint(paths: list[Path], select: str, extra: list[str]) -> list[dict]:
    if not paths:
        return []
    cmd = [sys.executable, "-m", "hiplint", "scan", *map(str, paths), "--no-cache", "--exit-zero", "--isolated",
           "--report-nvidia-branches", "--output-format", "json", *(["--select", select] if select else []), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"hiplint failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout or "[]")


def category(code: str) -> str:
    return re.match(r"[A-Za-z]+", code).group(0)


def attribute(hunks: list[Hunk], findings: list[dict]) -> None:
    by_path: dict[str, list[Hunk]] = {}
    for h in hunks:
        by_path.setdefault(os.path.realpath(h.path), []).append(h)
    for f in findings:
        hs = by_path.get(os.path.realpath(f["path"]), [])
        lo, hi = f["line"], f.get("end_line") or f["line"]
        for h in hs:
            if lo <= h.lines[1] and hi >= h.lines[0]:
                h.found.append(f["code"])
                h.found_related.append(f["code"])
        for r in f.get("related") or []:
            for h in by_path.get(os.path.realpath(r.get("path", "")), []):
                if h.lines[0] <= r.get("line", 0) <= h.lines[1] and f["code"] not in h.found_related:
                    h.found_related.append(f["code"])


# ---------------------------------------------------------------- one pair

def measure_pair(name: str, spec: dict, trees: Path, select: str, extra: list[str]) -> dict:
    hunks: list[Hunk] = []
    unchanged: dict[str, set[int]] = {}
    if spec.get("mode") == "ifdef":
        root = trees / spec["tree"]
        files = [root] if root.is_file() else [Path(dp) / fn for dp, _, fns in os.walk(root) for fn in sorted(fns)
                                                if file_key(fn)]
        scanned = []
        for p in sorted(files):
            if not p.is_file():
                continue
            text = p.read_text(errors="replace")
            hs, un = ifdef_hunks(name, p, os.path.relpath(p, root if root.is_dir() else root.parent), text)
            if hs:
                hunks += hs
                unchanged[os.path.realpath(p)] = un
                scanned.append(p)
        unmatched_c = unmatched_h = []
        root_cuda = root
    else:
        root_cuda, root_hip = trees / spec["cuda"], trees / spec["hip"]
        if "files" in spec:
            fp = [(root_cuda / c, root_hip / h, c) for c, h in spec["files"]]
            unmatched_c = unmatched_h = []
        else:
            fp, unmatched_c, unmatched_h = pair_files(root_cuda, root_hip, spec.get("exclude_cuda", []),
                                                      spec.get("exclude", []))
        scanned = []
        for c, h, rel in fp:
            hs, un = diff_hunks(name, c, rel, c.read_text(errors="replace"), h.read_text(errors="replace"),
                                spec.get("rename_identifiers", False))
            hunks += hs
            unchanged[os.path.realpath(c)] = un
            scanned.append(c)
    findings = run_hiplint(scanned, select, extra)
    findings = [f for f in findings if os.path.realpath(f["path"]) in unchanged]
    attribute(hunks, findings)
    n_unchanged = sum(len(v) for v in unchanged.values())
    density: dict[str, int] = {}
    for f in findings:
        hit = any(os.path.realpath(h.path) == os.path.realpath(f["path"]) and f["line"] <= h.lines[1]
                  and (f.get("end_line") or f["line"]) >= h.lines[0] for h in hunks)
        if not hit and f["line"] in unchanged[os.path.realpath(f["path"])]:
            density[category(f["code"])] = density.get(category(f["code"]), 0) + 1
    return {"name": name, "files": len(scanned), "unmatched_cuda": unmatched_c, "unmatched_hip": unmatched_h,
            "hunks": hunks, "findings": findings, "unchanged_lines": n_unchanged, "off_hunk": density,
            "root": str(root_cuda)}


def apply_labels(res: dict, labels: dict) -> None:
    table = labels.get(res["name"], labels)
    parsed = []
    for key, val in table.items():
        if isinstance(val, dict):
            continue
        rel, _, line = key.rpartition(":")
        parsed.append((rel, int(line), val))
    exact = {(rel, line): val for rel, line, val in parsed}
    for h in res["hunks"]:
        h.label = exact.get((h.rel, h.lines[0]))
        if h.label is None:
            h.label = next((val for rel, line, val in parsed if rel == h.rel and h.lines[0] <= line <= h.lines[1]),
                           None)


def summarize(res: dict) -> dict:
    hs = res["hunks"]
    n = len(hs)
    found = sum(1 for h in hs if h.found)
    found_r = sum(1 for h in hs if h.found_related)
    needed = [h for h in hs if h.label == "needed"]
    labelled = [h for h in hs if h.label]
    cats: dict[str, dict] = {}
    for h in hs:
        for c in {category(x) for x in h.found_related}:
            cats.setdefault(c, {"hunks_found": 0, "hunks_found_direct": 0, "off_hunk_findings": 0})
            cats[c]["hunks_found"] += 1
            cats[c]["hunks_found_direct"] += c in {category(x) for x in h.found}
    for c, k in res["off_hunk"].items():
        cats.setdefault(c, {"hunks_found": 0, "hunks_found_direct": 0, "off_hunk_findings": 0})
        cats[c]["off_hunk_findings"] = k
    ul = res["unchanged_lines"]
    for c in cats.values():
        c["per_kloc_unchanged"] = round(1000 * c["off_hunk_findings"] / ul, 2) if ul else None
    off = sum(res["off_hunk"].values())
    return {
        "pair": res["name"], "files": res["files"], "hunks": n, "found": found, "found_with_related": found_r,
        "recall": round(found / n, 3) if n else None,
        "recall_with_related": round(found_r / n, 3) if n else None,
        "findings": len(res["findings"]), "unchanged_lines": ul,
        "off_hunk_findings": off, "per_kloc_unchanged": round(1000 * off / ul, 2) if ul else None,
        "labelled": len(labelled), "needed": len(needed),
        "needed_found": sum(1 for h in needed if h.found),
        "needed_found_with_related": sum(1 for h in needed if h.found_related),
        "categories": cats,
        "unmatched_cuda_files": res["unmatched_cuda"], "unmatched_hip_files": res["unmatched_hip"],
        "hunk_list": [{"at": h.anchor, "lines": list(h.lines), "kind": h.kind, "found": sorted(set(h.found)),
                       "found_with_related": sorted(set(h.found_related)), "label": h.label} for h in hs],
    }


def pct(a, b) -> str:
    return f"{100 * a / b:5.1f}%" if b else "    -"


def print_table(sums: list[dict]) -> None:
    w = max([len(s["pair"]) for s in sums] + [5])
    print(f"{'pair':<{w}} files hunks found recall +related  labelled needed found recall +related  "
          f"findings /kLOC-unchanged")
    tot = {k: 0 for k in ("files", "hunks", "found", "found_with_related", "needed", "needed_found",
                           "findings", "unchanged_lines", "off_hunk_findings", "labelled", "needed_found_with_related")}
    for s in sums:
        for k in tot:
            tot[k] += s[k]
        print(f"{s['pair']:<{w}} {s['files']:5} {s['hunks']:5} {s['found']:5} {pct(s['found'], s['hunks'])} "
              f"{pct(s['found_with_related'], s['hunks'])}  {s['labelled']:8} {s['needed']:6} {s['needed_found']:5} "
              f"{pct(s['needed_found'], s['needed'])} {pct(s['needed_found_with_related'], s['needed'])}  "
              f"{s['findings']:8} "
              f"{(1000 * s['off_hunk_findings'] / s['unchanged_lines']) if s['unchanged_lines'] else 0:8.2f}")
    t = tot
    print(f"{'TOTAL':<{w}} {t['files']:5} {t['hunks']:5} {t['found']:5} {pct(t['found'], t['hunks'])} "
          f"{pct(t['found_with_related'], t['hunks'])}  {t['labelled']:8} {t['needed']:6} {t['needed_found']:5} "
          f"{pct(t['needed_found'], t['needed'])} {pct(t['needed_found_with_related'], t['needed'])}  "
          f"{t['findings']:8} "
          f"{(1000 * t['off_hunk_findings'] / t['unchanged_lines']) if t['unchanged_lines'] else 0:8.2f}")
    cats: dict[str, list[int]] = {}
    for s in sums:
        for c, v in s["categories"].items():
            e = cats.setdefault(c, [0, 0, 0])
            e[0] += v["hunks_found_direct"]
            e[1] += v["hunks_found"]
            e[2] += v["off_hunk_findings"]
    if cats:
        print(f"\n{'category':<9} hunks-found +related off-hunk-findings /kLOC-unchanged")
        for c in sorted(cats):
            d, r, o = cats[c]
            print(f"{c:<9} {d:11} {r:8} {o:17} {1000 * o / t['unchanged_lines'] if t['unchanged_lines'] else 0:15.2f}")


def print_hunks(res: dict, only_missed: bool = False) -> None:
    for h in res["hunks"]:
        if only_missed and h.found:
            continue
        tag = ",".join(sorted(set(h.found_related))) or "-"
        print(f"== {res['name']} {h.anchor}-{h.lines[1]} [{h.kind}] found={tag} label={h.label or ''}")
        for line in h.cuda_text[:12]:
            print(f"  - {line.rstrip()}")
        for line in h.hip_text[:12]:
            print(f"  + {line.rstrip()}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cuda", nargs="?", help="CUDA file or tree")
    ap.add_argument("hip", nargs="?", help="its HIP port (file or tree)")
    ap.add_argument("--ifdef", metavar="PATH", help="one file or tree holding both sides in #if branches")
    ap.add_argument("--pairs", metavar="TOML", help="pairs file (see the module docstring)")
    ap.add_argument("--trees", default=".", help="directory the pairs file's paths are relative to")
    ap.add_argument("--only", action="append", default=[], help="run only these pair names (repeatable)")
    ap.add_argument("--exclude", action="append", default=[], help="HIP-side globs to skip (single pair)")
    ap.add_argument("--labels", metavar="TOML", help="hand labels: \"relpath:line\" = \"needed\" | \"not-needed\"")
    ap.add_argument("--select", default="ALL", help="hiplint rule selection (default ALL; '' for the default set)")
    ap.add_argument("--hiplint-arg", action="append", default=[], help="extra argument passed to hiplint scan")
    ap.add_argument("--hunks", action="store_true", help="print every hunk (for labelling)")
    ap.add_argument("--missed", action="store_true", help="print the hunks no finding meets")
    ap.add_argument("--json", metavar="OUT", help="write the figures and every hunk as JSON")
    args = ap.parse_args(argv)

    specs: list[tuple[str, dict]] = []
    trees = Path(args.trees)
    if args.pairs:
        data = tomllib.loads(Path(args.pairs).read_text())
        specs = [(p["name"], p) for p in data.get("pair", [])]
        if args.only:
            specs = [s for s in specs if s[0] in args.only]
    elif args.ifdef:
        specs = [(Path(args.ifdef).name, {"mode": "ifdef", "tree": os.path.abspath(args.ifdef)})]
        trees = Path("/")
    elif args.cuda and args.hip:
        specs = [(Path(args.cuda).name, {"cuda": os.path.abspath(args.cuda), "hip": os.path.abspath(args.hip),
                                         "exclude": args.exclude})]
        trees = Path("/")
    else:
        ap.error("give CUDA HIP, --ifdef PATH or --pairs TOML")
    labels = tomllib.loads(Path(args.labels).read_text()) if args.labels else {}

    sums = []
    for name, spec in specs:
        res = measure_pair(name, spec, trees, args.select, args.hiplint_arg)
        if labels:
            apply_labels(res, labels)
        if args.hunks or args.missed:
            print_hunks(res, only_missed=args.missed and not args.hunks)
        sums.append(summarize(res))
    print_table(sums)
    if args.json:
        Path(args.json).write_text(json.dumps({"select": args.select, "pairs": sums}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
