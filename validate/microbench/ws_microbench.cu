// gemmsim-ws-microbench: calibration numbers for the warp-specialized family on sm_90a:
// mbarrier arrive/wait costs, bulk copies through the TMA unit (latency, per-SM and DRAM
// bandwidth), wgmma m64nNk16 throughput and latency per N, and cp.async.cg throughput when
// only 1 to 8 warps per SM issue it (the Ampere-style producer warp).
//
//   cmake --build <build> --target gemmsim-ws-microbench   (kernels/cuda/CMakeLists.txt)
// or by hand:
//   nvcc -O3 -std=c++20 -gencode=arch=compute_90a,code=sm_90a -I. \
//     validate/microbench/ws_microbench.cu validate/harness/gpu_info.cpp -ldl -o ws_microbench
//   ./ws_microbench [--out ws_microbench.csv] [--cp-async-only]
//   ./ws_microbench --spread per_sm.csv     (only: per-SM TMA and wgmma rates, by SM id)
//
// Writes rows in the format of validate/data/h100/microbench.csv:
// `name,value,unit,sm_clock_mhz,method`. Cycle counts come from clock64() inside the kernels;
// sm_clock_mhz is clock64 cycles over %globaltimer ns of the same block when the kernel ran
// long enough, else the NVML reading right after. Nothing here changes clocks or settings.
//
// The TMA is exercised with the 1-D bulk copy (cp.async.bulk ... mbarrier::complete_tx),
// which runs on the same copy engine as the tensor-map form without needing a tensor map;
// the 2-D tensor form adds the descriptor's address generation, not measured here.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "validate/harness/gpu_info.hpp"

namespace wsmb {

void check(cudaError_t e, const char* expr, int line) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("line ") + std::to_string(line) + ": " + expr + ": " +
                             cudaGetErrorString(e));
}
#define CK(x) check((x), #x, __LINE__)

struct Probe {
  long long c0, c1, g0, g1;
  unsigned smid;
};
__device__ __forceinline__ long long gtimer() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void stamp0(Probe* p) {
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  p[blockIdx.x].smid = smid;
  p[blockIdx.x].g0 = gtimer();
  p[blockIdx.x].c0 = clock64();
}
__device__ __forceinline__ void stamp1(Probe* p) {
  p[blockIdx.x].c1 = clock64();
  p[blockIdx.x].g1 = gtimer();
}

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}" ::"r"(bar)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive_tx(uint32_t bar, uint32_t tx) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}" ::"r"(
                   bar),
               "r"(tx)
               : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred p;\nWAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT;\n}" ::"r"(bar),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void bulk_load(uint32_t dst, const void* src, uint32_t bytes,
                                          uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}

#include "validate/microbench/wgmma_ops.inc"

// ---- mbarrier ---------------------------------------------------------------------------
// Two warps hand a token back and forth through two mbarriers (count 1): lane 0 of warp 0
// arrives on bar0 and waits bar1; lane 0 of warp 1 waits bar0 and arrives on bar1. One round
// trip = two arrive -> waiting-warp-wakes latencies.
__global__ void mbar_pingpong_kernel(int iters, Probe* pr) {
  __shared__ __align__(8) uint64_t bars[2];
  const uint32_t b0 = smem_addr(&bars[0]), b1 = smem_addr(&bars[1]);
  if (threadIdx.x == 0) {
    mbar_init(b0, 1);
    mbar_init(b1, 1);
    mbar_fence_init();
  }
  __syncthreads();
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane != 0) return;
  if (warp == 0) {
    stamp0(pr);
    for (int i = 0; i < iters; ++i) {
      mbar_arrive(b0);
      mbar_wait(b1, i & 1);
    }
    stamp1(pr);
  } else {
    for (int i = 0; i < iters; ++i) {
      mbar_wait(b0, i & 1);
      mbar_arrive(b1);
    }
  }
}

// One thread: arrive (completing the phase), then wait on the phase just completed. The
// cost of the arrive + a wait that succeeds at once, back to back.
__global__ void mbar_self_kernel(int iters, Probe* pr) {
  __shared__ __align__(8) uint64_t bar;
  const uint32_t b = smem_addr(&bar);
  if (threadIdx.x != 0) return;
  mbar_init(b, 1);
  mbar_fence_init();
  stamp0(pr);
  for (int i = 0; i < iters; ++i) {
    mbar_arrive(b);
    mbar_wait(b, i & 1);
  }
  stamp1(pr);
}

