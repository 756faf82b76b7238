// cp_async_probe: how many bytes of cp.async can a few warps per SM keep in flight?
//
// Why: the Ampere-style warp-specialized kernel (one producer warp issuing every cp.async of a
// stage) runs at about 16 KB per 1.2 us per SM on the H100 whatever its stages or consumers
// (validate/data/h100/README.md). This probe streams a DRAM-resident buffer into shared memory
// with cp.async.cg 16 B from W warps per SM (one CTA per SM), each lane keeping at most D
// commit groups of one copy in flight (D = 0: no software limit, cp.async.wait_all only at the
// end), and prints the achieved bandwidth per SM.
//
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90,code=sm_90 validate/harness/cp_async_probe.cu
//   ./a.out > cp_async_probe.csv
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdint>

#define CK(x)                                                                   \
  do {                                                                          \
    cudaError_t e_ = (x);                                                       \
    if (e_ != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      return 1;                                                                 \
    }                                                                           \
  } while (0)

// n_chunks is a power of two: the index wraps with a mask (a 64-bit modulo would cost more
// issue slots than the copy and make the loop issue-bound).
template <int D>
__global__ void probe(const uint4* src, unsigned long long n_chunks, int iters) {
  extern __shared__ uint4 buf[];  // (D or 32) slots x blockDim.x chunks
  constexpr int SLOTS = D > 0 ? D : 32;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned long long idx = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int it = 0; it < iters; ++it) {
    const uint32_t dst = static_cast<uint32_t>(
        __cvta_generic_to_shared(&buf[(it % SLOTS) * blockDim.x + threadIdx.x]));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst),
                 "l"(src + (idx & (n_chunks - 1)))
                 : "memory");
    if constexpr (D > 0) {
      asm volatile("cp.async.commit_group;\n" ::: "memory");
      asm volatile("cp.async.wait_group %0;\n" ::"n"(D - 1) : "memory");
    }
    idx += stride;
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

template <int D>
int run(const uint4* src, unsigned long long n_chunks, int sms, int warps, float* us) {
  constexpr int SLOTS = D > 0 ? D : 32;
  const int threads = 32 * warps;
  const int smem = SLOTS * threads * 16;
  CK(cudaFuncSetAttribute(probe<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int iters = 2048;
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  probe<D><<<sms, threads, smem>>>(src, n_chunks, iters);  // warm-up
  CK(cudaGetLastError());
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    CK(cudaEventRecord(a));
    probe<D><<<sms, threads, smem>>>(src, n_chunks, iters);
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (ms < best) best = ms;
  }
  *us = best * 1e3f;
  const double bytes = static_cast<double>(sms) * threads * iters * 16.0;
  int clk = 0;  // kHz, the device's maximum (the clock is not sampled here)
  CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0));
  std::printf("%d,%d,%d,%.2f,%.3f,%.0f,%d\n", warps, D, warps * 32 * (D > 0 ? D : 0) * 16, *us,
              bytes / (*us * 1e-6) / sms / 1e9, bytes / sms, clk / 1000);
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return 0;
}

int main() {
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, 0));
  const int sms = p.multiProcessorCount;
  const unsigned long long bytes = 2ull << 30;
  uint4* src = nullptr;
  CK(cudaMalloc(&src, bytes));
  CK(cudaMemset(src, 1, bytes));
  std::printf("# %s, %d SMs; one CTA per SM; cp.async.cg 16 B per lane per iteration\n", p.name, sms);
  std::printf("source_bytes,warps_per_sm,groups_in_flight_per_lane(0=unlimited),sw_limit_bytes_per_sm,us,GB_per_s_per_sm,bytes_per_sm,max_sm_clock_mhz\n");
  float us = 0;
  // 2 GiB: DRAM-resident, far beyond the 50 MiB L2; 16 MiB: L2-resident after the warm-up.
  for (unsigned long long span : {bytes, 16ull << 20}) {
    const unsigned long long n = span / 16;
    for (int w : {1, 2, 4, 8}) {
      std::printf("%llu,", span);
      if (run<0>(src, n, sms, w, &us)) return 1;
      std::printf("%llu,", span);
      if (run<1>(src, n, sms, w, &us)) return 1;
      std::printf("%llu,", span);
      if (run<4>(src, n, sms, w, &us)) return 1;
      std::printf("%llu,", span);
      if (run<8>(src, n, sms, w, &us)) return 1;
      std::printf("%llu,", span);
      if (run<16>(src, n, sms, w, &us)) return 1;
    }
  }
  CK(cudaFree(src));
  return 0;
}
