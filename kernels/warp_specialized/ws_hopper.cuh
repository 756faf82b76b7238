// Warp-specialized tensor-core GEMM, Hopper (Family::WarpSpecialized, WsVariant::Hopper):
// TMA + mbarrier + wgmma + setmaxnreg. sm_90a only (-gencode=arch=compute_90a,code=sm_90a).
//
// Roles (kernels/common/ws_layout.hpp): warpgroups 0 .. consumers-1 are consumers, warpgroup g
// owning block rows [g, g+1) * block_m / consumers, i.e. (block_m / consumers) / 64 wgmma slabs
// of 64 rows (warp q of the warpgroup holds rows 16q..16q+15 of every slab); warpgroup
// `consumers` is the producer. threads = 128 * (consumers + 1).
//
// Schedule. Thread 0 initialises FULL[s] (count 1) and EMPTY[s] (count 4*consumers), fences the
// initialisation for the async proxy, then one __syncthreads.
//   Register reallocation (two consumer warpgroups only): the producer warpgroup runs
//   setmaxnreg.dec 40, the consumer warpgroups setmaxnreg.inc 232 (ws_layout.hpp says why).
//   Producer, thread 0 of its warpgroup only (the other 127 threads exit), for k-tile kt,
//   slot s = kt % stages, use u = kt / stages:
//     if u >= 1: wait EMPTY[s] with parity (u - 1) & 1
//     mbarrier.arrive.expect_tx FULL[s], ws_stage_tx_bytes (A tile + B tile bytes)
//     cp.async.bulk.tensor.2d A box (64 k x block_m rows) at (k0, m0) -> A tile of slot s
//     cp.async.bulk.tensor.2d B boxes (64 n x 64 k) at (n0 + 64 j, k0), j < block_n / 64
//       -> B tile of slot s, box j at j * 8192
//     (128-byte swizzle; boxes reaching past M, N or K are zero-filled and still count their
//     full bytes, so the FULL phase completes with exactly the expected transaction count)
//   Consumer warpgroup, for kt, slot s, use u:
//     wait FULL[s] with parity u & 1
//     wgmma.fence; for k16 = 0..3 (16-element K steps of the 64-wide tile), for each slab:
//       wgmma.mma_async m64n{block_n}k16 (A K-major descriptor at slab rows, +32 bytes per
//       k16; B MN-major descriptor at k-row 16 k16) accumulating into the slab's registers
//     wgmma.commit_group; wgmma.wait_group 1 (this tile's group stays in flight, the previous
//       tile's has completed), then lane 0 of each consumer warp arrives on EMPTY of the
//       previous tile's slot
//     after the last tile: wgmma.wait_group 0
//   Epilogue: each consumer thread stores its accumulators from registers to C (fp32, float2
//     pairs; rows/columns outside the problem skipped).
// Non-persistent: one CTA per output tile (threadblock swizzle as in tile_rules.hpp); split_k 1.
// The host side (make_ws_hopper_tensor_maps) encodes the two tensor maps per launch; they are
// passed by value as __grid_constant__ kernel parameters.
#pragma once

#include <cuda.h>  // CUtensorMap (types only; the encoder comes from the runtime's entry point)

#include <cstdint>

#include "kernels/common/gemm_args.cuh"
#include "kernels/common/ws_layout.hpp"
#include "kernels/warp_specialized/wgmma_ops.cuh"
#include "kernels/warp_specialized/ws_barriers.cuh"

namespace gemmsim {
namespace dev {

__device__ __forceinline__ void mbar_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, int c0, int c1,
                                            uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator accesses across wgmma fences and waits.
template <int N>
__device__ __forceinline__ void fence_operands(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int R>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
}
template <int R>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}
// wgmma shared-memory matrix descriptor, 128-byte swizzle (layout type 1): start address,
// leading and stride byte offsets, all in 16-byte units (PTX ISA, "Matrix Descriptor Format").
__device__ __forceinline__ uint64_t gmma_desc_sw128(uint32_t saddr, uint32_t lbo, uint32_t sbo) {
  return static_cast<uint64_t>((saddr & 0x3FFFF) >> 4) |
         (static_cast<uint64_t>((lbo >> 4) & 0x3FFF) << 16) |
         (static_cast<uint64_t>((sbo >> 4) & 0x3FFF) << 32) | (1ull << 62);
}

}  // namespace dev

