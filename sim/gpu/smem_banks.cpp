#include "sim/gpu/smem_banks.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gemmsim::sim {
namespace {

constexpr int kMaxBanks = 64;
constexpr int kMaxUnits = 32 * 5;  // 32 lanes, an unaligned 16-byte access spans 5 words

struct BankGeometry {
  int bank_shift;  // log2(bank width)
  int banks;
  std::uint32_t bank_mask;
};

bool is_pow2(std::uint64_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}  // no popcount call

BankGeometry geometry(const SharedMemSpec& smem) {
  const auto width = smem.bank_width.value;
  if (smem.banks <= 0 || smem.banks > kMaxBanks || !is_pow2(std::uint64_t(smem.banks)) ||
      width > 16 || !is_pow2(width)) {
    throw std::invalid_argument(
        "smem: banks must be a power of two in [1, 64] and bank_width a power of two in "
        "[1, 16] B");
  }
  return {std::countr_zero(width), smem.banks, std::uint32_t(smem.banks - 1)};
}

// The wavefronts of one phase: the largest number of distinct units any one group must
// deliver. A unit is an aligned run of 2^unit_shift bytes covering 2^(unit_shift - bank_shift)
// whole banks (a word, or an aligned 8- or 16-byte access); a group is the set of banks a unit
// covers. Distinct units of one group conflict on every bank of the group, identical units
// are served together (broadcast), so this equals "the most distinct words in one bank".
// Distinct units are chained per group through fixed arrays: no allocation, and a
// conflict-free phase costs one chain step per unit.
class Phase {
 public:
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): arrays cleared as far as used
  explicit Phase(int groups) : group_mask_(std::uint32_t(groups - 1)) {
    // Only the first `groups` entries are used: clear just those.
    std::fill_n(head_.begin(), groups, std::int16_t{-1});
    std::fill_n(count_.begin(), groups, std::uint8_t{0});
  }

  void add(std::uint32_t unit) {
    const std::uint32_t g = unit & group_mask_;
    for (int i = head_[g]; i >= 0; i = prev_[i]) {
      if (units_[i] == unit) {
        return;  // broadcast
      }
    }
    units_[n_] = unit;
    prev_[n_] = head_[g];
    head_[g] = static_cast<std::int16_t>(n_);
    ++n_;
    max_ = std::max(max_, int(++count_[g]));
  }
  int wavefronts() const { return max_; }

 private:
  std::uint32_t group_mask_;
  int n_ = 0, max_ = 0;
  std::array<std::int16_t, kMaxBanks> head_;   // NOLINT(cppcoreguidelines-pro-type-member-init)
  std::array<std::uint8_t, kMaxBanks> count_;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  // Only the first n_ entries are ever read: no need to clear them.
  std::array<std::uint32_t, kMaxUnits> units_;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  std::array<std::int16_t, kMaxUnits> prev_;    // NOLINT(cppcoreguidelines-pro-type-member-init)
};

// Wavefronts of `n` accesses of `bytes` bytes each (a power of two) at `addr`, in one phase.
int phase_wavefronts(const std::uint32_t* addr, std::size_t n, std::uint32_t bytes,
                     const BankGeometry& g) {
  const int access_shift = std::countr_zero(bytes);
  if (access_shift >= g.bank_shift) {
    // Whole-bank units: group = which run of banks the access covers.
    const int groups = std::max(1, g.banks >> (access_shift - g.bank_shift));
    // Common case first: all aligned and no two accesses in one group (what padded or
    // swizzled layouts achieve) is one wavefront.
    const std::uint32_t group_mask = std::uint32_t(groups - 1);
    std::uint64_t seen = 0;
    bool shared = false;
    std::uint32_t misaligned = 0;
    for (std::size_t i = 0; i < n; ++i) {
      misaligned |= addr[i] & (bytes - 1);
      const std::uint64_t bit = std::uint64_t{1} << ((addr[i] >> access_shift) & group_mask);
      shared |= (seen & bit) != 0;
      seen |= bit;
    }
    if (!misaligned) {
      if (!shared) {
        return n > 0 ? 1 : 0;
      }
      Phase phase(groups);
      for (std::size_t i = 0; i < n; ++i) {
        phase.add(addr[i] >> access_shift);
      }
      return phase.wavefronts();
    }
  }
  // Unaligned or narrower than a bank: count words.
  Phase phase(g.banks);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t first = addr[i] >> g.bank_shift;
    const std::uint32_t last = (addr[i] + bytes - 1) >> g.bank_shift;
    for (std::uint32_t w = first; w <= last; ++w) {
      phase.add(w);
    }
  }
  return phase.wavefronts();
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
  if (lane_addr.size() > 32) {
    throw std::invalid_argument("smem_wavefronts: more than 32 lanes");
  }
  // A phase moves at most one row of banks (banks x width bytes, 128 B): 8-byte accesses are
  // served a half-warp at a time, 16-byte accesses a quarter-warp at a time. Narrower
  // accesses fit in one phase.
  const std::size_t row_bytes = std::size_t(g.banks) << g.bank_shift;
  const std::size_t lanes_per_phase =
      std::max<std::size_t>(1, std::min<std::size_t>(32, row_bytes / std::size_t(access_bytes)));
  int total = 0;
  for (std::size_t first = 0; first < lane_addr.size(); first += lanes_per_phase) {
    const std::size_t n = std::min(lane_addr.size() - first, lanes_per_phase);
    total += phase_wavefronts(lane_addr.data() + first, n, std::uint32_t(access_bytes), g);
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
    total += phase_wavefronts(row_addr.data() + m, 8, 16, g);
  }
  return total;
}

}  // namespace gemmsim::sim
