#include "traces/chrome_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"

namespace gemmsim::traces {
namespace {

using sim::Tick;

constexpr int kCounterPid = 0;  // the "GPU" process; SM s is process s + 1

// Buffered output that names the file in its errors.
class Out {
 public:
  explicit Out(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "wb")) {
    if (!f_)
      throw UserError(
          fmt::format("--trace '{}': cannot write the file ({})", path, std::strerror(errno)));
    buf_.reserve(1 << 20);
  }
  ~Out() {
    if (f_) std::fclose(f_);
  }
  void put(std::string_view s) {
    buf_.append(s);
    if (buf_.size() >= (1 << 20)) flush();
  }
  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
      throw UserError(fmt::format("--trace '{}': write failed ({})", path_, std::strerror(errno)));
    buf_.clear();
  }
  void close() {
    flush();
    const int rc = std::fclose(f_);
    f_ = nullptr;
    if (rc != 0) throw UserError(fmt::format("--trace '{}': write failed", path_));
  }

 private:
  std::string path_;
  std::FILE* f_;
  std::string buf_;
};

std::string us(Tick ps) {
  return fmt::format("{:.6f}", double(ps) * 1e-6);
}

std::string quoted(const std::string& s) {
  return nlohmann::json(s).dump();
}

}  // namespace