template <class Tag>
__global__ void __launch_bounds__(Tag::value.threads(), 1)
    gemm_ws_hopper_kernel(const __grid_constant__ CUtensorMap tma_a,
                          const __grid_constant__ CUtensorMap tma_b, GemmArgs args) {
  constexpr GemmConfig C = Tag::value;
  static_assert(C.family == Family::WarpSpecialized && C.ws_variant == WsVariant::Hopper,
                "Hopper warp-specialized kernel");
  static_assert(ws_rule_violation(C) == nullptr,
                "Hopper warp-specialized: configuration breaks ws_layout.hpp");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr DType D = C.dtype;
  constexpr int BM = C.block_m, BN = C.block_n, BK = C.block_k, S = C.stages;
  constexpr int CONS = C.consumers;
  constexpr int RPC = ws_rows_per_consumer(C);  // rows per consumer warpgroup
  constexpr int SLABS = ws_hopper_slabs(C);
  constexpr int NB = BN / kWsHopperBoxN;
  constexpr int A_STAGE = ws_a_stage_bytes(C), STAGE = ws_stage_bytes(C);
  constexpr int ROW = BK * element_bytes(D);  // 128 bytes per A row / B box row
  static_assert(ROW == 128, "one 128-byte swizzle atom per row");
  constexpr int BOX_B = 64 * ROW;             // one 64 x 64 B box
  constexpr uint32_t TX = ws_stage_tx_bytes(C);

  extern __shared__ unsigned char smem_raw[];
  const uint32_t sbase =
      (dev::smem_addr(smem_raw) + (kWsSwizzleAtomBytes - 1)) & ~uint32_t(kWsSwizzleAtomBytes - 1);
  const auto full_bar = [&](int s) { return sbase + ws_full_barrier_offset(C, s); };
  const auto empty_bar = [&](int s) { return sbase + ws_empty_barrier_offset(C, s); };

  const dev::BlockWork w = dev::block_work<BM, BN, BK>(args);
  if (!w.valid) return;  // uniform over the block
  const int ktiles = (w.k_end - w.k_begin + BK - 1) / BK;
  const int tid = threadIdx.x;
  if (tid == 0) dev::cta_trace_begin<BM, BN>(args, w);
  const int wg = tid / 128;

  if (tid == 0) {
    for (int s = 0; s < S; ++s) {
      dev::mbar_init(full_bar(s), 1);
      dev::mbar_init(empty_bar(s), ws_consumer_warps(C));
    }
    dev::mbar_fence_init();
  }
  __syncthreads();

  if (wg == CONS) {
    // ---- producer warpgroup ------------------------------------------------------------------
    if constexpr (ws_producer_regs(C) > 0) dev::setmaxnreg_dec<ws_producer_regs(C)>();
    if (tid == CONS * 128) {
      dev::tma_prefetch_map(&tma_a);
      dev::tma_prefetch_map(&tma_b);
      for (int kt = 0; kt < ktiles; ++kt) {
        const int s = kt % S, u = kt / S;
        if (u >= 1) dev::mbar_wait(empty_bar(s), (u - 1) & 1);
        const uint32_t st = sbase + s * STAGE;
        const int k0 = w.k_begin + kt * BK;
        dev::mbar_arrive_expect_tx(full_bar(s), TX);
        dev::tma_load_2d(st, &tma_a, k0, w.m0, full_bar(s));
#pragma unroll
        for (int j = 0; j < NB; ++j)
          dev::tma_load_2d(st + A_STAGE + j * BOX_B, &tma_b, w.n0 + j * kWsHopperBoxN, k0,
                           full_bar(s));
      }
    }
    return;
  }

  // ---- consumer warpgroups --------------------------------------------------------------------
  if constexpr (ws_consumer_regs(C) > 0) dev::setmaxnreg_inc<ws_consumer_regs(C)>();
  const int lane = tid % 32, q = (tid % 128) / 32;
  float acc[SLABS][BN / 2];
#pragma unroll
  for (int m = 0; m < SLABS; ++m)
#pragma unroll
    for (int j = 0; j < BN / 2; ++j) acc[m][j] = 0.f;

  for (int kt = 0; kt < ktiles; ++kt) {
    const int s = kt % S, u = kt / S;
    dev::mbar_wait(full_bar(s), u & 1);
    const uint32_t sa = sbase + s * STAGE + wg * RPC * ROW;
    const uint32_t sb = sbase + s * STAGE + A_STAGE;
#pragma unroll
    for (int m = 0; m < SLABS; ++m) dev::fence_operands(acc[m]);
    dev::wgmma_fence();
#pragma unroll
    for (int k16 = 0; k16 < BK / 16; ++k16) {
      // B: MN-major, LBO = next 64 columns (next box), SBO = next 8 k-rows.
      const uint64_t db = dev::gmma_desc_sw128(sb + k16 * 16 * ROW, BOX_B, 8 * ROW);
#pragma unroll
      for (int m = 0; m < SLABS; ++m) {
        // A: K-major, SBO = next 8 rows; the k16 step moves the start by 32 bytes inside the atom.
        const uint64_t da = dev::gmma_desc_sw128(sa + m * 64 * ROW + k16 * 32, 16, 8 * ROW);
        dev::wgmma_m64k16<D, BN>(acc[m], da, db, 1);
      }
    }
    dev::wgmma_commit();
#pragma unroll
    for (int m = 0; m < SLABS; ++m) dev::fence_operands(acc[m]);
    dev::wgmma_wait<1>();
    if (kt > 0 && lane == 0) dev::mbar_arrive(empty_bar((kt - 1) % S));
  }
  dev::wgmma_wait<0>();
#pragma unroll
  for (int m = 0; m < SLABS; ++m) dev::fence_operands(acc[m]);

  // ---- epilogue: accumulator j at row 16q + l/4 + 8((j/2)%2), column 8(j/4) + 2(l%4) + j%2 ---
  const int M = args.m, N = args.n;
  const int g = lane >> 2, t4 = lane & 3;
  const bool pair_store = (N % 2) == 0;
#pragma unroll
  for (int m = 0; m < SLABS; ++m) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = w.m0 + wg * RPC + m * 64 + 16 * q + g + 8 * h;
      if (row >= M) continue;
      float* crow = args.c + static_cast<long long>(row) * N;
#pragma unroll
      for (int j8 = 0; j8 < BN / 8; ++j8) {
        const int col = w.n0 + 8 * j8 + 2 * t4;
        const float v0 = acc[m][4 * j8 + 2 * h], v1 = acc[m][4 * j8 + 2 * h + 1];
        if (pair_store && col + 1 < N) {
          *reinterpret_cast<float2*>(crow + col) = make_float2(v0, v1);
        } else {
          if (col < N) crow[col] = v0;
          if (col + 1 < N) crow[col + 1] = v1;
        }
      }
    }
  }
  if (tid == 0) dev::cta_trace_end(args);
