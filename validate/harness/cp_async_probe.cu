// cp_async_probe: how many bytes of cp.async can a few warps per SM keep in flight?
//
// Why: the Ampere-style warp-specialized kernel (one producer warp issuing every cp.async of a
// stage) runs at about 16 KB per 1.2 us per SM on the H100 whatever its stages or consumers
// (validate/data/h100/README.md). This probe streams a buffer into shared memory with
// cp.async from W warps per CTA, one CTA per SM on G SMs (G = 1: the SM alone; G = all: every
// SM streaming), each lane copying V bytes per instruction (16: cp.async.cg; 8: cp.async.ca)
// and keeping at most D commit groups of one copy in flight (D = 0: no software limit,
// cp.async.wait_all only at the end). Each CTA times its own copy loop with clock64 (from a
// barrier before the first copy to a barrier after cp.async.wait_all), so the figure is bytes
// per SM clock with no launch overhead in it; the median over CTAs is printed.
//
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90,code=sm_90 validate/harness/cp_async_probe.cu
//   ./a.out > cp_async_probe.csv
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#define CK(x)                                                                         \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

// n_chunks is a power of two: the index wraps with a mask (a 64-bit modulo would cost more
// issue slots than the copy and make the loop issue-bound).
template <int D, int V>
__global__ void probe(const char* src, unsigned long long n_chunks, unsigned long long first,
                      int iters, long long* cycles) {
  extern __shared__ uint4 buf[];  // (D or 32) slots x blockDim.x chunks of 16 B
  constexpr int SLOTS = D > 0 ? D : 32;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned long long idx =
      first + static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  __syncthreads();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
    const uint32_t dst = static_cast<uint32_t>(
        __cvta_generic_to_shared(&buf[(it % SLOTS) * blockDim.x + threadIdx.x]));
    const char* p = src + (idx & (n_chunks - 1)) * V;
    if constexpr (V == 16)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(p) : "memory");
    else
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(p), "n"(V)
                   : "memory");
    if constexpr (D > 0) {
      asm volatile("cp.async.commit_group;\n" ::: "memory");
      asm volatile("cp.async.wait_group %0;\n" ::"n"(D - 1) : "memory");
    }
    idx += stride;
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - t0;
}

// Launches launch(0) to warm up, then launch(1) .. launch(5), and sets *cycles to the median
// over those five of the median CTA's clock64 span (each kernel writes its CTAs' spans to
// cycles_dev).
template <class Launch>
int median_cta_cycles(Launch launch, int grid, long long* cycles_dev, double* cycles) {
  launch(0);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<double> per_launch;
  std::vector<long long> c(grid);
  for (int r = 1; r <= 5; ++r) {
    launch(r);
    CK(cudaGetLastError());
    CK(cudaMemcpy(c.data(), cycles_dev, grid * sizeof(long long), cudaMemcpyDeviceToHost));
    std::sort(c.begin(), c.end());
    per_launch.push_back(double(c[grid / 2]));
  }
  std::sort(per_launch.begin(), per_launch.end());
  *cycles = per_launch[2];
  return 0;
}