// ---- TMA (bulk copy) --------------------------------------------------------------------
// One thread: expect_tx + one bulk copy of `bytes` + wait, back to back, from a small
// L2-resident source: the latency of a copy of that size.
__global__ void bulk_latency_kernel(const char* src, int bytes, int iters, Probe* pr) {
  extern __shared__ __align__(128) char sbuf[];
  __shared__ __align__(8) uint64_t bar;
  const uint32_t b = smem_addr(&bar), dst = smem_addr(sbuf);
  if (threadIdx.x != 0) return;
  mbar_init(b, 1);
  mbar_fence_init();
  for (int i = 0; i < 4; ++i) {  // warm L2 with the source
    mbar_arrive_tx(b, bytes);
    bulk_load(dst, src, bytes, b);
    mbar_wait(b, i & 1);
  }
  stamp0(pr);
  for (int i = 0; i < iters; ++i) {
    mbar_arrive_tx(b, bytes);
    bulk_load(dst, src, bytes, b);
    mbar_wait(b, (i + 4) & 1);
  }
  stamp1(pr);
}

// One thread per block keeps `stages` bulk copies of `chunk` bytes in flight, streaming
// `footprint` bytes at src + blockIdx.x * block_stride `passes` times: each block its own bytes
// (block_stride = footprint; small: L2-resident, per-SM TMA/L2 bandwidth; large: from DRAM), or
// all blocks the same bytes (block_stride 0, `stagger`: each starts at its own offset, so that
// the SMs do not ask for one line at once), as all CTAs of a GEMM wave share an operand.
constexpr int kStages = 4;
__global__ void bulk_stream_kernel(const char* src, long long block_stride, long long footprint,
                                   bool stagger, int chunk, int passes, Probe* pr) {
  extern __shared__ __align__(128) char sbuf[];
  __shared__ __align__(8) uint64_t bars[kStages];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < kStages; ++s) mbar_init(smem_addr(&bars[s]), 1);
  mbar_fence_init();
  const char* base = src + blockIdx.x * block_stride;
  const long long per_pass = footprint / chunk;
  const long long total = per_pass * passes;
  const long long first = stagger ? (long long)blockIdx.x * per_pass / gridDim.x : 0;
  stamp0(pr);
  for (long long i = 0; i < total; ++i) {
    const int s = int(i % kStages);
    const uint32_t b = smem_addr(&bars[s]);
    if (i >= kStages) mbar_wait(b, uint32_t((i / kStages - 1) & 1));
    mbar_arrive_tx(b, chunk);
    bulk_load(smem_addr(sbuf + s * chunk), base + ((first + i) % per_pass) * chunk, chunk, b);
  }
  for (long long i = total > kStages ? total - kStages : 0; i < total; ++i)
    mbar_wait(smem_addr(&bars[i % kStages]), uint32_t((i / kStages) & 1));
  stamp1(pr);
}

// ---- wgmma ----------------------------------------------------------------------------------
// Shared-memory matrix descriptor without swizzle: start address, leading and stride byte
// offsets (both in 16-byte units). The operands' values do not matter for timing beyond
// being ordinary bf16 numbers (filled below).
__device__ __forceinline__ uint64_t desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t(lbo >> 4) << 16) | (uint64_t(sbo >> 4) << 32);
}

template <int N>
__device__ __forceinline__ void wgmma_op(float (&d)[N / 2], uint64_t da, uint64_t db) {
  if constexpr (N == 64) wgmma_n64(d, da, db);
  if constexpr (N == 128) wgmma_n128(d, da, db);
  if constexpr (N == 256) wgmma_n256(d, da, db);
}

