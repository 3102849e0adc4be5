"""LIB: other NVIDIA libraries (CUB, WMMA, cuBLAS/cuBLASLt, cuFFT, cuDNN, NCCL, NVTX, NVRTC, TensorRT,
CUTLASS/CuTe, libcu++) and what their AMD counterparts do differently."""
