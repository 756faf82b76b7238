#include "validate/harness/sweep_csv.hpp"

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "kernels/common/kernel_name.hpp"

namespace gemmsim::bench {
namespace {

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) out.push_back(trim(cell));
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

[[noreturn]] void fail(const std::string& path, int line, const std::string& col,
                       const std::string& what) {
  throw std::runtime_error(path + ":" + std::to_string(line) + ": column '" + col + "': " + what);
}

long long to_int(const std::string& path, int line, const std::string& col, const std::string& v) {
  try {
    size_t pos = 0;
    const long long x = std::stoll(v, &pos);
    if (pos != v.size()) fail(path, line, col, "not an integer: '" + v + "'");
    return x;
  } catch (const std::logic_error&) {
    fail(path, line, col, "not an integer: '" + v + "'");
  }
}

}  // namespace

const char* split_mode_name(SplitKMode m) {
  return m == SplitKMode::Atomic ? "atomic" : "reduction";
}
const char* ws_variant_name(WsVariant v) { return v == WsVariant::Ampere ? "ampere" : "hopper"; }

std::vector<SweepRow> read_sweep(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open sweep description " + path);
  std::string line;
  std::vector<std::string> header;
  std::vector<SweepRow> rows;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (header.empty()) {
      header = split(t);
      for (const char* req : {"family", "dtype", "m", "n", "k"}) {
        bool found = false;
        for (const auto& h : header) found = found || h == req;
        if (!found) fail(path, lineno, req, "required column missing from the header");
      }
      continue;
    }
    const std::vector<std::string> cells = split(t);
    if (cells.size() > header.size()) fail(path, lineno, "*", "more cells than header columns");
    SweepRow r;
    r.line = lineno;
    GemmConfig& c = r.cfg;
    for (size_t i = 0; i < cells.size(); ++i) {
      const std::string& col = header[i];
      const std::string& v = cells[i];
      if (v.empty()) continue;
      auto num = [&] { return to_int(path, lineno, col, v); };
      if (col == "family") {
        if (v == "tiled") c.family = Family::Tiled;
        else if (v == "pipelined") c.family = Family::Pipelined;
        else if (v == "warp-specialized") c.family = Family::WarpSpecialized;
        else if (v == "cublas") r.cublas = true;
        else fail(path, lineno, col, "expected tiled|pipelined|warp-specialized|cublas");
      } else if (col == "dtype") {
        if (v == "f32") c.dtype = DType::F32;
        else if (v == "tf32") c.dtype = DType::TF32;
        else if (v == "f16") c.dtype = DType::F16;
        else if (v == "bf16") c.dtype = DType::BF16;
        else fail(path, lineno, col, "expected f32|tf32|f16|bf16");
      } else if (col == "m") r.m = num();
      else if (col == "n") r.n = num();
      else if (col == "k") r.k = num();
      else if (col == "block_m") c.block_m = static_cast<int>(num());
      else if (col == "block_n") c.block_n = static_cast<int>(num());
      else if (col == "block_k") c.block_k = static_cast<int>(num());
      else if (col == "warps_m") c.warps_m = static_cast<int>(num());
      else if (col == "warps_n") c.warps_n = static_cast<int>(num());
      else if (col == "thread_m") c.thread_m = static_cast<int>(num());
      else if (col == "thread_n") c.thread_n = static_cast<int>(num());
      else if (col == "stages") c.stages = static_cast<int>(num());
      else if (col == "split_k") c.split_k = static_cast<int>(num());
      else if (col == "swizzle") c.swizzle = static_cast<int>(num());
      else if (col == "consumers") c.consumers = static_cast<int>(num());
      else if (col == "split_k_mode") {
        if (v == "atomic") c.split_k_mode = SplitKMode::Atomic;
        else if (v == "reduction") c.split_k_mode = SplitKMode::Reduction;
        else fail(path, lineno, col, "expected atomic|reduction");
      } else if (col == "smem_layout") {
        if (v == "pad") c.smem_layout = SmemLayout::Padded;
        else if (v == "swz") c.smem_layout = SmemLayout::Swizzled;
        else if (v == "naive") c.smem_layout = SmemLayout::Naive;
        else fail(path, lineno, col, "expected pad|swz|naive");
      } else if (col == "ws_variant") {
        if (v == "ampere") c.ws_variant = WsVariant::Ampere;
        else if (v == "hopper") c.ws_variant = WsVariant::Hopper;
        else fail(path, lineno, col, "expected ampere|hopper");
      }
      // other columns (e.g. results pasted back) are ignored
    }
    if (r.m <= 0 || r.n <= 0 || r.k <= 0) fail(path, lineno, "m/n/k", "must be positive");
    if (r.m > 2147483647LL / (r.n > r.k ? r.n : r.k))
      fail(path, lineno, "m/n/k", "problem too large for 32-bit element indices");
    rows.push_back(r);
  }
  return rows;
}

std::string format_result(const ResultRow& r) {
  const GemmConfig& c = r.row.cfg;
  std::ostringstream o;
  auto fmt = [](double v, int prec) {
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", prec, v);
    return std::string(b);
  };
  auto sci = [](double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.3e", v);
    return std::string(b);
  };
  o << r.gpu << ',' << r.driver << ',' << r.cuda << ',' << r.sm_clock_mhz << ',';
  if (r.row.cublas) {
    o << "cublas," << dtype_name(c.dtype) << ',' << r.row.m << ',' << r.row.n << ',' << r.row.k
      << ",0,0,0,0,0,0,0,0,0,,0,,0,";
  } else {
    o << family_name(c.family) << ',' << dtype_name(c.dtype) << ',' << r.row.m << ',' << r.row.n
      << ',' << r.row.k << ',' << c.block_m << ',' << c.block_n << ',' << c.block_k << ','
      << c.warps_m << ',' << c.warps_n << ',' << c.thread_m << ',' << c.thread_n << ','
      << c.stages << ',' << c.split_k << ',' << split_mode_name(c.split_k_mode) << ','
      << c.swizzle << ',' << layout_name(c.smem_layout) << ',' << c.consumers << ','
      << ws_variant_name(c.ws_variant);
  }
  o << ',' << r.kernel << ',';
  if (r.timed) {
    o << fmt(r.median_us, 3) << ',' << fmt(r.p10_us, 3) << ',' << fmt(r.p90_us, 3) << ',' << r.reps
      << ',' << fmt(r.tflops, 3);
  } else {
    o << ",,,,";
  }
  o << ',' << sci(r.rel_err) << ',' << fmt(r.launch_overhead_us, 3) << ',' << r.regs_per_thread
    << ',' << r.smem_bytes << ',' << r.sm_clock_min_mhz << ',' << r.sm_clock_max_mhz << ','
    << r.clock_samples << ',' << r.nvml_clock_mhz;
  return o.str();
}

}  // namespace gemmsim::bench