void write_chrome_trace(const RunRecorder& rec, const TraceSummary& summary,
                        const std::string& path) {
  Out out(path);
  out.put("{\"displayTimeUnit\":\"ns\",\"otherData\":");
  out.put(nlohmann::json{
      {"generator", "gemmsim"},
      {"kernel", summary.kernel},
      {"gpu", summary.gpu},
      {"time_unit", "us from the first launch"},
      {"warp_spans_truncated_at_us", rec.truncated_at() >= 0
                                         ? nlohmann::json(double(rec.truncated_at()) * 1e-6)
                                         : nlohmann::json(nullptr)}}
              .dump());
  out.put(",\"traceEvents\":[\n");
  bool first = true;
  auto event = [&](const std::string& e) {
    if (!first) out.put(",\n");
    first = false;
    out.put(e);
  };
  auto meta = [&](const char* what, int pid, int tid, const std::string& name, bool sort) {
    event(fmt::format(R"({{"ph":"M","name":"{}","pid":{},"tid":{},"args":{{"name":{}}}}})", what,
                      pid, tid, quoted(name)));
    if (sort)
      event(fmt::format(
          R"({{"ph":"M","name":"{}_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
          what == std::string("process_name") ? "process" : "thread", pid, tid,
          what == std::string("process_name") ? pid : tid));
  };

  const auto& names = rec.names();
  const bool several = rec.kernels().size() > 1;
  meta("process_name", kCounterPid, 0, "GPU (counters)", true);
  std::vector<char> sm_named;
  std::uint64_t async_id = 0;
  for (const auto& k : rec.kernels()) {
    const int wpc = k.info.warps_per_cta;
    const int launch_base = k.info.index * 100000;
    // Warp w of a slot is track w, its CTA track comes last (viewers that list threads by id,
    // like speedscope, open on a warp); the sort index puts the CTA track first.
    auto tid_of = [&](int slot_in_sm, int warp) {
      return launch_base + slot_in_sm * (wpc + 1) + (warp < 0 ? wpc : warp);
    };
    // Name the tracks that have spans.
    std::vector<std::pair<int, int>> tracks;  // (sm, tid)
    for (const auto& s : k.spans) tracks.emplace_back(s.sm, tid_of(s.slot_in_sm, s.warp));
    std::sort(tracks.begin(), tracks.end());
    tracks.erase(std::unique(tracks.begin(), tracks.end()), tracks.end());
    for (const auto& [sm, tid] : tracks) {
      if (sm_named.size() <= std::size_t(sm)) sm_named.resize(std::size_t(sm) + 1, 0);
      if (!sm_named[std::size_t(sm)]) {
        meta("process_name", sm + 1, 0, fmt::format("SM {}", sm), true);
        sm_named[std::size_t(sm)] = 1;
      }
      const int local = tid - launch_base;
      const int slot_in_sm = local / (wpc + 1),
                warp = local % (wpc + 1) == wpc ? -1 : local % (wpc + 1);
      std::string name = several ? fmt::format("launch {} ", k.info.index) : std::string();
      if (warp < 0) {
        name += fmt::format("slot {} CTAs", slot_in_sm);
      } else {
        name += fmt::format("slot {} warp {}", slot_in_sm, warp);
        const std::string& role = k.roles[std::size_t(warp)];
        if (!role.empty()) name += fmt::format(" ({})", role);
      }
      meta("thread_name", sm + 1, tid, name, false);
      event(fmt::format(
          R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
          sm + 1, tid, launch_base + slot_in_sm * (wpc + 1) + warp + 1));
    }
    // Spans of one track are written in time order as B/E pairs: an end and the next begin
    // then carry the same printed timestamp, so viewers see them touch, never overlap (a
    // complete event's ts + dur is rounded in floating point and can overshoot).
    std::vector<std::size_t> order(k.spans.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const Span &x = k.spans[a], &y = k.spans[b];
      const int tx = tid_of(x.slot_in_sm, x.warp), ty = tid_of(y.slot_in_sm, y.warp);
      if (x.sm != y.sm) return x.sm < y.sm;
      if (tx != ty) return tx < ty;
      if (x.in_flight != y.in_flight) return y.in_flight;
      return x.begin < y.begin;
    });
    for (const std::size_t i : order) {
      const Span& s = k.spans[i];
      const int pid = s.sm + 1, tid = tid_of(s.slot_in_sm, s.warp);
      const std::string& name = names[std::size_t(s.name)];
      const char* cat = s.warp < 0                                             ? "cta"
                        : s.in_flight                                          ? "memory"
                        : name.rfind("wait", 0) == 0 || name == "barrier wait" ? "wait"
                                                                               : "op";
      if (s.in_flight) {
        // Requests in flight overlap each other: async spans, each with its own id.
        const auto id = ++async_id;
        event(fmt::format(
            R"({{"ph":"b","cat":"{}","name":{},"id":{},"pid":{},"tid":{},"ts":{},"args":{{"cta":{}}}}})",
            cat, quoted(name), id, pid, tid, us(s.begin), s.cta));
        event(fmt::format(R"({{"ph":"e","cat":"{}","name":{},"id":{},"pid":{},"tid":{},"ts":{}}})",
                          cat, quoted(name), id, pid, tid, us(s.end)));
      } else {
        event(fmt::format(
            R"({{"ph":"B","cat":"{}","name":{},"pid":{},"tid":{},"ts":{},"args":{{"cta":{}}}}})",
            cat, quoted(name), pid, tid, us(s.begin), s.cta));
        event(fmt::format(R"({{"ph":"E","cat":"{}","name":{},"pid":{},"tid":{},"ts":{}}})", cat,
                          quoted(name), pid, tid, us(s.end)));
      }
    }

    // Counters: average over intervals, at most kMaxCounterSamples per series.
    const auto& sr = k.series;
    const std::size_t n = std::max({sr.l2_byte_ps.size(), sr.dram_byte_ps.size(),
                                    sr.tensor_busy.size(), sr.fma_busy.size(), sr.mio_busy.size()});
    if (n == 0) continue;
    const std::size_t group = (n + kMaxCounterSamples - 1) / kMaxCounterSamples;
    const double bin_cycles = rec.clock().cycles(sr.bin_ps);
    const double pipes = double(k.info.sm_count) * double(std::max(1, k.info.sub_partitions));
    auto at = [](const std::vector<double>& v, std::size_t i) { return i < v.size() ? v[i] : 0.0; };
    for (std::size_t g0 = 0; g0 < n; g0 += group) {
      const std::size_t g1 = std::min(n, g0 + group);
      double l2 = 0, dram = 0, ten = 0, fma = 0, mio = 0;
      for (std::size_t i = g0; i < g1; ++i) {
        l2 += at(sr.l2_byte_ps, i), dram += at(sr.dram_byte_ps, i), ten += at(sr.tensor_busy, i);
        fma += at(sr.fma_busy, i), mio += at(sr.mio_busy, i);
      }
      const double span_ps = double(sr.bin_ps) * double(g1 - g0);
      const double span_cycles = bin_cycles * double(g1 - g0);
      const Tick ts = k.info.launched + Tick(g0) * sr.bin_ps;
      event(fmt::format(
          R"({{"ph":"C","name":"bytes in flight","pid":{},"tid":0,"ts":{},"args":{{"to L2":{:.0f},"from DRAM":{:.0f}}}}})",
          kCounterPid, us(ts), l2 / span_ps, dram / span_ps));
      event(fmt::format(
          R"({{"ph":"C","name":"pipe utilisation %","pid":{},"tid":0,"ts":{},"args":{{"tensor":{:.1f},"fp32":{:.1f},"shared memory":{:.1f}}}}})",
          kCounterPid, us(ts), 100 * ten / (span_cycles * pipes), 100 * fma / (span_cycles * pipes),
          100 * mio / (span_cycles * double(k.info.sm_count))));
    }
    // Close the counter tracks at the kernel's end.
    event(fmt::format(
        R"({{"ph":"C","name":"bytes in flight","pid":{},"tid":0,"ts":{},"args":{{"to L2":0,"from DRAM":0}}}})",
        kCounterPid, us(k.end)));
    event(fmt::format(
        R"({{"ph":"C","name":"pipe utilisation %","pid":{},"tid":0,"ts":{},"args":{{"tensor":0,"fp32":0,"shared memory":0}}}})",
        kCounterPid, us(k.end)));
  }
  out.put("\n]}\n");
  out.close();
}

}  // namespace gemmsim::traces
