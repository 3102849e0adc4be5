"""ARC: architecture and feature checks that pick the wrong path on AMD: `__CUDA_ARCH__` and CUDA
version macros, compute-capability numbers, device attributes, `__launch_bounds__` arguments."""
