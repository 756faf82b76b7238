// Device code shared by the harness and the microbenchmarks: a read over a buffer larger than
// the L2, after which the L2 holds only clean lines (the harness's `--flush read`, the
// microbenchmarks' L2 cleaning).
#pragma once

#include <cstdint>

namespace gemmsim::bench {

// Reads `n4` 16-byte words with ld.global.cg (L1 bypassed), grid-stride.
__global__ void l2_clean_kernel(const uint4* p, long long n4, uint32_t* sink) {
  uint32_t acc = 0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
       i += stride) {
    uint4 v;
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p + i));
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

}  // namespace gemmsim::bench
