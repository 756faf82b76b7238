// Performance models behind one interface: the discrete-event simulator (`des`) and the
// analytical baselines of the literature (../shared/reference/models.md), so that `validate
// --model`, `sweep --model` and studies can put them side by side on the same GPU description
// and configuration.
//
// Contract for implementations:
//  - estimate() is a pure function of (GPU, configuration, problem): deterministic, thread-safe
//    (called from many threads at once), and it never changes its inputs.
//  - A model that predicts time fills time_us with the wall time of all the configuration's
//    launches, each with the GPU's launch overhead (what the harness measures); one that only
//    ranks (cosma) leaves time_us at 0 and says so through predicts_time().
//  - rank_key orders configurations of one problem, lexicographically, lower is better; a
//    time model's key is {time_us}.
//  - A configuration the kernels cannot run is the caller's business (legality is checked
//    before); a model may still throw UserError for one it cannot estimate.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "kernels/common/gemm_config.hpp"

namespace gemmsim {

struct Estimate {
  double time_us = 0;
  std::vector<double> rank_key;
  std::string bound;  // what limits the configuration, in the model's own terms
  int ctas = 0, waves = 0, ctas_per_sm = 0;
};

class PerformanceModel {
 public:
  virtual ~PerformanceModel() = default;
  virtual std::string name() const = 0;
  virtual bool predicts_time() const { return true; }
  virtual Estimate estimate(const GpuSpec& gpu, const GemmConfig& c,
                            const GemmProblem& p) const = 0;
};

// By name: des, cutlass-latency, ws-recurrence, roofline, cosma. UserError for another name.
std::unique_ptr<PerformanceModel> make_model(const std::string& name);

struct ModelInfo {
  const char* name;
  const char* description;
};
const std::vector<ModelInfo>& model_infos();

}  // namespace gemmsim
