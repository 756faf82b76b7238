// `des`: the discrete-event simulator behind the model interface.
#include "sim/analytic/impl.hpp"
#include "sim/run/run.hpp"

namespace gemmsim::analytic {
namespace {

class Des final : public PerformanceModel {
 public:
  std::string name() const override { return "des"; }
  Estimate estimate(const GpuSpec& gpu, const GemmConfig& c, const GemmProblem& p) const override {
    const Prediction pred = predict(gpu, c, p);
    Estimate e;
    e.time_us = pred.time_us;
    e.rank_key = {pred.time_us};
    e.bound = pred.bound;
    e.ctas = pred.ctas;
    e.waves = pred.waves;
    e.ctas_per_sm = pred.ctas_per_sm;
    return e;
  }
};

}  // namespace

std::unique_ptr<PerformanceModel> make_des() {
  return std::make_unique<Des>();
}

}  // namespace gemmsim::analytic
