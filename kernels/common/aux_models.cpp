#include "kernels/common/aux_models.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "kernels/common/tiling.hpp"

namespace gemmsim {
namespace {

using sim::Op;
using sim::OpKind;
using sim::Segment;
using sim::WarpCursor;

constexpr int kThreads = 256;
constexpr int kWarpBytes = 32 * 16;  // one 16-byte vector per lane

class StreamModel final : public sim::KernelModel {
 public:
  // Writes `bytes` at `dst`; with `slices` > 0 each output first sums `slices` inputs read from
  // `src`, `bytes` apart (the split-K reduction); with 0 it is a pure fill (cudaMemsetAsync).
  StreamModel(std::string name, std::uint64_t dst, std::uint64_t src, std::uint64_t bytes,
              int slices)
      : name_(std::move(name)), dst_(dst), src_(src), slices_(slices), bytes_(bytes) {
    geo_.dtype = DType::F32;
    geo_.threads_per_cta = kThreads;
    geo_.warps_per_cta = kThreads / 32;
    geo_.regs_per_thread = 32;
    geo_.smem_per_cta = 0;
    geo_.ctas = int((bytes_ + kThreads * 16 - 1) / (kThreads * 16));
  }
  std::string name() const override { return name_; }
  sim::LaunchGeometry geometry() const override { return geo_; }

  void begin_warp(WarpCursor& w, int cta, int warp) const override {
    w.cta = cta;
    w.warp = warp;
    w.phase = 0;
    w.iter = 0;
    w.segments.clear();
  }

  bool next_op(WarpCursor& w, Op& op) const override {
    op = Op{};
    w.segments.clear();
    const std::uint64_t off = (std::uint64_t(w.cta) * (kThreads / 32) + w.warp) * kWarpBytes;
    if (off >= bytes_) return false;
    const auto len = std::uint32_t(std::min<std::uint64_t>(kWarpBytes, bytes_ - off));
    if (w.phase == 0 && slices_ > 0) {
      op.kind = OpKind::GlobalLoad;
      op.count = std::uint32_t(slices_);
      op.l1_lines = op.count * (kWarpBytes / 128);
      op.writes = 1;
      for (int s = 0; s < slices_; ++s)
        w.segments.push_back(Segment{src_ + std::uint64_t(s) * bytes_ + off, len});
      w.phase = 1;
      return true;
    }
    if (w.phase <= 1) {
      op.kind = OpKind::GlobalStore;
      op.count = 1;
      op.l1_lines = kWarpBytes / 128;
      op.reads = 1;
      w.segments.push_back(Segment{dst_ + off, len});
      w.phase = 2;
      return true;
    }
    return false;
  }

 private:
  std::string name_;
  std::uint64_t dst_, src_;
  int slices_;
  std::uint64_t bytes_;
  sim::LaunchGeometry geo_;
};

}  // namespace

std::unique_ptr<sim::KernelModel> make_fill_model(const GemmProblem& p, DType t) {
  const AddressMap map(p, t);
  return std::make_unique<StreamModel>("fill_c", map.c, 0, std::uint64_t(p.m) * p.n * 4, 0);
}

std::unique_ptr<sim::KernelModel> make_splitk_reduction_model(const GemmConfig& c,
                                                              const GemmProblem& p) {
  const AddressMap map(p, c.dtype);
  return std::make_unique<StreamModel>("splitk_reduction", map.c, map.workspace,
                                       std::uint64_t(p.m) * p.n * 4, c.split_k);
}

std::unique_ptr<sim::KernelModel> make_memset_model(std::uint64_t addr, std::uint64_t bytes) {
  return std::make_unique<StreamModel>("memset", addr, 0, bytes, 0);
}

}  // namespace gemmsim
