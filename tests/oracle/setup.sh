#!/usr/bin/env bash
# Install the compile oracle's toolchain (root; idempotent):
#   - clang-19 + Debian's HIP 5.2 headers, hipRAND/rocRAND and device libraries (apt);
#   - cuRAND, cuSOLVER, cuBLAS, NVRTC, cuSPARSE, cuFFT, NCCL and NVSHMEM headers from NVIDIA's PyPI wheels
#     (nvcc itself must already be present);
#   - the ROCm 7.2 device-side header `hiprtc_runtime.h` from the `rocm-llvm-python` wheel;
#   - the full ROCm 7.2 HIP toolchain in a Debian sid chroot (rocm72_chroot.sh): the oracle's main HIP compiler.
# Downloaded headers go to $HIPLINT_ORACLE_CACHE (default ~/.cache/hiplint-oracle), never into the repository.
set -euo pipefail
CACHE=${HIPLINT_ORACLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hiplint-oracle}
PIP=${PIP:-python3 -m pip}
APT_PACKAGES=(clang-19 lld-19 clang-tools-19 libamdhip64-dev libhiprand-dev librocrand-dev rocm-device-libs)
# Versions of the CUDA 13.0 line, matching nvcc 13.0 (NCCL and NVSHMEM: their first CUDA 13 builds).
CUDA_WHEELS=(nvidia-curand==10.4.0.35 nvidia-cusolver==12.0.4.66 nvidia-cublas==13.0.2.14
             nvidia-cuda-nvrtc==13.0.88 nvidia-cusparse==12.6.3.3 nvidia-cufft==12.0.0.61
             nvidia-nccl-cu13==2.27.7 nvidia-nvshmem-cu13==3.3.24)
ROCM_HEADER_WHEEL=rocm-llvm-python==7.2.2.562.46

export DEBIAN_FRONTEND=noninteractive
need=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "oracle setup: apt-get install ${need[*]}" >&2
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
command -v unzip >/dev/null || { apt-get -o DPkg::Lock::Timeout=600 update -qq; apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends unzip >/dev/null; }

mkdir -p "$CACHE"
have_all=1
for h in cusolverDn.h curand_kernel.h cublas_v2.h nvrtc.h cusparse.h cufftXt.h nccl.h nvshmem.h; do
  [ -f "$CACHE/cuda-include/$h" ] || have_all=0
done
if [ $have_all = 0 ]; then
  echo "oracle setup: downloading CUDA library headers into $CACHE/cuda-include" >&2
  rm -rf "$CACHE/wheels" "$CACHE/cuda-include.tmp" "$CACHE/unpacked"
  mkdir -p "$CACHE/wheels" "$CACHE/cuda-include.tmp" "$CACHE/unpacked"
  $PIP download -q --no-deps --no-cache-dir -d "$CACHE/wheels" "${CUDA_WHEELS[@]}"
  # Only the headers, with their subdirectories (NVSHMEM's device/, host/): nvidia/<lib>/include/...
  for w in "$CACHE"/wheels/*.whl; do unzip -q -o "$w" 'nvidia/*/include/*' -d "$CACHE/unpacked"; done
  for d in "$CACHE"/unpacked/nvidia/*/include; do cp -r "$d"/. "$CACHE/cuda-include.tmp"/; done
  rm -rf "$CACHE/wheels" "$CACHE/unpacked" "$CACHE/cuda-include"
  mv "$CACHE/cuda-include.tmp" "$CACHE/cuda-include"
fi
if [ ! -f "$CACHE/rocm72/hiprtc_runtime.h" ]; then
  echo "oracle setup: downloading the ROCm 7.2 device header into $CACHE/rocm72" >&2
  rm -rf "$CACHE/wheels" && mkdir -p "$CACHE/wheels" "$CACHE/rocm72"
  $PIP download -q --no-deps --no-cache-dir -d "$CACHE/wheels" "$ROCM_HEADER_WHEEL"
  unzip -q -o -j "$CACHE"/wheels/rocm_llvm_python-*.whl 'rocm/amd_comgr/hiprtc_runtime.h' -d "$CACHE/rocm72"
  rm -rf "$CACHE/wheels"
fi
# The main HIP compiler: the full ROCm 7.2 toolchain in a Debian sid chroot (cached in $CACHE/sid-rocm72).
bash "$(dirname "$0")/rocm72_chroot.sh" "${HIPLINT_ROCM72_ROOT:-$CACHE/sid-rocm72}"
echo "oracle setup: ready ($CACHE)" >&2
