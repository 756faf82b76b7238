// The parameter struct shared verbatim by every real CUDA kernel and its gemmsim model.
//
// A real kernel is templated on a GemmConfig value (C++20 class-type non-type template
// parameter), and the model reads the same struct, so the two cannot drift apart. Keep this
// header free of anything nvcc or a host-only compiler would reject: plain enums, ints and
// constexpr helpers only.
#pragma once

#if defined(__CUDACC__)
#define GEMMSIM_HD __host__ __device__
#else
#define GEMMSIM_HD
#endif

namespace gemmsim {

enum class Family : int {
  Tiled = 0,            // SIMT fp32, one smem buffer: load -> barrier -> compute -> barrier
  Pipelined = 1,        // software pipeline, stages >= 2 (SIMT fp32 or tensor core)
  WarpSpecialized = 2,  // producer / consumer warps over a circular smem buffer
};

// Input element type. Tensor-core types always accumulate in fp32.
enum class DType : int {
  F32 = 0,   // SIMT fp32 (FFMA)
  TF32 = 1,  // fp32 data on tensor cores in tf32
  F16 = 2,   // fp16 in, fp32 accumulate
  BF16 = 3,  // bf16 in, fp32 accumulate
};

enum class SmemLayout : int {
  Padded = 0,    // rows padded (skew) to break bank conflicts
  Swizzled = 1,  // 16-byte chunks XOR-swizzled by row
  Naive = 2,     // no padding, no swizzle (for conflict studies)
};

enum class SplitKMode : int {
  Atomic = 0,     // each K slice adds into C with red.global.add.f32
  Reduction = 1,  // slices write a workspace; a second kernel reduces it
};

// Warp-specialized variants (ignored by other families).
enum class WsVariant : int {
  Ampere = 0,  // producers cp.async + mbarrier; consumers ldmatrix + mma.sync (sm_80+)
  Hopper = 1,  // producer TMA bulk tensor copies; consumers wgmma (sm_90a)
};

struct GemmConfig {
  Family family = Family::Pipelined;
  DType dtype = DType::F16;
  int block_m = 128;  // threadblock tile (Tm, Tn, Tk)
  int block_n = 128;
  int block_k = 32;
  int warps_m = 2;  // warp arrangement of the (consumer) warps: warps_m x warps_n
  int warps_n = 2;
  int thread_m = 8;  // SIMT thread tile (fp32 families only)
  int thread_n = 8;
  int stages = 3;  // smem buffers in the pipeline (1 for tiled)
  int split_k = 1;
  SplitKMode split_k_mode = SplitKMode::Atomic;
  int swizzle = 1;  // threadblock swizzle width: 1, 2, 4, 8
  SmemLayout smem_layout = SmemLayout::Padded;
  // Warp-specialized: consumer warpgroups (4 warps each; 1 or 2, cooperating on the block
  // tile: warpgroup g owns rows [g, g+1) * block_m / consumers). warps_m x warps_n arranges all
  // consumer warps, so warps_m * warps_n == 4 * consumers (Hopper: warps_m == 4 * consumers,
  // warps_n == 1, each warp owning 16 rows of every 64-row wgmma slab).
  int consumers = 1;
  WsVariant ws_variant = WsVariant::Ampere;

  constexpr GEMMSIM_HD bool tensor_core() const { return dtype != DType::F32; }
  constexpr GEMMSIM_HD int warp_tile_m() const { return block_m / warps_m; }
  constexpr GEMMSIM_HD int warp_tile_n() const { return block_n / warps_n; }
  constexpr GEMMSIM_HD int compute_warps() const { return warps_m * warps_n; }
  // Producer warps of the warp-specialized family: Ampere, one warp whose 32 lanes issue the
  // cp.async copies; Hopper, a whole warpgroup (setmaxnreg works per warpgroup) of which one
  // thread issues the TMA copies.
  constexpr GEMMSIM_HD int producer_warps() const {
    if (family != Family::WarpSpecialized) return 0;
    return ws_variant == WsVariant::Hopper ? 4 : 1;
  }
  constexpr GEMMSIM_HD int threads() const {
    return 32 * (compute_warps() + producer_warps());
  }
  constexpr bool operator==(const GemmConfig&) const = default;
};

constexpr GEMMSIM_HD int element_bytes(DType t) {
  return (t == DType::F16 || t == DType::BF16) ? 2 : 4;
}

// Row padding of shared-memory tiles in elements for SmemLayout::Padded: one 16-byte chunk,
// which shifts each row by four banks and keeps 16-byte alignment for vector/cp.async stores.
constexpr GEMMSIM_HD int smem_pad_elements(DType t) { return 16 / element_bytes(t); }

struct GemmProblem {
  long long m = 4096;
  long long n = 4096;
  long long k = 4096;
  constexpr GEMMSIM_HD double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  constexpr bool operator==(const GemmProblem&) const = default;
};

}  // namespace gemmsim

namespace gemmsim {
// nvcc cannot yet name a __global__ template instantiated on a class-type non-type parameter,
// so CUDA kernels are templated on this tag type and read `Tag::value`.
template <GemmConfig C>
struct ConfigTag {
  static constexpr GemmConfig value = C;
};
}  // namespace gemmsim
