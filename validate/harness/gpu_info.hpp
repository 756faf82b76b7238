// GPU identity and SM clock for the measurement CSVs. Reads NVML through dlopen at run time
// (no nvml.h needed at build time) and falls back to `nvidia-smi`. Never changes any setting.
#pragma once

#include <string>

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

 private:
  void* lib_ = nullptr;
  void* device_ = nullptr;
  bool nvml_ok_ = false;
  int (*get_clock_)(void*, int, unsigned*) = nullptr;
  int (*get_max_clock_)(void*, int, unsigned*) = nullptr;
  int (*get_driver_)(char*, unsigned) = nullptr;
};

// Output of a shell command (first line, trimmed), or "" on failure.
std::string shell_first_line(const std::string& cmd);

}  // namespace gemmsim::bench