// Each warpgroup issues `iters` groups of 4 wgmma m64nNk16 into one accumulator, committing
// each group and keeping one in flight (wait_group 1), the steady state of a GEMM main loop;
// chase: one wgmma per group and wait_group 0 (issue-to-completion latency).
template <int N>
__global__ void wgmma_kernel(int iters, bool chase, float* sink, Probe* pr) {
  extern __shared__ __align__(1024) uint16_t sm[];
  for (int i = threadIdx.x; i < 32768; i += blockDim.x)
    sm[i] = uint16_t(0x3f80u ^ ((i * 2654435761u) >> 25));  // bf16 near 1.0
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const int wg = threadIdx.x / 128;
  const uint32_t base = smem_addr(sm);
  const uint64_t da = desc(base + wg * 2048, 128, 256);
  const uint64_t db = desc(base + 8192, 128, 256);
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.f;
  __syncthreads();
  if (threadIdx.x == 0) stamp0(pr);
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  if (chase) {
    for (int i = 0; i < iters; ++i) {
      wgmma_op<N>(d, da, db);
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    }
  } else {
    for (int i = 0; i < iters; ++i) {
#pragma unroll
      for (int u = 0; u < 4; ++u) wgmma_op<N>(d, da, db);
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) stamp1(pr);
  float s = 0;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) s += d[i];
  if (s == 1234.5f) sink[0] = s;
}


// ---- cp.async from few warps ------------------------------------------------------------------
// Each warp streams its own 64 KiB (L2-resident) slice with cp.async.cg 16 B per lane into its
// own 4-stage ring of 4 KiB stages (8 instructions per stage), committing a group per stage and
// keeping 3 in flight (wait_group 3): the shape of a producer warp that keeps a few stages
// ahead. How fast can one warp, or a few, move data into shared memory?
__global__ void cp_async_warps_kernel(const char* src, int iters, Probe* pr) {
  extern __shared__ __align__(128) char sbuf[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const char* mine = src + (size_t(blockIdx.x) * 32 + warp) * 65536;
  const uint32_t ring = smem_addr(sbuf + warp * 16384);
  __syncthreads();
  if (threadIdx.x == 0) stamp0(pr);
  for (int i = 0; i < iters; ++i) {
    const uint32_t stage = ring + (i % 4) * 4096;
    const char* from = mine + (i % 16) * 4096;
#pragma unroll
    for (int j = 0; j < 8; ++j)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(stage + j * 512 + lane * 16),
                   "l"(from + j * 512 + lane * 16)
                   : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 3;" ::: "memory");
  }
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) stamp1(pr);
}

// ---- host --------------------------------------------------------------------------------
struct Row {
  std::string name;
  double value;
  std::string unit;
  double mhz;
  std::string method;
};

class Runner {
 public:
  Runner() {
    CK(cudaGetDeviceProperties(&prop_, 0));
    char bus[32] = {};
    CK(cudaDeviceGetPCIBusId(bus, sizeof bus, 0));
    mon_ = std::make_unique<gemmsim::bench::GpuMonitor>(bus);
    sms_ = prop_.multiProcessorCount;
    CK(cudaMalloc(&probe_, sizeof(Probe) * 1024));
    CK(cudaMalloc(&sink_, 64));
  }
  ~Runner() {
    cudaFree(probe_);
    cudaFree(sink_);
  }

  std::vector<Probe> probes(int n) {
    std::vector<Probe> p(n);
    CK(cudaMemcpy(p.data(), probe_, sizeof(Probe) * n, cudaMemcpyDeviceToHost));
    return p;
  }
  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
  // Clock of a probe (cycles over ns), or NVML when the span is too short to tell.
  double mhz(const Probe& p) {
    const double ns = double(p.g1 - p.g0);
    if (ns > 2e5) return double(p.c1 - p.c0) / ns * 1e3;
    return mon_->sm_clock_mhz();
  }
  void add(std::string n, double v, std::string u, double mhz, std::string m) {
    std::printf("%-40s %12.2f %-10s @%4.0f MHz  %s\n", n.c_str(), v, u.c_str(), mhz, m.c_str());
    rows_.push_back({std::move(n), v, std::move(u), mhz, std::move(m)});
  }