template <int D, int V>
int run(const char* src, unsigned long long span, int grid, int warps, long long* cycles_dev,
        int sm_count) {
  constexpr int SLOTS = D > 0 ? D : 32;
  const int threads = 32 * warps;
  const int smem = SLOTS * threads * 16;
  const unsigned long long n_chunks = span / V;
  CK(cudaFuncSetAttribute(probe<D, V>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int iters = 4096;
  // From a DRAM-resident source each launch starts where the last one ended, so its lines are
  // cold; from an L2-resident one every launch reads what the warm-up brought in.
  const unsigned long long per_launch_chunks =
      span > (64ull << 20) ? static_cast<unsigned long long>(grid) * threads * iters : 0;
  double cyc = 0;
  if (median_cta_cycles(
          [&](int r) {
            probe<D, V>
                <<<grid, threads, smem>>>(src, n_chunks, r * per_launch_chunks, iters, cycles_dev);
          },
          grid, cycles_dev, &cyc))
    return 1;
  const double bytes = double(threads) * iters * V;
  std::printf("%llu,%d,%d,%d,%d,%.0f,%.0f,%.3f\n", span, grid == sm_count ? 0 : grid, warps, V, D,
              bytes, cyc, bytes / cyc);
  return 0;
}

// Bursts, as a warp-specialized producer issues them: each lane copies U chunks of 16 B whose
// addresses differ by compile-time offsets (one base register, no per-copy arithmetic), the
// warp's U instructions covering U x 512 contiguous bytes, then commits them as one group and
// waits until at most G groups are pending (G = 0: every burst waits for itself, its latency).
template <int U, int G>
__global__ void burst(const char* src, unsigned long long span, unsigned long long first, int iters,
                      long long* cycles) {
  extern __shared__ uint4 buf[];  // U x blockDim.x chunks (one burst; later bursts overwrite)
  const unsigned long long per_burst = static_cast<unsigned long long>(U) * blockDim.x * 16;
  unsigned long long off = (first + static_cast<unsigned long long>(blockIdx.x) * per_burst) % span;
  const uint32_t dst0 = static_cast<uint32_t>(__cvta_generic_to_shared(&buf[threadIdx.x]));
  __syncthreads();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
    const char* p = src + off + threadIdx.x * 16;
#pragma unroll
    for (int i = 0; i < U; ++i)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst0 + i * blockDim.x * 16),
                   "l"(p + i * blockDim.x * 16)
                   : "memory");
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    asm volatile("cp.async.wait_group %0;\n" ::"n"(G) : "memory");
    off += static_cast<unsigned long long>(gridDim.x) * per_burst;
    if (off >= span) off -= span;
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - t0;
}

