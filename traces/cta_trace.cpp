#include "traces/cta_trace.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>

#include "kernels/common/tiling.hpp"
#include "sim/core/error.hpp"
#include "sim/gpu/kernel_model.hpp"

namespace gemmsim::traces {

void CtaTimeline::kernel_begin(const sim::KernelModel& kernel, const sim::LaunchInfo& info) {
  recording_ = kernel.name() == main_;
  if (!recording_) return;
  launch_start_ = info.start;
  sm_mhz_ = info.sm_mhz;
  ctas_.assign(std::size_t(info.ctas), Cta{});
}

void CtaTimeline::cta_begin(int cta, int /*slot*/, int sm, sim::Tick t) {
  if (!recording_) return;
  auto& c = ctas_.at(std::size_t(cta));
  c.sm = sm;
  c.start = t;
}

void CtaTimeline::cta_end(int cta, int /*slot*/, int /*sm*/, sim::Tick exit, sim::Tick /*done*/) {
  if (!recording_) return;
  ctas_.at(std::size_t(cta)).exit = exit;
}

void CtaTimeline::write(const std::string& path, const GemmConfig& config,
                        const GemmProblem& problem) const {
  std::ofstream f(path, std::ios::binary);
  if (!f)
    throw UserError(
        fmt::format("--cta-trace '{}': cannot write the file ({})", path, std::strerror(errno)));
  const CtaRaster raster(config, problem);
  const auto ns = [&](sim::Tick t) { return std::llround(double(t - launch_start_) * 1e-3); };
  f << "row,kernel,m,n,k,order,smid,slice,tile_m,tile_n,start_ns,end_ns,cycles\n";
  for (std::size_t i = 0; i < ctas_.size(); ++i) {
    const Cta& c = ctas_[i];
    if (c.start < 0 || c.exit < 0)
      throw std::logic_error(fmt::format("CtaTimeline: CTA {} of {} never finished", i, main_));
    const CtaTile t = raster.tile(int(i));
    // The CTA's SM's cycles from start to exit, as clock64 counts them on the GPU.
    const double mhz = std::size_t(c.sm) < sm_mhz_.size() ? sm_mhz_[std::size_t(c.sm)] : 0.0;
    const long long cycles = std::llround(double(c.exit - c.start) * 1e-6 * mhz);
    f << fmt::format("0,{},{},{},{},{},{},{},{},{},{},{},{}\n", main_, problem.m, problem.n,
                     problem.k, i, c.sm, t.slice, t.tile_m, t.tile_n, ns(c.start), ns(c.exit),
                     cycles);
  }
  if (!f) throw UserError(fmt::format("--cta-trace '{}': write failed", path));
}

}  // namespace gemmsim::traces
