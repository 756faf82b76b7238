#include <fmt/format.h>

#include <functional>

#include "sim/analytic/impl.hpp"
#include "sim/core/error.hpp"
#include "sim/run/run.hpp"

namespace gemmsim {
namespace {

struct Entry {
  ModelInfo info;
  std::function<std::unique_ptr<PerformanceModel>()> make;
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> table = {
      {{"des", "the discrete-event simulator (default)"}, analytic::make_des},
      {{"cutlass-latency",
        "prologue + max(global, shared, compute stream) x iterations + epilogue, per wave "
        "(models.md section 1)"},
       analytic::make_cutlass_latency},
      {{"ws-recurrence",
        "Sa/Sb/Sm load/math recurrences over the stages, per wave (models.md section 4)"},
       analytic::make_ws_recurrence},
      {{"roofline", "max(compute time, compulsory DRAM traffic / bandwidth)"},
       analytic::make_roofline},
      {{"cosma", "cuCOSMA's schedule-generator ranking, no time (models.md section 5)"},
       analytic::make_cosma},
  };
  return table;
}

// Every model sees the clock the kernel runs at (kernel_clock: tensor-core kernels at most at
// clocks.tensor_spec), as the simulator does, so that the comparison is of the models alone.
class AtKernelClock final : public PerformanceModel {
 public:
  explicit AtKernelClock(std::unique_ptr<PerformanceModel> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  bool predicts_time() const override { return inner_->predicts_time(); }
  Estimate estimate(const GpuSpec& gpu, const GemmConfig& c, const GemmProblem& p) const override {
    GpuSpec g = gpu;
    g.clocks.sustained = kernel_clock(gpu, c);
    return inner_->estimate(g, c, p);
  }

 private:
  std::unique_ptr<PerformanceModel> inner_;
};

}  // namespace

const std::vector<ModelInfo>& model_infos() {
  static const std::vector<ModelInfo> infos = [] {
    std::vector<ModelInfo> v;
    for (const auto& e : entries()) v.push_back(e.info);
    return v;
  }();
  return infos;
}

std::unique_ptr<PerformanceModel> make_model(const std::string& name) {
  std::string known;
  for (const auto& e : entries()) {
    if (name == e.info.name) return std::make_unique<AtKernelClock>(e.make());
    known += (known.empty() ? "" : ", ") + std::string(e.info.name);
  }
  throw UserError(fmt::format("--model '{}': expected one of {}", name, known));
}

}  // namespace gemmsim
