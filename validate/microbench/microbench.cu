// gemmsim-microbench: calibration numbers for a GPU description (YAML) of gemmsim.
//
//   gemmsim-microbench [--out microbench.csv] [--quick] [--only GROUP]
//
// Writes `name,value,unit,sm_clock_mhz,method`. Cycle counts come from clock64() inside the
// kernels (SM clock cycles); rates per SM divide a block's work by its own clock64 span (one
// block per SM); GB/s divide bytes by CUDA-event time. sm_clock_mhz is the clock measured
// inside the same kernel (clock64 cycles over %globaltimer ns) when it ran long enough, else
// the NVML reading right after the test. Nothing here changes clocks or GPU settings.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/gemm_args.cuh"
#include "validate/compare/stats.hpp"
#include "validate/harness/gpu_info.hpp"
#include "validate/harness/l2_clean.cuh"

namespace mb {

using gemmsim::bench::l2_clean_kernel;

void check(cudaError_t e, const char* expr, int line) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("line ") + std::to_string(line) + ": " + expr + ": " +
                             cudaGetErrorString(e));
}
#define CK(x) check((x), #x, __LINE__)
#define CKL() CK(cudaGetLastError())

// Per-block timing record: clock64 span and %globaltimer span of thread 0, and its SM.
struct Probe {
  long long c0, c1, g0, g1;
  int smid;
};
__device__ __forceinline__ long long gtimer() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void probe_start(Probe* p) {
  __syncthreads();
  if (threadIdx.x == 0) {
    int sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    p[blockIdx.x].smid = sm;
    p[blockIdx.x].g0 = gtimer();
    p[blockIdx.x].c0 = clock64();
  }
  __syncthreads();
}
__device__ __forceinline__ void probe_end(Probe* p) {
  __syncthreads();
  if (threadIdx.x == 0) {
    p[blockIdx.x].c1 = clock64();
    p[blockIdx.x].g1 = gtimer();
  }
}

// ---- shared memory ---------------------------------------------------------------------------
constexpr int kSmemWords = 8192;  // 32 KB

// Single-thread pointer chase: each word holds the shared address of the next one.
__global__ void smem_chase_kernel(int iters, int stride_words, uint32_t* sink, Probe* pr) {
  __shared__ uint32_t s[kSmemWords];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(s));
  for (int i = threadIdx.x; i < kSmemWords; i += blockDim.x)
    s[i] = base + 4u * ((i + stride_words) % kSmemWords);
  __syncthreads();
  if (threadIdx.x != 0) return;
  uint32_t a = base;
  for (int i = 0; i < 64; ++i) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a));
  const long long c0 = clock64();
  for (int i = 0; i < iters; i += 8) {
#pragma unroll
    for (int u = 0; u < 8; ++u) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a));
  }
  const long long c1 = clock64();
  sink[0] = a;
  pr[0].c0 = c0;
  pr[0].c1 = c1;
}

// n-way bank conflict, lane l reads word (l / n) + (l % n) * 32: 32/n banks, n distinct rows
// each. Latency: one warp, every load depends on the previous (words hold their own address).
// Throughput: 32 warps, 8 independent loads per iteration.
__global__ void smem_conflict_kernel(int ways, int iters, bool chase, uint32_t* sink, Probe* pr) {
  __shared__ uint32_t s[kSmemWords];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(s));
  for (int i = threadIdx.x; i < kSmemWords; i += blockDim.x) s[i] = base + 4u * i;
  const int lane = threadIdx.x & 31;
  const uint32_t word = static_cast<uint32_t>(lane / ways + (lane % ways) * 32);
  uint32_t a = base + 4u * word;
  probe_start(pr);
  uint32_t acc = 0;
  if (chase) {
    for (int i = 0; i < iters; i += 8) {
#pragma unroll
      for (int u = 0; u < 8; ++u) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a));
    }
    acc = a;
  } else {
    for (int i = 0; i < iters; i += 8) {
      uint32_t v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u)
        asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v[u]) : "r"(a));
#pragma unroll
      for (int u = 0; u < 8; ++u) acc ^= v[u];
    }
  }
  probe_end(pr);
  if (acc == 0x12345678u) sink[0] = acc;
}

// `iters` ld.shared.v4, kN independent ones per iteration at addr(u), u = 0..kN-1; returns
// the XOR of everything read (so that the loads are kept).
template <int kN, class Addr>
__device__ __forceinline__ uint32_t lds128_loop(int iters, Addr addr) {
  uint32_t acc = 0;
  for (int i = 0; i < iters; i += kN) {
    uint4 v[kN];
#pragma unroll
    for (int u = 0; u < kN; ++u)
      asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                   : "r"(addr(u)));
#pragma unroll
    for (int u = 0; u < kN; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  return acc;
}

// Bandwidth: conflict-free 128-bit loads, 1024 threads, one block per SM.
__global__ void smem_bw_kernel(int iters, uint32_t* sink, Probe* pr) {
  __shared__ uint4 s[kSmemWords / 4];
  for (int i = threadIdx.x; i < kSmemWords / 4; i += blockDim.x)
    s[i] = make_uint4(i, i + 1, i + 2, i + 3);
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(s));
  const uint32_t off = 16u * (threadIdx.x % (kSmemWords / 4));
  probe_start(pr);
  const uint32_t acc = lds128_loop<4>(iters, [&](int u) { return base + (off ^ (u * 4096u)); });
  probe_end(pr);
  if (acc == 0x12345678u) sink[0] = acc;
}

// ldmatrix.x4: latency via a chain (matrix 0 holds each lane's next row address), throughput
// with 32 warps issuing independent ldmatrix.x4 (512 bytes each).
// `iters` ldmatrix.x4 in 4 independent chains of one warp: each ldmatrix's address comes from
// the previous result of its chain, so nothing can be hoisted. The words at `base` must hold
// base + 16 * (word % 32): then r[0] = base + 16 * lane, and chain u reads at that plus
// off ^ (u * chain_stride). Returns the results folded into one word.
__device__ uint32_t ldmatrix_chains(uint32_t base, uint32_t lane, uint32_t off,
                                    uint32_t chain_stride, int iters) {
  uint32_t ca[4], acc = 0;
#pragma unroll
  for (int u = 0; u < 4; ++u) ca[u] = base + 16u * lane + (off ^ (u * chain_stride));
  for (int i = 0; i < iters; i += 4) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      uint32_t r0, r1, r2, r3;
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                   : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                   : "r"(ca[u]));
      ca[u] = r0 + (off ^ (u * chain_stride));
      acc ^= r1 ^ r2 ^ r3;
    }
  }
#pragma unroll
  for (int u = 0; u < 4; ++u) acc ^= ca[u];
  return acc;
}

__global__ void ldmatrix_kernel(int iters, bool chase, uint32_t* sink, Probe* pr) {
  __shared__ __align__(128) uint32_t s[kSmemWords];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(s));
  for (int i = threadIdx.x; i < kSmemWords; i += blockDim.x) s[i] = base + 16u * (i % 32);
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const uint32_t off = 16u * lane + 512u * (warp % 16);
  uint32_t a = base + off;
  probe_start(pr);
  uint32_t acc = 0;
  if (chase) {
    for (int i = 0; i < iters; ++i) {
      uint32_t r1, r2, r3;
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%0];"
                   : "+r"(a), "=r"(r1), "=r"(r2), "=r"(r3));
      acc ^= r1 ^ r2 ^ r3;
    }
    acc ^= a;
  } else {
    acc = ldmatrix_chains(base, uint32_t(lane), off & ~511u, 2048u, iters);
  }
  probe_end(pr);
  if (acc == 0x12345678u) sink[0] = acc;
}

// ---- global memory -----------------------------------------------------------------------------
// Single-thread chase over 64-bit pointers (ld.global.cg: L1 bypassed).
__global__ void global_chase_kernel(const unsigned long long* start, int warm, int iters,
                                    unsigned long long* sink, Probe* pr) {
  unsigned long long p = reinterpret_cast<unsigned long long>(start);
  for (int i = 0; i < warm; ++i) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
  const long long g0 = gtimer();
  const long long c0 = clock64();
  for (int i = 0; i < iters; i += 4) {
#pragma unroll
    for (int u = 0; u < 4; ++u) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
  }
  const long long c1 = clock64();
  const long long g1 = gtimer();
  sink[0] = p;
  pr[0] = Probe{c0, c1, g0, g1};
}

// Streaming read: 16-byte ld.global.cg, grid-stride, 8 loads in flight per thread, `passes`
// passes over the buffer (n4 < 2^32 16-byte words).
// One 16-byte load that caches in L2 only (ld.global.cg), as cp.async.cg and TMA fetch.
__device__ __forceinline__ uint4 ld_cg(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

__global__ void read_kernel(const uint4* p, long long n4, int passes, uint32_t* sink, Probe* pr) {
  probe_start(pr);
  uint32_t acc = 0;
  const unsigned stride = gridDim.x * blockDim.x;
  const unsigned n = static_cast<unsigned>(n4);
  for (int r = 0; r < passes; ++r) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 8u * stride) {
      uint4 v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) {  // predicated, independent: all 8 in flight
        const unsigned j = i + u * stride;
        v[u] = j < n ? ld_cg(p + j) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < 8; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
  }
  probe_end(pr);
  if (acc == 0x12345678u) sink[0] = acc;
}

__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, long long n4) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
       i += stride)
    dst[i] = src[i];
}

// cp.async 16 B: latency (one thread: issue, commit, wait_group 0, per iteration; lines L2-hot)
__global__ void cp_async_latency_kernel(const uint4* src, int lines, int iters, uint32_t* sink,
                                        Probe* pr) {
  __shared__ uint4 s[64];
  if (threadIdx.x != 0) return;
  const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(s));
  for (int i = 0; i < lines; ++i) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src + i * 8));
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
  }
  const long long c0 = clock64();
  for (int i = 0; i < iters; ++i) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst + 16u * (i & 63)),
                 "l"(src + static_cast<long long>(i % lines) * 8));
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
  }
  const long long c1 = clock64();
  sink[0] = s[iters & 63].x;
  pr[0].c0 = c0;
  pr[0].c1 = c1;
}

// One thread's part of a cp.async stream (threads 0-255 of the block): `chunks_per_thread`
// 16-byte chunks from the `slice` chunks at `first`, 12-16 in flight, into shared memory at
// `sb` in rows of `row_bytes` (a power of two, 16 or more) stored `row_pitch` apart: chunk
// (stage, u, thread) of 4 stages x 4 x 256 is the block's chunk idx = (stage * 4 + u) * 256 +
// thread, row idx / (row_bytes / 16). Rows of 16 bytes at pitch 16: the chunks packed.
__device__ void copy_rows(const uint4* first, unsigned slice, int chunks_per_thread, int row_bytes,
                          int row_pitch, uint32_t sb) {
  const unsigned row_shift = unsigned(__ffs(row_bytes / 16) - 1);  // rows of 2^k chunks
  unsigned pos = threadIdx.x;
  for (int c = 0; c < chunks_per_thread; c += 4) {
    const int st = (c / 4) & 3;
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const uint4* j = first + (pos & (slice - 1));
      pos += 256;
      const unsigned idx = (st * 4 + u) * 256 + threadIdx.x;
      const uint32_t d =
          sb + (idx >> row_shift) * unsigned(row_pitch) + (idx & ((1u << row_shift) - 1u)) * 16u;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(j));
    }
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 3;" ::: "memory");
  }
  asm volatile("cp.async.wait_group 0;" ::: "memory");
}

// cp.async 16 B throughput: each thread keeps 4 stages x 4 chunks in flight, streaming
// `bytes_per_block` from its block's slice of the source (wrapping inside `footprint`).
constexpr int kCpAsyncBwSmem = 4 * 4 * 256 * 16;  // 4 stages x 4 chunks x 256 threads
// `slice_of_sm` (optional, indexed by %smid) names the slice a block reads instead of its own:
// blocks given one slice read the same lines in the same order at about the same time.
__global__ void cp_async_bw_kernel(const uint4* src, long long footprint16, int chunks_per_thread,
                                   uint32_t* sink, Probe* pr, const int* slice_of_sm = nullptr) {
  extern __shared__ uint4 s[];  // [4 stages][4 chunks][256 threads]
  const uint32_t sb = static_cast<uint32_t>(__cvta_generic_to_shared(s));
  unsigned slice = 1;  // largest power of two <= footprint16 / gridDim.x (16-byte chunks)
  while (2ull * slice * gridDim.x <= static_cast<unsigned long long>(footprint16)) slice *= 2;
  unsigned which = blockIdx.x;
  if (slice_of_sm) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    which = static_cast<unsigned>(slice_of_sm[sm]);
  }
  const uint4* first = src + static_cast<unsigned long long>(slice) * which;
  probe_start(pr);
  copy_rows(first, slice, chunks_per_thread, 16, 16, sb);
  probe_end(pr);
  __syncthreads();
  if (s[threadIdx.x].x == 0x12345678u) sink[0] = 1;
}

// cp_async_bw_kernel's stream written into shared-memory rows the way a GEMM tile is: each
// `row_bytes` of consecutive lanes' chunks (a tile row: 64 B is a bf16 A row of K tile 32) start
// `row_pitch` bytes after the previous row's. A pitch of 16 mod 32 (the padded layout: 80 for
// 64-byte rows) starts every odd row in the middle of a 32-byte shared sector, so each global
// sector of it lands in two.
constexpr int kCpAsyncChunks = 4 * 4 * 256;  // 16-byte chunks in flight per block

__global__ void cp_async_rows_kernel(const uint4* src, long long footprint16, int chunks_per_thread,
                                     int row_bytes, int row_pitch, uint32_t* sink, Probe* pr) {
  extern __shared__ uint4 s[];
  const uint32_t sb = static_cast<uint32_t>(__cvta_generic_to_shared(s));
  unsigned slice = 1;
  while (2ull * slice * gridDim.x <= static_cast<unsigned long long>(footprint16)) slice *= 2;
  const uint4* first = src + static_cast<unsigned long long>(slice) * blockIdx.x;
  probe_start(pr);
  copy_rows(first, slice, chunks_per_thread, row_bytes, row_pitch, sb);
  probe_end(pr);
  __syncthreads();
  if (s[threadIdx.x].x == 0x12345678u) sink[0] = 1;
}

// The same stream beside ldmatrix traffic in one block: warps 0-7 copy as cp_async_rows_kernel
// does (`chunks_per_thread`, 0: none), warps 8-15 issue `ld_iters` independent ldmatrix.x4
// each (0: none) from their own 16 KiB. Each warp writes its clock64 span to spans[warp]:
// whether the copies' shared-memory writes and the ldmatrix reads take turns on one port.
constexpr int kMixLdBytes = 16 * 1024;
__global__ void cp_async_ldsm_mix_kernel(const uint4* src, long long footprint16,
                                         int chunks_per_thread, int row_bytes, int row_pitch,
                                         int ld_iters, long long* spans) {
  extern __shared__ uint4 s[];
  const uint32_t sb = static_cast<uint32_t>(__cvta_generic_to_shared(s));
  const uint32_t ld_base = sb + uint32_t(kCpAsyncChunks * 16 / row_bytes * row_pitch);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  // As ldmatrix_kernel: every word of the ldmatrix region holds an address in it, so each
  // ldmatrix's address comes from the previous result of its chain and none can be elided.
  uint32_t* ld_words = reinterpret_cast<uint32_t*>(reinterpret_cast<char*>(s) + (ld_base - sb));
  for (int i = threadIdx.x; i < kMixLdBytes / 4; i += blockDim.x)
    ld_words[i] = ld_base + 16u * (i % 32);
  __syncthreads();
  const long long t0 = clock64();
  uint32_t acc = 0;
  if (warp < 8) {
    unsigned slice = 1;
    while (2ull * slice <= static_cast<unsigned long long>(footprint16)) slice *= 2;
    copy_rows(src, slice, chunks_per_thread, row_bytes, row_pitch, sb);
  } else {
    // Four independent chains of ldmatrix.x4 per warp, 512 conflict-free bytes each.
    acc = ldmatrix_chains(ld_base, uint32_t(lane), 512u * uint32_t(warp - 8), 4096u, ld_iters);
  }
  const long long t1 = clock64();
  if (lane == 0) spans[warp] = t1 - t0 + (acc == 0x12345678u ? 1 : 0);
}

// Which SMs share a GPC: every block of a thread-block cluster runs in one GPC, so SMs that
// ever hold blocks of one cluster are in the same GPC. Each block writes its SM id.
__global__ void cluster_smid_kernel(int* smids) {
  extern __shared__ unsigned char big[];  // sized so that one block fills an SM
  int sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  if (threadIdx.x == 0) smids[blockIdx.x] = sm;
  if (sm < 0) big[threadIdx.x] = 1;
}

// Element-wise copy chunks, as the tensor-core kernels copy operands whose rows are not 16-byte
// aligned (tensorop_gemm.cuh and ws_ampere.cuh, copy_chunk): lane l of warp w copies, per K tile of
// 32 16-bit elements, the chunks (row 8 i + l / 4, elements 8 (l % 4) ..) of a block_m-row tile:
// `n` predicated element loads (plain ld.global, as compiled: L1-allocating), packed, one
// st.shared.v4. The store consumes the loads, so a lane's chunks go one after another. VEC:
// one 16-byte ld.global.v4 per chunk instead (pitch a multiple of 8). T: uint16_t, or uint32_t
// (tf32, K tiles of 16 elements, 4 per chunk). Block 0's clock64 span over its chunks.
template <class T, int kN, bool kVec>
__global__ void element_chunk_kernel(const T* a, int pitch, int rows, int ktiles, int valid,
                                     uint32_t* sink, Probe* pr) {
  constexpr int kPerChunk = 16 / sizeof(T);  // elements of one 16-byte chunk
  constexpr int kCols = 4;                   // chunks per tile row (64-byte rows)
  __shared__ uint4 s[128 * kCols];
  const uint32_t sb = static_cast<uint32_t>(__cvta_generic_to_shared(s));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const T* base = a + static_cast<long long>(blockIdx.x % 16) * rows * pitch;  // 16 tiles
  probe_start(pr);
  for (int kt = 0; kt < ktiles; ++kt) {
    for (int i = warp; i < rows / 8; i += warps) {
      const int r = i * 8 + lane / kCols, c = lane % kCols;
      const T* src = base + static_cast<long long>(r) * pitch + kt * kCols * kPerChunk +
                     c * kPerChunk;
      uint4 v;
      if constexpr (kVec) {
        v = *reinterpret_cast<const uint4*>(src);
      } else {
        uint32_t e[kPerChunk];
#pragma unroll
        for (int q = 0; q < kPerChunk; ++q) e[q] = q < kN && q < valid ? src[q] : 0u;
        if constexpr (sizeof(T) == 2)
          v = make_uint4(e[0] | (e[1] << 16), e[2] | (e[3] << 16), e[4] | (e[5] << 16),
                         e[6] | (e[7] << 16));
        else
          v = make_uint4(e[0], e[1], e[2], e[3]);
      }
      gemmsim::dev::sts128(sb + 16u * ((r % 128) * kCols + c), v);
    }
  }
  probe_end(pr);
  __syncthreads();
  if (s[threadIdx.x % (128 * kCols)].x == 0x12345678u) sink[0] = 1;
}

// ---- arithmetic ----------------------------------------------------------------------------
// The SIMT kernels' inner loop without its global loads and barriers: per k step a thread
// reads an 8-float A and an 8-float B fragment from shared memory (two ld.shared.v4 each; A's
// words shared by the 8 lanes of a row, B's by 4 lanes, as in the 64x64x8 8x8 kernel) and
// issues the 8x8 outer product's 64 FFMAs, loading step k + 1's fragments before step k's
// FFMAs (double-buffered, as the kernel does). kLds = false: the fragments stay in registers
// and only the 64 FFMAs per step remain.
template <bool kLds>
__global__ void __launch_bounds__(512, 1) outer_product_kernel(int iters, float* sink, Probe* pr) {
  __shared__ float4 s[1024];  // 16 KiB: A fragments in words 0-511, B in 512-1023
  for (int i = threadIdx.x; i < 1024; i += blockDim.x)
    s[i] = make_float4(1e-3f * i, 1e-3f, -1e-3f * i, 0.5f);
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(s));
  // Word of fragment half h at step k: A at k * 8 + (lane / 8) * 2 + h, B after 512 words at
  // k * 16 + (lane % 8) * 2 + h (k taken modulo 32 so that the addresses stay in the array).
  auto lds = [&](uint32_t word) {
    float4 v;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(base + 16u * word));
    return v;
  };
  auto load = [&](float4 (&a)[2], float4 (&b)[2], int k) {
    const uint32_t kk = static_cast<uint32_t>(k & 31);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      a[h] = lds(kk * 8 + (lane / 8) * 2 + h);
      b[h] = lds(512 + kk * 16 + (lane % 8) * 2 + h);
    }
  };
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;
  float4 fa[2][2], fb[2][2];
  load(fa[0], fb[0], 0);
  load(fa[1], fb[1], 1);
  probe_start(pr);
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int f = k & 1;
      if (kLds) load(fa[f ^ 1], fb[f ^ 1], it * 8 + k + 1);
      const float a[8] = {fa[f][0].x, fa[f][0].y, fa[f][0].z, fa[f][0].w,
                          fa[f][1].x, fa[f][1].y, fa[f][1].z, fa[f][1].w};
      const float b[8] = {fb[f][0].x, fb[f][0].y, fb[f][0].z, fb[f][0].w,
                          fb[f][1].x, fb[f][1].y, fb[f][1].z, fb[f][1].w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  }
  probe_end(pr);
  float t = 0.f;
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) t += acc[i][j];
  if (t == 1234.5f) sink[0] = t;
}

