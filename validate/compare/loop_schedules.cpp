#include "validate/compare/loop_schedules.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <vector>

#include "sim/core/error.hpp"
#include "validate/compare/csv.hpp"

namespace gemmsim {

double LoopSchedules::wait_of(const GemmConfig& c) const {
  const auto it = alu_wait.find(loop_key(c));
  return it == alu_wait.end() ? -1.0 : it->second;
}

std::string loop_key(const GemmConfig& c) {
  return fmt::format("{};{};{};{};{};{};{};{};{};{};1;0;1;{};{};{}", int(c.family), int(c.dtype),
                     c.block_m, c.block_n, c.block_k, c.warps_m, c.warps_n, c.thread_m, c.thread_n,
                     c.stages, int(c.smem_layout), c.consumers, int(c.ws_variant));
}

namespace {

// The table's config field, checked and written as loop_key() writes it.
std::string parse_key(const std::string& s, const CsvPos& at) {
  std::vector<int> f;
  for (std::size_t b = 0; b <= s.size();) {
    const std::size_t e = std::min(s.find(';', b), s.size());
    int v = 0;
    const auto [p, ec] = std::from_chars(s.data() + b, s.data() + e, v);
    if (ec != std::errc() || p != s.data() + e)
      throw UserError(
          fmt::format("{}: config '{}': field {} is not an integer", at.where(), s, f.size() + 1));
    f.push_back(v);
    b = e + 1;
  }
  if (f.size() != 16)
    throw UserError(fmt::format("{}: config '{}': expected the 16 GemmConfig fields, found {}",
                                at.where(), s, f.size()));
  if (f[10] != 1 || f[11] != 0 || f[12] != 1)
    throw UserError(fmt::format(
        "{}: config '{}': split-K, its mode and the swizzle (fields 11-13) are kernel arguments, "
        "not template parameters: expected 1;0;1",
        at.where(), s));
  return fmt::format("{}", fmt::join(f, ";"));
}

}  // namespace

LoopSchedules read_loop_schedules(const std::string& path) {
  LoopSchedules out;
  const CsvTable t = read_csv(path);
  for (const char* col : {"config", "alu_wait"})
    if (!t.column.contains(col))
      throw UserError(
          fmt::format("{}: no column '{}' (expected sass_loop_table.py's output)", path, col));
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const CsvRecord rec{t, i};
    const CsvPos at{path, t.lines[i]};
    const std::string key = parse_key(rec.str("config"), at);
    const double wait = rec.num("alu_wait");
    if (!(wait >= 0 && wait <= 15))
      throw UserError(fmt::format("{}: alu_wait {} is not 0 to 15 cycles", at.where(), wait));
    if (!out.alu_wait.emplace(key, wait).second)
      throw UserError(fmt::format("{}: config {} is listed twice", at.where(), key));
  }
  return out;
}

}  // namespace gemmsim
