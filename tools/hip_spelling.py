"""Write the hipify-renamed copy of a fixture: every table name with a HIP equivalent is renamed (as
hipify does), names without one stay in CUDA spelling (hipify leaves them), headers and the few CUDA
runtime names the fixtures use are renamed too. Comments and annotations are renamed like code.

    python tools/hip_spelling.py fixtures/curand/monte_carlo_pricer.cu fixtures/curand/after_hipify/monte_carlo_pricer_hip.hip
"""
import re
import sys
import tomllib
from pathlib import Path

RULES = Path(__file__).resolve().parent.parent / "rules"
EXTRA = {
    "curand_kernel.h": "hiprand/hiprand_kernel.h", "curand.h": "hiprand/hiprand.h",
    "cusolverDn.h": "hipsolver/hipsolver.h", "cusolverSp.h": "hipsolver/hipsolver.h",
    "cusolverRf.h": "hipsolver/hipsolver.h", "cuda_runtime.h": "hip/hip_runtime.h",
    "cudaMemcpy": "hipMemcpy", "cudaMemcpyDeviceToHost": "hipMemcpyDeviceToHost",
    "cudaMemcpyHostToDevice": "hipMemcpyHostToDevice", "cudaMalloc": "hipMalloc", "cudaFree": "hipFree",
    "cudaDeviceSynchronize": "hipDeviceSynchronize", "cudaStream_t": "hipStream_t",
    "CUDA_R_64F": "HIP_R_64F", "CUDA_R_32F": "HIP_R_32F",
    "CUBLAS_FILL_MODE_LOWER": "HIPSOLVER_FILL_MODE_LOWER", "CUBLAS_FILL_MODE_UPPER": "HIPSOLVER_FILL_MODE_UPPER",
    "CUBLAS_OP_N": "HIPSOLVER_OP_N", "CUBLAS_OP_T": "HIPSOLVER_OP_T", "CUBLAS_SIDE_LEFT": "HIPSOLVER_SIDE_LEFT",
    "cusparseMatDescr_t": "hipsparseMatDescr_t", "cusparseCreateMatDescr": "hipsparseCreateMatDescr",
    "cusparseSetMatType": "hipsparseSetMatType", "CUSPARSE_MATRIX_TYPE_GENERAL": "HIPSPARSE_MATRIX_TYPE_GENERAL",
    "cusparseSetMatIndexBase": "hipsparseSetMatIndexBase", "CUSPARSE_INDEX_BASE_ZERO": "HIPSPARSE_INDEX_BASE_ZERO",
    "cusparse.h": "hipsparse/hipsparse.h",
}


def mapping() -> dict[str, str]:
    out = dict(EXTRA)
    for family in ("curand", "cusolver"):
        for row in tomllib.loads((RULES / family / "api.toml").read_text())["api"]:
            if row.get("hip") and row["hip"] != "int":
                out.setdefault(row["cuda"], row["hip"])
    return out


def convert(text: str) -> str:
    names = mapping()
    pattern = re.compile(r"(?<![\w.])(" + "|".join(sorted(map(re.escape, names), key=len, reverse=True)) + r")(?![\w])")
    return pattern.sub(lambda m: names[m.group(1)], text)


if __name__ == "__main__":
    Path(sys.argv[2]).write_text(convert(Path(sys.argv[1]).read_text()))
