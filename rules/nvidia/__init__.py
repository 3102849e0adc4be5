"""NV: code only NVIDIA GPUs run: inline PTX, NVIDIA-only intrinsics, timing tied to NVIDIA clocks."""
