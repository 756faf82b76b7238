// Shared-memory tile layouts, as the real kernels address them. The models pass these byte
// offsets to the bank-conflict calculator, so padding and swizzles change predicted timing
// the way they change real timing.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/common/gemm_config.hpp"

namespace gemmsim {

// A tile of `rows` x `cols` elements of `elem` bytes, row-major.
struct SmemTile {
  int cols = 0;
  int elem = 2;
  int pad = 0;  // elements of padding per row (Padded layout)
  SmemLayout layout = SmemLayout::Padded;

  SmemTile(int cols_, int elem_, SmemLayout l, int pad_elems)
      : cols(cols_), elem(elem_), pad(l == SmemLayout::Padded ? pad_elems : 0), layout(l) {}

  int row_bytes() const { return (cols + pad) * elem; }
  std::uint32_t bytes(int rows) const { return std::uint32_t(rows) * row_bytes(); }

  // Byte offset of element (row, col).
  std::uint32_t offset(int row, int col) const {
    const int byte = col * elem;
    if (layout != SmemLayout::Swizzled) return std::uint32_t(row * row_bytes() + byte);
    // 16-byte chunks XOR-permuted within each 128-byte span of rows: rows narrower than 128
    // bytes share a span, so the XOR key is the span-row index.
    const int chunks = std::max(1, cols * elem / 16);
    const int rows_per_span = std::max(1, 8 / chunks);
    const int key = (row / rows_per_span) % std::min(chunks, 8);
    const int chunk = (byte / 16) ^ key;
    return std::uint32_t(row * row_bytes() + chunk * 16 + byte % 16);
  }
};

}  // namespace gemmsim
