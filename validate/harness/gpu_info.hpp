// GPU identity and SM clock for the measurement CSVs. Reads NVML through dlopen at run time
// (no nvml.h needed at build time) and falls back to `nvidia-smi`. Never changes any setting.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace gemmsim::bench {

class GpuMonitor {
 public:
  // pci_bus_id as cudaDeviceGetPCIBusId gives it ("0000:1B:00.0"); empty: NVML index 0.
  explicit GpuMonitor(const std::string& pci_bus_id);
  ~GpuMonitor();
  GpuMonitor(const GpuMonitor&) = delete;
  GpuMonitor& operator=(const GpuMonitor&) = delete;

  // Current SM clock in MHz (NVML_CLOCK_SM), or -1 if neither NVML nor nvidia-smi answers.
  int sm_clock_mhz() const;
  // Maximum SM clock in MHz (NVML_CLOCK_SM max), or -1.
  int max_sm_clock_mhz() const;
  // Driver version ("580.159.04"), or "unknown".
  std::string driver_version() const;
  // "nvml" or "nvidia-smi" or "none".
  const char* source() const { return nvml_ok_ ? "nvml" : "nvidia-smi"; }
  bool nvml() const { return nvml_ok_; }

 private:
  void* lib_ = nullptr;
  void* device_ = nullptr;
  bool nvml_ok_ = false;
  int (*get_clock_)(void*, int, unsigned*) = nullptr;
  int (*get_max_clock_)(void*, int, unsigned*) = nullptr;
  int (*get_driver_)(char*, unsigned) = nullptr;
};

// The SM clock over an interval: samples taken at a fixed period, so their mean is the
// time-weighted mean clock. Under a power cap the H100 moves its clock every ~0.1 s between
// about 1.1 and 1.98 GHz (validate/data/h100/power_best_s19_run2.csv), so one instantaneous
// reading can be 20% off the clock a 0.1-0.2 s timing loop ran at.
struct ClockStats {
  int mean_mhz = -1, min_mhz = -1, max_mhz = -1;
  int samples = 0;
};

// Mean (rounded), min and max of clock readings taken at a fixed period, and their number.
ClockStats clock_stats(const std::vector<double>& mhz);

// Reads the SM clock every `period` on its own thread from construction until stop() (or
// destruction), keeping every reading with its time in ms since construction (readings()).
// NVML only; without it, one nvidia-smi reading at stop().
class ClockSampler {
 public:
  struct Reading {
    double ms = 0;
    int mhz = 0;
  };
  ClockSampler(const GpuMonitor& monitor, std::chrono::microseconds period);
  ~ClockSampler();
  ClockSampler(const ClockSampler&) = delete;
  ClockSampler& operator=(const ClockSampler&) = delete;
  ClockStats stop();
  // After stop(): the readings.
  const std::vector<Reading>& readings() const { return readings_; }

 private:
  const GpuMonitor& monitor_;
  std::vector<Reading> readings_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Output of a shell command (first line, trimmed), or "" on failure.
std::string shell_first_line(const std::string& cmd);

}  // namespace gemmsim::bench
