// How a GEMM launch maps onto memory and onto CTAs, shared by the kernel models.
//
// Matrices are row-major: A (M x K) and B (K x N) in the input type, C (M x N) in fp32, and the
// split-K workspace (split_k x M x N fp32). They live at fixed, 2 MiB-aligned virtual addresses
// so the L2 and DRAM address hashes see realistic, distinct streams.
//
// CTA order follows the real kernels: blockIdx.x walks N tiles, blockIdx.y M tiles, blockIdx.z
// the split-K slice (slowest), with the threadblock swizzle of models.md section 5; CTAs that
// land outside the tile grid exit at once. Split-K slices are block_k-aligned ranges of K.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/common/gemm_config.hpp"
#include "kernels/common/tile_rules.hpp"

namespace gemmsim {

struct AddressMap {
  std::uint64_t a = 0, b = 0, c = 0, workspace = 0;
  long long m = 0, n = 0, k = 0;
  int elem = 2;

  AddressMap() = default;
  AddressMap(const GemmProblem& p, DType t) : m(p.m), n(p.n), k(p.k), elem(element_bytes(t)) {
    auto align = [](std::uint64_t v) { return (v + (2u << 20) - 1) & ~std::uint64_t((2u << 20) - 1); };
    a = std::uint64_t(1) << 32;
    b = align(a + std::uint64_t(m) * k * elem);
    c = align(b + std::uint64_t(k) * n * elem);
    workspace = align(c + std::uint64_t(m) * n * 4);
  }
  std::uint64_t a_addr(long long row, long long col) const { return a + (std::uint64_t(row) * k + col) * elem; }
  std::uint64_t b_addr(long long row, long long col) const { return b + (std::uint64_t(row) * n + col) * elem; }
  std::uint64_t c_addr(long long row, long long col) const { return c + (std::uint64_t(row) * n + col) * 4; }
  std::uint64_t ws_addr(int slice, long long row, long long col) const {
    return workspace + ((std::uint64_t(slice) * m + row) * n + col) * 4;
  }
};

struct CtaTile {
  bool valid = false;
  int tile_m = 0, tile_n = 0;
  int slice = 0;
  int k_tile_begin = 0, k_tile_end = 0;  // [begin, end) in units of block_k
};

// CTA order and work split, using the real kernels' own geometry (kernels/common/tile_rules.hpp).
class CtaRaster {
 public:
  CtaRaster(const GemmConfig& c, const GemmProblem& p)
      : block_k_(c.block_k), swizzle_(c.swizzle), k_(p.k), grid_(grid_dims(c, p)),
        tiles_m_(ceil_div_ll(p.m, c.block_m)), slice_k_(splitk_slice_k(c, p.k)) {}
  int ctas() const { return int(grid_.x * grid_.y * grid_.z); }

  CtaTile tile(int cta) const {
    CtaTile t;
    const long long per_slice = grid_.x * grid_.y;
    t.slice = int(cta / per_slice);
    const long long r = cta % per_slice;
    const TileCoord tc = swizzled_tile(r % grid_.x, r / grid_.x, swizzle_, tiles_m_);
    t.valid = tc.valid;
    t.tile_m = int(tc.tm);
    t.tile_n = int(tc.tn);
    const long long kb = std::min(k_, slice_k_ * t.slice);
    const long long ke = std::min(k_, kb + slice_k_);
    t.k_tile_begin = int(kb / block_k_);
    t.k_tile_end = int(ceil_div_ll(ke, block_k_));
    if (ke <= kb) t.k_tile_end = t.k_tile_begin;
    return t;
  }

 private:
  int block_k_, swizzle_;
  long long k_;
  GridDims grid_;
  long long tiles_m_, slice_k_;
};

}  // namespace gemmsim
