#include "sim/gpu/cache.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace gemmsim::sim {

FastDivider::FastDivider(std::uint64_t divisor) : divisor_(divisor) {
  if (divisor == 0 || divisor > kMaxDivisor) {
    throw std::invalid_argument("FastDivider: divisor " + std::to_string(divisor) +
                                " outside [1, 2^20)");
  }
  // With m = ceil(2^64 / d), m*d = 2^64 + e with 0 <= e < d, so n*m / 2^64 = n/d + n*e /
  // (d 2^64), and n < 2^44, e < d < 2^20 give n*e < 2^64: the error stays below 1/d, too
  // small to reach the next integer. (ceil(2^64/d) = floor((2^64-1)/d) + 1 for d >= 2.)
  if (divisor == 1) {
    magic_ = 0;
    identity_ = ~std::uint64_t{0};
  } else {
    magic_ = ~std::uint64_t{0} / divisor + 1;
    identity_ = 0;
  }
}

BucketHash::BucketHash(std::uint32_t buckets, std::uint64_t seed)
    : div_(buckets), n_(buckets), seed_(seed) {}

std::unique_ptr<std::byte[], CacheStorage::Free> CacheStorage::allocate(std::size_t bytes) {
  auto round_up = [](std::size_t x, std::size_t a) { return (x + a - 1) / a * a; };
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  const std::size_t align = bytes >= kHugePage ? kHugePage : 64;
  const std::size_t size = round_up(std::max<std::size_t>(bytes, 1), align);
  auto* p = static_cast<std::byte*>(std::aligned_alloc(align, size));
  if (p == nullptr) {
    throw std::bad_alloc();
  }
#if defined(__linux__)
  if (align == kHugePage) {
    madvise(p, size, MADV_HUGEPAGE);  // before the first touch
  }
#endif
  std::memset(p, 0, size);
  return std::unique_ptr<std::byte[], Free>(p);
}

void CacheStorage::Free::operator()(std::byte* p) const {
  std::free(p);
}

}  // namespace gemmsim::sim
