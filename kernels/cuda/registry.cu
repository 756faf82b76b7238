// Kernel registry and the split-K reduction kernel.
#include <algorithm>
#include <mutex>

#include "kernels/common/kernel_name.hpp"
#include "kernels/cuda/registry.hpp"

namespace gemmsim::cuda {

// Declarations of the generated parts: GEMMSIM_PART(i) for each i < GEMMSIM_LIB_PARTS.
#define GEMMSIM_PART(i) void register_library_part_##i(std::vector<KernelEntry>& out);
#include "library_parts.inc"
#undef GEMMSIM_PART

const std::vector<KernelEntry>& kernel_library() {
  static const std::vector<KernelEntry> lib = [] {
    std::vector<KernelEntry> v;
#define GEMMSIM_PART(i) register_library_part_##i(v);
#include "library_parts.inc"
#undef GEMMSIM_PART
    std::sort(v.begin(), v.end(),
              [](const KernelEntry& a, const KernelEntry& b) { return a.name < b.name; });
    return v;
  }();
  return lib;
}

const KernelEntry* find_kernel(const GemmConfig& cfg) {
  const std::string name = kernel_name(base_config(cfg));
  for (const KernelEntry& e : kernel_library())
    if (e.name == name && e.cfg == base_config(cfg)) return &e;
  return nullptr;
}

// C[i] = sum over z of workspace[z * MN + i]; float4 when MN is a multiple of 4.
__global__ void gemm_splitk_reduce_kernel(const float* __restrict__ ws, float* __restrict__ c,
                                          long long mn, int split_k) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (mn % 4 == 0) {
    const long long n4 = mn / 4;
    const float4* w4 = reinterpret_cast<const float4*>(ws);
    float4* c4 = reinterpret_cast<float4*>(c);
    for (long long i = first; i < n4; i += stride) {
      float4 s = w4[i];
      for (int z = 1; z < split_k; ++z) {
        const float4 v = w4[z * n4 + i];
        s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
      }
      c4[i] = s;
    }
  } else {
    for (long long i = first; i < mn; i += stride) {
      float s = ws[i];
      for (int z = 1; z < split_k; ++z) s += ws[z * mn + i];
      c[i] = s;
    }
  }
}

cudaError_t launch_splitk_reduce(const GemmArgs& args, cudaStream_t stream) {
  const long long mn = static_cast<long long>(args.m) * args.n;
  const long long work = mn % 4 == 0 ? mn / 4 : mn;
  constexpr int kThreads = 256;
  const long long blocks = std::min<long long>((work + kThreads - 1) / kThreads, 132LL * 16);
  gemm_splitk_reduce_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      args.workspace, args.c, mn, args.cfg.split_k);
  return cudaGetLastError();
}

}  // namespace gemmsim::cuda
