#!/usr/bin/env bash
# The oracle's ROCm 7.2 toolchain: Debian's ROCm 7.2.x packages (experimental) in a Debian sid chroot
# built with debootstrap from the machine's own Debian package source. Gives clang 22 with the ROCm 7.2
# device libraries and the HIP 7.2 host and device headers plus hipBLAS, hipBLASLt, hipCUB/rocPRIM,
# hipSOLVER, hipRAND/rocRAND, hipSPARSE, hipFFT, rocThrust, rocWMMA and RCCL headers.
# Root only; idempotent; about 3 minutes and 4.5 GB the first time. Usage: rocm72_chroot.sh ROOT
set -euo pipefail
ROOT=${1:?usage: rocm72_chroot.sh ROOT}
PACKAGES=(hipcc libamdhip64-dev libhipblas-dev libhipblaslt-dev libhipcub-dev libhipsolver-dev libhiprand-dev
          librocrand-dev libhipsparse-dev librocwmma-dev librocprim-dev librocthrust-dev libhipfft-dev librccl-dev)
# The package source is a dated snapshot: do not reject its Release files for their age.
APT_OPTS=(-o Acquire::Check-Valid-Until=false -o DPkg::Lock::Timeout=600)

if [ -x "$ROOT/usr/lib/llvm-22/bin/clang++" ] && grep -qs 'HIP_VERSION_MAJOR 7' "$ROOT/usr/include/hip/hip_version.h"; then
  # An existing chroot gets the packages added to PACKAGES since it was built.
  missing=()
  for p in "${PACKAGES[@]}"; do
    chroot "$ROOT" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    chroot "$ROOT" apt-get "${APT_OPTS[@]}" update -qq
    chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive apt-get "${APT_OPTS[@]}" install -y -qq \
      --no-install-recommends -t experimental "${missing[@]}" >/dev/null
    chroot "$ROOT" apt-get clean
  fi
  echo "rocm72 chroot: ready ($ROOT)" >&2
  exit 0
fi
source_uri() {  # the machine's configured Debian source, deb822 or one-line format
  local uri
  uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$uri" ] || uri=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$uri" ] || { echo "rocm72 chroot: no Debian package source configured" >&2; exit 2; }
  echo "$uri"
}
export DEBIAN_FRONTEND=noninteractive
if ! command -v debootstrap >/dev/null; then
  apt-get "${APT_OPTS[@]}" update -qq
  apt-get "${APT_OPTS[@]}" install -y -qq --no-install-recommends debootstrap >/dev/null
fi
uri=$(source_uri)
mkdir -p "$ROOT"
[ -x "$ROOT/usr/bin/apt-get" ] || debootstrap --variant=minbase sid "$ROOT" "$uri" >&2
printf 'deb %s sid main\ndeb %s experimental main\n' "$uri" "$uri" > "$ROOT/etc/apt/sources.list"
chroot "$ROOT" apt-get "${APT_OPTS[@]}" update -qq
chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive apt-get "${APT_OPTS[@]}" install -y -qq \
  --no-install-recommends -t experimental "${PACKAGES[@]}" >/dev/null
chroot "$ROOT" apt-get clean
mkdir -p "$ROOT/src"
echo "rocm72 chroot: ready ($ROOT)" >&2