__global__ void ffma_kernel(int iters, float a, float b, bool chase, float* sink, Probe* pr) {
  probe_start(pr);
  float x[8];
#pragma unroll
  for (int u = 0; u < 8; ++u) x[u] = threadIdx.x * 0.001f + u;
  if (chase) {
    for (int i = 0; i < iters; i += 8) {
#pragma unroll
      for (int u = 0; u < 8; ++u) x[0] = fmaf(x[0], a, b);
    }
  } else {
    for (int i = 0; i < iters; ++i) {
#pragma unroll
      for (int u = 0; u < 8; ++u) x[u] = fmaf(x[u], a, b);
    }
  }
  probe_end(pr);
  float s = 0;
#pragma unroll
  for (int u = 0; u < 8; ++u) s += x[u];
  if (s == 1234.5f) sink[0] = s;
}

// mma.sync throughput / latency. kind 0: f16 m16n8k16, 1: bf16 m16n8k16, 2: tf32 m16n8k8.
template <int KIND>
__device__ __forceinline__ void mma_op(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  if constexpr (KIND == 0)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else if constexpr (KIND == 1)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <int KIND>
__global__ void mma_kernel(int iters, uint32_t seed, bool chase, float* sink, Probe* pr) {
  uint32_t a[4], b[2];
#pragma unroll
  // non-zero operands with random mantissas (zeros can run faster than real data)
  for (int q = 0; q < 4; ++q) a[q] = 0x3c003c00u ^ ((seed * (threadIdx.x + q + 1)) & 0x03ff03ffu);
  b[0] = 0x3c003c00u ^ (seed & 0x03ff03ffu);
  b[1] = 0x3c003c00u ^ ((seed >> 3) & 0x03ff03ffu);
  float d[8][4];
#pragma unroll
  for (int u = 0; u < 8; ++u)
#pragma unroll
    for (int q = 0; q < 4; ++q) d[u][q] = 0.f;
  probe_start(pr);
  if (chase) {
    for (int i = 0; i < iters; ++i) mma_op<KIND>(d[0], a, b);
  } else {
    for (int i = 0; i < iters; ++i) {
#pragma unroll
      for (int u = 0; u < 8; ++u) mma_op<KIND>(d[u], a, b);
    }
  }
  probe_end(pr);
  float s = 0;
#pragma unroll
  for (int u = 0; u < 8; ++u) s += d[u][0] + d[u][1] + d[u][2] + d[u][3];
  if (s == 1234.5f) sink[0] = s;
}

// ---- issue: what few warps per scheduler can sustain ------------------------------------------
// mma.sync with ACC independent accumulators per warp, W warps per block (one block per SM):
// with one warp per sub-partition and many accumulators, the rate says how often one warp can
// issue mma.sync back to back (its issue interval); with ACC = 1 it is the dependent latency.
template <int KIND, int ACC>
__global__ void mma_occupancy_kernel(int iters, uint32_t seed, float* sink, Probe* pr) {
  uint32_t a[4], b[2];
#pragma unroll
  for (int q = 0; q < 4; ++q) a[q] = 0x3c003c00u ^ ((seed * (threadIdx.x + q + 1)) & 0x03ff03ffu);
  b[0] = 0x3c003c00u ^ (seed & 0x03ff03ffu);
  b[1] = 0x3c003c00u ^ ((seed >> 3) & 0x03ff03ffu);
  float d[ACC][4];
#pragma unroll
  for (int u = 0; u < ACC; ++u)
#pragma unroll
    for (int q = 0; q < 4; ++q) d[u][q] = 0.f;
  probe_start(pr);
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < ACC; ++u) mma_op<KIND>(d[u], a, b);
  }
  probe_end(pr);
  float s = 0;
#pragma unroll
  for (int u = 0; u < ACC; ++u) s += d[u][0] + d[u][1] + d[u][2] + d[u][3];
  if (s == 1234.5f) sink[0] = s;
}

// The inner loop of the tensor-core kernels without global memory: a warp tile of MT x NT mma
// tiles (m16 x n8), per mma-k step MT ldmatrix.x4 (A) and the step's B fragments into the other
// fragment buffer, then MT x NT mma.sync from the current one. bf16 (k16 steps): NT/2
// ldmatrix.x4.trans for B. tf32 (k8 steps, the consumer loop of ws_ampere.cuh and the
// pipelined kernel): 2 x NT lds.32 for B, and every A and B register rounded with
// cvt.rna.tf32. Conflict-free shared addresses (each 8-lane group of an ldmatrix reads 8
// consecutive 16-byte rows, an lds.32 32 consecutive words).
template <gemmsim::DType D, int MT, int NT>
__global__ void mma_mix_kernel(int iters, float* sink, Probe* pr) {
  constexpr bool kTf32 = D == gemmsim::DType::TF32;
  extern __shared__ __align__(128) unsigned char smem_mix[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int i = threadIdx.x; i < 16384 / 4; i += blockDim.x) {
    if constexpr (kTf32)
      reinterpret_cast<float*>(smem_mix)[i] = 1.0f + float(i & 255) / 256.0f;
    else
      reinterpret_cast<uint32_t*>(smem_mix)[i] = 0x3c003c00u ^ (i * 0x9e3779b9u & 0x03ff03ffu);
  }
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem_mix));
  // 16 KB: each warp reads its own 2 KB window, lane l at row l (16 B per row); lds.32 lane l
  // at word l of its window.
  const uint32_t addr = base + ((warp * 512 + lane * 16) & (16384 - 1));
  const uint32_t word_addr = base + ((warp * 512 + lane * 4) & (16384 - 1));
  uint32_t af[2][MT][4], bf[2][NT][2];
  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;
  // The kernels' own fragment loads and mma (kernels/common/gemm_args.cuh).
  auto load = [&](int buf, int step) {
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      gemmsim::dev::ldmatrix_x4(af[buf][i], addr + ((i * 512 + step * 64) & 1023));
      if constexpr (kTf32) {
#pragma unroll
        for (int q = 0; q < 4; ++q) af[buf][i][q] = gemmsim::dev::to_tf32(af[buf][i][q]);
      }
    }
    if constexpr (kTf32) {
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          bf[buf][j][h] = gemmsim::dev::to_tf32(
              gemmsim::dev::lds32(word_addr + ((j * 256 + h * 128 + step * 64) & 2047)));
    } else {
#pragma unroll
      for (int j = 0; j < NT / 2; ++j) {
        uint32_t r[4];
        gemmsim::dev::ldmatrix_x4_trans(r, addr + 1024 + ((j * 512 + step * 64) & 1023));
        bf[buf][2 * j][0] = r[0], bf[buf][2 * j][1] = r[1];
        bf[buf][2 * j + 1][0] = r[2], bf[buf][2 * j + 1][1] = r[3];
      }
    }
  };
  __syncthreads();
  load(0, 0);
  probe_start(pr);
  for (int it = 0; it < iters; it += 2) {
#pragma unroll
    for (int cur = 0; cur < 2; ++cur) {
      load(cur ^ 1, it + cur + 1);
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          const int jj = (i & 1) ? NT - 1 - j : j;
          gemmsim::dev::mma<D>(acc[i][jj], af[cur][i], bf[cur][jj]);
        }
    }
  }
  probe_end(pr);
  float s = 0;
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j) s += acc[i][j][0] + acc[i][j][3];
  if (s == 1234.5f) sink[0] = s;
}

__global__ void syncthreads_kernel(int iters, Probe* pr) {
  probe_start(pr);
  for (int i = 0; i < iters; ++i) __syncthreads();
  probe_end(pr);
}

// ---- DRAM latency under load ---------------------------------------------------------------
// Block 0 (one thread) chases pointers over random DRAM lines while blocks 1.. (one per SM,
// forced by their shared-memory request) stream ld.global.cg.v4 over another buffer with
// `inflight` independent loads per thread in flight, until block 0 raises `stop`. n4: a power
// of two.
__global__ void loaded_chase_kernel(const unsigned long long* start, int warm, int iters,
                                    const uint4* stream, long long n4, int inflight, int* stop,
                                    unsigned long long* bytes, unsigned long long* sink,
                                    Probe* pr) {
  extern __shared__ uint4 pad_smem[];
  if (blockIdx.x == 0) {
    if (threadIdx.x != 0) return;
    unsigned long long p = reinterpret_cast<unsigned long long>(start);
    for (int i = 0; i < warm; ++i) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
    const long long g0 = gtimer();
    const long long c0 = clock64();
    for (int i = 0; i < iters; ++i) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
    const long long c1 = clock64();
    const long long g1 = gtimer();
    sink[0] = p;
    pr[0] = Probe{c0, c1, g0, g1};
    atomicExch(stop, 1);
    return;
  }
  const long long g0 = gtimer();
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x - 1) * blockDim.x;
  unsigned long long i = static_cast<unsigned long long>(blockIdx.x - 1) * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  unsigned long long loads = 0;
  while (*reinterpret_cast<volatile int*>(stop) == 0) {
#pragma unroll 1
    for (int round = 0; round < 4; ++round) {
      uint4 v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        if (u < inflight) {
          const unsigned long long j = (i + u * stride) & static_cast<unsigned long long>(n4 - 1);
          asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
                       : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                       : "l"(stream + j));
        }
      }
#pragma unroll
      for (int u = 0; u < 8; ++u)
        if (u < inflight) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
      i += static_cast<unsigned long long>(inflight) * stride;
      loads += static_cast<unsigned long long>(inflight);
    }
  }
  const long long g1 = gtimer();
  if (acc == 0x12345678u) pad_smem[0].x = acc;
  atomicAdd(bytes, loads * 16ull);
  if (threadIdx.x == 0) pr[blockIdx.x] = Probe{0, 0, g0, g1};
}

// ---- instruction fetch -----------------------------------------------------------------------
// One warp runs kBlocks256 x 1024 straight-line FFMAs (4 independent chains, so that the warp
// issues about one per cycle when the code is cached); 16 B of code each. Timed with clock64 around it.
#define GEMMSIM_FFMA4                                                \
  asm volatile(                                                      \
      "fma.rn.f32 %0, %0, %4, %5;\n\tfma.rn.f32 %1, %1, %4, %5;\n\t" \
      "fma.rn.f32 %2, %2, %4, %5;\n\tfma.rn.f32 %3, %3, %4, %5;"     \
      : "+f"(x0), "+f"(x1), "+f"(x2), "+f"(x3)                       \
      : "f"(y), "f"(z));
#define GEMMSIM_X4(a) a a a a
#define GEMMSIM_X16(a) GEMMSIM_X4(GEMMSIM_X4(a))
#define GEMMSIM_X256(a) GEMMSIM_X16(GEMMSIM_X16(a))
template <int kBlocks256>  // kBlocks256 x 256 x 4 FFMAs
__global__ void straight_code_kernel(float y, float z, float* sink, Probe* pr) {
  float x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3;
  const long long c0 = clock64();
  // kBlocks256 blocks of 256 x 4 FFMAs in straight line: 1, 1 + 1, 2 + 2 or 4 + 4.
  // clang-format off
  if constexpr (kBlocks256 >= 1) { GEMMSIM_X256(GEMMSIM_FFMA4) }
  if constexpr (kBlocks256 >= 2) { GEMMSIM_X256(GEMMSIM_FFMA4) }
  if constexpr (kBlocks256 >= 4) { GEMMSIM_X256(GEMMSIM_FFMA4) GEMMSIM_X256(GEMMSIM_FFMA4) }
  if constexpr (kBlocks256 >= 8) {
    GEMMSIM_X256(GEMMSIM_FFMA4) GEMMSIM_X256(GEMMSIM_FFMA4)
    GEMMSIM_X256(GEMMSIM_FFMA4) GEMMSIM_X256(GEMMSIM_FFMA4)
  }
  // clang-format on
  const long long c1 = clock64();
  if (threadIdx.x == 0) pr[blockIdx.x] = Probe{c0, c1, 0, 0};
  if (x0 + x1 + x2 + x3 == 1234.5f) sink[0] = x0;
}
#undef GEMMSIM_FFMA4

// ---- dirty L2 lines --------------------------------------------------------------------------
// Streaming 16-byte stores, grid-stride (the write-heavy side of the dirty-line test).
__global__ void write_stream_kernel(uint4* p, long long n4, unsigned v) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
       i += stride)
    p[i] = make_uint4(v, v + 1, v + 2, v + 3);
}

// ---- L2 lines shared across SMs -------------------------------------------------------------
// `passes` passes over n4 16-byte words split into gridDim.x chunks; in pass r block b reads
// chunk (b + r * rot) mod gridDim.x with ld.global.cg (L2 only). rot = 0: every line is read by
// the same block, hence the same SM, in every pass; rot != 0: by blocks on many SMs, in both
// L2 partitions.
__global__ void rotate_read_kernel(const uint4* p, long long n4, int passes, int rot,
                                   uint32_t* sink) {
  uint32_t acc = 0;
  const long long chunk = n4 / gridDim.x;
  for (int r = 0; r < passes; ++r) {
    const long long c = (blockIdx.x + static_cast<long long>(r) * rot) % gridDim.x;
    const uint4* q = p + c * chunk;
    for (long long i = threadIdx.x; i < chunk; i += 4ll * blockDim.x) {
      uint4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const long long j = i + u * static_cast<long long>(blockDim.x);
        v[u] = j < chunk ? ld_cg(q + j) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
  }
  if (acc == 0x12345678u) sink[0] = acc;
}

// ---- L2 retention against the lag between readers ------------------------------------------
// One block per SM; the blocks form `groups` reader groups (block b in group b % groups). In
// step t the groups read, each with all its blocks, chunk t - g x lag of a stream of `chunks`
// chunks of chunk16 x 16 bytes (ld.global.cg), then every block waits at a grid barrier. So
// the leader (group 0) brings each chunk in from DRAM, and group g reads it g x lag steps
// later, lag chunks after group g - 1 did. Between two consecutive reads of a line every group
// has read `lag` chunks of its own, so an L2 that keeps a line by its last use (LRU) serves
// every follower while groups x lag chunks fit; one that keeps it by its arrival serves
// follower g while the g x lag chunks the leader brought in since do. `barrier` starts at 0.
__global__ void retain_kernel(const uint4* s, long long chunk16, int chunks, int lag, int groups,
                              unsigned* barrier, uint32_t* sink) {
  uint32_t acc = 0;
  const int g = blockIdx.x % groups;
  const int per_group = gridDim.x / groups;
  const int b = blockIdx.x / groups;
  const int steps = chunks + (groups - 1) * lag;
  for (int t = 0; t < steps; ++t) {
    const long long c = t - static_cast<long long>(g) * lag;
    if (b < per_group && c >= 0 && c < chunks) {
      const uint4* q = s + c * chunk16;
      const long long stride = static_cast<long long>(per_group) * blockDim.x;
      for (long long i = static_cast<long long>(b) * blockDim.x + threadIdx.x; i < chunk16;
           i += 4 * stride) {
        uint4 v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const long long j = i + u * stride;
          v[u] = j < chunk16 ? ld_cg(q + j) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
      }
    }
    // Grid barrier (every block is resident: one per SM).
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();
      atomicAdd(barrier, 1u);
      const unsigned target = static_cast<unsigned>(t + 1) * gridDim.x;
      while (atomicAdd(barrier, 0u) < target) {
      }
      __threadfence();
    }
    __syncthreads();
  }
  if (acc == 0x12345678u) sink[0] = acc;
}

// ---- DRAM access granularity -------------------------------------------------------------
// The GEMM tile pattern: a matrix of `rows` rows, `pitch` bytes apart, read `chunk` contiguous
// bytes per row at a time, every row's chunk k before any row's chunk k + 1 (as the CTAs of a
// skinny or K-heavy GEMM read their K-tiles). 16 B per thread per load, 4 loads in flight.
__global__ void chunk_read_kernel(const char* base, unsigned rows, unsigned chunk, unsigned pitch,
                                  unsigned long long total16, uint32_t* sink) {
  uint32_t acc = 0;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const unsigned per_chunk = chunk / 16;
  for (unsigned long long i =
           static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < total16; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const unsigned long long j = i + u * stride;
      const unsigned long long c = j / per_chunk;
      const unsigned off = static_cast<unsigned>(j % per_chunk) * 16;
      const unsigned long long row = c % rows, window = c / rows;
      const char* p = base + row * pitch + window * chunk + off;
      v[u] = make_uint4(0, 0, 0, 0);
      if (j < total16)
        asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                     : "l"(p));
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  if (acc == 0x12345678u) sink[0] = acc;
}

// ---- global reductions (the split-K atomic epilogue) ---------------------------------------
// Every thread adds 1.0f with red.global.add.f32 to `per_thread` floats of dst, 128 floats
// apart (one per warp-instruction row, like the epilogue's accumulator rows). Blocks b and
// b + groups hit the same addresses (`sharers` = gridDim.x / groups blocks per address, as the
// split-K slices of one C tile do).
__global__ void red_kernel(float* dst, int groups, int per_thread, Probe* pr) {
  probe_start(pr);
  const int g = blockIdx.x % groups;
  float* base = dst + static_cast<long long>(g) * blockDim.x * per_thread;
  for (int i = 0; i < per_thread; ++i)
    asm volatile("red.global.add.f32 [%0], %1;" ::"l"(base + i * blockDim.x + threadIdx.x),
                 "f"(1.0f)
                 : "memory");
  probe_end(pr);
}

// ---- access patterns of the epilogues and SIMT fragments (session 12) ------------------------
// red.global.add.f32 with the lanes of a warp spread as the kernels' epilogues spread them.
// Lane l of warp w, instruction i (the warp's own region of `region` floats, re-used every
// `rows_per_iter` instructions so the targets stay in L2):
//   kLine:   32 consecutive floats (one line, four full sectors): the microbenchmark above;
//   kMma:    row l / 4, column 2 (l % 4) + (i & 1) of a 64-float-wide tile (the mma.sync
//            fragment: eight 32-byte sectors, each half used, the second instruction of a pair
//            adding into the other half, as the tensor-core epilogue's v0 / v1 do);
//   kStride: float `stride` x l (32 / stride lanes per sector), the next stride - 1
//            instructions adding into the floats between.
// No target is added to twice by one warp (64 instructions over its 2048 floats). Warps w and
// w + groups share a region (sharers = warps / groups, on different SMs), as the split-K slices
// of one output tile do, all at once.
enum RedPattern { kRedLine = 0, kRedMma = 1, kRedStride = 2 };
__global__ void red_pattern_kernel(float* dst, int pattern, int stride, int per_thread, int region,
                                   int groups) {
  const int lane = threadIdx.x & 31;
  const long long warp = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / 32;
  float* base = dst + (warp % groups) * region;
  for (int i = 0; i < per_thread; ++i) {
    int off;
    if (pattern == kRedLine) {
      off = (i * 32) % region + lane;
    } else if (pattern == kRedMma) {
      const int pair = i >> 1, rows = (pair / 8) * 8 + (lane >> 2), cols = (pair % 8) * 8;
      off = (rows * 64) % region + cols + 2 * (lane & 3) + (i & 1);
    } else {
      off = ((i / stride) * 32 * stride) % region + lane * stride + i % stride;
    }
    asm volatile("red.global.add.f32 [%0], %1;" ::"l"(base + off), "f"(1.0f) : "memory");
  }
}

// ld.shared.v4 throughput with lane l reading 16-byte word (l / div) % mod of a 32-KiB array
// (`div` lanes share an address; mod distinct addresses): the SIMT fragments' broadcast.
// 32 warps, 8 independent loads per iteration, each 512 B further on.
__global__ void lds128_pattern_kernel(int div, int mod, int iters, uint32_t* sink, Probe* pr) {
  __shared__ uint4 s[kSmemWords / 4];
  for (int i = threadIdx.x; i < kSmemWords / 4; i += blockDim.x)
    s[i] = make_uint4(i, i + 1, i + 2, i + 3);
  __syncthreads();
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(s));
  const int lane = threadIdx.x & 31;
  const uint32_t off = 16u * static_cast<uint32_t>((lane / div) % mod);
  probe_start(pr);
  const uint32_t acc = lds128_loop<8>(iters, [&](int u) { return base + off + 512u * u; });
  probe_end(pr);
  if (acc == 0x12345678u) sink[0] = acc;
}

