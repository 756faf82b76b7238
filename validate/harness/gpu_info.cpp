#include "validate/harness/gpu_info.hpp"

#include <dlfcn.h>

#include <algorithm>
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

ClockSampler::ClockSampler(const GpuMonitor& monitor, std::chrono::microseconds period, bool keep)
    : monitor_(monitor), keep_(keep) {
  if (!monitor_.nvml()) return;
  thread_ = std::thread([this, period] {
    const auto t0 = std::chrono::steady_clock::now();
    auto next = t0;
    while (!stop_.load(std::memory_order_relaxed)) {
      const int mhz = monitor_.sm_clock_mhz();
      if (mhz > 0 && keep_) {
        const std::chrono::duration<double, std::milli> t = std::chrono::steady_clock::now() - t0;
        readings_.push_back({t.count(), mhz});
      }
      if (mhz > 0) {
        sum_ += mhz;
        min_ = n_ == 0 ? mhz : std::min(min_, mhz);
        max_ = n_ == 0 ? mhz : std::max(max_, mhz);
        ++n_;
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
  ClockStats s;
  if (n_ == 0) {
    s.mean_mhz = s.min_mhz = s.max_mhz = monitor_.sm_clock_mhz();
    s.samples = s.mean_mhz > 0 ? 1 : 0;
    return s;
  }
  s.mean_mhz = static_cast<int>((sum_ + n_ / 2) / n_);
  s.min_mhz = min_;
  s.max_mhz = max_;
  s.samples = n_;
  return s;
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
