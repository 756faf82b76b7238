// Kernel arguments and device helpers shared by every real GEMM kernel.
//
// C (M x N, row-major fp32) = A (M x K, row-major) * B (K x N, row-major), fp32 accumulate.
// The compile-time shape of a kernel comes from its ConfigTag; the run-time knobs (split_k,
// split_k_mode, swizzle) come from `GemmArgs::cfg`, so one instantiation serves all of them.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "kernels/common/gemm_config.hpp"
#include "kernels/common/tile_rules.hpp"

namespace gemmsim {

struct GemmArgs {
  const void* a = nullptr;  // M x K, row-major, element type of cfg.dtype (fp32 for f32/tf32)
  const void* b = nullptr;  // K x N, row-major
  float* c = nullptr;       // M x N, row-major fp32
  float* workspace = nullptr;  // split_k x M x N fp32, reduction split-K only
  int m = 0, n = 0, k = 0;
  GemmConfig cfg{};  // run-time knobs: split_k, split_k_mode, swizzle
  // Diagnostics (gemmsim-bench --cta-trace): when set, kernels that support it record per
  // block, at kCtaTraceWords * (launch order), its SM, start and end %globaltimer (ns), output
  // tile and start and end clock64 (its SM's cycles); null (the default) records nothing.
  unsigned long long* cta_trace = nullptr;
};
inline constexpr int kCtaTraceWords = 6;

namespace dev {

// Where this block works: output tile origin and the K range of its split-K slice.
struct BlockWork {
  int m0, n0;        // first row / column of the output tile
  int k_begin, k_end;  // K range of this slice (may be empty)
  int slice;         // blockIdx.z
  bool valid;        // false for swizzle padding blocks
};

template <int BM, int BN, int BK>
__device__ __forceinline__ BlockWork block_work(const GemmArgs& args) {
  const int tiles_m = (args.m + BM - 1) / BM;
  const TileCoord t = swizzled_tile(blockIdx.x, blockIdx.y, args.cfg.swizzle, tiles_m);
  BlockWork w{};
  w.valid = t.valid;
  w.m0 = static_cast<int>(t.tm) * BM;
  w.n0 = static_cast<int>(t.tn) * BN;
  w.slice = blockIdx.z;
  // Same rounding as splitk_slice_k (BK-aligned slices), in 32-bit arithmetic.
  const int per = (args.k + args.cfg.split_k - 1) / args.cfg.split_k;
  const int ks = ((per + BK - 1) / BK) * BK;
  const long long kb = static_cast<long long>(ks) * w.slice;
  w.k_begin = kb < args.k ? static_cast<int>(kb) : args.k;
  const long long ke = kb + ks;
  w.k_end = ke < args.k ? static_cast<int>(ke) : args.k;
  return w;
}

// --cta-trace: thread 0 of a block calls cta_trace_begin first and cta_trace_end after its
// last store. Words: smid << 32 | slice, start ns, end ns, tile_m << 32 | tile_n, start and
// end clock64. The two clocks give each block's SM clock: cycles over ns.
__device__ __forceinline__ unsigned long long* cta_trace_slot(const GemmArgs& args) {
  const unsigned long long order = blockIdx.x + static_cast<unsigned long long>(gridDim.x) *
                                                    (blockIdx.y + gridDim.y * blockIdx.z);
  return args.cta_trace + kCtaTraceWords * order;
}
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
template <int BM, int BN>
__device__ __forceinline__ void cta_trace_begin(const GemmArgs& args, const BlockWork& w) {
  if (args.cta_trace == nullptr) return;
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  unsigned long long* p = cta_trace_slot(args);
  p[0] = (static_cast<unsigned long long>(smid) << 32) | static_cast<unsigned>(w.slice);
  p[1] = global_ns();
  p[3] = (static_cast<unsigned long long>(w.m0 / BM) << 32) | static_cast<unsigned>(w.n0 / BN);
  p[4] = static_cast<unsigned long long>(clock64());
}
__device__ __forceinline__ void cta_trace_end(const GemmArgs& args) {
  if (args.cta_trace == nullptr) return;
  unsigned long long* p = cta_trace_slot(args);
  p[5] = static_cast<unsigned long long>(clock64());
  p[2] = global_ns();
}

// Epilogue target for one block: plain store into C, atomic add into C (split-K atomic), or
// plain store into slice `z` of the workspace (split-K reduction).
struct EpilogueTarget {
  float* base;
  bool atomic;
};
__device__ __forceinline__ EpilogueTarget epilogue_target(const GemmArgs& args, int slice) {
  if (args.cfg.split_k > 1) {
    if (args.cfg.split_k_mode == SplitKMode::Atomic) return {args.c, true};
    return {args.workspace + static_cast<long long>(slice) * args.m * args.n, false};
  }
  return {args.c, false};
}

__device__ __forceinline__ void store_one(const EpilogueTarget& t, long long idx, float v) {
  if (t.atomic)
    atomicAdd(t.base + idx, v);  // red.global.add.f32
  else
    t.base[idx] = v;
}

// ---- PTX wrappers ---------------------------------------------------------------------------
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global -> shared copy that bypasses L1; bytes beyond src_bytes are zero-filled.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ uint32_t lds32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr));
  return v;
}
__device__ __forceinline__ void sts128(uint32_t addr, uint4 v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ uint32_t to_tf32(uint32_t f32_bits) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(f32_bits)));
  return r;
}

// D = A * B + D, fp32 accumulate. a: 4 regs, b: 2 regs, d: 4 floats.
template <DType D>
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  if constexpr (D == DType::BF16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (D == DType::F16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    static_assert(D == DType::TF32, "mma: tensor-core dtype expected");
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

}  // namespace dev
}  // namespace gemmsim
