// Configurations the tests build by hand.
#pragma once

#include "kernels/common/gemm_config.hpp"

namespace gemmsim::test {

// A pipelined fp16 tensor-core configuration with the swizzled layout.
inline GemmConfig tc(int bm, int bn, int bk, int wm, int wn, int stages) {
  GemmConfig c;
  c.dtype = DType::F16;
  c.block_m = bm, c.block_n = bn, c.block_k = bk;
  c.warps_m = wm, c.warps_n = wn;
  c.stages = stages;
  c.smem_layout = SmemLayout::Swizzled;
  return c;
}

}  // namespace gemmsim::test
