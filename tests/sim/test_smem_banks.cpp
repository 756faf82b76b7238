// Shared-memory bank conflicts: 32 banks x 4 B (every GPU gemmsim models).
#include <array>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "sim/gpu/smem_banks.hpp"
#include "tests/support/test_gpu.hpp"

using namespace gemmsim;
using namespace gemmsim::sim;

namespace {

SharedMemSpec banks32() {
  return test::small_test_gpu().smem;
}

std::vector<std::uint32_t> lanes(std::uint32_t (*addr)(std::uint32_t lane), int n = 32) {
  std::vector<std::uint32_t> v;
  v.reserve(std::size_t(n));
  for (int l = 0; l < n; ++l) {
    v.push_back(addr(std::uint32_t(l)));
  }
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
    for (std::uint32_t lane = 0; lane < 32; ++lane) {
      addr.push_back(lane * n * 4);
    }
    INFO("stride " << n << " words");
    CHECK(smem_wavefronts(addr, 4, smem) == int(n));
  }
}

TEST_CASE("Padding a 32x32 fp32 tile by one word removes the column-access conflict", "[smem]") {
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
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return l < 16 ? 0u : l * 4; }), 4, smem) == 1);
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

TEST_CASE("Sub-word and unaligned accesses are counted by the words they touch", "[smem]") {
  const auto smem = banks32();
  // 32 consecutive bytes or halfwords: 8 or 16 words in distinct banks.
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return l; }), 1, smem) == 1);
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return l * 2; }), 2, smem) == 1);
  // Halfwords 64 bytes apart: words 16 apart, so 16 distinct words in each of banks 0 and 16.
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return l * 64; }), 2, smem) == 16);
  // 8-byte accesses 4 bytes off alignment: each half-warp touches 32 consecutive words (1..32
  // in the first), one per bank.
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return l * 8 + 4; }), 8, smem) == 2);
  // 16-byte accesses 4 bytes off a 512-byte stride: every lane touches banks 1-4, 8 distinct
  // words in each.
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return l * 512 + 4; }, 8), 16, smem) == 8);
}

TEST_CASE("Inactive lanes cost nothing", "[smem]") {
  const auto smem = banks32();
  CHECK(smem_wavefronts({}, 4, smem) == 0);
  // 8 active lanes of 16 bytes: one quarter-warp phase.
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return l * 16; }, 8), 16, smem) == 1);
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return l * 128; }, 4), 4, smem) == 4);
}

TEST_CASE(
    "ldmatrix.x4 on an unpadded 64-column fp16 tile costs 8 wavefronts per matrix and "
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

TEST_CASE("Bank-conflict calculator call rate", "[.bench]") {
  const auto smem = banks32();
  const auto swizzled = [](int r, int c) { return std::uint32_t(r * 128 + ((c ^ (r % 8)) * 16)); };
  const auto naive = [](int r, int c) { return std::uint32_t(r * 128 + c * 16); };
  const auto conflict_free = ldmatrix_x4_rows(0, 0, swizzled);
  const auto eight_way = ldmatrix_x4_rows(0, 0, naive);
  std::array<std::uint32_t, 32> stride1{}, stride8{};
  for (std::uint32_t l = 0; l < 32; ++l) {
    stride1[l] = l * 4;
    stride8[l] = l * 32;
  }
  constexpr int kCalls = 1'000'000;
  auto rate = [&](const char* name, auto&& call) {
    long sum = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) {
      sum += call();
    }
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    std::printf("smem bench: %-34s %6.1f ns/call (%ld wavefronts)\n", name, ns / kCalls, sum);
  };
  rate("ldmatrix.x4, swizzled (4 x 1)", [&] { return ldmatrix_wavefronts(conflict_free, smem); });
  rate("ldmatrix.x4, unpadded (4 x 8)", [&] { return ldmatrix_wavefronts(eight_way, smem); });
  rate("ld.shared.b32, stride 1 (1)", [&] { return smem_wavefronts(stride1, 4, smem); });
  rate("ld.shared.b32, stride 8 words (8)", [&] { return smem_wavefronts(stride8, 4, smem); });
}