  void mbarrier() {
    const int it = 1 << 16;
    mbar_pingpong_kernel<<<1, 64>>>(it, probe_);
    CK(cudaDeviceSynchronize());
    auto p = probes(1)[0];
    add("mbarrier_arrive_wake_latency", double(p.c1 - p.c0) / it / 2, "cycles", mhz(p),
        "2 warps ping-pong a token through two count-1 mbarriers (arrive / try_wait.parity "
        "spin); round trip / 2");
    mbar_self_kernel<<<1, 32>>>(it, probe_);
    CK(cudaDeviceSynchronize());
    p = probes(1)[0];
    add("mbarrier_arrive_wait_self", double(p.c1 - p.c0) / it, "cycles", mhz(p),
        "1 thread: arrive completing the phase, then try_wait.parity on it, back to back");
  }

  void tma() {
    char* src = nullptr;
    const long long big = 2ll << 30;  // 2 GiB: DRAM streaming
    CK(cudaMalloc(&src, big));
    CK(cudaMemset(src, 1, big));
    for (int bytes : {128, 1024, 4096, 16384}) {
      CK(cudaFuncSetAttribute(bulk_latency_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              65536));
      const int it = 4096;
      bulk_latency_kernel<<<1, 32, bytes>>>(src, bytes, it, probe_);
      CK(cudaDeviceSynchronize());
      const auto p = probes(1)[0];
      add("tma_bulk_l2_latency_" + std::to_string(bytes) + "B", double(p.c1 - p.c0) / it,
          "cycles", mhz(p),
          "1 thread: mbarrier.arrive.expect_tx + cp.async.bulk of this size from an L2-resident "
          "source + try_wait.parity, back to back");
    }
    // Per-SM stream from L2: 64 KiB per block (8.6 MB in all), 64 passes.
    const int chunk = 16384;
    CK(cudaFuncSetAttribute(bulk_stream_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            kStages * chunk));
    {
      bulk_stream_kernel<<<sms_, 32, kStages * chunk>>>(src, 65536, 65536, false, chunk, 2, probe_);
      CK(cudaDeviceSynchronize());
      bulk_stream_kernel<<<sms_, 32, kStages * chunk>>>(src, 65536, 65536, false, chunk, 64,
                                                        probe_);
      CK(cudaDeviceSynchronize());
      auto p = probes(sms_);
      std::vector<double> bpc, f;
      for (auto& q : p) {
        bpc.push_back(65536.0 * 64 / double(q.c1 - q.c0));
        f.push_back(mhz(q));
      }
      add("tma_bulk_l2_bandwidth_per_sm", median(bpc), "B/clk", median(f),
          "every SM: 1 thread keeps 4 x 16 KiB cp.async.bulk in flight over its own 64 KiB "
          "(L2-resident) 64 times; bytes / the block's clock64 span, median over SMs");
      // One SM alone: its own TMA limit without L2 contention.
      bulk_stream_kernel<<<1, 32, kStages * chunk>>>(src, 65536, 65536, false, chunk, 256, probe_);
      CK(cudaDeviceSynchronize());
      const auto q = probes(1)[0];
      add("tma_bulk_l2_bandwidth_one_sm", 65536.0 * 256 / double(q.c1 - q.c0), "B/clk", mhz(q),
          "one block alone: 1 thread keeps 4 x 16 KiB cp.async.bulk in flight over 64 KiB "
          "(L2-resident) 256 times");
    }
    {
      const long long per_block = (big / sms_) / chunk * chunk;
      cudaEvent_t e0, e1;
      CK(cudaEventCreate(&e0));
      CK(cudaEventCreate(&e1));
      std::vector<double> t;
      for (int r = 0; r < 5; ++r) {
        CK(cudaEventRecord(e0));
        bulk_stream_kernel<<<sms_, 32, kStages * chunk>>>(src, per_block, per_block, false, chunk,
                                                          1, probe_);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms);
      }
      const auto p = probes(sms_);
      add("tma_bulk_dram_bandwidth", double(per_block) * sms_ / (median(t) * 1e-3) / 1e9, "GB/s",
          mhz(p[0]),
          "every SM: 1 thread streams its 1/132 of 2 GiB by 4 x 16 KiB cp.async.bulk in flight; "
          "bytes / CUDA-event time, median of 5");
    }
    CK(cudaFree(src));
  }

  template <int N>
  void wgmma_one() {
    CK(cudaFuncSetAttribute(wgmma_kernel<N>, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
    const int it = 4096;
    // Throughput: two warpgroups per SM, every SM.
    wgmma_kernel<N><<<sms_, 256, 65536>>>(it, false, sink_, probe_);
    CK(cudaDeviceSynchronize());
    wgmma_kernel<N><<<sms_, 256, 65536>>>(it, false, sink_, probe_);
    CK(cudaDeviceSynchronize());
    auto p = probes(sms_);
    std::vector<double> r, f;
    for (auto& q : p) {
      r.push_back(2.0 * it * 4 * 64.0 * N * 16 / double(q.c1 - q.c0));
      f.push_back(mhz(q));
    }
    const std::string n = std::to_string(N);
    add("wgmma_bf16_m64n" + n + "k16_throughput", median(r), "FMA/clk/SM", median(f),
        "every SM: 2 warpgroups, groups of 4 wgmma (A and B from smem) into one accumulator, "
        "commit + wait_group 1; FMA / the block's clock64 span, median over SMs");
    // One warpgroup alone: does one warpgroup reach the SM's rate?
    wgmma_kernel<N><<<1, 128, 65536>>>(it, false, sink_, probe_);
    CK(cudaDeviceSynchronize());
    auto q = probes(1)[0];
    add("wgmma_bf16_m64n" + n + "k16_throughput_1wg", double(it) * 4 * 64.0 * N * 16 / double(q.c1 - q.c0),
        "FMA/clk/SM", mhz(q), "one warpgroup alone on an SM, as above");
    wgmma_kernel<N><<<1, 128, 65536>>>(it, true, sink_, probe_);
    CK(cudaDeviceSynchronize());
    q = probes(1)[0];
    add("wgmma_bf16_m64n" + n + "k16_latency", double(q.c1 - q.c0) / it, "cycles", mhz(q),
        "one warpgroup: wgmma, commit_group, wait_group 0, back to back (issue to completion)");
  }
  void wgmma() {
    wgmma_one<64>();
    wgmma_one<128>();
    wgmma_one<256>();
  }

  // Per-SM rates when every SM runs the same work at once, by SM id (%smid), three repeats
  // each: which SMs are fast or slow for the TMA and the tensor cores (the smspread test of
  // gemmsim-microbench does the same for cp.async). Rows of `path`: test,rep,block,smid,
  // cycles,ns,value,unit.
  void spread(const std::string& path) {
    std::ofstream out(path);
    out << "test,rep,block,smid,cycles,ns,value,unit\n";
    auto record = [&](const std::string& test, int rep, double work, const char* unit) {
      const auto p = probes(sms_);
      for (int b = 0; b < sms_; ++b) {
        const long long c = p[b].c1 - p[b].c0;
        out << test << "," << rep << "," << b << "," << p[b].smid << "," << c << ","
            << (p[b].g1 - p[b].g0) << "," << work / double(c) << "," << unit << "\n";
      }
    };
    const int chunk = 16384;
    char* src = nullptr;
    const long long shared_bytes = 8ll << 20;
    CK(cudaMalloc(&src, size_t(sms_) * 65536 + shared_bytes));
    CK(cudaMemset(src, 1, size_t(sms_) * 65536 + shared_bytes));
    CK(cudaFuncSetAttribute(bulk_stream_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            kStages * chunk));
    for (int rep = 0; rep < 3; ++rep) {
      bulk_stream_kernel<<<sms_, 32, kStages * chunk>>>(src, 65536, 65536, false, chunk, 2, probe_);
      bulk_stream_kernel<<<sms_, 32, kStages * chunk>>>(src, 65536, 65536, false, chunk, 64,
                                                        probe_);
      CK(cudaDeviceSynchronize());
      record("tma_own64KB", rep, 65536.0 * 64, "B/clk");
    }
    const char* shared = src + size_t(sms_) * 65536;
    for (int rep = 0; rep < 3; ++rep) {
      bulk_stream_kernel<<<sms_, 32, kStages * chunk>>>(shared, 0, shared_bytes, true, chunk, 1,
                                                        probe_);
      bulk_stream_kernel<<<sms_, 32, kStages * chunk>>>(shared, 0, shared_bytes, true, chunk, 4,
                                                        probe_);
      CK(cudaDeviceSynchronize());
      record("tma_shared8MB", rep, double(shared_bytes) * 4, "B/clk");
    }
    CK(cudaFree(src));
    CK(cudaFuncSetAttribute(wgmma_kernel<256>, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
    const int it = 4096;
    for (int rep = 0; rep < 3; ++rep) {
      wgmma_kernel<256><<<sms_, 256, 65536>>>(it, false, sink_, probe_);
      CK(cudaDeviceSynchronize());
      record("wgmma_m64n256k16", rep, 2.0 * it * 4 * 64.0 * 256 * 16, "FMA/clk");
    }
    std::printf("wrote %s\n", path.c_str());
  }

  void cp_async_warps() {
    char* src = nullptr;
    CK(cudaMalloc(&src, size_t(sms_) * 32 * 65536));
    CK(cudaMemset(src, 1, size_t(sms_) * 32 * 65536));
    CK(cudaFuncSetAttribute(cp_async_warps_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            8 * 16384));
    const int it = 2048;
    for (int warps : {1, 2, 4, 8}) {
      for (int grid : {1, sms_}) {
        cp_async_warps_kernel<<<grid, 32 * warps, warps * 16384>>>(src, 64, probe_);
        cp_async_warps_kernel<<<grid, 32 * warps, warps * 16384>>>(src, it, probe_);
        CK(cudaDeviceSynchronize());
        auto p = probes(grid);
        std::vector<double> r, f;
        for (auto& q : p) {
          r.push_back(double(warps) * it * 4096 / double(q.c1 - q.c0));
          f.push_back(mhz(q));
        }
        add("cp_async_" + std::to_string(warps) + "warp_bandwidth_" +
                (grid == 1 ? std::string("one_sm") : std::string("per_sm")),
            median(r), "B/clk", median(f),
            std::to_string(warps) + " warp(s) per block, " +
                (grid == 1 ? std::string("one block alone") : std::string("one block per SM")) +
                ": each warp streams its own L2-resident 64 KiB with cp.async.cg 16 B, 8 "
                "instructions (4 KiB) per commit group, wait_group 3; bytes / the block's clock64 "
                "span (median over blocks)");
      }
    }
    CK(cudaFree(src));
  }

  void write(const std::string& path) {
    std::ofstream f(path);
    f << "name,value,unit,sm_clock_mhz,method\n";
    for (const auto& r : rows_) {
      char v[64], m[32];
      std::snprintf(v, sizeof v, "%.6g", r.value);
      std::snprintf(m, sizeof m, "%.0f", r.mhz);
      f << r.name << "," << v << "," << r.unit << "," << m << ",\"" << r.method << "\"\n";
    }
  }

 private:
  cudaDeviceProp prop_{};
  std::unique_ptr<gemmsim::bench::GpuMonitor> mon_;
  int sms_ = 0;
  Probe* probe_ = nullptr;
  float* sink_ = nullptr;
  std::vector<Row> rows_;
};

}  // namespace wsmb

int main(int argc, char** argv) {
  std::string out = "ws_microbench.csv";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else if (a == "--cp-async-only") {
    } else if (a == "--spread" && i + 1 < argc) {
      ++i;
    } else {
      std::fprintf(stderr,
                   "usage: gemmsim-ws-microbench [--out FILE] [--cp-async-only] [--spread FILE]\n");
      return 2;
    }
  }
  try {
    wsmb::Runner r;
    bool only_cp = false;
    std::string spread;
    for (int i = 1; i < argc; ++i) {
      only_cp |= std::string(argv[i]) == "--cp-async-only";
      if (std::string(argv[i]) == "--spread" && i + 1 < argc) spread = argv[i + 1];
    }
    if (!spread.empty()) {  // only the per-SM rates
      r.spread(spread);
      return 0;
    }
    if (!only_cp) {
      r.mbarrier();
      r.wgmma();
      r.tma();
    }
    r.cp_async_warps();
    r.write(out);
    std::printf("wrote %s\n", out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemmsim-ws-microbench: %s\n", e.what());
    return 1;
  }
  return 0;
}