template <int U, int G>
int run_burst(const char* src, unsigned long long span, int grid, long long* cycles_dev,
              int sm_count) {
  const int threads = 32;
  const int smem = U * threads * 16;
  CK(cudaFuncSetAttribute(burst<U, G>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int iters = 256;
  // As in run(): a DRAM-resident source is read afresh by every launch.
  const unsigned long long launch_bytes =
      span > (64ull << 20) ? static_cast<unsigned long long>(grid) * iters * U * threads * 16 : 0;
  double cyc = 0;
  if (median_cta_cycles(
          [&](int r) {
            burst<U, G>
                <<<grid, threads, smem>>>(src, span, (r * launch_bytes) % span, iters, cycles_dev);
          },
          grid, cycles_dev, &cyc))
    return 1;
  const double bytes = double(threads) * iters * U * 16;
  std::printf("burst,%llu,%d,1,%d,%d,%.0f,%.0f,%.3f,%.1f\n", span, grid == sm_count ? 0 : grid, U,
              G, bytes, cyc, bytes / cyc, cyc / iters);
  return 0;
}

template <int U>
int bursts(const char* src, unsigned long long span, int grid, long long* cyc, int sms) {
  if (run_burst<U, 0>(src, span, grid, cyc, sms)) return 1;
  if (run_burst<U, 1>(src, span, grid, cyc, sms)) return 1;
  if (run_burst<U, 3>(src, span, grid, cyc, sms)) return 1;
  if (run_burst<U, 7>(src, span, grid, cyc, sms)) return 1;
  return 0;
}

// When does cp.async.mbarrier.arrive.noinc fire? One producer warp and one consumer warp, as in
// the Ampere-style warp-specialized kernel: for k-tile t (slot t % S of S slots) the producer
// waits until the consumer has released the slot, issues U cp.async.cg 16 B per lane (the
// slot's U x 512 bytes), then cp.async.mbarrier.arrive.noinc on FULL[slot] (count 32) and goes
// on to the next k-tile; the consumer waits on FULL[slot] and at once arrives on EMPTY[slot]
// (count 1). Lane 0 of each records clock64: `issued` after the arrive instruction, `seen` when
// the consumer's wait returns. seen - issued is how long after the last copy was issued the
// barrier completed: with S = 1 nothing else is in flight (one burst's latency); with S > 1 the
// producer keeps issuing later k-tiles' copies meanwhile, which must not delay this one's
// arrival if it waits only for the copies issued before it.
__device__ __forceinline__ void bar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n .reg .pred p;\n WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra WAIT_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

template <int U, int S>
__global__ void arrive_probe(const char* src, unsigned long long span, unsigned long long first,
                             int tiles, long long* issued, long long* seen) {
  extern __shared__ uint4 buf[];                           // S slots x U x 32 chunks of 16 B
  __shared__ __align__(8) unsigned long long bars[2 * S];  // FULL[0..S), EMPTY[0..S)
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t bar0 = static_cast<uint32_t>(__cvta_generic_to_shared(bars));
  if (threadIdx.x == 0)
    for (int s = 0; s < S; ++s) {
      bar_init(bar0 + 8 * s, 32);
      bar_init(bar0 + 8 * (S + s), 1);
    }
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  __syncthreads();
  if (warp == 0) {
    const uint32_t dst0 = static_cast<uint32_t>(__cvta_generic_to_shared(&buf[lane]));
    unsigned long long off = first % span;
    for (int t = 0; t < tiles; ++t) {
      const int s = t % S, u = t / S;
      if (u >= 1) bar_wait(bar0 + 8 * (S + s), (u - 1) & 1);
      const char* p = src + off + lane * 16;
      const uint32_t d = dst0 + s * U * 512;
#pragma unroll
      for (int i = 0; i < U; ++i)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d + i * 512),
                     "l"(p + i * 512)
                     : "memory");
      asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(bar0 + 8 * s)
                   : "memory");
      if (lane == 0) issued[t] = clock64();
      off += U * 512;
      if (off >= span) off = 0;
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
  } else if (warp == 1) {
    for (int t = 0; t < tiles; ++t) {
      const int s = t % S, u = t / S;
      bar_wait(bar0 + 8 * s, u & 1);
      if (lane == 0) {
        seen[t] = clock64();
        asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared.b64 st, [%0];\n}\n" ::"r"(
                         bar0 + 8 * (S + s))
                     : "memory");
      }
      __syncwarp();
    }
  }
}

