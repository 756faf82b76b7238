#include "traces/report_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "kernels/common/kernel_name.hpp"

namespace gemmsim::traces {
namespace {

using sim::Tick;

std::string esc(const std::string& s) {
  std::string o;
  for (const char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

// Colours per critical-path category and per timeline state (colour-blind friendly set).
constexpr std::array<const char*, kCategories> kCategoryColour = {"#d62728", "#ff7f0e", "#bcbd22",
                                                                  "#17becf", "#2ca02c", "#98df8a",
                                                                  "#9467bd", "#8c564b", "#7f7f7f"};

struct State {
  const char* label;
  const char* colour;
};
constexpr std::array<State, 7> kStates = {{{"math", "#2ca02c"},
                                           {"shared memory", "#17becf"},
                                           {"global memory instruction", "#ff7f0e"},
                                           {"wait: memory", "#d62728"},
                                           {"wait: pipe / issue", "#9467bd"},
                                           {"barrier", "#8c564b"},
                                           {"other", "#c7c7c7"}}};

int state_of(const std::string& name) {
  auto starts = [&](const char* p) { return name.rfind(p, 0) == 0; };
  if (starts("math")) return 0;
  if (starts("shared")) return 1;
  if (starts("global") || starts("cp.async issue") || starts("epilogue")) return 2;
  if (starts("wait: dram") || starts("wait: l2") || starts("wait: interconnect")) return 3;
  if (starts("barrier") || starts("bar.sync") || starts("wait: barriers")) return 5;
  if (starts("wait")) return 4;
  return 6;
}

std::string legend(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string s = "<div class=legend>";
  for (const auto& [label, colour] : items)
    s += fmt::format("<span><i style=\"background:{}\"></i>{}</span>", colour, esc(label));
  return s + "</div>";
}

std::string fmt_bytes(double b) {
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.1f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} kB", b / 1e3);
  return fmt::format("{:.0f} B", b);
}

// Log-log roofline: DRAM and L2 bandwidth slopes, the pipe's peak, and the kernel's point.
std::string roofline(const Prediction& p, const GpuSpec& gpu, double l2_bytes) {
  const double dram_bps = gpu.dram.sustained.bytes_per_s, l2_bps = gpu.l2.bandwidth.bytes_per_s;
  const double peak = p.peak_tflops;
  double dense = peak;
  if (p.config.tensor_core())
    if (auto it = gpu.tensor.find(p.config.dtype); it != gpu.tensor.end())
      dense =
          gpu.sm_count * it->second.dense_fma_per_clk_per_sm * 2.0 * p.sm_clock_mhz * 1e6 / 1e12;
  const double bytes =
      p.counters.count("dram__bytes_read.sum")
          ? p.counters.at("dram__bytes_read.sum") + p.counters.at("dram__bytes_write.sum")
          : 0.0;
  const double flops = p.problem.flops();
  const double ai = bytes > 0 ? flops / bytes : 1e4;
  const double x0 = 0.1, x1 = 1e4, y0 = std::max(0.01, std::min(p.tflops, peak) / 1000),
               y1 = std::max(dense, peak) * 2;
  const int W = 680, H = 360, L = 60, B = 40, R = 50, T = 20;
  auto X = [&](double v) {
    return L + (std::log10(v) - std::log10(x0)) / (std::log10(x1) - std::log10(x0)) * (W - L - R);
  };
  auto Y = [&](double v) {
    return H - B -
           (std::log10(v) - std::log10(y0)) / (std::log10(y1) - std::log10(y0)) * (H - B - T);
  };
  std::string s = fmt::format("<svg width={} height={} class=chart>", W, H);
  for (double d = 0.1; d <= x1 * 1.01; d *= 10)
    s += fmt::format(
        "<line x1={:.1f} y1={} x2={:.1f} y2={} class=grid /><text x={:.1f} y={} "
        "class=tick>{:g}</text>",
        X(d), T, X(d), H - B, X(d), H - B + 14, d);
  for (double d = std::pow(10, std::floor(std::log10(y0))); d <= y1; d *= 10)
    if (d >= y0)
      s += fmt::format(
          "<line x1={} y1={:.1f} x2={} y2={:.1f} class=grid /><text x={} y={:.1f} class=tick "
          "text-anchor=end>{:g}</text>",
          L, Y(d), W - R, Y(d), L - 4, Y(d) + 4, d);
  auto roof = [&](double bps, double top, const char* colour, const char* label, bool dashed) {
    const double knee = top * 1e12 / bps;  // FLOP per byte where the slope meets the roof
    const double xa = x0, ya = bps * xa / 1e12;
    std::string r = fmt::format(
        "<polyline fill=none stroke=\"{}\" stroke-width=2 {} points=\"{:.1f},{:.1f} {:.1f},{:.1f} "
        "{:.1f},{:.1f}\"/>",
        colour, dashed ? "stroke-dasharray=\"6,4\"" : "", X(xa), Y(std::max(ya, y0)),
        X(std::clamp(knee, x0, x1)), Y(top), X(x1), Y(top));
    r += fmt::format("<text x={:.1f} y={:.1f} class=lbl fill=\"{}\">{}</text>",
                     X(std::clamp(knee, x0, x1)) + 6, Y(top) - 5, colour, label);
    return r;
  };
  s += roof(l2_bps, peak, "#ff7f0e", "", true);
  s += fmt::format("<text x={:.1f} y={:.1f} class=lbl fill=\"#ff7f0e\">L2 {:.0f} GB/s</text>",
                   X(0.15), Y(l2_bps * 0.15 / 1e12) - 6, l2_bps / 1e9);
  s += roof(dram_bps, peak, "#d62728",
            fmt::format("{} peak {:.0f} TFLOPS", p.config.tensor_core() ? "mma.sync" : "FFMA", peak)
                .c_str(),
            false);
  s += fmt::format("<text x={:.1f} y={:.1f} class=lbl fill=\"#d62728\">DRAM {:.0f} GB/s</text>",
                   X(0.15), Y(dram_bps * 0.15 / 1e12) + 14, dram_bps / 1e9);
  if (dense > peak * 1.01)
    s += fmt::format(
        "<line x1={} y1={:.1f} x2={} y2={:.1f} stroke=\"#7f7f7f\" stroke-dasharray=\"3,3\"/><text "
        "x={:.1f} y={:.1f} class=lbl fill=\"#7f7f7f\">datasheet dense {:.0f} TFLOPS</text>",
        L, Y(dense), W - R, Y(dense), X(x1) - 200, Y(dense) - 5, dense);
  const double ya = std::clamp(p.tflops, y0, y1);
  s += fmt::format(
      "<circle cx={:.1f} cy={:.1f} r=6 fill=\"#1f77b4\"/><text x={:.1f} y={:.1f} class=lbl "
      "fill=\"#1f77b4\">this kernel: {:.1f} TFLOPS at {:.1f} FLOP/B</text>",
      X(std::clamp(ai, x0, x1)), Y(ya), X(std::clamp(ai, x0, x1)) - 120, Y(ya) + 20, p.tflops, ai);
  if (l2_bytes > 0) {
    // The same work against the traffic between the SMs and L2 (the L2 roof's intensity).
    const double ai2 = std::clamp(flops / l2_bytes, x0, x1);
    s += fmt::format(
        "<circle cx={:.1f} cy={:.1f} r=6 fill=none stroke=\"#ff7f0e\" stroke-width=2/><text "
        "x={:.1f} y={:.1f} class=lbl fill=\"#ff7f0e\">vs L2 traffic: {:.1f} FLOP/B</text>",
        X(ai2), Y(ya), X(ai2) + 9, Y(ya) - 8, flops / l2_bytes);
  }
  s += fmt::format("<text x={} y={} class=axis>arithmetic intensity (FLOP per byte)</text>",
                   L + 150, H - 6);
  s += fmt::format("<text x=14 y={} class=axis transform=\"rotate(-90 14 {})\">TFLOPS</text>",
                   H / 2, H / 2);
  return s + "</svg>";
}

std::string critical_bar(const CriticalPath& cp) {
  const auto shares = cp.shares();
  const int W = 860;
  std::string s = fmt::format("<svg width={} height=34 class=chart>", W);
  double x = 0;
  for (int c = 0; c < kCategories; ++c) {
    const double w = shares[std::size_t(c)] * W;
    if (w <= 0) continue;
    s += fmt::format(
        "<rect x={:.2f} y=2 width={:.2f} height=30 fill=\"{}\"><title>{} {:.1f}%</title></rect>", x,
        w, kCategoryColour[std::size_t(c)], category_name(Category(c)),
        100 * shares[std::size_t(c)]);
    if (w > 60)
      s += fmt::format("<text x={:.1f} y=22 class=barlbl>{} {:.0f}%</text>", x + 4,
                       category_name(Category(c)), 100 * shares[std::size_t(c)]);
    x += w;
  }
  s += "</svg><table class=num><tr><th>resource</th><th>share</th><th>time on the path "
       "(us)</th></tr>";
  for (int c = 0; c < kCategories; ++c)
    s += fmt::format(
        "<tr><td><i class=sw "
        "style=\"background:{}\"></i>{}</td><td>{:.1f}%</td><td>{:.2f}</td></tr>",
        kCategoryColour[std::size_t(c)], category_name(Category(c)), 100 * shares[std::size_t(c)],
        double(cp.parts[std::size_t(c)]) * 1e-6);
  return s + "</table>";
}

// Utilisation of the pipes and bytes in flight over the whole prediction.
std::string utilisation_chart(const RunRecorder& rec) {
  const auto& ks = rec.kernels();
  if (ks.empty()) return "";
  const Tick t_end = ks.back().end;
  const int W = 880, H = 220, L = 50, B = 30, T = 10, R = 30;
  constexpr int kPoints = 300;
  std::vector<std::array<double, 5>> pts(kPoints);  // tensor, fp32, smem (%), l2 bytes, dram bytes
  std::vector<double> weight(kPoints, 0.0);
  for (const auto& k : ks) {
    const auto& sr = k.series;
    const double cyc = rec.clock().cycles(sr.bin_ps);
    const double pipes = double(k.info.sm_count) * std::max(1, k.info.sub_partitions);
    const std::size_t n = std::max(
        {sr.tensor_busy.size(), sr.fma_busy.size(), sr.mio_busy.size(), sr.l2_byte_ps.size()});
    auto at = [](const std::vector<double>& v, std::size_t i) { return i < v.size() ? v[i] : 0.0; };
    for (std::size_t i = 0; i < n; ++i) {
      const Tick t = k.info.launched + Tick(i) * sr.bin_ps;
      const int px =
          std::clamp(int(double(t) / double(std::max<Tick>(1, t_end)) * kPoints), 0, kPoints - 1);
      pts[std::size_t(px)][0] += 100 * at(sr.tensor_busy, i) / (cyc * pipes);
      pts[std::size_t(px)][1] += 100 * at(sr.fma_busy, i) / (cyc * pipes);
      pts[std::size_t(px)][2] += 100 * at(sr.mio_busy, i) / (cyc * k.info.sm_count);
      pts[std::size_t(px)][3] += at(sr.l2_byte_ps, i) / double(sr.bin_ps);
      pts[std::size_t(px)][4] += at(sr.dram_byte_ps, i) / double(sr.bin_ps);
      weight[std::size_t(px)] += 1;
    }
  }
  double max_bytes = 1;
  for (int i = 0; i < kPoints; ++i)
    if (weight[std::size_t(i)] > 0)
      for (int j = 0; j < 5; ++j) pts[std::size_t(i)][std::size_t(j)] /= weight[std::size_t(i)];
  for (const auto& p : pts) max_bytes = std::max({max_bytes, p[3], p[4]});
  auto X = [&](int i) { return L + double(i) / kPoints * (W - L - R); };
  auto chart = [&](const std::vector<std::pair<int, const char*>>& series, double top,
                   const std::string& unit, auto yfmt) {
    std::string s = fmt::format("<svg width={} height={} class=chart>", W, H);
    for (int g = 0; g <= 4; ++g) {
      const double y = T + (H - B - T) * (1 - g / 4.0);
      s += fmt::format(
          "<line x1={} y1={:.1f} x2={} y2={:.1f} class=grid /><text x={} y={:.1f} class=tick "
          "text-anchor=end>{}</text>",
          L, y, W - R, y, L - 4, y + 4, yfmt(top * g / 4.0));
    }
    for (int g = 0; g <= 5; ++g)
      s += fmt::format("<text x={:.1f} y={} class=tick>{:.1f} us</text>",
                       L + (W - L - R) * g / 5.0 - 10, H - B + 16, double(t_end) * 1e-6 * g / 5.0);
    for (const auto& [j, colour] : series) {
      std::string pl;
      for (int i = 0; i < kPoints; ++i)
        pl += fmt::format(
            "{:.1f},{:.1f} ", X(i),
            T + (H - B - T) * (1 - std::min(1.0, pts[std::size_t(i)][std::size_t(j)] / top)));
      s += fmt::format("<polyline fill=none stroke=\"{}\" stroke-width=1.5 points=\"{}\"/>", colour,
                       pl);
    }
    s += fmt::format("<text x={} y={} class=axis>{}</text>", L + 4, T + 12, unit);
    return s + "</svg>";
  };
  std::string s =
      chart({{0, "#2ca02c"}, {1, "#98df8a"}, {2, "#17becf"}}, 100.0, "% of capacity (all SMs)",
            [](double v) { return fmt::format("{:.0f}", v); });
  s += legend(
      {{"tensor pipe", "#2ca02c"}, {"fp32 pipe", "#98df8a"}, {"shared-memory port", "#17becf"}});
  s += chart({{3, "#ff7f0e"}, {4, "#d62728"}}, max_bytes, "bytes in flight (whole GPU)",
             [](double v) { return fmt_bytes(v); });
  s += legend({{"between SMs and L2", "#ff7f0e"}, {"read from DRAM", "#d62728"}});
  return s;
}

// CTA lifetimes on the first SMs, and the warps of the traced SMs' first slot.
std::string timeline(const RunRecorder& rec) {
  const auto& ks = rec.kernels();
  if (ks.empty()) return "";
  const Tick t_end = ks.back().end;
  const int W = 880, L = 170, R = 30, row = 14;
  auto X = [&](Tick t) { return L + double(t) / double(std::max<Tick>(1, t_end)) * (W - L - R); };
  std::vector<std::string> rows;
  std::string body;
  int y = 4;
  const KernelRecord* main = &ks.front();
  for (const auto& k : ks)
    if (k.ctas.size() > main->ctas.size()) main = &k;
  const int sms = std::min(8, main->info.sm_count);
  for (const auto& k : ks) {
    for (int sm = 0; sm < std::min(sms, k.info.sm_count); ++sm)
      for (int slot = 0; slot < k.info.ctas_per_sm; ++slot) {
        bool any = false;
        for (const auto& c : k.ctas)
          if (c.sm == sm && c.slot / k.info.sm_count == slot && c.exit > c.start) {
            any = true;
            body += fmt::format(
                "<rect x={:.2f} y={} width={:.2f} height={} fill=\"{}\" stroke=\"#fff\" "
                "stroke-width=0.5><title>CTA {} on SM {}: {:.2f}-{:.2f} us</title></rect>",
                X(c.start), y, std::max(0.5, X(c.exit) - X(c.start)), row - 2,
                c.id % 2 ? "#6baed6" : "#2171b5", c.id, sm, double(c.start) * 1e-6,
                double(c.exit) * 1e-6);
          }
        if (!any) continue;
        body += fmt::format("<text x=4 y={} class=tick>{}SM {} slot {} CTAs</text>", y + 10,
                            ks.size() > 1 ? fmt::format("k{} ", k.info.index) : "", sm, slot);
        y += row;
      }
  }
  // Warp activity: per pixel column, the state that took most of the time.
  const int cols = W - L - R;
  for (const auto& k : ks) {
    std::map<std::pair<int, int>, std::vector<std::array<double, kStates.size()>>>
        warps;  // (sm, warp)
    for (const auto& s : k.spans) {
      if (s.in_flight || s.warp < 0 || s.slot_in_sm != 0) continue;
      auto& v = warps[{s.sm, s.warp}];
      if (v.empty()) v.resize(std::size_t(cols));
      const int st = state_of(rec.names()[std::size_t(s.name)]);
      const double a = X(s.begin) - L, b = X(s.end) - L;
      for (int c = std::max(0, int(a)); c <= std::min(cols - 1, int(b)); ++c) {
        const double ov = std::min(b, double(c + 1)) - std::max(a, double(c));
        if (ov > 0) v[std::size_t(c)][std::size_t(st)] += ov;
      }
    }
    int shown = 0;
    for (const auto& [key, v] : warps) {
      if (shown++ >= 16) break;
      int c = 0;
      while (c < cols) {
        const auto& col = v[std::size_t(c)];
        int best = -1;
        double most = 0.05;
        for (std::size_t j = 0; j < kStates.size(); ++j)
          if (col[j] > most) most = col[j], best = int(j);
        int e = c + 1;
        auto best_of = [&](int cc) {
          int b = -1;
          double m = 0.05;
          for (std::size_t j = 0; j < kStates.size(); ++j)
            if (v[std::size_t(cc)][j] > m) m = v[std::size_t(cc)][j], b = int(j);
          return b;
        };
        while (e < cols && best_of(e) == best) ++e;
        if (best >= 0)
          body += fmt::format("<rect x={} y={} width={} height={} fill=\"{}\"/>", L + c, y, e - c,
                              row - 2, kStates[std::size_t(best)].colour);
        c = e;
      }
      std::string role = k.roles[std::size_t(key.second)];
      body += fmt::format("<text x=4 y={} class=tick>{}SM {} slot 0 warp {}{}</text>", y + 10,
                          ks.size() > 1 ? fmt::format("k{} ", k.info.index) : "", key.first,
                          key.second, role.empty() ? "" : " (" + esc(role) + ")");
      y += row;
    }
  }
  for (int g = 0; g <= 5; ++g)
    body += fmt::format("<text x={:.1f} y={} class=tick>{:.1f} us</text>",
                        L + (W - L - R) * g / 5.0 - 10, y + 14, double(t_end) * 1e-6 * g / 5.0);
  std::vector<std::pair<std::string, std::string>> items = {
      {"CTA (alternating shades)", "#2171b5"}};
  for (const auto& s : kStates) items.emplace_back(s.label, s.colour);
  return fmt::format("<svg width={} height={} class=chart>{}</svg>", W, y + 22, body) +
         legend(items);
}

}  // namespace

std::string html_report(const RunRecorder& rec, const Prediction& p, const GpuSpec& gpu) {
  std::string h;
  h +=
      "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>gemmsim report: " + esc(p.kernel) +
      "</title>";
  h += R"(<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:960px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse}td,th{padding:2px 10px;text-align:left;border-bottom:1px solid #eee}
table.num td:nth-child(n+2){text-align:right}
.chart{display:block;margin:6px 0}.grid{stroke:#e5e5e5}.tick{font-size:10px;fill:#555}
.axis{font-size:11px;fill:#333}.lbl{font-size:11px}.barlbl{font-size:11px;fill:#fff}
.legend span{margin-right:14px;font-size:12px}.legend i,.sw{display:inline-block;width:10px;height:10px;margin-right:4px}
.kv td:first-child{color:#555}
</style></head><body>)";
  h += fmt::format("<h1>{}<br><small>on {} ({})</small></h1>", esc(p.kernel), esc(p.gpu_name),
                   esc(p.gpu_key));

  h += "<h2>Summary</h2><table class=kv>";
  auto kv = [&](const std::string& k, const std::string& v) {
    h += "<tr><td>" + esc(k) + "</td><td>" + esc(v) + "</td></tr>";
  };
  kv("problem", fmt::format("{} x {} x {} ({})", p.problem.m, p.problem.n, p.problem.k,
                            dtype_name(p.config.dtype)));
  kv("predicted time",
     fmt::format("{:.2f} us ({:.0f} cycles at {:.0f} MHz)", p.time_us, p.cycles, p.sm_clock_mhz));
  kv("throughput", fmt::format("{:.1f} TFLOPS, {:.1f}% of the {:.1f} TFLOPS {} peak", p.tflops,
                               p.peak_tflops > 0 ? 100 * p.tflops / p.peak_tflops : 0.0,
                               p.peak_tflops, p.config.tensor_core() ? "mma.sync" : "FFMA"));
  kv("CTAs", fmt::format("{} in {} wave(s), {} per SM (limited by {})", p.ctas, p.waves,
                         p.ctas_per_sm, p.occupancy_limit));
  kv("bound (utilisation)", p.bound);
  const auto cp = rec.critical_path();
  const auto shares = cp.shares();
  const auto top = std::max_element(shares.begin(), shares.end()) - shares.begin();
  kv("critical path", fmt::format("{:.2f} us, {:.0f}% in {}", double(cp.total_ps) * 1e-6,
                                  100 * shares[std::size_t(top)], category_name(Category(top))));
  if (p.counters.count("dram__bytes_read.sum"))
    kv("DRAM / L2", fmt::format("{} read, {} written; L2 hit rate {:.1f}%",
                                fmt_bytes(p.counters.at("dram__bytes_read.sum")),
                                fmt_bytes(p.counters.at("dram__bytes_write.sum")),
                                p.counters.at("lts__t_sector_hit_rate.pct")));
  for (const auto& l : p.launches)
    kv("launch", fmt::format("{}: {:.2f} us ({} CTAs)", l.kernel, l.time_us, l.ctas));
  h += "</table>";

  h += "<h2>Configuration</h2><table class=kv>";
  kv("GPU description", gpu.source_file);
  const nlohmann::json config = config_to_json(p.config);
  for (const auto& [k, v] : config.items()) kv(k, v.is_string() ? v.get<std::string>() : v.dump());
  kv("registers / thread (estimate)", std::to_string(p.regs_per_thread));
  kv("shared memory / CTA", fmt::format("{} B", p.smem_per_cta));
  h += "</table>";

  h += "<h2>Roofline</h2><p>Throughput against arithmetic intensity: the filled point over DRAM "
       "traffic (read + "
       "written) of the main kernel, the open point over the traffic between the SMs and L2 (read "
       "against the "
       "dashed L2 roof); roofs at the sustained SM clock.</p>";
  double l2_bytes = 0;
  for (const auto& k : rec.kernels()) l2_bytes = std::max(l2_bytes, k.l2_bytes);
  h += roofline(p, gpu, l2_bytes);

  h += "<h2>Critical path</h2><p>The longest chain of dependent events from the launch to the end "
       "of the last "
       "CTA, split by the resource each step waited on. The shares sum to 100%.</p>";
  h += critical_bar(cp);
  h += "<h2>Utilisation over time</h2>";
  h += utilisation_chart(rec);
  h += "<h2>Timeline</h2><p>CTA lifetimes on the first SMs; below, the warps of the first CTA slot "
       "of the traced "
       "SMs, coloured by what each warp did most in each pixel's time.</p>";
  h += timeline(rec);
  h += "<p style=\"color:#777;font-size:12px\">Generated by gemmsim.</p></body></html>\n";
  return h;
}

}  // namespace gemmsim::traces
