#include "validate/harness/gpu_info.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace gemmsim::bench {
namespace {
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM
}  // namespace

std::string shell_first_line(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  char buf[512];
  std::string out;
  if (fgets(buf, sizeof buf, p)) out = buf;
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' '))
    out.pop_back();
  return out;
}

GpuMonitor::GpuMonitor(const std::string& pci_bus_id) {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) return;
  auto init = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlInit_v2"));
  auto by_index =
      reinterpret_cast<int (*)(unsigned, void**)>(dlsym(lib_, "nvmlDeviceGetHandleByIndex_v2"));
  auto by_pci = reinterpret_cast<int (*)(const char*, void**)>(
      dlsym(lib_, "nvmlDeviceGetHandleByPciBusId_v2"));
  get_clock_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(
      dlsym(lib_, "nvmlDeviceGetClockInfo"));
  get_max_clock_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(
      dlsym(lib_, "nvmlDeviceGetMaxClockInfo"));
  get_driver_ =
      reinterpret_cast<int (*)(char*, unsigned)>(dlsym(lib_, "nvmlSystemGetDriverVersion"));
  if (!init || !by_index || !get_clock_ || init() != kNvmlSuccess) return;
  bool found = false;
  if (by_pci && !pci_bus_id.empty()) found = by_pci(pci_bus_id.c_str(), &device_) == kNvmlSuccess;
  if (!found) found = by_index(0, &device_) == kNvmlSuccess;
  nvml_ok_ = found;
}

GpuMonitor::~GpuMonitor() {
  if (lib_) {
    if (nvml_ok_) {
      auto shutdown = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlShutdown"));
      if (shutdown) shutdown();
    }
    dlclose(lib_);
  }
}

int GpuMonitor::sm_clock_mhz() const {
  if (nvml_ok_) {
    unsigned mhz = 0;
    if (get_clock_(device_, kNvmlClockSm, &mhz) == kNvmlSuccess) return static_cast<int>(mhz);
  }
  const std::string s =
      shell_first_line("nvidia-smi --query-gpu=clocks.sm --format=csv,noheader,nounits -i 0");
  return s.empty() ? -1 : std::atoi(s.c_str());
}

int GpuMonitor::max_sm_clock_mhz() const {
  if (nvml_ok_ && get_max_clock_) {
    unsigned mhz = 0;
    if (get_max_clock_(device_, kNvmlClockSm, &mhz) == kNvmlSuccess) return static_cast<int>(mhz);
  }
  const std::string s =
      shell_first_line("nvidia-smi --query-gpu=clocks.max.sm --format=csv,noheader,nounits -i 0");
  return s.empty() ? -1 : std::atoi(s.c_str());
}

ClockStats clock_stats(const std::vector<double>& mhz) {
  ClockStats s;
  if (mhz.empty()) return s;
  double sum = 0, lo = mhz[0], hi = mhz[0];
  for (const double f : mhz) {
    sum += f;
    lo = std::min(lo, f);
    hi = std::max(hi, f);
  }
  s.mean_mhz = static_cast<int>(std::lround(sum / static_cast<double>(mhz.size())));
  s.min_mhz = static_cast<int>(std::lround(lo));
  s.max_mhz = static_cast<int>(std::lround(hi));
  s.samples = static_cast<int>(mhz.size());
  return s;
}

ClockSampler::ClockSampler(const GpuMonitor& monitor, std::chrono::microseconds period)
    : monitor_(monitor) {
  if (!monitor_.nvml()) return;
  thread_ = std::thread([this, period] {
    const auto t0 = std::chrono::steady_clock::now();
    auto next = t0;
    while (!stop_.load(std::memory_order_relaxed)) {
      const int mhz = monitor_.sm_clock_mhz();
      if (mhz > 0) {
        const std::chrono::duration<double, std::milli> t = std::chrono::steady_clock::now() - t0;
        readings_.push_back({t.count(), mhz});
      }
      next += period;
      std::this_thread::sleep_until(next);
    }
  });
}

ClockSampler::~ClockSampler() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

ClockStats ClockSampler::stop() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
  if (readings_.empty()) {
    ClockStats s;
    s.mean_mhz = s.min_mhz = s.max_mhz = monitor_.sm_clock_mhz();
    s.samples = s.mean_mhz > 0 ? 1 : 0;
    return s;
  }
  std::vector<double> mhz;
  mhz.reserve(readings_.size());
  for (const Reading& r : readings_) mhz.push_back(r.mhz);
  return clock_stats(mhz);
}

std::string GpuMonitor::driver_version() const {
  if (nvml_ok_ && get_driver_) {
    char buf[96] = {};
    if (get_driver_(buf, sizeof buf) == kNvmlSuccess) return buf;
  }
  const std::string s =
      shell_first_line("nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0");
  return s.empty() ? "unknown" : s;
}

}  // namespace gemmsim::bench