// ---- L2 request shapes (session 13) ----------------------------------------------------------
// One warp instruction: lane l handles `vec` bytes at column (l % lanes_per_row) x vec of row
// l / lanes_per_row; each row is the start of its own 128-byte line (rows of more than 128 B
// take whole lines), so an instruction sends 32 / lanes_per_row L2 requests of
// lanes_per_row x vec bytes. Instruction i of warp w is the (i x warps + w)-th of the grid;
// rows walk a footprint (a power of two: L2-resident below what the L2 keeps dirty, or larger
// than the L2). Thread 0 of each block writes its SM's id to `smids` when that is not null.
// kShapeLoad: ld.global.cg, 8 in flight per thread; kShapeStore: st.global.cg;
// kShapeCpAsync: cp.async.cg 16 B into shared memory, 8 per commit group, wait_group 0.
enum ShapeOp { kShapeLoad = 0, kShapeStore = 1, kShapeCpAsync = 2 };
template <int kOp, int kVec>
__global__ void l2_shape_kernel(float* p, unsigned footprint_mask, int lanes_per_row,
                                int per_thread, uint32_t* sink, int* smids) {
  extern __shared__ uint4 shape_smem[];  // cp.async targets: 8 x blockDim.x x 16 B
  if (smids != nullptr && threadIdx.x == 0) {
    int smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    smids[blockIdx.x] = smid;
  }
  const unsigned lane = threadIdx.x & 31;
  const unsigned warps = gridDim.x * blockDim.x / 32;
  const unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const unsigned rows = 32u / lanes_per_row;
  const unsigned row_bytes = static_cast<unsigned>(lanes_per_row) * kVec;
  const unsigned pitch = row_bytes <= 128 ? 128u : row_bytes;
  const unsigned in_row = (lane % lanes_per_row) * kVec, row = lane / lanes_per_row;
  auto* bytes = reinterpret_cast<char*>(p);
  uint32_t acc = 0;
  for (int i = 0; i < per_thread; i += 8) {
    uint4 v[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      const unsigned instr = static_cast<unsigned>(i + u) * warps + warp;
      char* a = bytes + (((instr * rows + row) * pitch + in_row) & footprint_mask);
      if constexpr (kOp == kShapeStore) {
        if constexpr (kVec == 4)
          asm volatile("st.global.cg.f32 [%0], %1;" ::"l"(a), "f"(1.0f) : "memory");
        else if constexpr (kVec == 8)
          asm volatile("st.global.cg.v2.f32 [%0], {%1, %1};" ::"l"(a), "f"(1.0f) : "memory");
        else
          asm volatile("st.global.cg.v4.f32 [%0], {%1, %1, %1, %1};" ::"l"(a), "f"(1.0f)
                       : "memory");
      } else if constexpr (kOp == kShapeCpAsync) {
        static_assert(kOp != kShapeCpAsync || kVec == 16, "cp.async.cg moves 16 bytes");
        const uint32_t d = static_cast<uint32_t>(
            __cvta_generic_to_shared(shape_smem + u * blockDim.x + threadIdx.x));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(a));
      } else if constexpr (kVec == 4) {
        asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v[u].x) : "l"(a));
      } else if constexpr (kVec == 8) {
        asm volatile("ld.global.cg.v2.u32 {%0, %1}, [%2];" : "=r"(v[u].x), "=r"(v[u].y) : "l"(a));
      } else {
        v[u] = ld_cg(reinterpret_cast<const uint4*>(a));
      }
    }
    if constexpr (kOp == kShapeCpAsync) {
      asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
    } else if constexpr (kOp == kShapeLoad) {
#pragma unroll
      for (int u = 0; u < 8; ++u) acc ^= v[u].x;
    }
  }
  if (acc == 0x12345678u) sink[0] = acc;
}

// ---- L2 request rate ---------------------------------------------------------------------
// Each warp instruction touches 32 lines, 4 bytes each (one sector, one L2 request per lane:
// `spread`), or one line's 128 bytes (one request of four sectors). `footprint4` floats, a
// power of two small enough to stay in L2. 8 independent loads in flight per thread; stores
// are st.global.cg. Counts one request per (instruction, line).
__global__ void l2_request_kernel(float* p, unsigned footprint4, int iters, bool spread, bool store,
                                  float* sink) {
  const unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  const unsigned warps = gridDim.x * blockDim.x / 32;
  float acc = 0;
  for (int it = 0; it < iters; ++it) {
    float v[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      const unsigned instr = (it * 8 + u) * warps + warp;
      const unsigned idx = spread ? (instr * 32 + lane) * 32 : instr * 32 + lane;
      float* a = p + (idx & (footprint4 - 1));
      if (store)
        asm volatile("st.global.cg.f32 [%0], %1;" ::"l"(a), "f"(1.0f) : "memory");
      else
        asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v[u]) : "l"(a));
    }
    if (!store) {
#pragma unroll
      for (int u = 0; u < 8; ++u) acc += v[u];
    }
  }
  if (acc == 1234.5f) sink[0] = acc;
}

// ---- L2 partitions ----------------------------------------------------------------------------
// Thread 0 of the first block that finds itself on SM `target` times `n` (<= 64) dependent
// ld.global.cg loads of the lines in `addrs`, one by one (cycles per load); the other blocks exit.
// The buffer holds zeros, so each address adds the value just loaded (a true dependency).
__global__ void sm_chase_kernel(const unsigned long long* addrs, int n, int target, int* claimed,
                                long long* cycles, unsigned long long* sink) {
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  if (smid != static_cast<unsigned>(target) || threadIdx.x != 0) return;
  if (atomicExch(claimed, 1) != 0) return;
  __shared__ unsigned long long a[64], seen[64];
  for (int i = 0; i < n; ++i) a[i] = addrs[i];
  unsigned long long v = 0;
  for (int h = 0; h < n; ++h) {
    const long long c0 = clock64();
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(a[h] + v));
    seen[h] = v;
    const long long c1 = clock64();
    cycles[h] = c1 - c0;
  }
  sink[0] = v + seen[0];
}

