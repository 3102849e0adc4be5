// The warp-synchronous intrinsics that HIP 5.2 (Debian bookworm) lacks, for compiling with HIP 5.2 only.
//
// ROCm 6.2 added __shfl*_sync, __ballot_sync, __any_sync, __all_sync, __activemask, __syncwarp and
// friends; since then each *_sync function requires a 64-bit integer mask (a static_assert in
// amd_warp_sync_functions.h), because a wave64 mask does not fit in 32 bits. This header declares the
// same family with the same 64-bit-mask requirement on top of 5.2's legacy intrinsics (__shfl,
// __shfl_up, __shfl_down, __shfl_xor, __ballot, __any, __all).
//
// Retired from the compile oracle: its HIP compiler is ROCm 7.2, whose real headers have the family,
// and its HIP 5.2 compiles (code written for ROCm 5.x) must see 5.2 as it is. Kept for
// `bench/migrate_compare.py --shim`, which still compiles with HIP 5.2 (docs/migrate.md).
//
// It is for compiling only: the mask is checked for its type, not its value, and the reductions
// assume that every lane named in the mask takes part. Newer HIP headers are left alone.
#pragma once
#include <hip/hip_runtime.h>

#if defined(__HIP_PLATFORM_AMD__) && (HIP_VERSION_MAJOR < 6 || (HIP_VERSION_MAJOR == 6 && HIP_VERSION_MINOR < 2))

namespace hiplint_oracle {
template <typename T> struct is_wave_mask { static constexpr bool value = false; };
template <> struct is_wave_mask<unsigned long long> { static constexpr bool value = true; };
template <> struct is_wave_mask<long long> { static constexpr bool value = true; };
template <> struct is_wave_mask<unsigned long> { static constexpr bool value = sizeof(unsigned long) == 8; };
template <> struct is_wave_mask<long> { static constexpr bool value = sizeof(long) == 8; };
}  // namespace hiplint_oracle

#define HIPLINT_REQUIRE_WAVE_MASK(MaskT)                                                         \
  static_assert(hiplint_oracle::is_wave_mask<MaskT>::value,                                     \
                "The mask must be a 64-bit integer (as in ROCm >= 6.2): a 32-bit mask "         \
                "cannot name the lanes of a 64-lane wavefront.")

__device__ inline unsigned long long __activemask() { return __ballot(1); }

__device__ inline void __syncwarp() {
  // A wavefront executes in lockstep; the fences order its memory operations like CUDA's __syncwarp.
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
}

template <typename MaskT> __device__ inline void __syncwarp(MaskT) {
  HIPLINT_REQUIRE_WAVE_MASK(MaskT);
  __syncwarp();
}

template <typename MaskT> __device__ inline unsigned long long __ballot_sync(MaskT mask, int predicate) {
  HIPLINT_REQUIRE_WAVE_MASK(MaskT);
  return __ballot(predicate) & static_cast<unsigned long long>(mask);
}

template <typename MaskT> __device__ inline int __any_sync(MaskT mask, int predicate) {
  HIPLINT_REQUIRE_WAVE_MASK(MaskT);
  return __ballot_sync(mask, predicate) != 0;
}

template <typename MaskT> __device__ inline int __all_sync(MaskT mask, int predicate) {
  HIPLINT_REQUIRE_WAVE_MASK(MaskT);
  return __ballot_sync(mask, predicate) == (static_cast<unsigned long long>(mask) & __activemask());
}

template <typename MaskT, typename T> __device__ inline T __shfl_sync(MaskT, T var, int src, int width = warpSize) {
  HIPLINT_REQUIRE_WAVE_MASK(MaskT);
  return __shfl(var, src, width);
}

template <typename MaskT, typename T>
__device__ inline T __shfl_up_sync(MaskT, T var, unsigned int delta, int width = warpSize) {
  HIPLINT_REQUIRE_WAVE_MASK(MaskT);
  return __shfl_up(var, delta, width);
}

template <typename MaskT, typename T>
__device__ inline T __shfl_down_sync(MaskT, T var, unsigned int delta, int width = warpSize) {
  HIPLINT_REQUIRE_WAVE_MASK(MaskT);
  return __shfl_down(var, delta, width);
}

template <typename MaskT, typename T>
__device__ inline T __shfl_xor_sync(MaskT, T var, int lane_mask, int width = warpSize) {
  HIPLINT_REQUIRE_WAVE_MASK(MaskT);
  return __shfl_xor(var, lane_mask, width);
}

// Lanes (within the mask) whose `value` equals this lane's.
template <typename MaskT, typename T> __device__ inline unsigned long long __match_any_sync(MaskT mask, T value) {
  HIPLINT_REQUIRE_WAVE_MASK(MaskT);
  unsigned long long same = 0;
  for (int src = 0; src < warpSize; ++src)
    if (__shfl(value, src) == value) same |= 1ull << src;
  return same & static_cast<unsigned long long>(mask) & __activemask();
}

template <typename MaskT, typename T> __device__ inline unsigned long long __match_all_sync(MaskT mask, T value, int* pred) {
  HIPLINT_REQUIRE_WAVE_MASK(MaskT);
  unsigned long long lanes = static_cast<unsigned long long>(mask) & __activemask();
  T first = __shfl(value, __ffsll(static_cast<long long>(lanes)) - 1);
  *pred = (__ballot(value == first) & lanes) == lanes;
  return *pred ? lanes : 0ull;
}

// Whole-wave butterfly reductions (every lane in the mask must take part).
#define HIPLINT_REDUCE_SYNC(NAME, T, COMBINE)                                                     \
  template <typename MaskT> __device__ inline T NAME(MaskT, T value) {                          \
    HIPLINT_REQUIRE_WAVE_MASK(MaskT);                                                           \
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {                                  \
      T other = __shfl_xor(value, offset);                                                      \
      value = COMBINE;                                                                          \
    }                                                                                           \
    return value;                                                                               \
  }
HIPLINT_REDUCE_SYNC(__reduce_add_sync, int, value + other)
HIPLINT_REDUCE_SYNC(__reduce_add_sync, unsigned int, value + other)
HIPLINT_REDUCE_SYNC(__reduce_min_sync, int, other < value ? other : value)
HIPLINT_REDUCE_SYNC(__reduce_min_sync, unsigned int, other < value ? other : value)
HIPLINT_REDUCE_SYNC(__reduce_max_sync, int, other > value ? other : value)
HIPLINT_REDUCE_SYNC(__reduce_max_sync, unsigned int, other > value ? other : value)
#undef HIPLINT_REDUCE_SYNC

#endif
