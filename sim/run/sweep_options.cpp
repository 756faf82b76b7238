#include "sim/run/sweep_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "sim/core/error.hpp"

namespace gemmsim {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t at = text.find(sep, pos);
    out.push_back(text.substr(pos, at == std::string::npos ? std::string::npos : at - pos));
    if (at == std::string::npos) break;
    pos = at + 1;
  }
  return out;
}

bool to_ll(const std::string& s, long long& v) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

GemmProblem parse_problem(const std::string& text, const std::string& what) {
  const auto parts = split(text, 'x');
  long long v[3] = {0, 0, 0};
  bool ok = parts.size() == 3;
  for (std::size_t i = 0; ok && i < 3; ++i)
    ok = to_ll(parts[i], v[i]) && v[i] >= 1 && v[i] <= (1LL << 24);
  if (!ok)
    throw UserError(
        fmt::format("{} '{}': expected MxNxK, three integers in 1..16777216", what, text));
  return GemmProblem{v[0], v[1], v[2]};
}

DType parse_dtype_name(const std::string& s, const std::string& what) {
  if (s == "f16" || s == "fp16") return DType::F16;
  if (s == "bf16") return DType::BF16;
  if (s == "tf32") return DType::TF32;
  if (s == "f32" || s == "fp32") return DType::F32;
  throw UserError(fmt::format("{} '{}': expected one of f16, bf16, tf32, f32", what, s));
}

Family parse_family_name(const std::string& s, const std::string& what) {
  if (s == "tiled") return Family::Tiled;
  if (s == "pipelined") return Family::Pipelined;
  if (s == "warp-specialized") return Family::WarpSpecialized;
  throw UserError(
      fmt::format("{} '{}': expected one of tiled, pipelined, warp-specialized", what, s));
}

std::vector<Family> parse_family_list(const std::string& text, const std::string& what) {
  std::vector<Family> out;
  if (text.empty()) return out;
  for (const auto& p : split(text, ',')) {
    const Family f = parse_family_name(p, what);
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  return out;
}

std::vector<int> parse_int_list(const std::string& text, const std::string& what, int lo, int hi) {
  std::vector<int> out;
  for (const auto& p : split(text, ',')) {
    long long v = 0;
    if (!to_ll(p, v) || v < lo || v > hi)
      throw UserError(
          fmt::format("{} '{}': expected comma-separated integers in {}..{}", what, text, lo, hi));
    if (std::find(out.begin(), out.end(), int(v)) != out.end())
      throw UserError(fmt::format("{} '{}': {} appears twice", what, text, v));
    out.push_back(int(v));
  }
  return out;
}

std::vector<SplitKMode> parse_split_k_modes(const std::string& text, const std::string& what) {
  std::vector<SplitKMode> out;
  for (const auto& p : split(text, ',')) {
    SplitKMode m;
    if (p == "atomic")
      m = SplitKMode::Atomic;
    else if (p == "reduction")
      m = SplitKMode::Reduction;
    else
      throw UserError(
          fmt::format("{} '{}': expected atomic, reduction or atomic,reduction", what, text));
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  }
  return out;
}

}  // namespace gemmsim
