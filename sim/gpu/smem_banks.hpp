// Shared-memory bank conflicts, computed from the actual addresses of one warp instruction.
//
// The shared memory serves one wavefront per cycle: up to `banks` words of `bank_width` bytes
// from distinct banks. Threads that read the same word are served together (broadcast).
// Wide accesses are split into phases of 128 bytes (8-byte accesses: two half-warps; 16-byte
// accesses: four quarter-warps); each phase needs as many wavefronts as its most-loaded bank
// has distinct words. ldmatrix: each 8x8 matrix (eight 16-byte rows) is one phase.
#pragma once

#include <cstdint>
#include <span>

#include "hw/gpu_spec.hpp"

namespace gemmsim::sim {

// `lane_addr` holds the byte address each of the 32 lanes accesses (inactive lanes: pass a
// shorter span); `access_bytes` is 4, 8 or 16.
int smem_wavefronts(std::span<const std::uint32_t> lane_addr, int access_bytes,
                    const SharedMemSpec& smem);

// ldmatrix.x{1,2,4}: `row_addr` holds 8 row addresses per matrix (8, 16 or 32 entries).
int ldmatrix_wavefronts(std::span<const std::uint32_t> row_addr, const SharedMemSpec& smem);

}  // namespace gemmsim::sim
