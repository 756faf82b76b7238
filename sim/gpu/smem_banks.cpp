#include "sim/gpu/smem_banks.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gemmsim::sim {
namespace {

constexpr int kMaxBanks = 64;
constexpr int kMaxWordsPerPhase = 128;  // 32 lanes x 16 B / 4 B

// Counts the wavefronts of one phase: the largest number of distinct words any one bank must
// deliver. Identical words are one word (broadcast). Distinct words are kept per bank in a
// chain through a fixed array, so a conflict-free phase costs one comparison-free insertion
// per word and nothing is allocated.
class Phase {
 public:
  Phase(int banks, std::uint32_t bank_width) : banks_(banks), width_(bank_width) {
    head_.fill(-1);
  }

  void add_bytes(std::uint32_t addr, std::uint32_t bytes) {
    const std::uint32_t first = addr / width_;
    const std::uint32_t last = (addr + bytes - 1) / width_;
    for (std::uint32_t w = first; w <= last; ++w) add_word(w);
  }

  void add_word(std::uint32_t word) {
    const int bank = static_cast<int>(word % static_cast<std::uint32_t>(banks_));
    for (int i = head_[bank]; i >= 0; i = prev_[i]) {
      if (words_[i] == word) return;  // broadcast
    }
    if (n_ == kMaxWordsPerPhase) throw std::logic_error("smem bank phase: too many words");
    words_[n_] = word;
    prev_[n_] = static_cast<std::int16_t>(head_[bank]);
    head_[bank] = static_cast<std::int16_t>(n_);
    ++n_;
    max_ = std::max(max_, ++count_[bank]);
  }

  int wavefronts() const { return max_; }

 private:
  int banks_;
  std::uint32_t width_;
  int n_ = 0, max_ = 0;
  std::array<std::int16_t, kMaxBanks> head_{};
  std::array<int, kMaxBanks> count_{};
  std::array<std::uint32_t, kMaxWordsPerPhase> words_{};
  std::array<std::int16_t, kMaxWordsPerPhase> prev_{};
};

struct BankGeometry {
  int banks;
  std::uint32_t width;
};

BankGeometry geometry(const SharedMemSpec& smem) {
  if (smem.banks <= 0 || smem.banks > kMaxBanks || smem.bank_width.value == 0 ||
      smem.bank_width.value > 16) {
    throw std::invalid_argument("smem: banks must be in [1, 64] and bank_width in [1, 16] B");
  }
  return {smem.banks, static_cast<std::uint32_t>(smem.bank_width.value)};
}

}  // namespace

int smem_wavefronts(std::span<const std::uint32_t> lane_addr, int access_bytes,
                    const SharedMemSpec& smem) {
  const BankGeometry g = geometry(smem);
  if (access_bytes != 1 && access_bytes != 2 && access_bytes != 4 && access_bytes != 8 &&
      access_bytes != 16) {
    throw std::invalid_argument("smem_wavefronts: access_bytes " + std::to_string(access_bytes) +
                                " is not 1, 2, 4, 8 or 16");
  }
  if (lane_addr.size() > 32) throw std::invalid_argument("smem_wavefronts: more than 32 lanes");
  // A phase moves at most one row of banks (banks x width bytes, 128 B): 8-byte accesses are
  // served a half-warp at a time, 16-byte accesses a quarter-warp at a time. Narrower
  // accesses fit in one phase.
  const std::size_t row_bytes = std::size_t(g.banks) * g.width;
  const std::size_t lanes_per_phase =
      std::max<std::size_t>(1, std::min<std::size_t>(32, row_bytes / std::size_t(access_bytes)));
  int total = 0;
  for (std::size_t first = 0; first < lane_addr.size(); first += lanes_per_phase) {
    Phase phase(g.banks, g.width);
    const std::size_t end = std::min(lane_addr.size(), first + lanes_per_phase);
    for (std::size_t lane = first; lane < end; ++lane) {
      phase.add_bytes(lane_addr[lane], static_cast<std::uint32_t>(access_bytes));
    }
    total += phase.wavefronts();
  }
  return total;
}

int ldmatrix_wavefronts(std::span<const std::uint32_t> row_addr, const SharedMemSpec& smem) {
  const BankGeometry g = geometry(smem);
  if (row_addr.size() != 8 && row_addr.size() != 16 && row_addr.size() != 32) {
    throw std::invalid_argument("ldmatrix_wavefronts: expected 8, 16 or 32 row addresses, got " +
                                std::to_string(row_addr.size()));
  }
  // Each 8x8 matrix of 16-bit elements is eight 16-byte rows, read in one phase.
  int total = 0;
  for (std::size_t m = 0; m < row_addr.size(); m += 8) {
    Phase phase(g.banks, g.width);
    for (std::size_t r = m; r < m + 8; ++r) phase.add_bytes(row_addr[r], 16);
    total += phase.wavefronts();
  }
  return total;
}

}  // namespace gemmsim::sim
