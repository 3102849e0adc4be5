"""PY: Python glue around CUDA code (PyTorch extensions and checks, NVML, CuPy/Numba/PyCUDA, Triton)."""
