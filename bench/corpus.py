"""A generated corpus of realistic CUDA sources for the benchmark (deterministic for a seed).

Files mix element-wise kernels, warp and block reductions, tiled matrix multiplies, host code with
launches and error checks, and macro-heavy files (code in #define bodies, which hiplint parses as
extra units). About a third contain findings (32-lane lane arithmetic); the rest are portable.
"""
from __future__ import annotations

import os
import random

HEADER = """// {name}: generated benchmark source ({kind})
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

"""

MACROS = """#define CUDA_CHECK(call) do {{ cudaError_t err_ = (call); if (err_ != cudaSuccess) {{ \\
    fprintf(stderr, "%s:%d: %s\\n", __FILE__, __LINE__, cudaGetErrorString(err_)); exit(1); }} }} while (0)
#define GRID_STRIDE_{n}(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); \\
    i += blockDim.x * gridDim.x)
#define DIV_UP_{n}(a, b) (((a) + (b) - 1) / (b))
#define CLAMP_{n}(x, lo, hi) ((x) < (lo) ? (lo) : ((x) > (hi) ? (hi) : (x)))
#define WARP_REDUCE_{n}(v) do {{ for (int o_ = warpSize / 2; o_ > 0; o_ >>= 1) \\
    (v) += __shfl_down_sync(0xffffffffu, (v), o_); }} while (0)
#define LOAD_TILE_{n}(dst, src, r, c, ld) (dst)[threadIdx.y][threadIdx.x] = (src)[(r) * (ld) + (c)]
#define BLOCK_{n} {block}
"""

BAD_MACRO = "#define LANE_ID_{n}() (threadIdx.x & 31)\n#define WARP_ID_{n}() (threadIdx.x >> 5)\n"

ELEMENTWISE = """
template <typename T>
__global__ void {name}(const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ out, T alpha, int n) {{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {{
        T a = x[i];
        T b = y[i];
        out[i] = alpha * a + b * {k}.0f;
    }}
}}
"""

REDUCE_GOOD = """
__global__ void {name}(const float* in, float* out, int n) {{
    extern __shared__ float partial[];
    int tid = threadIdx.x;
    int lane = tid % warpSize;
    int warp = tid / warpSize;
    float v = 0.f;
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x)
        v += in[i] * {k};
    for (int off = warpSize / 2; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {{
        v = lane < blockDim.x / warpSize ? partial[lane] : 0.f;
        for (int off = warpSize / 2; off > 0; off >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, off);
        if (lane == 0) atomicAdd(out, v);
    }}
}}
"""

REDUCE_BAD = """
__global__ void {name}(const float* in, float* out, int n) {{
    __shared__ float partial[32];
    int tid = threadIdx.x;
    int lane = tid & 31;
    int warp = tid >> 5;
    int gid = blockIdx.x * blockDim.x + tid;
    float v = gid < n ? in[gid] * {k} : 0.f;
    for (int off = 16; off > 0; off /= 2)
        v += __shfl_xor_sync(0xffffffff, v, off);
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (tid < blockDim.x / 32) {{
        v = partial[tid];
        for (int off = 16; off > 0; off /= 2)
            v += __shfl_xor_sync(0xffffffff, v, off);
        if (tid == 0) out[blockIdx.x] = v;
    }}
}}
"""

MATMUL = """
template <int TILE>
__global__ void {name}(const float* A, const float* B, float* C, int M, int N, int K) {{
    __shared__ float As[TILE][TILE + 1];
    __shared__ float Bs[TILE][TILE + 1];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {{
        int ka = t * TILE + threadIdx.x;
        int kb = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[row * K + ka] : 0.f;
        Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[kb * N + col] : 0.f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }}
    if (row < M && col < N) C[row * N + col] = acc * {k}.0f;
}}
"""

STENCIL = """
__global__ void {name}(const float* in, float* out, int nx, int ny) {{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x <= 0 || y <= 0 || x >= nx - 1 || y >= ny - 1) return;
    int i = y * nx + x;
    out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]) + {k}e-3f;
}}
"""

PLATFORM = """
__device__ inline unsigned {name}_lane() {{
#if defined(__HIP_PLATFORM_AMD__)
    return __lane_id();
#else
    unsigned id;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
    return id;
#endif
}}
"""

HOST = """
void run_{name}(const float* host_in, float* host_out, int n) {{
    float *d_in = nullptr, *d_out = nullptr;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, host_in, n * sizeof(float), cudaMemcpyHostToDevice));
    int block = {block};
    int grid = (n + block - 1) / block;
    {kernel}<<<grid, block, block * sizeof(float)>>>(d_in, d_out, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(host_out, d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
}}
"""


def make_file(i: int, rng: random.Random) -> str:
    kind = rng.choice(["kernels", "kernels", "kernels", "macro-heavy"])
    with_findings = rng.random() < 0.35
    name = f"unit{i:05d}"
    parts = [HEADER.format(name=name, kind=kind + (", with findings" if with_findings else ""))]
    parts.append(MACROS.format(n=i, block=rng.choice([128, 256, 512])))
    if kind == "macro-heavy":
        for m in range(rng.randint(8, 20)):
            parts.append(f"#define ACCUM_{i}_{m}(acc, a, b) do {{ (acc) += (a) * (b) + {m}; }} while (0)\n")
            parts.append(f"#define INDEX_{i}_{m}(r, c, ld) ((r) * (ld) + (c) + {m})\n")
        if with_findings:
            parts.append(BAD_MACRO.format(n=i))
    kernels = []
    for j in range(rng.randint(3, 8)):
        template = rng.choice([ELEMENTWISE, REDUCE_GOOD, MATMUL, STENCIL, PLATFORM, REDUCE_GOOD])
        if with_findings and j == 0:
            template = REDUCE_BAD
        kname = f"{name}_k{j}"
        parts.append(template.format(name=kname, k=rng.randint(1, 9)))
        if template in (REDUCE_GOOD, REDUCE_BAD):
            kernels.append(kname)
    for kname in kernels:
        parts.append(HOST.format(name=kname, kernel=kname, block=rng.choice([128, 256])))
    return "".join(parts)


def generate(directory: str, count: int, seed: int = 7) -> tuple[int, int]:
    """Write `count` files under `directory` (in subdirectories of 100); return (files, bytes)."""
    rng = random.Random(seed)
    total = 0
    for i in range(count):
        sub = os.path.join(directory, f"mod{i // 100:03d}")
        os.makedirs(sub, exist_ok=True)
        text = make_file(i, rng)
        ext = ".cu" if i % 10 else ".cuh"
        with open(os.path.join(sub, f"unit{i:05d}{ext}"), "w") as fh:
            fh.write(text)
        total += len(text.encode())
    return count, total
