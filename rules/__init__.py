"""hiplint's built-in rules. One module per rule, one folder per family (the code prefix):

    warp/     WRP  warp size, lane masks, warp-synchronous intrinsics
    curand/   RND  cuRAND -> hipRAND / rocRAND (API table + semantic rules)
    cusolver/ SLV  cuSOLVER -> hipSOLVER / rocSOLVER (API table + semantic rules)
    sync/     SYN  synchronization and scheduling
    nvidia/   NV   NVIDIA-only code: inline PTX, NVIDIA-only intrinsics
    arch/     ARC  architecture and feature checks
    memory/   MEM  LDS size, textures, managed memory, pointer attributes, fp8/bf16/half
    libs/     LIB  other libraries: CUB, WMMA, cuBLAS, cuFFT, cuDNN, NCCL, NVTX, NVRTC, ...
    python/   PY   Python glue: PyTorch extensions, capability gates, NVML, ...
    build/    BLD  CMake and Makefiles: CUDA language, architectures, nvcc flags, libraries
"""