// ---- tile latency ----------------------------------------------------------------------------
// GEMM K tiles as the cp.async kernels fetch them: each of the block's 128 threads issues
// cp.async.cg 16 B for its chunks of `rows` rows x `row_bytes` (row r of block b at
// base + (b * rows + r) * row_stride, tile t `tile_step` bytes on) and commits one group per
// tile, keeping `inflight` tiles requested; per tile it waits until at most inflight - 1 groups
// are pending and meets the others at a barrier, as the pipelined kernels do. Thread 0 notes in
// shared memory the clock64 at which each tile's requests began and at which it was complete
// (after the barrier); they go to global memory at the end (a global store before
// cp.async.wait_group makes the wait include the store's round trip). With inflight = 1,
// done - issued is the latency of one tile alone.
constexpr int kTileLatThreads = 128;
constexpr int kTileLatMaxBytes = 4 * 128 * 128;  // 4 tiles of at most 16 KiB
constexpr int kTileLatMaxTiles = 64;
constexpr int kTileLatMaxChunks = kTileLatMaxBytes / 4 / 16 / kTileLatThreads;  // per thread
__global__ void __launch_bounds__(kTileLatThreads)
    tile_latency_kernel(const char* base, int rows, int row_bytes, long long row_stride,
                        long long tile_step, int tiles, int inflight, long long* issued,
                        long long* done) {
  extern __shared__ __align__(128) char tiles_smem[];
  __shared__ long long s_issued[kTileLatMaxTiles], s_done[kTileLatMaxTiles];
  const uint32_t sb = static_cast<uint32_t>(__cvta_generic_to_shared(tiles_smem));
  const int per_row = row_bytes / 16, chunks = rows * per_row;
  const char* first = base + static_cast<long long>(blockIdx.x) * rows * row_stride;
  // The thread's chunks: their source offsets, computed once as a kernel does.
  long long off[kTileLatMaxChunks];
  const int tid = static_cast<int>(threadIdx.x);
  const int mine = chunks > tid ? (chunks - 1 - tid) / kTileLatThreads + 1 : 0;
#pragma unroll
  for (int j = 0; j < kTileLatMaxChunks; ++j) {
    const int c = tid + j * kTileLatThreads;
    off[j] = static_cast<long long>(c / per_row) * row_stride + (c % per_row) * 16;
  }
  __syncthreads();
  for (int t = -(inflight - 1); t < tiles; ++t) {
    const int r = t + inflight - 1;  // the tile requested now
    if (r < tiles) {
      if (tid == 0) s_issued[r] = clock64();
      const uint32_t slot =
          sb + static_cast<uint32_t>((r % inflight) * rows * row_bytes) + 16u * tid;
      const char* col = first + static_cast<long long>(r) * tile_step;
#pragma unroll
      for (int j = 0; j < kTileLatMaxChunks; ++j)
        if (j < mine)
          asm volatile(
              "cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(slot + 16u * kTileLatThreads * j),
              "l"(col + off[j]));
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
    if (t < 0) continue;
    if (inflight == 1)
      asm volatile("cp.async.wait_group 0;" ::: "memory");
    else if (inflight == 2)
      asm volatile("cp.async.wait_group 1;" ::: "memory");
    else
      asm volatile("cp.async.wait_group 3;" ::: "memory");
    __syncthreads();
    if (tid == 0) s_done[t] = clock64();
  }
  __syncthreads();
  const long long out = static_cast<long long>(blockIdx.x) * tiles;
  for (int t = tid; t < tiles; t += kTileLatThreads) {
    issued[out + t] = s_issued[t];
    done[out + t] = s_done[t];
  }
}

// ---- fixed costs of a launch ----------------------------------------------------------------
// Each thread loads `loads` and then stores `stores` 16-byte words of its block's own chunk
// (ld.global.cg, coalesced), with `smem_bytes` of dynamic shared memory allocated (untouched);
// thread 0 stamps %globaltimer when its block starts and, after a barrier, when it ends.
__global__ void fixed_cost_kernel(const uint4* src, uint4* dst, int loads, int stores,
                                  long long* stamps) {
  if (threadIdx.x == 0) stamps[2 * blockIdx.x] = gtimer();
  const long long base =
      static_cast<long long>(blockIdx.x) * blockDim.x * (loads > stores ? loads : stores);
  uint32_t acc = threadIdx.x;
  for (int j = 0; j < loads; ++j) {
    const uint4 v = ld_cg(src + base + static_cast<long long>(j) * blockDim.x + threadIdx.x);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  for (int j = 0; j < stores; ++j)
    dst[base + static_cast<long long>(j) * blockDim.x + threadIdx.x] = make_uint4(acc, j, 0, 1);
  __syncthreads();
  if (threadIdx.x == 0) stamps[2 * blockIdx.x + 1] = gtimer();
}

// One thread: `hops` dependent ld.global.cg loads `stride` bytes apart, each timed (cycles).
__global__ void first_loads_kernel(const char* p, long long stride, int hops, long long* cycles,
                                   unsigned long long* sink) {
  // The shared store consumes the loaded value, so the clock read after it (in-order issue)
  // waits for the data.
  __shared__ unsigned long long seen[8];
  unsigned long long off = 0;
  for (int h = 0; h < hops && h < 8; ++h) {
    const long long c0 = clock64();
    unsigned long long v;
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(p + off + h * stride));
    seen[h] = v;
    const long long c1 = clock64();
    off = v;  // the buffer holds zeros: the address of the next load waits for this one
    cycles[h] = c1 - c0;
  }
  sink[0] = off + seen[0];
}

__global__ void empty_kernel() {}

// Launch-to-start: the kernel records %globaltimer when it begins.
__global__ void stamp_kernel(long long* t) {
  if (threadIdx.x == 0) t[0] = gtimer();
}

__global__ void spin_kernel(long long ns, Probe* pr) {
  const long long g0 = gtimer();
  const long long c0 = clock64();
  long long g = g0;
  while (g - g0 < ns) g = gtimer();
  pr[0] = Probe{c0, clock64(), g0, gtimer()};
}

// ---- host ----------------------------------------------------------------------------------
struct Row {
  std::string name;
  double value;
  std::string unit;
  double mhz;
  std::string method;
};

// A device buffer of `bytes`, filled with `fill`, freed when it goes out of scope.
struct DevBuffer {
  uint4* p = nullptr;
  DevBuffer(size_t bytes, int fill) {
    CK(cudaMalloc(&p, bytes));
    CK(cudaMemset(p, fill, bytes));
  }
  ~DevBuffer() { cudaFree(p); }
  DevBuffer(const DevBuffer&) = delete;
  DevBuffer& operator=(const DevBuffer&) = delete;
};

// The median of repeated timings (the upper one of an even count).
float median_of(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

class Runner {
 public:
  explicit Runner(bool quick) : quick_(quick) {
    CK(cudaSetDevice(0));
    CK(cudaGetDeviceProperties(&prop_, 0));
    char bus[32] = {};
    CK(cudaDeviceGetPCIBusId(bus, sizeof bus, 0));
    mon_ = std::make_unique<gemmsim::bench::GpuMonitor>(bus);
    sms_ = prop_.multiProcessorCount;
    CK(cudaMalloc(&probe_, sizeof(Probe) * 4096));
    CK(cudaMalloc(&sink_, 1024));
    CK(cudaEventCreate(&e0_));
    CK(cudaEventCreate(&e1_));
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
  // MHz of block 0's span if it lasted >= 200 us, else the NVML reading now.
  double mhz(const Probe& p) {
    const long long ns = p.g1 - p.g0;
    if (ns >= 200000) return static_cast<double>(p.c1 - p.c0) * 1e3 / static_cast<double>(ns);
    return mon_->sm_clock_mhz();
  }
  double nvml_mhz() { return mon_->sm_clock_mhz(); }
  // Mean over blocks of work/cycles (per-SM rate with one block per SM).
  static double per_block_rate(const std::vector<Probe>& p, double work_per_block) {
    double s = 0;
    for (const auto& q : p) s += work_per_block / static_cast<double>(q.c1 - q.c0);
    return s / static_cast<double>(p.size());
  }
  template <class F>
  float time_ms(F&& launch) {
    CK(cudaEventRecord(e0_));
    launch();
    CKL();
    CK(cudaEventRecord(e1_));
    CK(cudaEventSynchronize(e1_));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0_, e1_));
    return ms;
  }
  // One untimed launch (warm-up: caches, code), then the median of 5 timed ones.
  template <class F>
  float warm_median_ms(F&& launch) {
    launch();
    CKL();
    std::vector<float> t;
    for (int r = 0; r < 5; ++r) t.push_back(time_ms(launch));
    return median_of(t);
  }
  void add(const std::string& name, double v, const std::string& unit, double mhz,
           const std::string& method) {
    rows_.push_back(Row{name, v, unit, mhz, method});
    std::printf("%-34s %14.3f %-10s %7.0f MHz  %s\n", name.c_str(), v, unit.c_str(), mhz,
                method.c_str());
    std::fflush(stdout);
  }

  void clock_and_device(bool at_end) {
    spin_kernel<<<1, 1>>>(50'000'000, probe_);
    CKL();
    CK(cudaDeviceSynchronize());
    const Probe p = probes(1)[0];
    const double f = static_cast<double>(p.c1 - p.c0) * 1e3 / static_cast<double>(p.g1 - p.g0);
    const std::string when = at_end ? "_end" : "_start";
    add("sm_clock_measured" + when, f, "MHz", f,
        "clock64 cycles / %globaltimer ns over a 50 ms single-thread spin (SM near idle)");
    add("sm_clock_nvml" + when, nvml_mhz(), "MHz", nvml_mhz(), "nvmlDeviceGetClockInfo(SM) now");
    if (at_end) return;
    add("sm_clock_max_nvml", mon_->max_sm_clock_mhz(), "MHz", nvml_mhz(),
        "nvmlDeviceGetMaxClockInfo(SM)");
    add("num_sms", sms_, "count", nvml_mhz(), "cudaDeviceProp.multiProcessorCount");
    add("l2_bytes", prop_.l2CacheSize, "B", nvml_mhz(), "cudaDeviceProp.l2CacheSize");
    add("smem_per_sm_bytes", static_cast<double>(prop_.sharedMemPerMultiprocessor), "B",
        nvml_mhz(), "cudaDeviceProp.sharedMemPerMultiprocessor");
  }

  void smem() {
    const int it = 1 << 16;
    smem_chase_kernel<<<1, 256>>>(it, 33, reinterpret_cast<uint32_t*>(sink_), probe_);
    CKL();
    CK(cudaDeviceSynchronize());
    Probe p = probes(1)[0];
    add("smem_load_latency", static_cast<double>(p.c1 - p.c0) / it, "cycles", nvml_mhz(),
        "1 thread, dependent ld.shared.u32 chase (word holds next address), 65536 loads");

    const int bw_it = quick_ ? 1 << 12 : 1 << 14;
    smem_bw_kernel<<<sms_, 1024>>>(bw_it, reinterpret_cast<uint32_t*>(sink_), probe_);
    CKL();
    CK(cudaDeviceSynchronize());
    auto ps = probes(sms_);
    add("smem_bandwidth", per_block_rate(ps, 1024.0 * bw_it * 16), "B/clk/SM", mhz(ps[0]),
        "1024 threads x 1 block/SM, conflict-free ld.shared.v4, bytes / block clock64 span");

    for (int ways : {1, 2, 4, 8, 16, 32}) {
      const int iters = 4096;
      smem_conflict_kernel<<<1, 1024>>>(ways, iters, false, reinterpret_cast<uint32_t*>(sink_),
                                        probe_);
      CKL();
      CK(cudaDeviceSynchronize());
      p = probes(1)[0];
      add("smem_conflict_" + std::to_string(ways) + "way_issue", static_cast<double>(p.c1 - p.c0) / (32.0 * iters),
          "cycles/instr", nvml_mhz(),
          "32 warps on one SM, independent ld.shared.u32, n lanes per bank on distinct rows; "
          "SM cycles per warp-instruction");
      smem_conflict_kernel<<<1, 32>>>(ways, iters, true, reinterpret_cast<uint32_t*>(sink_),
                                      probe_);
      CKL();
      CK(cudaDeviceSynchronize());
      p = probes(1)[0];
      add("smem_conflict_" + std::to_string(ways) + "way_latency", static_cast<double>(p.c1 - p.c0) / iters,
          "cycles", nvml_mhz(), "1 warp, dependent ld.shared.u32 chain with the same n-way pattern");
    }

    const int lit = 4096;
    ldmatrix_kernel<<<1, 32>>>(lit, true, reinterpret_cast<uint32_t*>(sink_), probe_);
    CKL();
    CK(cudaDeviceSynchronize());
    p = probes(1)[0];
    add("ldmatrix_x4_latency", static_cast<double>(p.c1 - p.c0) / lit, "cycles", nvml_mhz(),
        "1 warp, ldmatrix.x4 whose result is the next address (dependent chain)");
    const int lbw = quick_ ? 1 << 11 : 1 << 13;
    ldmatrix_kernel<<<sms_, 1024>>>(lbw, false, reinterpret_cast<uint32_t*>(sink_), probe_);
    CKL();
    CK(cudaDeviceSynchronize());
    ps = probes(sms_);
    const double bpc = per_block_rate(ps, 32.0 * lbw * 512);
    add("ldmatrix_x4_throughput", bpc / 512.0, "instr/clk/SM", mhz(ps[0]),
        "32 warps x 1 block/SM, independent ldmatrix.x4 (512 B each)");
    add("ldmatrix_x4_bandwidth", bpc, "B/clk/SM", mhz(ps[0]), "same run, bytes per SM cycle");

    const int sit = 4096;
    for (int threads : {256, 1024}) {
      syncthreads_kernel<<<1, threads>>>(sit, probe_);
      CKL();
      CK(cudaDeviceSynchronize());
      p = probes(1)[0];
      add("syncthreads_" + std::to_string(threads) + "thr", static_cast<double>(p.c1 - p.c0) / sit,
          "cycles", nvml_mhz(), "one block alone on an SM, back-to-back __syncthreads");
    }
  }

  // Builds a random cycle of 64-bit pointers over `lines` 128-byte lines spread over `span`
  // bytes of `buf`, returns the first pointer.
  unsigned long long* build_chase(char* buf, size_t span, size_t lines, uint64_t seed) {
    const size_t slots = span / 128;
    const size_t step = slots / lines;
    std::mt19937_64 rng(seed);
    std::vector<size_t> order(lines);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<unsigned long long> addr(lines);
    for (size_t i = 0; i < lines; ++i) {
      const size_t slot = order[i] * step + (step > 1 ? rng() % step : 0);
      addr[i] = reinterpret_cast<unsigned long long>(buf + slot * 128);
    }
    // Write each pointer into its line: a small host image per line is too big for 1 GB spans,
    // so scatter with cudaMemcpy of 8 bytes in batches through a staging kernel-free path.
    std::vector<unsigned long long> next(lines);
    for (size_t i = 0; i < lines; ++i) next[i] = addr[(i + 1) % lines];
    scatter(addr, next);
    return reinterpret_cast<unsigned long long*>(addr[0]);
  }
  void scatter(const std::vector<unsigned long long>& where,
               const std::vector<unsigned long long>& what);

  void global_latency() {
    char* buf = nullptr;
    const size_t dram_span = quick_ ? (256ull << 20) : (2048ull << 20);
    CK(cudaMalloc(&buf, dram_span));
    CK(cudaMemset(buf, 0, dram_span));
    // L2: 4 MB footprint, every line used, random order.
    {
      const size_t span = 4ull << 20;
      unsigned long long* start = build_chase(buf, span, span / 128, 1);
      const int it = 1 << 15;
      global_chase_kernel<<<1, 1>>>(start, static_cast<int>(span / 128) * 2, it,
                                    reinterpret_cast<unsigned long long*>(sink_), probe_);
      CKL();
      CK(cudaDeviceSynchronize());
      const Probe p = probes(1)[0];
      add("l2_hit_latency", static_cast<double>(p.c1 - p.c0) / it, "cycles", mhz(p),
          "1 thread, ld.global.cg pointer chase, random order over all lines of a 4 MB "
          "footprint (L2-resident, both L2 partitions), after one warm pass");
    }
    // DRAM: 32768 random lines spread over a span >> L2 (256 MB, and the whole buffer).
    std::vector<size_t> spans{size_t{256} << 20};
    if (dram_span > spans[0]) spans.push_back(dram_span);
    for (const size_t span : spans) {
      const size_t lines = 1 << 15;
      unsigned long long* start = build_chase(buf, span, lines, 2 + span);
      const int it = quick_ ? 4096 : 16384;
      global_chase_kernel<<<1, 1>>>(start, 0, it, reinterpret_cast<unsigned long long*>(sink_),
                                    probe_);
      CKL();
      CK(cudaDeviceSynchronize());
      const Probe p = probes(1)[0];
      const double cyc = static_cast<double>(p.c1 - p.c0) / it;
      const std::string sfx = span == spans[0] ? "" : "_" + std::to_string(span >> 20) + "MB";
      add("dram_latency" + sfx, cyc, "cycles", mhz(p),
          "1 thread, ld.global.cg pointer chase over 32768 random lines spread over " +
              std::to_string(span >> 20) + " MB (cold lines; TLB misses included)");
      add("dram_latency_ns" + sfx, static_cast<double>(p.g1 - p.g0) / it, "ns", mhz(p),
          "same chase, %globaltimer ns per load");
    }
    CK(cudaFree(buf));
  }

  // Load-to-use latency seen by one thread while the other SMs stream at a range of rates
  // (streaming SMs x loads in flight per thread): the latency-vs-bandwidth curve. From DRAM
  // (`l2` false: the chase over 1 GB of random lines, the streams over 2 GB) or from L2 (the
  // chase over 4096 lines of 4 MiB and the streams over 16 MiB, both resident after a warm-up
  // pass of the chase and the streams' first rounds).
  void loaded_latency(bool l2 = false) {
    const size_t chase_span = l2 ? (4ull << 20) : (1024ull << 20);
    const size_t stream_bytes = l2 ? (16ull << 20) : (2048ull << 20);
    char* buf = nullptr;
    uint4* st = nullptr;
    CK(cudaMalloc(&buf, chase_span));
    CK(cudaMalloc(&st, stream_bytes));
    CK(cudaMemset(buf, 0, chase_span));
    CK(cudaMemset(st, 3, stream_bytes));
    int* stop = nullptr;
    unsigned long long* bytes = nullptr;
    CK(cudaMalloc(&stop, sizeof(int)));
    CK(cudaMalloc(&bytes, sizeof(unsigned long long)));
    const size_t lines = l2 ? (1 << 12) : (1 << 16);
    unsigned long long* start = build_chase(buf, chase_span, lines, 77);
    const int smem = static_cast<int>(prop_.sharedMemPerMultiprocessor / 2 + 1024);
    CK(cudaFuncSetAttribute(loaded_chase_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            smem));
    const int iters = quick_ ? 2000 : 8000;
    struct Point {
      int sms, inflight;
    };
    std::vector<Point> pts{{0, 1}};
    for (int sms : {16, 33, 66, 131})
      for (int f : {1, 2, 4, 8}) pts.push_back({sms, f});
    for (const Point& q : pts) {
      CK(cudaMemset(stop, 0, sizeof(int)));
      CK(cudaMemset(bytes, 0, sizeof(unsigned long long)));
      loaded_chase_kernel<<<1 + q.sms, 512, smem>>>(
          start, l2 ? 2 * int(lines) : 256, iters, st, static_cast<long long>(stream_bytes / 16),
          q.inflight, stop, bytes,
          reinterpret_cast<unsigned long long*>(sink_), probe_);
      CKL();
      CK(cudaDeviceSynchronize());
      const auto ps = probes(1 + q.sms);
      unsigned long long b = 0;
      CK(cudaMemcpy(&b, bytes, sizeof b, cudaMemcpyDeviceToHost));
      const double cyc = static_cast<double>(ps[0].c1 - ps[0].c0) / iters;
      long long g0 = ps[0].g0, g1 = ps[0].g1;
      for (int i = 1; i <= q.sms; ++i) {
        g0 = std::min(g0, ps[i].g0);
        g1 = std::max(g1, ps[i].g1);
      }
      const double gbs = q.sms ? static_cast<double>(b) / static_cast<double>(g1 - g0) : 0.0;
      const std::string tag = "_s" + std::to_string(q.sms) + "_f" + std::to_string(q.inflight);
      const std::string how =
          "1 thread chasing " + std::to_string(lines) + " random lines over " +
          (l2 ? "4 MiB (L2-resident)" : "1 GB") + " while " + std::to_string(q.sms) +
          " other SMs (1 block x 512 thr each) stream ld.global.cg.v4 over " +
          (l2 ? "16 MiB (L2-resident)" : "2 GB") + " with " + std::to_string(q.inflight) +
          " loads in flight per thread";
      const std::string what = l2 ? "l2_loaded" : "dram_loaded";
      add(what + "_latency" + tag, cyc, "cycles", mhz(ps[0]), how);
      add(what + "_bandwidth" + tag, gbs, "GB/s", mhz(ps[0]),
          "same run: streamed bytes / span of the streaming blocks' %globaltimer");
    }
    CK(cudaFree(buf));
    CK(cudaFree(st));
    CK(cudaFree(stop));
    CK(cudaFree(bytes));
  }

  // Cycles for one warp to run straight-line code (16 B per instruction) right after an L2
  // flush (memset over 2x L2) and with the code already fetched (the same launch again):
  // what a kernel whose instructions are not cached pays to fetch them.
  template <int kBlocks256>
  void straight_code(void* flush, size_t flush_bytes) {
    const int instr = kBlocks256 * 1024;
    std::vector<double> cold, warm;
    for (int r = 0; r < 7; ++r) {
      CK(cudaMemset(flush, r & 0xff, flush_bytes));
      straight_code_kernel<kBlocks256>
          <<<1, 32>>>(1.0001f, 0.5f, reinterpret_cast<float*>(sink_), probe_);
      CKL();
      CK(cudaDeviceSynchronize());
      Probe p = probes(1)[0];
      cold.push_back(static_cast<double>(p.c1 - p.c0));
      straight_code_kernel<kBlocks256>
          <<<1, 32>>>(1.0001f, 0.5f, reinterpret_cast<float*>(sink_), probe_);
      CKL();
      CK(cudaDeviceSynchronize());
      p = probes(1)[0];
      warm.push_back(static_cast<double>(p.c1 - p.c0));
    }
    std::sort(cold.begin(), cold.end());
    std::sort(warm.begin(), warm.end());
    const std::string n = std::to_string(instr);
    add("straight_code_" + n + "_after_flush", cold[3], "cycles", nvml_mhz(),
        "1 warp, " + n +
            " straight-line FFMAs (4 chains), launched right after a memset over "
            "2x L2; clock64 span, median of 7");
    add("straight_code_" + n + "_again", warm[3], "cycles", nvml_mhz(),
        "same kernel launched again at once (code fetched by the launch before); median of 7");
  }
  void instruction_fetch() {
    void* flush = nullptr;
    const size_t fb = 2ull * static_cast<size_t>(prop_.l2CacheSize);
    CK(cudaMalloc(&flush, fb));
    straight_code<1>(flush, fb);
    straight_code<2>(flush, fb);
    straight_code<4>(flush, fb);
    straight_code<8>(flush, fb);
    CK(cudaFree(flush));
  }

  // What dirty lines left in L2 by a memset cost the next kernel: the L2 is cleaned (a 256 MB
  // read), X MB are memset (the harness's flush writes 2x L2), then a 256 MB streaming read or
  // a 256 MB streaming write is timed. Run under `ncu --cache-control none` to see the bytes
  // each timed kernel writes back (read_kernel, write_stream_kernel).
  void dirty_lines() {
    const size_t big = 256ull << 20;
    uint4 *clean = nullptr, *rd = nullptr, *wr = nullptr, *dirty = nullptr;
    CK(cudaMalloc(&clean, big));
    CK(cudaMalloc(&rd, big));
    CK(cudaMalloc(&wr, big));
    CK(cudaMalloc(&dirty, 100ull << 20));
    CK(cudaMemset(clean, 1, big));
    CK(cudaMemset(rd, 2, big));
    const long long n4 = static_cast<long long>(big / 16);
    auto median = [](std::vector<float> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    for (int mb : {0, 8, 16, 24, 32, 40, 50, 64, 100}) {
      std::vector<float> tr, tw;
      for (int r = 0; r < 5; ++r) {
        for (int w = 0; w < 2; ++w) {
          l2_clean_kernel<<<sms_ * 4, 512>>>(clean, n4, reinterpret_cast<uint32_t*>(sink_));
          CKL();
          if (mb > 0) CK(cudaMemsetAsync(dirty, r & 0xff, static_cast<size_t>(mb) << 20));
          if (w == 0)
            tr.push_back(time_ms([&] {
              read_kernel<<<sms_ * 4, 512>>>(rd, n4, 1, reinterpret_cast<uint32_t*>(sink_), probe_);
            }));
          else
            tw.push_back(time_ms([&] { write_stream_kernel<<<sms_ * 4, 512>>>(wr, n4, r); }));
        }
      }
      const std::string x = std::to_string(mb) + "MB";
      add("dirty_read_256MB_after_memset_" + x, median(tr) * 1e3, "us", nvml_mhz(),
          "256 MB ld.global.cg.v4 stream (4 x 512 thr/SM), after an L2-cleaning 256 MB read and a "
          "memset of " +
              x + "; CUDA events, median of 5");
      add("dirty_write_256MB_after_memset_" + x, median(tw) * 1e3, "us", nvml_mhz(),
          "256 MB 16-byte store stream (4 x 512 thr/SM), same preparation; median of 5");
    }
    // The latency of a miss whose victim is dirty: a one-thread chase over random lines of 1 GB
    // after the L2 was cleaned, then `mb` MB memset, then `pre` MB of other data read (which
    // pushes the older clean lines out first, if the L2 evicts in LRU order).
    {
      char* cbuf = nullptr;
      const size_t span = 1024ull << 20;
      CK(cudaMalloc(&cbuf, span));
      CK(cudaMemset(cbuf, 0, span));
      unsigned long long* start = build_chase(cbuf, span, 1 << 16, 99);
      struct Variant {
        const char* name;
        int mb, pre;
      };
      for (const Variant v : {Variant{"clean", 0, 0}, Variant{"memset100MB", 100, 0},
                              Variant{"memset24MB_read26MB", 24, 26},
                              Variant{"memset8MB_read42MB", 8, 42}, Variant{"read50MB", 0, 50}}) {
        std::vector<double> cyc;
        for (int r = 0; r < 5; ++r) {
          l2_clean_kernel<<<sms_ * 4, 512>>>(clean, n4, reinterpret_cast<uint32_t*>(sink_));
          CKL();
          if (v.mb > 0) CK(cudaMemsetAsync(dirty, r & 0xff, static_cast<size_t>(v.mb) << 20));
          if (v.pre > 0) {
            l2_clean_kernel<<<sms_ * 4, 512>>>(rd, static_cast<long long>(v.pre) << 16,
                                               reinterpret_cast<uint32_t*>(sink_));
            CKL();
          }
          const int it = 4096;
          global_chase_kernel<<<1, 1>>>(start + 0, 0, it,
                                        reinterpret_cast<unsigned long long*>(sink_), probe_);
          CKL();
          CK(cudaDeviceSynchronize());
          const Probe p = probes(1)[0];
          cyc.push_back(static_cast<double>(p.c1 - p.c0) / it);
        }
        std::sort(cyc.begin(), cyc.end());
        add(std::string("dirty_victim_chase_") + v.name, cyc[2], "cycles", nvml_mhz(),
            "1 thread, ld.global.cg chase over random lines of 1 GB (4096 loads) after an "
            "L2-cleaning 256 MB read, a memset of " +
                std::to_string(v.mb) + " MB and a read of " + std::to_string(v.pre) +
                " MB of other data; median of 5");
      }
      CK(cudaFree(cbuf));
    }
    CK(cudaFree(clean));
    CK(cudaFree(rd));
    CK(cudaFree(wr));
    CK(cudaFree(dirty));
  }

  // The L2 state the harness's flush leaves (a memset over 2x L2, then the timed kernel at
  // once), seen by the next kernel: (a) reads of S MB after a clean L2 and after the flush, (b)
  // a 256 MB read after the flush and an idle gap of T us (a one-thread spin), (c) a 256 MB read
  // by fewer SMs (below the DRAM's rate) after a clean L2 and after the flush.
  void flush_state() {
    const size_t big = 256ull << 20;
    const size_t flush_bytes = 2ull * static_cast<size_t>(prop_.l2CacheSize);
    const DevBuffer clean_buf(big, 1), rd_buf(big, 2), dirty_buf(flush_bytes, 0);
    uint4 *clean = clean_buf.p, *rd = rd_buf.p, *dirty = dirty_buf.p;
    const long long clean4 = static_cast<long long>(big / 16);
    auto* sink = reinterpret_cast<uint32_t*>(sink_);
    const int reps = quick_ ? 3 : 7;
    // Cleans the L2 (256 MB read), then the harness's flush if `flush`, then `gap_ns` idle.
    auto prepare = [&](bool flush, int r, long long gap_ns) {
      l2_clean_kernel<<<sms_ * 4, 512>>>(clean, clean4, sink);
      CKL();
      if (flush) CK(cudaMemsetAsync(dirty, (r + 1) & 0xff, flush_bytes));
      if (gap_ns > 0) {
        spin_kernel<<<1, 1>>>(gap_ns, probe_);
        CKL();
      }
    };
    const char* state[] = {"clean", "memset"};
    for (int mb : {8, 16, 24, 32, 48, 64, 128, 256}) {
      const long long n4 = (static_cast<long long>(mb) << 20) / 16;
      for (int f = 0; f < 2; ++f) {
        std::vector<float> t;
        for (int r = 0; r < reps; ++r) {
          prepare(f == 1, r, 0);
          t.push_back(time_ms([&] { read_kernel<<<sms_ * 4, 512>>>(rd, n4, 1, sink, probe_); }));
        }
        add("flush_read_" + std::to_string(mb) + "MB_after_" + state[f], median_of(t) * 1e3, "us",
            nvml_mhz(),
            std::to_string(mb) +
                " MB ld.global.cg.v4 stream (4 x 512 thr/SM) after a 256 MB "
                "L2-cleaning read" +
                (f ? std::string(" and a memset over 2x L2") : std::string()) +
                "; CUDA events, median of " + std::to_string(reps));
      }
    }
    for (int us : {5, 10, 20, 40, 80}) {
      std::vector<float> t;
      for (int r = 0; r < reps; ++r) {
        prepare(true, r, us * 1000ll);
        t.push_back(time_ms([&] { read_kernel<<<sms_ * 4, 512>>>(rd, clean4, 1, sink, probe_); }));
      }
      add("flush_gap_" + std::to_string(us) + "us_read_256MB", median_of(t) * 1e3, "us", nvml_mhz(),
          "256 MB stream after a memset over 2x L2 and an idle gap of " + std::to_string(us) +
              " us (one-thread spin kernel); median of " + std::to_string(reps));
    }
    for (int blocks : {16, 33, 66}) {
      for (int f = 0; f < 2; ++f) {
        std::vector<float> t;
        for (int r = 0; r < reps; ++r) {
          prepare(f == 1, r, 0);
          t.push_back(time_ms([&] { read_kernel<<<blocks, 512>>>(rd, clean4, 1, sink, probe_); }));
        }
        const float ms = median_of(t);
        add("flush_read_256MB_" + std::to_string(blocks) + "blocks_after_" + state[f], ms * 1e3,
            "us", nvml_mhz(),
            "256 MB stream by " + std::to_string(blocks) + " blocks of 512 threads (" +
                std::to_string(static_cast<int>(big / 1e6 / ms)) + " GB/s), after a clean L2" +
                (f ? std::string(" and a memset over 2x L2") : std::string()) + "; median of " +
                std::to_string(reps));
      }
    }
  }

  // Which lines a read stream evicts first after a memset: the L2 is cleaned, then prepared
  // as (a) memset 24 MB, (b) memset 24 MB then read 26 MB of other data (clean lines, more
  // recent), (c) read 26 MB then memset 24 MB, (d) memset 2x L2; then S MB are read, by all
  // SMs (4 x 512 threads each) or by 16 blocks. Under LRU, (b) evicts the dirty lines first and
  // (c) last; a replacement that prefers clean victims evicts them last in both.
  void flush_order() {
    const size_t big = 256ull << 20;
    const size_t flush_bytes = 2ull * static_cast<size_t>(prop_.l2CacheSize);
    const DevBuffer clean_buf(big, 1), rd_buf(big, 2), other_buf(32ull << 20, 4),
        dirty_buf(flush_bytes, 0);
    uint4 *clean = clean_buf.p, *rd = rd_buf.p, *other = other_buf.p, *dirty = dirty_buf.p;
    auto* sink = reinterpret_cast<uint32_t*>(sink_);
    const int reps = quick_ ? 3 : 7;
    auto read_other = [&](int mb) {
      l2_clean_kernel<<<sms_ * 4, 512>>>(other, (static_cast<long long>(mb) << 20) / 16, sink);
      CKL();
    };
    auto memset_mb = [&](size_t bytes, int r) {
      CK(cudaMemsetAsync(dirty, (r + 1) & 0xff, bytes));
    };
    struct Prep {
      const char* name;
      int order;  // 0: clean only, 1: memset 24, 2: memset 24 + read 26, 3: read 26 + memset 24,
                  // 4: memset 2x L2
    };
    for (const Prep prep : {Prep{"clean", 0}, Prep{"memset24", 1}, Prep{"memset24_read26", 2},
                            Prep{"read26_memset24", 3}, Prep{"memset2xL2", 4}}) {
      for (int blocks : {sms_ * 4, 16}) {
        for (int mb : {8, 16, 24, 32, 64, 256}) {
          if (blocks == 16 && mb != 64 && mb != 256) continue;
          const long long n4 = (static_cast<long long>(mb) << 20) / 16;
          std::vector<float> t;
          for (int r = 0; r < reps; ++r) {
            l2_clean_kernel<<<sms_ * 4, 512>>>(clean, static_cast<long long>(big / 16), sink);
            CKL();
            if (prep.order == 1 || prep.order == 2) memset_mb(24ull << 20, r);
            if (prep.order == 2 || prep.order == 3) read_other(26);
            if (prep.order == 3) memset_mb(24ull << 20, r);
            if (prep.order == 4) memset_mb(flush_bytes, r);
            t.push_back(time_ms([&] { read_kernel<<<blocks, 512>>>(rd, n4, 1, sink, probe_); }));
          }
          add(std::string("flush_order_") + prep.name + "_read" + std::to_string(mb) + "MB_" +
                  std::to_string(blocks) + "blocks",
              median_of(t) * 1e3, "us", nvml_mhz(),
              std::to_string(mb) + " MB ld.global.cg.v4 stream by " + std::to_string(blocks) +
                  " blocks of 512 threads after a 256 MB L2-cleaning read and " + prep.name +
                  "; median of " + std::to_string(reps));
        }
      }
    }
    // Stores after the same preparations: 64 MB and 256 MB 16-byte store streams.
    for (const Prep prep : {Prep{"clean", 0}, Prep{"memset24_read26", 2}, Prep{"memset2xL2", 4}}) {
      for (int mb : {64, 256}) {
        const long long n4 = (static_cast<long long>(mb) << 20) / 16;
        std::vector<float> t;
        for (int r = 0; r < reps; ++r) {
          l2_clean_kernel<<<sms_ * 4, 512>>>(clean, static_cast<long long>(big / 16), sink);
          CKL();
          if (prep.order == 2) {
            memset_mb(24ull << 20, r);
            read_other(26);
          }
          if (prep.order == 4) memset_mb(flush_bytes, r);
          t.push_back(time_ms([&] { write_stream_kernel<<<sms_ * 4, 512>>>(rd, n4, r); }));
        }
        add(std::string("flush_order_") + prep.name + "_write" + std::to_string(mb) + "MB",
            median_of(t) * 1e3, "us", nvml_mhz(),
            std::to_string(mb) +
                " MB 16-byte store stream (4 x 512 thr/SM) after a 256 MB "
                "L2-cleaning read and " +
                prep.name + "; median of " + std::to_string(reps));
      }
    }
  }

  // Is the L2 shared fairly among SMs that all load at once? One block per SM, equal work:
  // (a) ld.global.cg over a 16 MB footprint all blocks stream through (read_kernel), (b)
  // cp.async re-reading the block's own 64 KB slice (cp_async_bw_kernel), each three times.
  // Per block its SM and rate (bytes / its clock64 span) go to `sms_path`; the summary rows give
  // the spread over SMs and how well one repeat's per-SM rates predict the next's.
  void sm_spread(const std::string& sms_path) {
    const size_t fp = 16ull << 20;
    const DevBuffer buf(fp, 3);
    const uint4* a = buf.p;
    auto* sink = reinterpret_cast<uint32_t*>(sink_);
    std::ofstream f(sms_path);
    f << "test,rep,block,smid,cycles,ns,bytes_per_clk\n";
    CK(cudaFuncSetAttribute(cp_async_bw_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            kCpAsyncBwSmem));
    for (const std::string test : {"ldcg_shared16MB", "cp_async_own64KB"}) {
      const bool ld = test[0] == 'l';
      const int passes = quick_ ? 10 : 40, chunks = quick_ ? 1024 : 4096;
      const double bytes = ld ? static_cast<double>(fp) * passes / sms_ : 256.0 * chunks * 16;
      std::vector<std::map<int, double>> by_sm;
      for (int rep = 0; rep < 3; ++rep) {
        if (ld)
          read_kernel<<<sms_, 1024>>>(a, fp / 16, passes, sink, probe_);
        else
          cp_async_bw_kernel<<<sms_, 256, kCpAsyncBwSmem>>>(a, fp / 16, chunks, sink, probe_);
        CKL();
        CK(cudaDeviceSynchronize());
        const auto ps = probes(sms_);
        std::vector<double> rate;
        by_sm.emplace_back();
        for (int b = 0; b < sms_; ++b) {
          const double r = bytes / static_cast<double>(ps[b].c1 - ps[b].c0);
          rate.push_back(r);
          by_sm.back()[ps[b].smid] = r;
          f << test << "," << rep << "," << b << "," << ps[b].smid << "," << ps[b].c1 - ps[b].c0
            << "," << ps[b].g1 - ps[b].g0 << "," << r << "\n";
        }
        std::sort(rate.begin(), rate.end());
        const auto q = [&](double x) { return rate[static_cast<size_t>(x * (rate.size() - 1))]; };
        const std::string what = "per-SM rate, one block per SM, equal work (" + test + ", rep " +
                                 std::to_string(rep) + "): bytes / the block's clock64 span";
        add("smspread_" + test + "_min", q(0), "B/clk", mhz(ps[0]), what);
        add("smspread_" + test + "_p10", q(0.1), "B/clk", mhz(ps[0]), what);
        add("smspread_" + test + "_p50", q(0.5), "B/clk", mhz(ps[0]), what);
        add("smspread_" + test + "_p90", q(0.9), "B/clk", mhz(ps[0]), what);
        add("smspread_" + test + "_max", q(1), "B/clk", mhz(ps[0]), what);
      }
      for (int rep = 1; rep < 3; ++rep) {  // Pearson over SMs, repeat rep-1 against rep
        std::vector<double> x, y;
        for (const auto& [sm, r] : by_sm[rep])
          if (by_sm[rep - 1].count(sm)) {
            x.push_back(by_sm[rep - 1].at(sm));
            y.push_back(r);
          }
        add("smspread_" + test + "_corr_rep" + std::to_string(rep), gemmsim::pearson(x, y), "1",
            nvml_mhz(), "Pearson correlation over SMs of the per-SM rates of two repeats");
      }
    }
    const std::vector<int> group = gpc_groups(sms_path + ".gpc.csv");
    add("smspread_gpc_groups",
        static_cast<double>(*std::max_element(group.begin(), group.end()) + 1), "count", nvml_mhz(),
        "groups of SMs that ever shared a 2-, 4- or 8-block cluster (24 launches): GPCs, or "
        "finer where a GPC's SMs never met");
  }

  // Which SMs share a GPC: launches of 2-SM to 8-SM clusters, one block per SM; the union of
  // co-clustered SMs. Returns each SM's group (numbered in order of its lowest SM) and writes
  // the groups to `path`.
  std::vector<int> gpc_groups(const std::string& path) {
    std::vector<int> parent(1024);
    std::iota(parent.begin(), parent.end(), 0);
    const std::function<int(int)> root = [&](int x) {
      return parent[x] == x ? x : parent[x] = root(parent[x]);
    };
    const int smem = 200 * 1024;
    CK(cudaFuncSetAttribute(cluster_smid_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            smem));
    int* d = nullptr;
    CK(cudaMalloc(&d, sizeof(int) * 4096));
    for (int cs : {2, 4, 8}) {
      for (int rep = 0; rep < 8; ++rep) {
        const int blocks = (sms_ / cs) * cs;
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(blocks);
        cfg.blockDim = dim3(64);
        cfg.dynamicSmemBytes = smem;
        cudaLaunchAttribute at{};
        at.id = cudaLaunchAttributeClusterDimension;
        at.val.clusterDim.x = cs;
        at.val.clusterDim.y = 1;
        at.val.clusterDim.z = 1;
        cfg.attrs = &at;
        cfg.numAttrs = 1;
        if (cudaLaunchKernelEx(&cfg, cluster_smid_kernel, d) != cudaSuccess) {
          (void)cudaGetLastError();  // this cluster size does not fit: skip it
          continue;
        }
        CK(cudaDeviceSynchronize());
        std::vector<int> h(blocks);
        CK(cudaMemcpy(h.data(), d, sizeof(int) * blocks, cudaMemcpyDeviceToHost));
        for (int b = 0; b < blocks; ++b) parent[root(h[b])] = root(h[b - b % cs]);
      }
    }
    CK(cudaFree(d));
    std::map<int, std::vector<int>> gpc;  // by root; numbered below in order of lowest SM
    for (int sm = 0; sm < sms_; ++sm) gpc[root(sm)].push_back(sm);
    std::vector<std::vector<int>> ordered;
    for (auto& [r, members] : gpc) ordered.push_back(members);
    std::sort(ordered.begin(), ordered.end());
    std::vector<int> group(sms_);
    std::ofstream g(path);
    g << "gpc,sms,smids\n";
    for (size_t i = 0; i < ordered.size(); ++i) {
      g << i << "," << ordered[i].size() << ",";
      for (size_t k = 0; k < ordered[i].size(); ++k) {
        g << (k ? " " : "") << ordered[i][k];
        group[ordered[i][k]] = static_cast<int>(i);
      }
      g << "\n";
    }
    return group;
  }

  // Reads of the same lines by several SMs at once. One block per SM streams 64 KB slices with
  // cp.async as in sm_spread, but SMs are given slices to share: each its own; the two SMs of a
  // TPC one; the SMs of a GPC group (gpc_groups) one; one SM from each GPC group one (the k-th
  // SM of every group reads slice k); all SMs one. The per-SM rate shows whether lines read
  // by several SMs at once reach them faster than distinct lines, and whether that depends on
  // the readers sharing a GPC (the request coalescer: sim/gpu/memory_system.hpp).
  void shared_lines(const std::string& sms_path) {
    const size_t fp = 16ull << 20;
    const DevBuffer buf(fp, 3);
    auto* sink = reinterpret_cast<uint32_t*>(sink_);
    const std::vector<int> group = gpc_groups(sms_path + ".gpc.csv");
    std::vector<int> rank(sms_), seen(sms_, 0);
    for (int sm = 0; sm < sms_; ++sm) rank[sm] = seen[group[sm]]++;
    CK(cudaFuncSetAttribute(cp_async_bw_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            kCpAsyncBwSmem));
    int* d_slice = nullptr;
    CK(cudaMalloc(&d_slice, sizeof(int) * sms_));
    std::ofstream f(sms_path);
    f << "test,rep,block,smid,slice,cycles,ns,bytes_per_clk\n";
    const int chunks = quick_ ? 1024 : 4096;
    const double bytes = 256.0 * chunks * 16;
    const std::pair<std::string, std::function<int(int)>> tests[] = {
        {"own", [](int sm) { return sm; }},
        {"tpc", [](int sm) { return sm / 2; }},
        {"gpc", [&](int sm) { return group[sm]; }},
        {"across_gpcs", [&](int sm) { return rank[sm]; }},
        {"all", [](int) { return 0; }},
    };
    for (const auto& [test, slice_of] : tests) {
      std::vector<int> slice(sms_);
      for (int sm = 0; sm < sms_; ++sm) slice[sm] = slice_of(sm);
      CK(cudaMemcpy(d_slice, slice.data(), sizeof(int) * sms_, cudaMemcpyHostToDevice));
      const int readers = static_cast<int>(sms_ / std::set<int>(slice.begin(), slice.end()).size());
      std::vector<double> med;
      for (int rep = 0; rep < 3; ++rep) {
        cp_async_bw_kernel<<<sms_, 256, kCpAsyncBwSmem>>>(buf.p, fp / 16, chunks, sink, probe_,
                                                          d_slice);
        CKL();
        CK(cudaDeviceSynchronize());
        const auto ps = probes(sms_);
        std::vector<double> rate;
        for (int b = 0; b < sms_; ++b) {
          const double r = bytes / static_cast<double>(ps[b].c1 - ps[b].c0);
          rate.push_back(r);
          f << test << "," << rep << "," << b << "," << ps[b].smid << "," << slice[ps[b].smid]
            << "," << ps[b].c1 - ps[b].c0 << "," << ps[b].g1 - ps[b].g0 << "," << r << "\n";
        }
        std::sort(rate.begin(), rate.end());
        med.push_back(rate[rate.size() / 2]);
        if (rep == 0) {
          const std::string what =
              "cp.async 16 B, one block of 256 threads per SM, 4 groups of 4 "
              "in flight, 64 KB slices shared by about " +
              std::to_string(readers) + " SMs (" + test +
              "); bytes / the block's clock64 span, over SMs";
          add("sharedlines_" + test + "_p10", rate[rate.size() / 10], "B/clk", mhz(ps[0]), what);
          add("sharedlines_" + test + "_max", rate.back(), "B/clk", mhz(ps[0]), what);
        }
      }
      std::sort(med.begin(), med.end());
      add("sharedlines_" + test + "_p50", med[1], "B/clk", nvml_mhz(),
          "per-SM rate, median over SMs, median of 3 launches (" + test + ")");
    }
    CK(cudaFree(d_slice));
  }

  // Near and far L2 partitions. 64 lines at random in a 1 GB buffer are chased one load at a
  // time by one thread on a chosen SM, each load timed: cold (after a 256 MB read of another
  // buffer), again from the same SM (hits in the L2), and from another SM right after. A miss or
  // hit costs more when the line's slice is in the other partition than the SM; comparing the
  // per-line times from several SMs shows which lines are far for which SM. Raw per-line cycles
  // go to `lines_path`.
  void l2_partitions(const std::string& lines_path) {
    const size_t span = 1ull << 30, big = 256ull << 20;
    const DevBuffer buf(span, 0), clean_buf(big, 1);
    auto* sink = reinterpret_cast<uint32_t*>(sink_);
    const int n = 64;
    std::mt19937_64 rng(20261126);
    std::vector<unsigned long long> addr(n);
    for (auto& x : addr)
      x = reinterpret_cast<unsigned long long>(buf.p) + (rng() % (span / 128)) * 128;
    unsigned long long* d_addr = nullptr;
    long long* d_cyc = nullptr;
    int* claimed = nullptr;
    CK(cudaMalloc(&d_addr, sizeof(unsigned long long) * n));
    CK(cudaMalloc(&d_cyc, sizeof(long long) * n));
    CK(cudaMalloc(&claimed, sizeof(int)));
    CK(cudaMemcpy(d_addr, addr.data(), sizeof(unsigned long long) * n, cudaMemcpyHostToDevice));
    auto chase = [&](int sm) {
      CK(cudaMemset(claimed, 0, sizeof(int)));
      CK(cudaMemset(d_cyc, 0, sizeof(long long) * n));
      sm_chase_kernel<<<sms_ * 8, 32>>>(d_addr, n, sm, claimed, d_cyc,
                                        reinterpret_cast<unsigned long long*>(sink_));
      CKL();
      CK(cudaDeviceSynchronize());
      std::vector<long long> c(n);
      CK(cudaMemcpy(c.data(), d_cyc, sizeof(long long) * n, cudaMemcpyDeviceToHost));
      return c;
    };
    auto clean = [&] {
      l2_clean_kernel<<<sms_ * 4, 512>>>(clean_buf.p, static_cast<long long>(big / 16), sink);
      CKL();
      CK(cudaDeviceSynchronize());
    };
    std::ofstream raw(lines_path);
    raw << "experiment,sm,other_sm,rep";
    for (int i = 0; i < n; ++i) raw << ",line" << i;
    raw << "\n";
    auto dump = [&](const char* what, int sm, int other, int rep, const std::vector<long long>& c) {
      raw << what << ',' << sm << ',' << other << ',' << rep;
      for (long long x : c) raw << ',' << x;
      raw << "\n";
    };
    auto summary = [&](const std::string& name, const std::vector<long long>& c,
                       const std::string& what) {
      std::vector<long long> v(c.begin() + 1, c.end());  // the first load also takes the TLB
      std::sort(v.begin(), v.end());
      add(name + "_p25", static_cast<double>(v[v.size() / 4]), "cycles", nvml_mhz(), what);
      add(name + "_p75", static_cast<double>(v[3 * v.size() / 4]), "cycles", nvml_mhz(), what);
    };
    const int sms_to_try[] = {0, 1, 2, 3, sms_ / 2, sms_ / 2 + 1, sms_ - 2, sms_ - 1};
    const int reps = quick_ ? 1 : 3;
    for (int sm : sms_to_try) {
      for (int r = 0; r < reps; ++r) {
        clean();
        const auto cold = chase(sm);
        const auto self = chase(sm);
        const int other = sm == 0 ? 1 : 0;
        const auto by_other = chase(other);
        dump("cold", sm, -1, r, cold);
        dump("self_warm", sm, -1, r, self);
        dump("other_warm", other, sm, r, by_other);
        if (r == 0) {
          const std::string s = std::to_string(sm);
          summary("l2part_cold_sm" + s, cold,
                  "per-load cycles of a one-thread chase over 64 random lines of 1 GB after a "
                  "256 MB clean read, SM " +
                      s + " (quartiles of loads 2-64)");
          summary("l2part_hit_self_sm" + s, self,
                  "the same lines again from SM " + s + " (L2 hits; quartiles)");
          summary("l2part_hit_other_sm" + std::to_string(other) + "_after_sm" + s, by_other,
                  "the same lines from SM " + std::to_string(other) + " right after SM " + s +
                      " read them (L2 hits; quartiles)");
        }
      }
    }
    CK(cudaFree(d_addr));
    CK(cudaFree(d_cyc));
    CK(cudaFree(claimed));
  }

  // K tiles fetched by cp.async (tile_latency_kernel), against the tile's size, the tiles kept
  // in flight (1, 2 or 4) and the number of SMs doing the same at once: from DRAM (the L2
  // cleaned by a 256 MB read of another buffer before each run, every tile's columns fresh) and,
  // for footprints that fit, again right after from L2. Rows 16 KiB apart (the A operand of a
  // K = 8192 bf16 GEMM). With one tile in flight, the quantiles of a tile's latency (request to
  // complete) over tiles 2..64 of every block; with more, the median interval between
  // consecutive tiles' completions (the steady rate).
  // `flushed` (group tileflush): the same tiles from DRAM after the harness's flush (the L2
  // cleaned, then a memset over 2x the L2, which leaves dirty lines the tiles' misses evict),
  // against the cleaned L2 alone; only the block-count sweep, names tile_lat_flushed_* and
  // tile_lat_cleaned_*.
  void tile_latency(bool flushed = false) {
    const long long a_stride = 16 << 10;  // the rows of A at K = 8192, bf16
    const int max_blocks = 128, max_rows = 128, tiles = kTileLatMaxTiles;
    const size_t span = static_cast<size_t>(max_blocks) * max_rows * (a_stride + 512),
                 big = 256ull << 20, stamps = sizeof(long long) * max_blocks * tiles;
    const DevBuffer buf(span, 0), clean_buf(big, 1), issued_buf(stamps, 0), done_buf(stamps, 0);
    auto* sink = reinterpret_cast<uint32_t*>(sink_);
    auto* d_issued = reinterpret_cast<long long*>(issued_buf.p);
    auto* d_done = reinterpret_cast<long long*>(done_buf.p);
    CK(cudaFuncSetAttribute(tile_latency_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            kTileLatMaxBytes));
    auto run = [&](int blocks, int rows, int row_bytes, int inflight, long long stride) {
      const size_t smem = static_cast<size_t>(inflight) * rows * row_bytes;
      // Tiles step along the rows (K) when the rows are far apart, else to the next rows.
      const long long step = stride >= tiles * row_bytes ? row_bytes : rows * stride;
      tile_latency_kernel<<<blocks, kTileLatThreads, smem>>>(reinterpret_cast<const char*>(buf.p),
                                                             rows, row_bytes, stride, step, tiles,
                                                             inflight, d_issued, d_done);
      CKL();
      CK(cudaDeviceSynchronize());
      const size_t n = static_cast<size_t>(blocks) * tiles;
      std::vector<long long> is(n), dn(n);
      CK(cudaMemcpy(is.data(), d_issued, sizeof(long long) * n, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(dn.data(), d_done, sizeof(long long) * n, cudaMemcpyDeviceToHost));
      std::vector<double> v;
      for (int b = 0; b < blocks; ++b)
        for (int t = 1; t < tiles; ++t) {
          const size_t i = static_cast<size_t>(b) * tiles + t;
          v.push_back(static_cast<double>(inflight == 1 ? dn[i] - is[i] : dn[i] - dn[i - 1]));
        }
      std::sort(v.begin(), v.end());
      return v;
    };
    auto q = [](const std::vector<double>& v, double f) {
      return v[std::min(v.size() - 1, static_cast<size_t>(f * v.size()))];
    };
    auto clean = [&] {
      l2_clean_kernel<<<sms_ * 4, 512>>>(clean_buf.p, static_cast<long long>(big / 16), sink);
      CKL();
      CK(cudaDeviceSynchronize());
    };
    // A tile-latency run's p10/p50/p90/p99 as `name`_<p>, each described as `how` says.
    auto add_quantiles = [&](const std::string& name, const std::vector<double>& v,
                             const std::string& how) {
      for (const auto& [tag, f] : {std::pair<const char*, double>{"p10", 0.10},
                                   {"p50", 0.50},
                                   {"p90", 0.90},
                                   {"p99", 0.99}})
        add(name + "_" + tag, q(v, f), "cycles", nvml_mhz(), how);
    };
    if (flushed) {
      const size_t flush_bytes = 2ull * static_cast<size_t>(prop_.l2CacheSize);
      const DevBuffer flush_buf(flush_bytes, 0);
      for (int blocks : {1, 16, 128}) {
        for (int rows : {1, 32}) {
          for (int memset = 0; memset < 2; ++memset) {
            clean();
            if (memset) {
              CK(cudaMemset(flush_buf.p, blocks + rows, flush_bytes));
              CK(cudaDeviceSynchronize());
            }
            const auto v = run(blocks, rows, 128, 1, a_stride);
            const std::string cfg =
                std::to_string(rows) + "x128B_" + std::to_string(blocks) + "blocks";
            add_quantiles(std::string("tile_lat_") + (memset ? "flushed_" : "cleaned_") + cfg, v,
                          std::to_string(rows) +
                              " rows x 128 B (rows 16 KiB apart) per K tile, one in flight, " +
                              std::to_string(blocks) +
                              " blocks; from DRAM after an L2-cleaning read" +
                              (memset ? " and a memset over 2x the L2 (the harness's flush)" : "") +
                              "; quantile over tiles 2-64 of every block");
          }
        }
      }
      return;
    }
    // One block, one tile in flight, with rows not a power of two apart (16 KiB + 128 B,
    // + 512 B), and closer: 128 B (the tile one contiguous run), 1, 2 and 4 KiB (then tile t is
    // the t-th run of rows).
    for (long long st : {16384ll + 128, 16384ll + 512, 16384ll, 128ll, 1024ll, 2048ll, 4096ll}) {
      for (int row_bytes : {64, 128}) {
        for (int rows : {16, 32, 48, 64, 96, 128}) {
          if (st < row_bytes) continue;
          for (int from_l2 = 0; from_l2 < 2; ++from_l2) {
            if (!from_l2) clean();
            const auto v = run(1, rows, row_bytes, 1, st);
            const std::string name = std::string("tile_lat_stride") + std::to_string(st) + "_" +
                                     (from_l2 ? "l2_" : "dram_") + std::to_string(rows) + "x" +
                                     std::to_string(row_bytes) + "B_1blocks_p50";
            add(name, q(v, 0.5), "cycles", nvml_mhz(),
                std::to_string(rows) + " rows x " + std::to_string(row_bytes) + " B, rows " +
                    std::to_string(st) +
                    " B apart, one tile in flight, one block; median latency of tiles 2-64" +
                    (from_l2 ? " (L2 hits)" : " (L2 cleaned before)"));
          }
        }
      }
    }
    for (int blocks : {1, 16, 128}) {
      for (int row_bytes : {64, 128}) {
        for (int rows : {0, 1, 4, 16, 32, 64, 128}) {
          for (int inflight : {1, 2, 4}) {
            if (inflight > 1 && ((rows > 0 && rows < 16) || blocks == 16)) continue;
            const std::string cfg = std::to_string(rows) + "x" + std::to_string(row_bytes) + "B_" +
                                    std::to_string(blocks) + "blocks";
            const std::string what =
                std::to_string(rows) + " rows x " + std::to_string(row_bytes) +
                " B (rows 16 KiB apart) per K tile, cp.async.cg by 128 threads, " +
                std::to_string(inflight) + " tile(s) in flight, " + std::to_string(blocks) +
                " blocks at once";
            for (int from_l2 = 0; from_l2 < 2; ++from_l2) {
              if (from_l2 &&
                  static_cast<long long>(blocks) * rows * tiles * row_bytes > (16ll << 20))
                continue;
              if (!from_l2) clean();
              const auto v = run(blocks, rows, row_bytes, inflight, a_stride);
              const std::string src = from_l2 ? "l2" : "dram";
              const std::string how =
                  what + (from_l2 ? ", the same tiles again (L2 hits)" : ", L2 cleaned before");
              if (inflight == 1) {
                add_quantiles("tile_lat_" + src + "_" + cfg, v,
                              how +
                                  "; latency of a tile (request to complete), quantile over "
                                  "tiles 2-64 of every block");
              } else {
                add("tile_interval_" + src + "_" + cfg + "_" + std::to_string(inflight) +
                        "inflight_p50",
                    q(v, 0.5), "cycles", nvml_mhz(),
                    how + "; median interval between consecutive tiles' completions");
              }
            }
          }
        }
      }
    }
  }

  // What a launch costs besides its work, timed as the harness times its kernels, from three
  // L2 states: `memset` (queued behind the harness's flush, a memset over 2x L2: dirty lines),
  // `clean` (behind a 256 MB read of another buffer: clean lines, the operands not cached) and
  // `warm` (behind a 30 us spin, the same kernel run just before: operands and code cached).
  // Per case: the CUDA-event time, and the span from the first block's start to the last
  // block's end (%globaltimer stamps). A thread's loads issue four at a time (the loop is
  // unrolled by 4 and each group's results are consumed before the next group issues), so
  // (span of ld64 - span of ld0) / 16 is the latency of a round of loads at that load.
  // Then the cycles of the first dependent loads of a one-thread kernel in the same states.
  void fixed_costs() {
    const size_t flush_bytes = 2ull * static_cast<size_t>(prop_.l2CacheSize);
    const size_t big = 256ull << 20;
    const DevBuffer src_buf(64ull << 20, 0), dst_buf(64ull << 20, 0), dirty_buf(flush_bytes, 0),
        clean_buf(big, 1);
    auto* sink = reinterpret_cast<uint32_t*>(sink_);
    long long* stamps = nullptr;
    CK(cudaMalloc(&stamps, sizeof(long long) * 2 * 4096));
    CK(cudaFuncSetAttribute(fixed_cost_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            100 << 10));
    const int reps = quick_ ? 5 : 31;
    const char* states[] = {"warm", "clean", "memset"};
    // Puts the L2 in `state` (0 warm: `again` re-runs the kernel first; 1 clean; 2 memset).
    auto prepare = [&](int state, int r, auto again) {
      if (state == 0) {
        again();
        CKL();
        spin_kernel<<<1, 1>>>(30000, probe_);
        CKL();
      } else if (state == 1) {
        l2_clean_kernel<<<sms_ * 4, 512>>>(clean_buf.p, static_cast<long long>(big / 16), sink);
        CKL();
      } else {
        CK(cudaMemsetAsync(dirty_buf.p, (r + 1) & 0xff, flush_bytes));
      }
    };
    struct Case {
      int grid, threads, loads, stores, smem_kb;
    };
    const Case cases[] = {{1, 32, 0, 0, 0},     {16, 128, 0, 0, 0},   {16, 128, 0, 0, 24},
                          {132, 128, 0, 0, 0},  {132, 256, 0, 0, 96}, {1056, 128, 0, 0, 0},
                          {1, 32, 64, 0, 0},    {16, 128, 8, 0, 0},   {16, 128, 64, 0, 0},
                          {132, 128, 64, 0, 0}, {132, 512, 64, 0, 0}, {16, 128, 0, 8, 0},
                          {16, 128, 8, 8, 24},  {132, 256, 8, 8, 0},  {132, 256, 64, 64, 0}};
    for (const Case& c : cases) {
      for (int state = 0; state < 3; ++state) {
        std::vector<float> ev, span;
        for (int r = 0; r < reps; ++r) {
          auto run = [&] {
            fixed_cost_kernel<<<c.grid, c.threads, c.smem_kb << 10>>>(src_buf.p, dst_buf.p, c.loads,
                                                                      c.stores, stamps);
          };
          prepare(state, r, run);
          ev.push_back(time_ms(run) * 1e3f);
          std::vector<long long> st(2 * c.grid);
          CK(cudaMemcpy(st.data(), stamps, sizeof(long long) * st.size(), cudaMemcpyDeviceToHost));
          long long lo = st[0], hi = st[1];
          for (int b = 0; b < c.grid; ++b) {
            lo = std::min(lo, st[2 * b]);
            hi = std::max(hi, st[2 * b + 1]);
          }
          span.push_back(static_cast<float>(hi - lo) * 1e-3f);
        }
        const std::string name = "fixed_" + std::to_string(c.grid) + "x" +
                                 std::to_string(c.threads) + "_ld" + std::to_string(c.loads) +
                                 "_st" + std::to_string(c.stores) + "_smem" +
                                 std::to_string(c.smem_kb) + "_" + states[state];
        const std::string what = std::to_string(c.grid) + " blocks x " + std::to_string(c.threads) +
                                 " thr, " + std::to_string(c.loads) + " ld.cg + " +
                                 std::to_string(c.stores) + " st of 16 B per thread, " +
                                 std::to_string(c.smem_kb) + " KiB dynamic smem, L2 " +
                                 states[state];
        add(name + "_event", median_of(ev), "us", nvml_mhz(),
            "CUDA-event time; " + what + "; median of " + std::to_string(reps));
        add(name + "_span", median_of(span), "us", nvml_mhz(),
            "first block start to last block end (%globaltimer); " + what + "; median of " +
                std::to_string(reps));
      }
    }
    // The first dependent loads of a kernel: 8 hops 4 KiB apart and 8 hops 2 MiB + 4 KiB apart
    // (a new 2 MiB page each).
    long long* cyc = nullptr;
    CK(cudaMalloc(&cyc, sizeof(long long) * 8));
    for (const long long stride : {4096ll, (2ll << 20) + 4096}) {
      for (int state = 0; state < 3; ++state) {
        std::vector<std::vector<long long>> hops(8);
        for (int r = 0; r < reps; ++r) {
          const char* base = reinterpret_cast<const char*>(src_buf.p) + (r % 4) * 256;
          auto run = [&] {
            first_loads_kernel<<<1, 1>>>(base, stride, 8, cyc,
                                         reinterpret_cast<unsigned long long*>(sink_));
          };
          prepare(state, r, run);
          run();
          CKL();
          long long h[8];
          CK(cudaMemcpy(h, cyc, sizeof h, cudaMemcpyDeviceToHost));
          for (int i = 0; i < 8; ++i) hops[i].push_back(h[i]);
        }
        for (int i : {0, 1, 2, 7}) {
          std::sort(hops[i].begin(), hops[i].end());
          add("first_loads_stride" + std::to_string(stride) + "_hop" + std::to_string(i) + "_" +
                  states[state],
              static_cast<double>(hops[i][hops[i].size() / 2]), "cycles", nvml_mhz(),
              "clock64 around dependent ld.global.cg number " + std::to_string(i) + " of 8, " +
                  std::to_string(stride) + " B apart, 1 thread, L2 " + states[state] +
                  "; median of " + std::to_string(reps));
        }
      }
    }
    CK(cudaFree(cyc));
    CK(cudaFree(stamps));
  }

  // How long the L2 keeps a line that several readers take in turn (retain_kernel): 4 or 2
  // reader groups of 33 or 66 SMs (one block of 512 threads each) read a 256 MiB stream in
  // 1 MiB chunks, each group `lag` chunks behind the one before. DRAM bytes read over the
  // stream's: 1 if every follower hits, `groups` if none does. Run under ncu
  // (--cache-control none, --kernel-name retain_kernel) for the DRAM bytes and the hit rate;
  // the times here are CUDA events, medians of 3, the L2 cleaned before each launch.
  void l2_retention() {
    const size_t big = 256ull << 20;
    const int chunks = 256;
    const long long chunk16 = (1ll << 20) / 16;
    const DevBuffer clean_buf(big, 1), stream_buf(static_cast<size_t>(chunks) << 20, 5);
    unsigned* barrier = nullptr;
    CK(cudaMalloc(&barrier, sizeof(unsigned)));
    auto* sink = reinterpret_cast<uint32_t*>(sink_);
    for (int groups : {4, 2}) {
      for (int lag : {4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 64}) {
        std::vector<float> t;
        for (int r = 0; r < 3; ++r) {
          l2_clean_kernel<<<sms_ * 4, 512>>>(clean_buf.p, static_cast<long long>(big / 16), sink);
          CKL();
          CK(cudaMemset(barrier, 0, sizeof(unsigned)));
          t.push_back(time_ms([&] {
            retain_kernel<<<sms_, 512>>>(stream_buf.p, chunk16, chunks, lag, groups, barrier, sink);
          }));
        }
        const int steps = chunks + (groups - 1) * lag;
        add("l2_retain_g" + std::to_string(groups) + "_lag" + std::to_string(lag) + "MiB",
            median_of(t) * 1e3 / steps, "us/step", nvml_mhz(),
            std::to_string(groups) + " reader groups of " + std::to_string(sms_ / groups) +
                " SMs, each " + std::to_string(lag) +
                " MiB behind the one before, over a 256 MiB stream in 1 MiB steps with a grid "
                "barrier after each; " +
                std::to_string(steps) + " steps; median of 3 launches, L2 cleaned before each");
      }
    }
    CK(cudaFree(barrier));
  }

  // How much of the L2 holds lines that SMs of both partitions read: W MB read in 9 passes by
  // 2 blocks per SM, each line by the same block in every pass (fixed) or by a block on another
  // SM in each pass (rotating). Per pass after the first: (t9 - t1) / 8. Run under ncu
  // (--cache-control none) for the DRAM bytes and hit rate of rotate_read_kernel.
  void l2_sharing() {
    const size_t big = 256ull << 20;
    const DevBuffer clean_buf(big, 1), buf_buf(64ull << 20, 3);
    uint4 *clean = clean_buf.p, *buf = buf_buf.p;
    auto* sink = reinterpret_cast<uint32_t*>(sink_);
    const int grid = sms_ * 2, reps = quick_ ? 3 : 5;
    for (int mb : {8, 16, 20, 24, 28, 32, 40, 48, 64}) {
      const long long n4 = (static_cast<long long>(mb) << 20) / 16;
      for (int rot : {0, grid / 2 + 1}) {
        double per_pass[2];
        for (int k = 0; k < 2; ++k) {
          const int passes = k == 0 ? 1 : 9;
          std::vector<float> t;
          for (int r = 0; r < reps; ++r) {
            l2_clean_kernel<<<sms_ * 4, 512>>>(clean, static_cast<long long>(big / 16), sink);
            CKL();
            t.push_back(
                time_ms([&] { rotate_read_kernel<<<grid, 512>>>(buf, n4, passes, rot, sink); }));
          }
          per_pass[k] = median_of(t);
        }
        const double us = (per_pass[1] - per_pass[0]) / 8 * 1e3;
        add("l2_share_" + std::string(rot ? "rotating_" : "fixed_") + std::to_string(mb) + "MB", us,
            "us/pass", nvml_mhz(),
            std::to_string(mb) + " MB re-read by " + std::to_string(grid) +
                " blocks x 512 thr, each line by " +
                (rot ? std::string("a block on another SM each pass")
                     : std::string("the same block")) +
                "; (t9 - t1) / 8 passes, medians of " + std::to_string(reps) + " (" +
                std::to_string(static_cast<int>(mb * 1.048576 / us * 1e3)) + " GB/s)");
      }
    }
  }

  // DRAM read bandwidth against the contiguous bytes read per row (32 B to 2 KiB) from rows
  // 8 KiB apart (a 4096-wide bf16 row-major operand), all SMs, 256 MB read per point.
  void access_granularity() {
    const unsigned pitch = 8192, rows = 65536;  // 512 MB matrix
    char* m = nullptr;
    CK(cudaMalloc(&m, static_cast<size_t>(pitch) * rows));
    CK(cudaMemset(m, 1, static_cast<size_t>(pitch) * rows));
    uint4* clean = nullptr;
    const size_t cb = 256ull << 20;
    CK(cudaMalloc(&clean, cb));
    CK(cudaMemset(clean, 0, cb));
    const unsigned long long total16 = (256ull << 20) / 16;
    for (unsigned chunk : {32u, 64u, 128u, 256u, 512u, 1024u, 2048u}) {
      std::vector<float> t;
      for (int r = 0; r < 5; ++r) {
        l2_clean_kernel<<<sms_ * 4, 512>>>(clean, static_cast<long long>(cb / 16),
                                           reinterpret_cast<uint32_t*>(sink_));
        CKL();
        t.push_back(time_ms([&] {
          chunk_read_kernel<<<sms_ * 4, 512>>>(m, rows, chunk, pitch, total16,
                                               reinterpret_cast<uint32_t*>(sink_));
        }));
      }
      std::sort(t.begin(), t.end());
      add("dram_chunk_read_" + std::to_string(chunk) + "B", (256ull << 20) / (t[2] * 1e-3) / 1e9,
          "GB/s", nvml_mhz(),
          std::to_string(chunk) +
              " contiguous bytes per row, rows 8 KiB apart, each row's chunk "
              "k before chunk k+1; 256 MB, 4 x 512 thr/SM, 4 ld.global.cg.v4 in flight per thread; "
              "CUDA events, median of 5, L2 cleaned before each");
    }
    CK(cudaFree(m));
    CK(cudaFree(clean));
  }

  // red.global.add.f32 throughput: 4 blocks of 256 threads per SM, 32 reductions per thread,
  // with 1, 4 or 16 blocks adding to each address (each group of blocks targets 32 KiB; at most
  // 16.5 MiB in all, so the targets stay in L2).
  void reductions() {
    const int blocks = sms_ * 4, threads = 256, per = 32;
    float* dst = nullptr;
    const size_t floats = static_cast<size_t>(blocks) * threads * per;
    CK(cudaMalloc(&dst, floats * 4));
    for (int sharers : {1, 4, 16}) {
      const int groups = blocks / sharers;
      std::vector<float> t;
      for (int r = 0; r < 5; ++r) {
        CK(cudaMemset(dst, 0, floats * 4));
        t.push_back(time_ms([&] { red_kernel<<<blocks, threads>>>(dst, groups, per, probe_); }));
      }
      std::sort(t.begin(), t.end());
      const double ops = static_cast<double>(blocks) * threads * per;
      add("red_f32_throughput_" + std::to_string(sharers) + "_sharers", ops / (t[2] * 1e-3) / 1e9,
          "Gop/s", nvml_mhz(),
          std::to_string(blocks) +
              " blocks x 256 thr, 32 red.global.add.f32 each (warp: 128 B "
              "contiguous), " +
              std::to_string(sharers) +
              " block(s) per address; CUDA events, "
              "median of 5, targets (L2-resident) zeroed before each");
    }
    CK(cudaFree(dst));
  }

  // L2 requests per second from all SMs: one-sector requests (32 lines per warp instruction)
  // against whole-line ones, loads and stores, on a 16 MiB L2-resident footprint.
  // Session 12: the atomic epilogue's lane patterns (red_pattern_kernel) and the SIMT
  // fragments' broadcast loads (lds128_pattern_kernel).
  void patterns() {
    // 8 KiB per warp, 34.6 MB in all: L2-resident (40 MiB usable) once a first run has
    // brought the targets in; each case is timed at 64 and 128 instructions per thread, and
    // the difference taken, so that the launch and the first touch cancel.
    const int blocks = sms_ * 4, threads = 256, region = 2048, warps = blocks * threads / 32;
    const size_t floats = static_cast<size_t>(warps) * region;
    const DevBuffer dst(floats * 4, 0);
    struct Case {
      const char* name;
      int pattern, stride, sharers;
      const char* what;
    };
    const Case cases[] = {
        {"line", kRedLine, 1, 1, "32 consecutive floats per instruction (one line, 4 sectors)"},
        {"mma", kRedMma, 1, 1,
         "mma.sync fragment: lanes on 8 rows x 4 float pairs, one float of each pair per "
         "instruction (8 sectors, 4 floats each); pairs of instructions fill the sectors"},
        {"stride2", kRedStride, 2, 1, "lane l at float 2l (8 sectors, 4 floats each)"},
        {"stride4", kRedStride, 4, 1, "lane l at float 4l (16 sectors, 2 floats each)"},
        {"stride8", kRedStride, 8, 1, "lane l at float 8l (32 sectors, 1 float each)"},
        {"mma_16sharers", kRedMma, 1, 16,
         "mma.sync fragment as above, 16 warps on 16 SMs "
         "adding into each region at once (split-K 16)"},
        {"line_16sharers", kRedLine, 1, 16, "32 consecutive floats, 16 warps per region"},
    };
    auto* d = reinterpret_cast<float*>(dst.p);
    for (const Case& c : cases) {
      const int groups = warps / c.sharers;
      auto median_ms = [&](int per) {  // the warm-up brings the targets into L2
        return warm_median_ms([&] {
          red_pattern_kernel<<<blocks, threads>>>(d, c.pattern, c.stride, per, region, groups);
        });
      };
      const float t32 = median_ms(32), t64 = median_ms(64);
      const double ops = static_cast<double>(blocks) * threads * 32;  // the difference's
      add(std::string("red_pattern_") + c.name, ops / ((t64 - t32) * 1e-3) / 1e9, "Gop/s",
          nvml_mhz(),
          std::to_string(blocks) + " blocks x 256 thr, red.global.add.f32, " + c.what +
              "; 8 KiB per region (L2-resident); CUDA events, median of 5 at 32 and at 64 "
              "instructions per thread, rate of the difference");
      add(std::string("red_pattern_") + c.name + "_us_32", t32 * 1e3, "us", nvml_mhz(),
          "the same, event time at 32 instructions per thread");
    }

    struct Lds {
      const char* name;
      int div, mod;
      const char* what;
    };
    const Lds lds[] = {
        {"distinct", 1, 32, "32 distinct 16-B words (512 B)"},
        {"div2", 2, 16, "16 distinct words, 2 lanes each"},
        {"div4", 4, 8, "8 distinct words, 4 lanes each (SIMT B fragment, 8 lanes along N)"},
        {"div8", 8, 4, "4 distinct words, 8 lanes each (SIMT A fragment, 4 lanes along M)"},
        {"div16", 16, 2, "2 distinct words, 16 lanes each"},
        {"mod8", 1, 8, "lane l reads word l % 8: 8 distinct, 4 lanes each, repeating by 8"},
        {"mod16", 1, 16, "lane l reads word l % 16: 16 distinct, 2 lanes each"},
        {"same", 32, 1, "one word for all lanes"},
    };
    const int it = quick_ ? 1 << 12 : 1 << 14;
    for (const Lds& c : lds) {
      lds128_pattern_kernel<<<sms_, 1024>>>(c.div, c.mod, it, reinterpret_cast<uint32_t*>(sink_),
                                            probe_);
      CKL();
      CK(cudaDeviceSynchronize());
      const auto ps = probes(sms_);
      // per_block_rate gives instructions per cycle; its inverse is cycles per instruction.
      add(std::string("lds128_") + c.name + "_cycles", 1.0 / per_block_rate(ps, 32.0 * it),
          "cycles/instr", mhz(ps[0]),
          std::string("32 warps x 1 block/SM, independent ld.shared.v4, ") + c.what +
              "; SM cycles per warp-instruction (block clock64 span), mean over SMs");
    }
  }

  // Session 13: what an L2 request costs by its shape (l2_shape_kernel): loads, cp.async and
  // stores of rows of 4 to 512 bytes, from every SM, from a quarter of them and from one.
  void l2_shapes() {
    const unsigned small = 8u << 20;  // 8 MiB: L2-resident, and under the dirty limit
    const unsigned large = 1u << 30;  // 1 GiB: from and to DRAM
    const DevBuffer buf(large, 0);
    auto* p = reinterpret_cast<float*>(buf.p);
    const DevBuffer smid_buf(sizeof(int) * 4096, 0);
    int* smids = reinterpret_cast<int*>(smid_buf.p);
    struct Case {
      const char* op;
      int vec, lanes_per_row, sms;  // sms: 0 = all, 4 x 256 threads each; else 1 x 1024 each
      bool dram = false;            // the 1 GiB footprint
    };
    const int quarter = sms_ / 4;
    const Case cases[] = {
        {"cp", 16, 8, 0},
        {"cp", 16, 4, 0},
        {"cp", 16, 2, 0},
        {"cp", 16, 1, 0},
        {"cp", 16, 16, 0},
        {"ld", 4, 32, 0},
        {"ld", 4, 8, 0},
        {"ld", 4, 1, 0},
        {"ld", 8, 4, 0},
        {"ld", 16, 8, 0},
        {"ld", 16, 4, 0},
        {"st", 4, 32, 0},
        {"st", 4, 8, 0},
        {"st", 4, 1, 0},
        {"st", 8, 4, 0},
        {"st", 8, 16, 0},
        {"st", 8, 8, 0},
        {"st", 16, 8, 0},
        {"st", 16, 4, 0},
        {"st", 16, 2, 0},
        {"st", 16, 1, 0},
        {"st", 8, 4, quarter},
        {"st", 16, 8, quarter},
        {"cp", 16, 4, quarter},
        {"cp", 16, 8, quarter},
        {"st", 8, 4, 1},
        {"st", 16, 8, 1},
        {"cp", 16, 8, 1},
        // Session 13, second run: stores and loads streaming to and from DRAM, and loads from
        // 2 to 66 SMs (which SMs: the method column).
        {"st", 8, 4, 0, true},
        {"st", 16, 8, 0, true},
        {"cp", 16, 8, 0, true},
        {"cp", 16, 4, 0, true},
        {"cp", 16, 8, 2},
        {"cp", 16, 8, 4},
        {"cp", 16, 8, 8},
        {"cp", 16, 8, 16},
        {"cp", 16, 8, sms_ / 2},
        {"st", 16, 8, 16},
        {"st", 16, 8, sms_ / 2},
    };
    // One block per SM for the partial cases: 1024 threads and more than half the SM's
    // shared memory.
    const int big_smem = static_cast<int>(prop_.sharedMemPerMultiprocessor / 2 + 16384);
    auto launcher = [&](const Case& c, bool partial, int blocks,
                        int threads) -> std::function<void(int)> {
      const int smem = partial ? big_smem : (std::string(c.op) == "cp" ? 8 * 256 * 16 : 0);
      const unsigned footprint = c.dram ? large : small;
      auto go = [=, this](auto kernel) -> std::function<void(int)> {
        CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, big_smem));
        return [=, this](int per) {
          kernel<<<blocks, threads, smem>>>(p, footprint - 1, c.lanes_per_row, per,
                                            reinterpret_cast<uint32_t*>(sink_),
                                            partial ? smids : nullptr);
        };
      };
      const std::string op = c.op;
      if (op == "cp") return go(l2_shape_kernel<kShapeCpAsync, 16>);
      if (op == "ld" && c.vec == 4) return go(l2_shape_kernel<kShapeLoad, 4>);
      if (op == "ld" && c.vec == 8) return go(l2_shape_kernel<kShapeLoad, 8>);
      if (op == "ld") return go(l2_shape_kernel<kShapeLoad, 16>);
      if (c.vec == 4) return go(l2_shape_kernel<kShapeStore, 4>);
      if (c.vec == 8) return go(l2_shape_kernel<kShapeStore, 8>);
      return go(l2_shape_kernel<kShapeStore, 16>);
    };
    for (const Case& c : cases) {
      const bool partial = c.sms != 0;
      const int blocks = partial ? c.sms : sms_ * 4, threads = partial ? 1024 : 256;
      const auto launch = launcher(c, partial, blocks, threads);
      auto median_ms = [&](int per) {  // the warm-up brings the footprint into L2
        return warm_median_ms([&] { launch(per); });
      };
      const int lo = c.dram ? 256 : 64, hi = 2 * lo;
      const float t_lo = median_ms(lo), t_hi = median_ms(hi);
      std::string placed;
      if (partial) {
        std::vector<int> ids(static_cast<size_t>(blocks));
        CK(cudaMemcpy(ids.data(), smids, sizeof(int) * ids.size(), cudaMemcpyDeviceToHost));
        std::sort(ids.begin(), ids.end());
        placed = "; on SMs";
        for (int id : ids) placed += " " + std::to_string(id);
      }
      const int rows = 32 / c.lanes_per_row, row_bytes = c.lanes_per_row * c.vec;
      const double instr = static_cast<double>(blocks) * threads / 32 * (hi - lo);
      const double secs = (t_hi - t_lo) * 1e-3;
      const int sms_used = partial ? c.sms : sms_;
      const std::string name = std::string("l2shape_") + c.op + std::to_string(c.vec) + "_" +
                               std::to_string(rows) + "x" + std::to_string(row_bytes) + "B_" +
                               std::to_string(sms_used) + "sm" + (c.dram ? "_dram" : "");
      const std::string what =
          std::string(c.op == std::string("cp")   ? "cp.async.cg 16 B"
                      : c.op == std::string("ld") ? "ld.global.cg "
                                                  : "st.global.cg ") +
          (c.op == std::string("cp") ? "" : std::to_string(c.vec) + " B") + " per lane, " +
          std::to_string(rows) + " rows x " + std::to_string(row_bytes) +
          " B per instruction (one request per row), " + std::to_string(blocks) + " blocks x " +
          std::to_string(threads) + " thr on " + std::to_string(sms_used) + " SMs, " +
          (c.dram ? "1 GiB footprint (DRAM)" : "8 MiB L2-resident footprint") +
          "; CUDA events, median of 5 at " + std::to_string(lo) + " and at " + std::to_string(hi) +
          " instructions per thread, rate of the difference" + placed;
      add(name + "_requests", instr * rows / secs / 1e9, "G/s", nvml_mhz(), what);
      add(name + "_bytes", instr * 32 * c.vec / secs / 1e9, "GB/s", nvml_mhz(), "the same, bytes");
    }
  }

  void l2_requests() {
    const unsigned footprint4 = 4u << 20;  // 16 MiB
    float* p = nullptr;
    CK(cudaMalloc(&p, static_cast<size_t>(footprint4) * 4));
    CK(cudaMemset(p, 0, static_cast<size_t>(footprint4) * 4));
    const int blocks = sms_ * 4, threads = 256, iters = 64;
    for (int store = 0; store < 2; ++store) {
      for (int spread = 1; spread >= 0; --spread) {
        std::vector<float> t;
        for (int r = 0; r < 5; ++r) {
          l2_request_kernel<<<blocks, threads>>>(p, footprint4, 4, spread, store,
                                                 reinterpret_cast<float*>(sink_));  // warm
          CKL();
          t.push_back(time_ms([&] {
            l2_request_kernel<<<blocks, threads>>>(p, footprint4, iters, spread, store,
                                                   reinterpret_cast<float*>(sink_));
          }));
        }
        std::sort(t.begin(), t.end());
        const double instr = static_cast<double>(blocks) * (threads / 32) * iters * 8;
        const double requests = instr * (spread ? 32 : 1);
        const std::string name = std::string("l2_") + (store ? "store" : "load") +
                                 (spread ? "_1sector" : "_4sector") + "_requests";
        add(name, requests / (t[2] * 1e-3) / 1e9, "G/s", nvml_mhz(),
            std::string(store ? "st.global.cg.f32" : "ld.global.cg.f32") +
                (spread ? ", the 32 lanes on 32 lines (32 one-sector requests per instruction)"
                        : ", the 32 lanes on one line (one four-sector request)") +
                ", 16 MiB footprint (L2-resident), 4 x 256 thr per SM, 8 in flight per "
                "thread; CUDA events, median of 5");
      }
    }
    CK(cudaFree(p));
  }

  void bandwidth() {
    const size_t big = quick_ ? (512ull << 20) : (2048ull << 20);
    uint4* a = nullptr;
    uint4* b = nullptr;
    CK(cudaMalloc(&a, big));
    CK(cudaMalloc(&b, big));
    CK(cudaMemset(a, 1, big));
    CK(cudaMemset(b, 2, big));
    const long long n4 = static_cast<long long>(big / 16);
    auto median = [](std::vector<float> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    // DRAM streaming read
    {
      std::vector<float> t;
      for (int r = 0; r < 5; ++r)
        t.push_back(time_ms([&] {
          read_kernel<<<sms_ * 4, 512>>>(a, n4, 1, reinterpret_cast<uint32_t*>(sink_), probe_);
        }));
      const auto ps = probes(1);
      add("dram_read_bandwidth", big / (median(t) * 1e-3) / 1e9, "GB/s", mhz(ps[0]),
          "ld.global.cg.v4 grid-stride over " + std::to_string(big >> 20) +
              " MB, 4 blocks x 512 thr per SM, CUDA events, median of 5");
    }
    // DRAM copy: kernel and cudaMemcpy, counting read + write bytes
    {
      std::vector<float> t;
      for (int r = 0; r < 5; ++r)
        t.push_back(time_ms([&] { copy_kernel<<<sms_ * 4, 512>>>(a, b, n4); }));
      add("dram_copy_bandwidth", 2.0 * big / (median(t) * 1e-3) / 1e9, "GB/s", nvml_mhz(),
          "uint4 copy kernel over " + std::to_string(big >> 20) +
              " MB, (read + write bytes) / time, median of 5");
      t.clear();
      for (int r = 0; r < 5; ++r)
        t.push_back(time_ms([&] { CK(cudaMemcpyAsync(b, a, big, cudaMemcpyDeviceToDevice)); }));
      add("dram_memcpy_d2d_bandwidth", 2.0 * big / (median(t) * 1e-3) / 1e9, "GB/s", nvml_mhz(),
          "cudaMemcpyAsync device-to-device, (read + write bytes) / time, median of 5");
    }
    // L2 bandwidth: 16 MB footprint read repeatedly by all SMs
    {
      const size_t fp = 16ull << 20;
      const int passes = quick_ ? 10 : 40;
      read_kernel<<<sms_, 1024>>>(a, fp / 16, 2, reinterpret_cast<uint32_t*>(sink_), probe_);
      CKL();
      std::vector<float> t;
      for (int r = 0; r < 3; ++r)
        t.push_back(time_ms([&] {
          read_kernel<<<sms_, 1024>>>(a, fp / 16, passes, reinterpret_cast<uint32_t*>(sink_),
                                      probe_);
        }));
      const auto ps = probes(sms_);
      const double bytes = static_cast<double>(fp) * passes;
      add("l2_read_bandwidth", bytes / (median(t) * 1e-3) / 1e9, "GB/s", mhz(ps[0]),
          "ld.global.cg.v4 over a 16 MB L2-resident footprint, 1 block x 1024 thr per SM, " +
              std::to_string(passes) + " passes, CUDA events");
      add("l2_read_bandwidth_per_sm", per_block_rate(ps, bytes / sms_), "B/clk/SM", mhz(ps[0]),
          "same run, each block's bytes / its clock64 span");
    }
    // cp.async 16 B throughput, L2-resident and from DRAM
    {
      const int chunks = quick_ ? 1024 : 4096;
      const size_t fp = 16ull << 20;
      CK(cudaFuncSetAttribute(cp_async_bw_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              kCpAsyncBwSmem));
      cp_async_bw_kernel<<<sms_, 256, kCpAsyncBwSmem>>>(a, fp / 16, chunks, reinterpret_cast<uint32_t*>(sink_),
                                        probe_);
      CKL();
      CK(cudaDeviceSynchronize());
      auto ps = probes(sms_);
      add("cp_async_l2_bandwidth_per_sm", per_block_rate(ps, 256.0 * chunks * 16), "B/clk/SM",
          mhz(ps[0]),
          "cp.async.cg 16 B, 256 thr x 1 block/SM, 12-16 chunks in flight per thread, each "
          "block re-reads its own 64 KB slice (L2-resident)");
      std::vector<float> t;
      unsigned long long slice = 1;  // as in the kernel: power-of-two chunks per block
      while (2 * slice * sms_ <= static_cast<unsigned long long>(n4)) slice *= 2;
      const int dchunks = static_cast<int>(slice / 256);  // each block reads its slice once
      for (int r = 0; r < 3; ++r)
        t.push_back(time_ms([&] {
          cp_async_bw_kernel<<<sms_, 256, kCpAsyncBwSmem>>>(a, n4, dchunks / 4 * 4,
                                            reinterpret_cast<uint32_t*>(sink_), probe_);
        }));
      ps = probes(sms_);
      add("cp_async_dram_bandwidth",
          static_cast<double>(sms_) * 256.0 * (dchunks / 4 * 4) * 16 / (median(t) * 1e-3) / 1e9,
          "GB/s", mhz(ps[0]),
          "cp.async.cg 16 B, each block streams its own " + std::to_string(slice >> 16) +
              " MB slice once from DRAM, 256 thr x 1 block/SM, CUDA events");
    }
    // cp.async latency (L2 hit)
    {
      const int it = 4096;
      cp_async_latency_kernel<<<1, 32>>>(a, 512, it, reinterpret_cast<uint32_t*>(sink_), probe_);
      CKL();
      CK(cudaDeviceSynchronize());
      const Probe p = probes(1)[0];
      add("cp_async_16B_l2_latency", static_cast<double>(p.c1 - p.c0) / it, "cycles", nvml_mhz(),
          "1 thread: cp.async.cg 16 B + commit + wait_group 0 per iteration, L2-hot lines");
    }
    CK(cudaFree(a));
    CK(cudaFree(b));
  }

  void arithmetic() {
    const int it = quick_ ? 1 << 12 : 1 << 15;
    ffma_kernel<<<sms_, 1024>>>(it, 0.999f, 0.001f, false, reinterpret_cast<float*>(sink_),
                                probe_);
    CKL();
    CK(cudaDeviceSynchronize());
    auto ps = probes(sms_);
    add("ffma_throughput", per_block_rate(ps, 1024.0 * it * 8), "FMA/clk/SM", mhz(ps[0]),
        "1024 thr x 1 block/SM, 8 independent FFMA chains per thread");
    ffma_kernel<<<1, 32>>>(1 << 14, 0.999f, 0.001f, true, reinterpret_cast<float*>(sink_),
                           probe_);
    CKL();
    CK(cudaDeviceSynchronize());
    const Probe p = probes(1)[0];
    add("ffma_latency", static_cast<double>(p.c1 - p.c0) / (1 << 14), "cycles", nvml_mhz(),
        "1 warp, dependent FFMA chain");
    // FFMA issue in the SIMT outer product (outer_product_kernel), 1 to 4 warps per scheduler.
    for (int wps : {1, 2, 3, 4}) {
      for (bool with_lds : {false, true}) {
        const int iters = quick_ ? 256 : 2048, threads = 128 * wps;
        auto* kernel = with_lds ? outer_product_kernel<true> : outer_product_kernel<false>;
        kernel<<<sms_, threads>>>(iters, reinterpret_cast<float*>(sink_), probe_);
        CKL();
        CK(cudaDeviceSynchronize());
        const auto pp = probes(sms_);
        // FFMA warp-instructions per scheduler cycle: 64 per k step per warp.
        add(std::string("outer_product_ffma_ipc_") + (with_lds ? "lds_" : "regs_") +
                std::to_string(wps) + "wps",
            per_block_rate(pp, 64.0 * 8 * iters * wps), "FFMA/clk/scheduler", mhz(pp[0]),
            std::to_string(wps) +
                " warp(s) per scheduler (1 block/SM), the 8x8 outer product's 64 FFMAs per k "
                "step" +
                (with_lds ? " after the next step's four ld.shared.v4 (A 8 lanes per word, B 4)"
                          : ", fragments in registers") +
                "; FFMA warp-instructions per scheduler per SM cycle (block clock64 span)");
      }
    }
    mma_case<0>("f16_m16n8k16", 16 * 8 * 16);
    mma_case<1>("bf16_m16n8k16", 16 * 8 * 16);
    mma_case<2>("tf32_m16n8k8", 16 * 8 * 8);
  }

  template <int KIND>
  void mma_case(const std::string& tag, int fma_per_mma) {
    const int it = quick_ ? 1 << 11 : 1 << 14;
    mma_kernel<KIND><<<sms_, 512>>>(it, 0x9e3779b9u, false, reinterpret_cast<float*>(sink_),
                                    probe_);
    CKL();
    CK(cudaDeviceSynchronize());
    auto ps = probes(sms_);
    add("mma_" + tag + "_throughput", per_block_rate(ps, 16.0 * it * 8 * fma_per_mma),
        "FMA/clk/SM", mhz(ps[0]),
        "mma.sync, 16 warps x 1 block/SM, 8 independent accumulators per warp");
    mma_kernel<KIND><<<1, 32>>>(4096, 0x9e3779b9u, true, reinterpret_cast<float*>(sink_), probe_);
    CKL();
    CK(cudaDeviceSynchronize());
    const Probe p = probes(1)[0];
    add("mma_" + tag + "_latency", static_cast<double>(p.c1 - p.c0) / 4096, "cycles", nvml_mhz(),
        "1 warp, mma.sync chained through the accumulator");
  }

  // Whether `threads` threads of kernel k (with `smem` dynamic shared bytes) fit on one SM:
  // combinations that do not are skipped, not failed.
  template <class K>
  bool fits(K k, int threads, int smem) {
    cudaFuncAttributes fa{};
    CK(cudaFuncGetAttributes(&fa, k));
    return fa.numRegs * threads <= prop_.regsPerMultiprocessor &&
           threads <= fa.maxThreadsPerBlock && smem + int(fa.sharedSizeBytes) <= 227 * 1024;
  }

  // What a few warps per sub-partition sustain (see mma_occupancy_kernel, mma_mix_kernel).
  void issue() {
    const int it = quick_ ? 1 << 10 : 1 << 12;
    auto occ = [&](auto acc_tag, int warps) {
      constexpr int ACC = decltype(acc_tag)::value;
      if (!fits(mma_occupancy_kernel<1, ACC>, 32 * warps, 0)) return;
      mma_occupancy_kernel<1, ACC><<<sms_, 32 * warps>>>(it * 32 / ACC, 0x9e3779b9u,
                                                         reinterpret_cast<float*>(sink_), probe_);
      CKL();
      CK(cudaDeviceSynchronize());
      auto ps = probes(sms_);
      add("mma_bf16_rate_w" + std::to_string(warps) + "_acc" + std::to_string(ACC),
          per_block_rate(ps, double(warps) * (it * 32 / ACC) * ACC * 2048.0), "FMA/clk/SM",
          mhz(ps[0]),
          "mma.sync m16n8k16 bf16 from registers, " + std::to_string(warps) +
              " warps x 1 block/SM, " + std::to_string(ACC) + " independent accumulators per warp");
    };
    for (int warps : {4, 8, 16}) {
      occ(std::integral_constant<int, 1>{}, warps);
      occ(std::integral_constant<int, 2>{}, warps);
      occ(std::integral_constant<int, 4>{}, warps);
      occ(std::integral_constant<int, 8>{}, warps);
      occ(std::integral_constant<int, 32>{}, warps);
    }
    auto mix = [&](auto d_tag, auto mt_tag, auto nt_tag, int warps) {
      constexpr gemmsim::DType D = decltype(d_tag)::value;
      constexpr int MT = decltype(mt_tag)::value, NT = decltype(nt_tag)::value;
      constexpr bool kTf32 = D == gemmsim::DType::TF32;
      auto k = mma_mix_kernel<D, MT, NT>;
      CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 16384));
      const int iters = quick_ ? 256 : 2048;
      if (!fits(k, 32 * warps, 16384)) return;
      k<<<sms_, 32 * warps, 16384>>>(iters, reinterpret_cast<float*>(sink_), probe_);
      CKL();
      CK(cudaDeviceSynchronize());
      auto ps = probes(sms_);
      // m16n8k16 bf16: 2048 FMA; m16n8k8 tf32: 1024.
      const double fma = double(warps) * iters * MT * NT * (kTf32 ? 1024.0 : 2048.0);
      const std::string shape = std::to_string(16 * MT) + "x" + std::to_string(8 * NT);
      const std::string b_loads =
          kTf32 ? std::to_string(2 * NT) + " lds.32, each register through cvt.rna.tf32,"
                : std::to_string(NT / 2) + " ldmatrix.x4.trans";
      add(std::string(kTf32 ? "mma_tf32_lds_mix_" : "mma_ldmatrix_mix_") + shape + "_w" +
              std::to_string(warps),
          per_block_rate(ps, fma), "FMA/clk/SM", mhz(ps[0]),
          "warp tile " + shape + ": per " + (kTf32 ? "k8" : "k16") + " step " + std::to_string(MT) +
              " ldmatrix.x4 + " + b_loads + " into the other buffer, then " +
              std::to_string(MT * NT) + " mma.sync " + (kTf32 ? "tf32" : "bf16") + "; " +
              std::to_string(warps) + " warps x 1 block/SM, no global memory");
    };
    using Bf16 = std::integral_constant<gemmsim::DType, gemmsim::DType::BF16>;
    using Tf32 = std::integral_constant<gemmsim::DType, gemmsim::DType::TF32>;
    for (int warps : {1, 4, 8, 16}) {
      mix(Bf16{}, std::integral_constant<int, 4>{}, std::integral_constant<int, 8>{}, warps);
      mix(Bf16{}, std::integral_constant<int, 2>{}, std::integral_constant<int, 8>{}, warps);
      mix(Bf16{}, std::integral_constant<int, 4>{}, std::integral_constant<int, 4>{}, warps);
      mix(Bf16{}, std::integral_constant<int, 2>{}, std::integral_constant<int, 4>{}, warps);
      mix(Bf16{}, std::integral_constant<int, 1>{}, std::integral_constant<int, 8>{}, warps);
    }
    // The tf32 consumer loops: 64x64 warp tiles, one warp per scheduler (the 2x2-warp, one
    // consumer warpgroup kernels), against 64x32 with two (2x4 warps, two warpgroups).
    for (int warps : {1, 4, 8}) {
      mix(Tf32{}, std::integral_constant<int, 4>{}, std::integral_constant<int, 8>{}, warps);
      mix(Tf32{}, std::integral_constant<int, 4>{}, std::integral_constant<int, 4>{}, warps);
    }
  }

  // Element-wise copy chunks (element_chunk_kernel): 128-row tiles of a row-major matrix with
  // a pitch of 4097 elements (4096 for the 16-byte vector case), all K tiles of the rows, blocks
  // sharing 16 tiles (L2-resident), timed on a second launch (L2 warm, as in the GEMMs, where
  // the tiles of A are re-read by every CTA column).
  template <class T, int kN, bool kVec>
  void element_chunk(const char* name, int blocks, int warps, const std::string& what) {
    const int rows = 128, pitch = kVec ? 4096 : 4097;
    const int ktiles = (pitch - 8) / (64 / static_cast<int>(sizeof(T)));
    T* buf = nullptr;
    CK(cudaMalloc(&buf, sizeof(T) * 16 * rows * pitch));
    CK(cudaMemset(buf, 1, sizeof(T) * 16 * rows * pitch));
    for (int pass = 0; pass < 2; ++pass) {
      element_chunk_kernel<T, kN, kVec>
          <<<blocks, 32 * warps>>>(buf, pitch, rows, ktiles, 1 << 20,
                                   static_cast<uint32_t*>(sink_), probe_);
      CKL();
      CK(cudaDeviceSynchronize());
    }
    const Probe p = probes(1)[0];
    const double chunks = static_cast<double>(ktiles) * (rows / 8) / warps;  // per warp
    add(name, static_cast<double>(p.c1 - p.c0) / chunks, "cycles", mhz(p),
        what + ", " + std::to_string(blocks) + " block(s) of " + std::to_string(warps) +
            " warp(s); cycles per chunk per warp (block 0's span)");
    CK(cudaFree(buf));
  }
  void element_copy() {
    const std::string u16 = "element-wise copy chunk: 8 predicated ld.global.u16 + st.shared.v4";
    element_chunk<uint16_t, 8, false>("elem_chunk_u16x8_1warp", 1, 1, u16);
    element_chunk<uint16_t, 4, false>("elem_chunk_u16x4_1warp", 1, 1,
                                      "as elem_chunk_u16x8 with 4 loads");
    element_chunk<uint16_t, 2, false>("elem_chunk_u16x2_1warp", 1, 1,
                                      "as elem_chunk_u16x8 with 2 loads");
    element_chunk<uint16_t, 1, false>("elem_chunk_u16x1_1warp", 1, 1,
                                      "as elem_chunk_u16x8 with 1 load");
    element_chunk<uint16_t, 8, true>("vec_chunk_v4_1warp", 1, 1,
                                     "one 16-byte ld.global.v4 + st.shared.v4 per chunk");
    element_chunk<uint32_t, 4, false>("elem_chunk_u32x4_1warp", 1, 1,
                                      "tf32 chunk: 4 predicated ld.global.u32 + st.shared.v4");
    element_chunk<uint16_t, 8, false>("elem_chunk_u16x8_1warp_allsm", sms_, 1, u16);
    element_chunk<uint16_t, 8, false>("elem_chunk_u16x8_8warps_allsm", 2 * sms_, 4, u16);
    element_chunk<uint16_t, 8, false>("elem_chunk_u16x8_16warps_allsm", 4 * sms_, 4, u16);
  }

  // The SM's own L2 port, against the aggregate: the cp.async stream of bandwidth() (256 threads
  // x 1 block per SM, 12-16 16-byte chunks in flight per thread, L2-resident slices) run on 1
  // to all SMs. Per-SM B/clk from each block's clock64 span; the aggregate from CUDA events.
  // A copy stream's two figures: NAME_per_sm_TAG, bytes per SM clock from each block's clock64
  // span, and NAME_TAG, all blocks' bytes over the CUDA-event time `event_ms`.
  void add_stream_rates(const std::string& name, const std::string& tag,
                        const std::vector<Probe>& ps, double per_block, int blocks, float event_ms,
                        const std::string& how) {
    add(name + "_per_sm_" + tag, per_block_rate(ps, per_block), "B/clk/SM", mhz(ps[0]),
        how +
            ", 12-16 chunks in flight per thread, L2-resident slices; each block's bytes / "
            "its clock64 span");
    add(name + "_" + tag, blocks * per_block / (event_ms * 1e-3) / 1e9, "GB/s", mhz(ps[0]),
        "same, all blocks' bytes / CUDA-event time (median of 3)");
  }

  // Split sectors: cp_async_rows_kernel for tile rows of 64, 128 and 256 bytes at pitches that
  // split sectors (16 mod 32) and that do not, on one SM (its own port: 127 B/clk when
  // nothing splits) and, for 64-byte rows, on every SM (the L2's aggregate).
  void cp_async_split() {
    const size_t fp = 16ull << 20;
    uint4* a = nullptr;
    CK(cudaMalloc(&a, fp));
    CK(cudaMemset(a, 3, fp));
    const int chunks = quick_ ? 1024 : 4096;
    const int shapes[][2] = {{64, 64},   {64, 80},   {64, 96},   {64, 112},  {64, 128},
                             {128, 128}, {128, 144}, {128, 160}, {256, 256}, {256, 272},
                             {256, 288}, {512, 512}, {512, 528}};
    for (const auto& sh : shapes) {
      const int row = sh[0], pitch = sh[1];
      const int smem = kCpAsyncChunks * 16 / row * pitch;
      CK(cudaFuncSetAttribute(cp_async_rows_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              smem));
      for (const int blocks : {1, sms_}) {
        if (blocks > 1 && row != 64) continue;
        auto go = [&] {
          cp_async_rows_kernel<<<blocks, 256, smem>>>(a, fp / 16, chunks, row, pitch,
                                                      static_cast<uint32_t*>(sink_), probe_);
        };
        go();
        CKL();
        std::vector<float> t;
        for (int r = 0; r < 3; ++r) t.push_back(time_ms(go));
        std::sort(t.begin(), t.end());
        const auto ps = probes(blocks);
        const double per_block = 256.0 * chunks * 16;
        const std::string tag = "row" + std::to_string(row) + "_pitch" + std::to_string(pitch) +
                                "_" + std::to_string(blocks) + "sm";
        add_stream_rates("cp_async_rows_bandwidth", tag, ps, per_block, blocks, t[1],
                         "cp.async.cg 16 B, tile rows of " + std::to_string(row) + " B stored " +
                             std::to_string(pitch) +
                             " B apart in shared memory, 256 thr x 1 "
                             "block on each of " +
                             std::to_string(blocks) + " SMs");
      }
    }
    CK(cudaFree(a));
  }

  // Split sectors beside ldmatrix (cp_async_ldsm_mix_kernel, one block on one SM): the copy's
  // bytes per clock and the ldmatrix wavefronts per clock, each alone and both at once, for
  // contiguous (64 B rows at pitch 64) and padded rows (pitch 80; 256 B rows at 272).
  void cp_async_ldsm_mix() {
    const size_t fp = 16ull << 20;
    uint4* a = nullptr;
    long long* spans = nullptr;
    CK(cudaMalloc(&a, fp));
    CK(cudaMemset(a, 3, fp));
    CK(cudaMalloc(&spans, 16 * sizeof(long long)));
    const int chunks = quick_ ? 1024 : 4096, ld = quick_ ? 1024 : 4096;
    const int shapes[][2] = {{64, 64}, {64, 80}, {256, 256}, {256, 272}};
    for (const auto& sh : shapes) {
      const int row = sh[0], pitch = sh[1];
      const int smem = kCpAsyncChunks * 16 / row * pitch + kMixLdBytes;
      CK(cudaFuncSetAttribute(cp_async_ldsm_mix_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              smem));
      for (const int mode : {0, 1, 2}) {  // copy alone, ldmatrix alone, both
        const int c = mode == 1 ? 0 : chunks, l = mode == 0 ? 0 : ld;
        std::vector<float> copy_rate, ld_rate;
        for (int r = 0; r < 3; ++r) {
          cp_async_ldsm_mix_kernel<<<1, 512, smem>>>(a, fp / 16, c, row, pitch, l, spans);
          CKL();
          CK(cudaDeviceSynchronize());
          long long h[16];
          CK(cudaMemcpy(h, spans, sizeof h, cudaMemcpyDeviceToHost));
          const long long cs = *std::max_element(h, h + 8), ls = *std::max_element(h + 8, h + 16);
          copy_rate.push_back(float(256.0 * c * 16 / double(cs)));
          ld_rate.push_back(float(8.0 * l * 4 / double(ls)));
        }
        const std::string tag = "row" + std::to_string(row) + "_pitch" + std::to_string(pitch) +
                                (mode == 0   ? "_copy"
                                 : mode == 1 ? "_ldsm"
                                             : "_both");
        const std::string how = "one block of 512 threads on one SM: warps 0-7 cp.async.cg " +
                                std::to_string(chunks) + " chunks each into " +
                                std::to_string(row) + "-byte rows " + std::to_string(pitch) +
                                " B apart, warps 8-15 " + std::to_string(ld) +
                                " ldmatrix.x4 each; median of 3 launches; ";
        if (mode != 1)
          add("cp_async_mix_copy_" + tag, median_of(copy_rate), "B/clk", nvml_mhz(),
              how + "copy bytes / the slowest copy warp's clock64 span");
        if (mode != 0)
          add("cp_async_mix_ldsm_" + tag, median_of(ld_rate), "wavefronts/clk", nvml_mhz(),
              how + "ldmatrix wavefronts (4 per x4) / the slowest ldmatrix warp's span");
      }
    }
    CK(cudaFree(spans));
    CK(cudaFree(a));
  }

  void l2_port() {
    const size_t fp = 16ull << 20;
    uint4* a = nullptr;
    CK(cudaMalloc(&a, fp));
    CK(cudaMemset(a, 3, fp));
    CK(cudaFuncSetAttribute(cp_async_bw_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            kCpAsyncBwSmem));
    const int chunks = quick_ ? 1024 : 4096;
    for (const int blocks : {1, 2, 4, 8, 16, 33, 66, 99, sms_}) {
      cp_async_bw_kernel<<<blocks, 256, kCpAsyncBwSmem>>>(a, fp / 16, chunks,
                                                          static_cast<uint32_t*>(sink_), probe_);
      CKL();
      std::vector<float> t;
      for (int r = 0; r < 3; ++r)
        t.push_back(time_ms([&] {
          cp_async_bw_kernel<<<blocks, 256, kCpAsyncBwSmem>>>(
              a, fp / 16, chunks, static_cast<uint32_t*>(sink_), probe_);
        }));
      std::sort(t.begin(), t.end());
      const auto ps = probes(blocks);
      const double per_block = 256.0 * chunks * 16;
      const std::string tag = std::to_string(blocks) + "sm";
      add_stream_rates(
          "cp_async_l2_bandwidth", tag, ps, per_block, blocks, t[1],
          "cp.async.cg 16 B, 256 thr x 1 block on each of " + std::to_string(blocks) + " SMs");
    }
    CK(cudaFree(a));
  }

  void launch() {
    for (int i = 0; i < 100; ++i) empty_kernel<<<1, 32>>>();
    CKL();
    CK(cudaDeviceSynchronize());
    const int n = quick_ ? 2000 : 20000;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) empty_kernel<<<1, 32>>>();
    CKL();
    CK(cudaDeviceSynchronize());
    auto t1 = std::chrono::steady_clock::now();
    add("launch_back_to_back", std::chrono::duration<double, std::micro>(t1 - t0).count() / n, "us",
        nvml_mhz(), "host wall time per launch of " + std::to_string(n) +
                        " back-to-back empty kernels (<<<1,32>>>), one sync at the end");
    std::vector<float> ev;
    for (int i = 0; i < 200; ++i) ev.push_back(time_ms([&] { empty_kernel<<<1, 32>>>(); }));
    std::sort(ev.begin(), ev.end());
    add("launch_event_empty_kernel_idle", ev[ev.size() / 2] * 1e3, "us", nvml_mhz(),
        "CUDA-event time around one empty kernel on an idle stream (host submission latency "
        "included), median of 200");
    ev.clear();
    for (int i = 0; i < 200; ++i) {
      spin_kernel<<<1, 1>>>(30000, probe_);  // GPU busy while the host queues the events
      CKL();
      ev.push_back(time_ms([&] { empty_kernel<<<1, 32>>>(); }));
    }
    std::sort(ev.begin(), ev.end());
    add("launch_event_empty_kernel", ev[ev.size() / 2] * 1e3, "us", nvml_mhz(),
        "CUDA-event time around one empty kernel queued behind a 30 us kernel, median of 200 "
        "(what the harness records as launch_overhead_us)");
    std::vector<double> rt;
    for (int i = 0; i < 200; ++i) {
      auto a = std::chrono::steady_clock::now();
      empty_kernel<<<1, 32>>>();
      CK(cudaDeviceSynchronize());
      auto b = std::chrono::steady_clock::now();
      rt.push_back(std::chrono::duration<double, std::micro>(b - a).count());
    }
    std::sort(rt.begin(), rt.end());
    add("launch_sync_roundtrip", rt[rt.size() / 2], "us", nvml_mhz(),
        "host wall time of launch + cudaDeviceSynchronize of an empty kernel, median of 200");
    // Launch-to-start: a kernel stamps %globaltimer; compare with a stamp taken by a kernel that
    // was already running when the host launched the second one is not possible without a host
    // clock on the GPU's timebase, so measure the gap between two back-to-back stamp kernels.
    long long* t = nullptr;
    CK(cudaMalloc(&t, 2 * sizeof(long long)));
    std::vector<double> gap;
    for (int i = 0; i < 200; ++i) {
      stamp_kernel<<<1, 32>>>(t);
      stamp_kernel<<<1, 32>>>(t + 1);
      CKL();
      long long h[2];
      CK(cudaMemcpy(h, t, sizeof h, cudaMemcpyDeviceToHost));
      gap.push_back(static_cast<double>(h[1] - h[0]) * 1e-3);
    }
    std::sort(gap.begin(), gap.end());
    add("launch_kernel_to_kernel_gap", gap[gap.size() / 2], "us", nvml_mhz(),
        "%globaltimer start-to-start of two back-to-back tiny kernels in one stream, median "
        "of 200 (GPU-side dispatch gap)");
    CK(cudaFree(t));
  }

  void write(const std::string& path) {
    std::ofstream o(path);
    o << "name,value,unit,sm_clock_mhz,method\n";
    for (const auto& r : rows_) {
      char v[64], f[32];
      std::snprintf(v, sizeof v, "%.4g", r.value);
      std::snprintf(f, sizeof f, "%.0f", r.mhz);
      std::string m = r.method;
      for (char& c : m)
        if (c == '"') c = '\'';
      o << r.name << ',' << v << ',' << r.unit << ',' << f << ",\"" << m << "\"\n";
    }
  }

 private:
  bool quick_;
  cudaDeviceProp prop_{};
  std::unique_ptr<gemmsim::bench::GpuMonitor> mon_;
  int sms_ = 0;
  Probe* probe_ = nullptr;
  void* sink_ = nullptr;
  cudaEvent_t e0_{}, e1_{};
  std::vector<Row> rows_;
};

