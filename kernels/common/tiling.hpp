// How a GEMM launch maps onto memory and onto CTAs, shared by the kernel models.
//
// Matrices are row-major: A (M x K) and B (K x N) in the input type, C (M x N) in fp32, and the
// split-K workspace (split_k x M x N fp32). They live at fixed, 2 MiB-aligned virtual addresses
// so the L2 and DRAM address hashes see realistic, distinct streams.
//
// CTA order follows the real kernels: blockIdx.x walks N tiles, blockIdx.y M tiles, blockIdx.z
// the split-K slice (slowest). With threadblock swizzle SW the grid is launched as
// (tiles_n * SW, ceil(tiles_m / SW)) and remapped bx' = bx / SW, by' = by * SW + bx % SW
// (models.md, section 5); CTAs that land outside the tile grid exit at once.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/common/gemm_config.hpp"

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

class CtaRaster {
 public:
  CtaRaster(const GemmConfig& c, const GemmProblem& p)
      : tiles_m_(int((p.m + c.block_m - 1) / c.block_m)),
        tiles_n_(int((p.n + c.block_n - 1) / c.block_n)),
        k_tiles_(int((p.k + c.block_k - 1) / c.block_k)),
        sw_(std::max(1, c.swizzle)),
        split_(std::max(1, c.split_k)) {
    grid_x_ = tiles_n_ * sw_;
    grid_y_ = (tiles_m_ + sw_ - 1) / sw_;
    // Each slice takes an equal share of whole K tiles (the last may be shorter).
    per_slice_ = (k_tiles_ + split_ - 1) / split_;
  }
  int ctas() const { return grid_x_ * grid_y_ * split_; }
  int tiles_m() const { return tiles_m_; }
  int tiles_n() const { return tiles_n_; }
  int k_tiles() const { return k_tiles_; }

  CtaTile tile(int cta) const {
    CtaTile t;
    const int per_slice = grid_x_ * grid_y_;
    t.slice = cta / per_slice;
    const int r = cta % per_slice;
    const int bx = r % grid_x_, by = r / grid_x_;
    t.tile_n = bx / sw_;
    t.tile_m = by * sw_ + bx % sw_;
    t.k_tile_begin = std::min(k_tiles_, t.slice * per_slice_);
    t.k_tile_end = std::min(k_tiles_, t.k_tile_begin + per_slice_);
    t.valid = t.tile_m < tiles_m_ && t.tile_n < tiles_n_;
    return t;
  }

 private:
  int tiles_m_, tiles_n_, k_tiles_, sw_, split_;
  int grid_x_ = 0, grid_y_ = 0, per_slice_ = 0;
};

}  // namespace gemmsim