template <int U, int S>
int run_arrive(const char* src, unsigned long long span, long long* d_issued, long long* d_seen) {
  const int smem = S * U * 512;
  CK(cudaFuncSetAttribute(arrive_probe<U, S>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int tiles = 256;
  std::vector<long long> is(tiles), se(tiles);
  std::vector<double> lat_med, per_tile;
  // The first launch warms an L2-resident source; from a DRAM-resident one every launch reads
  // lines of its own.
  const unsigned long long launch_bytes = span > (64ull << 20) ? 1ull * tiles * U * 512 : 0;
  for (int r = 0; r < 6; ++r) {
    arrive_probe<U, S><<<1, 64, smem>>>(src, span, r * launch_bytes, tiles, d_issued, d_seen);
    CK(cudaGetLastError());
    CK(cudaMemcpy(is.data(), d_issued, tiles * sizeof(long long), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(se.data(), d_seen, tiles * sizeof(long long), cudaMemcpyDeviceToHost));
    if (r == 0) continue;
    std::vector<double> lat;
    for (int t = 16; t < tiles; ++t) lat.push_back(double(se[t] - is[t]));
    std::sort(lat.begin(), lat.end());
    lat_med.push_back(lat[lat.size() / 2]);
    per_tile.push_back(double(se[tiles - 1] - se[15]) / (tiles - 16));
  }
  std::sort(lat_med.begin(), lat_med.end());
  std::sort(per_tile.begin(), per_tile.end());
  std::printf("arrive,%llu,%d,%d,%.0f,%.1f\n", span, U, S, lat_med[2], per_tile[2]);
  return 0;
}

template <int V>
int sweep(const char* src, unsigned long long span, int grid, long long* cyc, int sms) {
  for (int w : {1, 2, 4}) {
    if (run<0, V>(src, span, grid, w, cyc, sms)) return 1;
    if (run<1, V>(src, span, grid, w, cyc, sms)) return 1;
    if (run<16, V>(src, span, grid, w, cyc, sms)) return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  const bool only_bursts = only == "--bursts" || only == "--arrive";
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, 0));
  const int sms = p.multiProcessorCount;
  const unsigned long long bytes = 2ull << 30;
  char* src = nullptr;
  long long* cyc = nullptr;
  CK(cudaMalloc(&src, bytes));
  CK(cudaMemset(src, 1, bytes));
  CK(cudaMalloc(&cyc, sms * sizeof(long long)));
  std::printf("# %s, %d SMs; one CTA per SM; clock64 span of each CTA's copy loop, median\n",
              p.name, sms);
  std::printf(
      "source_bytes,sms(0=all),warps_per_cta,bytes_per_lane,groups_in_flight_per_lane(0=unlimited),"
      "bytes_per_cta,cycles,bytes_per_clk_per_sm\n");
  // 2 GiB: DRAM-resident, far beyond the 50 MiB L2; 16 MiB: L2-resident after the warm-up.
  for (int grid : (only_bursts ? std::vector<int>{} : std::vector<int>{1, sms}))
    for (unsigned long long span : {16ull << 20, bytes}) {
      if (sweep<16>(src, span, grid, cyc, sms)) return 1;
      if (sweep<8>(src, span, grid, cyc, sms)) return 1;
    }
  if (only == "--arrive") {
    long long *d_is = nullptr, *d_se = nullptr;
    CK(cudaMalloc(&d_is, 256 * sizeof(long long)));
    CK(cudaMalloc(&d_se, 256 * sizeof(long long)));
    std::printf(
        "# arrive: one CTA, a producer and a consumer warp; median over k-tiles 16..255 of seen - "
        "issued (cycles), and cycles per k-tile at the consumer\n");
    std::printf(
        "kind,source_bytes,copies_per_lane_per_tile,slots,arrive_latency_cycles,cycles_per_tile\n");
    for (unsigned long long span : {16ull << 20, bytes}) {
      if (run_arrive<32, 1>(src, span, d_is, d_se)) return 1;
      if (run_arrive<32, 2>(src, span, d_is, d_se)) return 1;
      if (run_arrive<32, 4>(src, span, d_is, d_se)) return 1;
      if (run_arrive<16, 1>(src, span, d_is, d_se)) return 1;
      if (run_arrive<16, 4>(src, span, d_is, d_se)) return 1;
      if (run_arrive<8, 1>(src, span, d_is, d_se)) return 1;
      if (run_arrive<8, 4>(src, span, d_is, d_se)) return 1;
      if (run_arrive<8, 7>(src, span, d_is, d_se)) return 1;
    }
    CK(cudaFree(d_is));
    CK(cudaFree(d_se));
    CK(cudaFree(src));
    CK(cudaFree(cyc));
    return 0;
  }
  std::printf(
      "# bursts: one warp per CTA; U cp.async.cg 16 B per lane per burst, one commit group per "
      "burst, at most G groups pending\n");
  std::printf(
      "kind,source_bytes,sms(0=all),warps_per_cta,copies_per_lane_per_burst,groups_pending,bytes_"
      "per_cta,cycles,bytes_per_clk_per_sm,cycles_per_burst\n");
  for (int grid : {1, sms})
    for (unsigned long long span : {16ull << 20, bytes}) {
      if (bursts<1>(src, span, grid, cyc, sms)) return 1;
      if (bursts<8>(src, span, grid, cyc, sms)) return 1;
      if (bursts<16>(src, span, grid, cyc, sms)) return 1;
      if (bursts<32>(src, span, grid, cyc, sms)) return 1;
    }
  CK(cudaFree(src));
  CK(cudaFree(cyc));
  return 0;
}
