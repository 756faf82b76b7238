// Shared-memory bank conflicts: 32 banks x 4 B (every GPU gemmsim models).
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "sim/gpu/smem_banks.hpp"
#include "tests/support/test_gpu.hpp"

using namespace gemmsim;
using namespace gemmsim::sim;

namespace {

SharedMemSpec banks32() { return test::small_test_gpu().smem; }

std::vector<std::uint32_t> lanes(std::uint32_t (*addr)(std::uint32_t lane), int n = 32) {
  std::vector<std::uint32_t> v;
  for (int l = 0; l < n; ++l) v.push_back(addr(std::uint32_t(l)));
  return v;
}

// ldmatrix.x4 of a 16x16 fp16 fragment at (row0, col0) of a tile whose row `r` 16-byte chunk
// `c` lives at `chunk_addr(r, c)`. Matrix order as for an A fragment: (rows 0-7, cols 0-7),
// (rows 8-15, cols 0-7), (rows 0-7, cols 8-15), (rows 8-15, cols 8-15); lane i gives the
// address of row i % 8 of matrix i / 8.
template <typename F>
std::array<std::uint32_t, 32> ldmatrix_x4_rows(int row0, int col0, F chunk_addr) {
  std::array<std::uint32_t, 32> rows{};
  for (int lane = 0; lane < 32; ++lane) {
    const int m = lane / 8, r = row0 + (m % 2) * 8 + lane % 8;
    const int chunk = (col0 + (m / 2) * 8) / 8;  // 8 fp16 per 16-byte chunk
    rows[std::size_t(lane)] = chunk_addr(r, chunk);
  }
  return rows;
}

}  // namespace

TEST_CASE("An n-way bank conflict of 4-byte accesses costs n wavefronts", "[smem]") {
  const auto smem = banks32();
  for (const std::uint32_t n : {1u, 2u, 4u, 8u, 16u, 32u}) {
    std::vector<std::uint32_t> addr;
    for (std::uint32_t lane = 0; lane < 32; ++lane) addr.push_back(lane * n * 4);
    INFO("stride " << n << " words");
    CHECK(smem_wavefronts(addr, 4, smem) == int(n));
  }
}

TEST_CASE("Padding a 32x32 fp32 tile by one word removes the column-access conflict",
          "[smem]") {
  const auto smem = banks32();
  for (std::uint32_t col : {0u, 5u, 31u}) {
    std::vector<std::uint32_t> unpadded, padded;
    for (std::uint32_t lane = 0; lane < 32; ++lane) {
      unpadded.push_back((lane * 32 + col) * 4);
      padded.push_back((lane * 33 + col) * 4);
    }
    CHECK(smem_wavefronts(unpadded, 4, smem) == 32);
    CHECK(smem_wavefronts(padded, 4, smem) == 1);
  }
}

TEST_CASE("Lanes reading the same word are served by one broadcast", "[smem]") {
  const auto smem = banks32();
  CHECK(smem_wavefronts(lanes([](std::uint32_t) { return 64u; }), 4, smem) == 1);
  // Half the warp on one word, the other half on distinct banks: still one wavefront.
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return l < 16 ? 0u : l * 4; }), 4, smem) ==
        1);
  // Two words of one bank, each read by 16 lanes: two wavefronts, not sixteen.
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return (l % 2) * 128; }), 4, smem) == 2);
}

TEST_CASE("Wide contiguous accesses cost one wavefront per 128-byte phase", "[smem]") {
  const auto smem = banks32();
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return l * 16; }), 16, smem) == 4);
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return l * 8; }), 8, smem) == 2);
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return l * 4; }), 4, smem) == 1);
  // 8-byte accesses 16 bytes apart: within a half-warp, lanes l and l + 8 share banks.
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return l * 16; }), 8, smem) == 4);
}

TEST_CASE("Inactive lanes cost nothing", "[smem]") {
  const auto smem = banks32();
  CHECK(smem_wavefronts({}, 4, smem) == 0);
  // 8 active lanes of 16 bytes: one quarter-warp phase.
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return l * 16; }, 8), 16, smem) == 1);
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return l * 128; }, 4), 4, smem) == 4);
}

TEST_CASE("ldmatrix.x4 on an unpadded 64-column fp16 tile costs 8 wavefronts per matrix and "
          "a 16-byte pad or an XOR swizzle makes it 1",
          "[smem]") {
  const auto smem = banks32();
  // 64 fp16 = 128 B per row: all rows start in bank 0.
  const auto naive = [](int r, int c) { return std::uint32_t(r * 128 + c * 16); };
  const auto padded = [](int r, int c) { return std::uint32_t(r * 144 + c * 16); };
  const auto swizzled = [](int r, int c) { return std::uint32_t(r * 128 + ((c ^ (r % 8)) * 16)); };
  for (const int col0 : {0, 16, 48}) {
    for (const int row0 : {0, 16}) {
      INFO("fragment at row " << row0 << ", column " << col0);
      CHECK(ldmatrix_wavefronts(ldmatrix_x4_rows(row0, col0, naive), smem) == 4 * 8);
      CHECK(ldmatrix_wavefronts(ldmatrix_x4_rows(row0, col0, padded), smem) == 4 * 1);
      CHECK(ldmatrix_wavefronts(ldmatrix_x4_rows(row0, col0, swizzled), smem) == 4 * 1);
    }
  }
  // .x1 and .x2 count their matrices only.
  const auto rows = ldmatrix_x4_rows(0, 0, naive);
  CHECK(ldmatrix_wavefronts(std::span<const std::uint32_t>(rows.data(), 8), smem) == 8);
  CHECK(ldmatrix_wavefronts(std::span<const std::uint32_t>(rows.data(), 16), smem) == 16);
}

TEST_CASE("Malformed bank queries are rejected", "[smem]") {
  const auto smem = banks32();
  const std::array<std::uint32_t, 4> a{0, 4, 8, 12};
  CHECK_THROWS_AS(smem_wavefronts(a, 3, smem), std::invalid_argument);
  CHECK_THROWS_AS(ldmatrix_wavefronts(a, smem), std::invalid_argument);
}