#else
  // Compiled for an architecture without the sm_90a feature set (wgmma, setmaxnreg). The
  // kernel library builds 90a wherever 90 is asked for (kernels/cuda/CMakeLists.txt), so this
  // body only exists in cubins for other GPUs, where the Hopper variant is illegal anyway.
  __trap();
#endif
}

// ---- host: the two tensor maps of a launch -----------------------------------------------------
// cuTensorMapEncodeTiled is a driver function; taking it from the runtime's entry-point query
// keeps the kernel library free of a link-time dependency on libcuda.
using TensorMapEncodeFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                       const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                       const cuuint32_t*, CUtensorMapInterleave,
                                       CUtensorMapSwizzle, CUtensorMapL2promotion,
                                       CUtensorMapFloatOOBfill);

inline TensorMapEncodeFn tensor_map_encoder() {
  static TensorMapEncodeFn fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return static_cast<TensorMapEncodeFn>(nullptr);
    return reinterpret_cast<TensorMapEncodeFn>(p);
  }();
  return fn;
}

// A: M x K row-major, box 64 (k) x block_m; B: K x N row-major, box 64 (n) x 64 (k); both with
// the 128-byte swizzle and zero fill outside the matrix.
inline cudaError_t make_ws_hopper_tensor_maps(const GemmConfig& c, const GemmArgs& args,
                                              CUtensorMap* map_a, CUtensorMap* map_b) {
  const TensorMapEncodeFn encode = tensor_map_encoder();
  if (encode == nullptr) return cudaErrorNotSupported;
  const CUtensorMapDataType dt = c.dtype == DType::BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                        : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const cuuint64_t eb = static_cast<cuuint64_t>(element_bytes(c.dtype));
  const cuuint32_t ones[2] = {1, 1};
  {
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(args.k), static_cast<cuuint64_t>(args.m)};
    const cuuint64_t strides[1] = {static_cast<cuuint64_t>(args.k) * eb};
    const cuuint32_t box[2] = {static_cast<cuuint32_t>(c.block_k),
                               static_cast<cuuint32_t>(c.block_m)};
    if (encode(map_a, dt, 2, const_cast<void*>(args.a), dims, strides, box, ones,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
               CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
      return cudaErrorInvalidValue;
  }
  {
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(args.n), static_cast<cuuint64_t>(args.k)};
    const cuuint64_t strides[1] = {static_cast<cuuint64_t>(args.n) * eb};
    const cuuint32_t box[2] = {static_cast<cuuint32_t>(kWsHopperBoxN),
                               static_cast<cuuint32_t>(c.block_k)};
    if (encode(map_b, dt, 2, const_cast<void*>(args.b), dims, strides, box, ones,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
               CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
      return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

}  // namespace gemmsim