__global__ void scatter_kernel(const unsigned long long* where, const unsigned long long* what,
                               long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) *reinterpret_cast<unsigned long long*>(where[i]) = what[i];
}

void Runner::scatter(const std::vector<unsigned long long>& where,
                     const std::vector<unsigned long long>& what) {
  unsigned long long* d = nullptr;
  const size_t n = where.size();
  CK(cudaMalloc(&d, 2 * n * sizeof(unsigned long long)));
  CK(cudaMemcpy(d, where.data(), n * 8, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d + n, what.data(), n * 8, cudaMemcpyHostToDevice));
  scatter_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(d, d + n,
                                                                  static_cast<long long>(n));
  CKL();
  CK(cudaDeviceSynchronize());
  CK(cudaFree(d));
}

}  // namespace mb

int main(int argc, char** argv) {
  std::string out = "microbench.csv";
  bool quick = false;
  std::string only;  // one group of tests, or all
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) out = argv[++i];
    else if (a == "--quick") quick = true;
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else {
      std::fprintf(
          stderr,
          "usage: gemmsim-microbench [--out FILE] [--quick] "
          "[--only smem|arithmetic|issue|global|element|l2port|bandwidth|launch|loaded|l2loaded|"
          "ifetch|dirty|granularity|reduction|"
          "l2requests|flushstate|flushorder|l2share|fixedcost|l2part|tilelat|tileflush|patterns|"
          "l2shapes|smspread|sharedlines|cpsplit|cpmix|l2retain]\n");
      return 2;
    }
  }
  const std::string groups[] = {
      "",           "smem",       "arithmetic", "issue",    "global",    "element",     "l2port",
      "bandwidth",  "launch",     "loaded",     "ifetch",   "dirty",     "granularity", "reduction",
      "l2requests", "flushstate", "flushorder", "l2share",  "fixedcost", "l2part",      "tilelat",
      "tileflush",  "patterns",   "l2shapes",   "l2loaded", "smspread",  "sharedlines", "cpsplit",
      "cpmix",      "l2retain"};
  if (std::find(std::begin(groups), std::end(groups), only) == std::end(groups)) {
    std::fprintf(stderr, "gemmsim-microbench: --only '%s': unknown group\n", only.c_str());
    return 2;
  }
  try {
    mb::Runner r(quick);
    r.clock_and_device(false);
    auto want = [&](const char* group) { return only.empty() || only == group; };
    if (want("smem")) r.smem();
    if (want("arithmetic")) r.arithmetic();
    if (want("issue")) r.issue();
    if (want("global")) r.global_latency();
    if (want("element")) r.element_copy();
    if (want("l2port")) r.l2_port();
    if (want("cpsplit")) r.cp_async_split();
    if (want("cpmix")) r.cp_async_ldsm_mix();
    if (want("bandwidth")) r.bandwidth();
    if (want("launch")) r.launch();
    if (want("loaded")) r.loaded_latency();
    if (want("l2loaded")) r.loaded_latency(true);
    if (want("ifetch")) r.instruction_fetch();
    if (want("dirty")) r.dirty_lines();
    if (want("granularity")) r.access_granularity();
    if (want("reduction")) r.reductions();
    if (want("l2requests")) r.l2_requests();
    if (want("flushstate")) r.flush_state();
    if (want("flushorder")) r.flush_order();
    if (want("l2share")) r.l2_sharing();
    if (want("l2retain")) r.l2_retention();
    if (want("fixedcost")) r.fixed_costs();
    if (want("l2part")) r.l2_partitions(out + ".lines.csv");
    if (want("tilelat")) r.tile_latency();
    if (want("tileflush")) r.tile_latency(true);
    if (want("patterns")) r.patterns();
    if (want("l2shapes")) r.l2_shapes();
    if (want("smspread")) r.sm_spread(out + ".sms.csv");
    if (want("sharedlines")) r.shared_lines(out + ".shared.csv");
    r.clock_and_device(true);
    r.write(out);
    std::printf("wrote %s\n", out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemmsim-microbench: %s\n", e.what());
    return 1;
  }
  return 0;
}
