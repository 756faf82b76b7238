// Small statistics shared by `gemmsim validate` and the calibration microbenchmarks (header
// only: the microbenchmarks build on the GPU machine without the validate library).
#pragma once

#include <cmath>
#include <cstddef>
#include <numeric>
#include <vector>

namespace gemmsim {

// Pearson correlation of two equally long series; 0 where either is constant.
inline double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = double(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n;
  const double mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0.0;
}

}  // namespace gemmsim
