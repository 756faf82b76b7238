// gemmsim-bench: correctness then timing of the real CUDA GEMM kernels against cuBLAS.
//
//   gemmsim-bench --sweep validate/sweeps/h100.csv --out results.csv [--failed failed.csv]
//   gemmsim-bench --sweep s.csv --row 17 --once       (one launch of row 17, for ncu)
//   gemmsim-bench --sweep s.csv --once                (every row launched once, for ncu)
//   gemmsim-bench --sweep s.csv --once --flush memset (each launch behind the timed runs' flush,
//                                                      for ncu --cache-control none)
//   gemmsim-bench --sweep s.csv --once --cta-trace t.csv
//                       (per row: a warm-up launch, the flush, then one launch recording each
//                        block's SM, output tile and start / end %globaltimer into t.csv; the
//                        pipelined tensor-core and Hopper warp-specialized kernels record)
//   gemmsim-bench --sweep s.csv --clock-trace c.csv  (also, per timed run, every repetition's
//                        start and duration, every 1 ms NVML clock reading and the GPU-read
//                        clock of every 0.5 ms, into c.csv)
//   gemmsim-bench --list                              (kernels in the library)
//
// Method, per sweep row (rows are numbered from 0 in file order, comments excluded):
//  1. fresh random inputs in [-1, 1) from a fixed-seed counter hash (seed + row index);
//  2. reference C_ref by cuBLAS in fp32 math (SGEMM for f32, GemmEx with
//     CUBLAS_COMPUTE_32F_FAST_TF32 for tf32, CUBLAS_COMPUTE_32F for f16/bf16);
//  3. C poisoned with NaN, the kernel run once, rel_err = ||C - C_ref||_F / ||C_ref||_F and a
//     count of non-finite outputs; bounds f32 1e-5, tf32 1e-3, f16/bf16 1e-2. A kernel that
//     fails is written to the --failed file and never timed;
//  4. timing: 2 warm-up runs, then reps = clamp(target_ms / estimate, min_reps, max_reps)
//     (>= 20) runs, each after an L2 flush (cudaMemsetAsync over 2x the L2 size), each between
//     two CUDA events; median / p10 / p90 in us. The committed data set uses this default
//     flush; --flush read (a kernel reading 2x the L2 size: the L2 is left clean), --flush none
//     and --prewarm (after the flush, the same kernel on a small problem of 12 x 12 tiles in
//     separate buffers, so the code, constants and shared-memory carve-out are warm but the
//     operands are not) exist to measure what the flush itself costs a kernel, as does
//     --flush-delay-us D (a one-thread spin of D us between the flush and the timed launch: how
//     long the flush's dirty lines keep the memory system busy). The split-K memset
//     and the reduction kernel are inside the timed region. The SM clock is read on the GPU
//     while the reps run (GpuClockProbe: one thread on its own stream, clock64 against
//     %globaltimer every 0.5 ms, from before the first launch to the last one's end):
//     sm_clock_mhz is the mean, with the 0.5 ms intervals' min, max and number beside it, and
//     nvml_clock_mhz the mean of NVML readings taken every millisecond over the same time.
//     (Rows measured before 2026-11-27 carry one NVML reading taken ~30 ms into the loop.)
//     Kernels at the power limit move the clock every ~0.1 s; for them --target-ms 1000
//     --max-reps 5000 (loops of ~1 s) make the figures reproducible within ~1%
//     (validate/data/h100/README.md, session 21).
// A cuBLAS row (family cublas) is timed the same way for every distinct (dtype, m, n, k).
// launch_overhead_us: median event-timed duration of an empty kernel queued behind other work
// (as the timed repetitions are), measured once per run.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/common/kernel_name.hpp"
#include "kernels/common/tile_rules.hpp"
#include "kernels/cuda/registry.hpp"
#include "validate/harness/gpu_info.hpp"
#include "validate/harness/l2_clean.cuh"
#include "validate/harness/sweep_csv.hpp"

namespace gemmsim::bench {
namespace {

struct CudaError : std::runtime_error {
  cudaError_t code;
  CudaError(cudaError_t c, const std::string& what) : std::runtime_error(what), code(c) {}
};

void check(cudaError_t e, const char* expr, const char* file, int line) {
  if (e != cudaSuccess)
    throw CudaError(e, std::string(file) + ":" + std::to_string(line) + ": " + expr + ": " +
                           cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}
void check_blas(cublasStatus_t s, const char* expr, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr +
                             ": cuBLAS status " + std::to_string(static_cast<int>(s)));
}
#define CK(x) check((x), #x, __FILE__, __LINE__)
#define CKB(x) check_blas((x), #x, __FILE__, __LINE__)

// Errors after which the context is unusable.
bool sticky(cudaError_t e) {
  return e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure ||
         e == cudaErrorMisalignedAddress || e == cudaErrorIllegalInstruction ||
         e == cudaErrorHardwareStackError || e == cudaErrorInvalidPc ||
         e == cudaErrorLaunchTimeout || e == cudaErrorUnknown;
}

struct Options {
  std::string sweep;
  std::string out = "results.csv";
  std::string failed = "results_failed.csv";
  std::vector<int> rows;  // empty: all
  int first_row = 0;
  bool once = false;
  bool cublas = true;
  bool append = false;
  bool list = false;
  bool check_only = false;  // correctness only, no timing (rows written with empty timings)
  int min_reps = 20;
  int max_reps = 200;
  double target_ms = 150.0;
  uint64_t seed = 20261121;
  std::string flush = "memset";  // memset | read | none (see the header)
  bool flush_given = false;      // --once flushes only when --flush is given
  bool prewarm = false;
  double flush_delay_us = 0;  // --flush-delay-us: the GPU idles this long after each flush
  std::string cta_trace;    // --cta-trace FILE (with --once)
  std::string clock_trace;  // --clock-trace FILE (timed runs)
};

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr,
               "error: %s\nusage: gemmsim-bench --sweep FILE [--out results.csv] [--failed FILE]\n"
               "         [--row N]... [--rows A:B] [--first-row N] [--once] [--no-cublas] "
               "[--append] [--check-only]\n"
               "         [--min-reps 20] [--max-reps 200] [--target-ms 150] [--seed S]\n"
               "         [--flush memset|read|none] [--flush-delay-us D] [--prewarm]\n"
               "         [--once --cta-trace FILE]\n"
               "         [--clock-trace FILE]\n"
               "       gemmsim-bench --list\n",
               msg);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--sweep") o.sweep = val();
    else if (a == "--out") o.out = val();
    else if (a == "--failed") o.failed = val();
    else if (a == "--row") o.rows.push_back(std::atoi(val().c_str()));
    else if (a == "--rows") {
      const std::string v = val();
      const auto colon = v.find(':');
      if (colon == std::string::npos) usage("--rows wants A:B");
      const int lo = std::atoi(v.substr(0, colon).c_str());
      const int hi = std::atoi(v.substr(colon + 1).c_str());
      for (int r = lo; r < hi; ++r) o.rows.push_back(r);
    } else if (a == "--first-row") o.first_row = std::atoi(val().c_str());
    else if (a == "--once") o.once = true;
    else if (a == "--no-cublas") o.cublas = false;
    else if (a == "--append") o.append = true;
    else if (a == "--list") o.list = true;
    else if (a == "--check-only") o.check_only = true;
    else if (a == "--min-reps") o.min_reps = std::max(20, std::atoi(val().c_str()));
    else if (a == "--max-reps") o.max_reps = std::atoi(val().c_str());
    else if (a == "--target-ms") o.target_ms = std::atof(val().c_str());
    else if (a == "--seed") o.seed = std::strtoull(val().c_str(), nullptr, 10);
    else if (a == "--prewarm") o.prewarm = true;
    else if (a == "--flush-delay-us") {
      o.flush_delay_us = std::atof(val().c_str());
      if (!(o.flush_delay_us >= 0 && o.flush_delay_us <= 1e6))
        usage("--flush-delay-us wants 0 to 1000000 microseconds");
    }
    else if (a == "--cta-trace")
      o.cta_trace = val();
    else if (a == "--clock-trace")
      o.clock_trace = val();
    else if (a == "--flush") {
      o.flush = val();
      o.flush_given = true;
      if (o.flush != "memset" && o.flush != "read" && o.flush != "none")
        usage(("--flush wants memset, read or none, not " + o.flush).c_str());
    } else usage(("unknown argument " + a).c_str());
  }
  if (!o.list && o.sweep.empty()) usage("--sweep is required");
  if (!o.cta_trace.empty() && !o.once) usage("--cta-trace needs --once");
  if (!o.clock_trace.empty() && (o.once || o.check_only))
    usage("--clock-trace records timed runs; not with --once or --check-only");
  o.max_reps = std::max(o.max_reps, o.min_reps);
  return o;
}

// ---- device helpers ----------------------------------------------------------------------
__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__global__ void fill_random_kernel(void* p, long long n, int dtype, uint64_t seed) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const uint64_t h = splitmix64(seed * 0x100000001B3ull + static_cast<uint64_t>(i));
    const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);  // [0, 1)
    const float v = 2.0f * u - 1.0f;
    switch (static_cast<DType>(dtype)) {
      case DType::F32:
      case DType::TF32: static_cast<float*>(p)[i] = v; break;
      case DType::F16: static_cast<__half*>(p)[i] = __float2half_rn(v); break;
      case DType::BF16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v); break;
    }
  }
}

struct CompareSums {
  double diff2, ref2;
  unsigned long long nonfinite;
  float max_abs_diff;
};

__global__ void compare_kernel(const float* c, const float* ref, long long n, CompareSums* out) {
  double d2 = 0, r2 = 0;
  unsigned long long bad = 0;
  float mx = 0.f;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const float x = c[i], r = ref[i];
    if (!isfinite(x)) {
      ++bad;
      continue;
    }
    const double d = static_cast<double>(x) - r;
    d2 += d * d;
    r2 += static_cast<double>(r) * r;
    mx = fmaxf(mx, fabsf(x - r));
  }
  for (int o = 16; o > 0; o >>= 1) {
    d2 += __shfl_down_sync(0xffffffffu, d2, o);
    r2 += __shfl_down_sync(0xffffffffu, r2, o);
    bad += __shfl_down_sync(0xffffffffu, bad, o);
    mx = fmaxf(mx, __shfl_down_sync(0xffffffffu, mx, o));
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&out->diff2, d2);
    atomicAdd(&out->ref2, r2);
    atomicAdd(&out->nonfinite, bad);
    atomicMax(reinterpret_cast<unsigned*>(&out->max_abs_diff), __float_as_uint(mx));
  }
}

__global__ void empty_kernel() {}

// Keeps the GPU busy for `ns` so that the work queued behind it runs back to back.
__global__ void spin_kernel(long long ns) {
  long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

// The SM clock read on the GPU (GpuClockProbe): one thread writes a (%globaltimer ns,
// clock64) pair every `period_ns` to `out` (at most `max` pairs; the count to out_n) until the
// host sets *stop. Over an interval, delta clock64 / delta globaltimer is the clock of the SM it
// runs on.
__global__ void clock_probe_kernel(const volatile int* stop, long long period_ns,
                                   unsigned long long* out, int max, int* out_n) {
  long long t0, t, next;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  next = t0;
  int n = 0;
  for (;;) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t < next) continue;
    if (n < max) {
      out[2 * n] = static_cast<unsigned long long>(t - t0);
      out[2 * n + 1] = clock64();
      ++n;
    }
    next += period_ns;
    if (*stop) break;
  }
  *out_n = n;
}

// ---- buffers ------------------------------------------------------------------------------
struct DevBuf {
  void* p = nullptr;
  size_t bytes = 0;
  void ensure(size_t b) {
    if (b <= bytes) return;
    if (p) CK(cudaFree(p));
    p = nullptr;
    CK(cudaMalloc(&p, b));
    bytes = b;
  }
  ~DevBuf() {
    if (p) cudaFree(p);
  }
};

// The SM clock of a timed loop, read on the GPU: start() launches clock_probe_kernel on its own
// stream (one thread: it shares an SM with the loop's blocks, or holds one SM's slot where a
// block leaves no room), stop() raises the flag it polls every 0.5 ms and returns the clock of
// each 0.5 ms interval. NVML reports the clock about every 0.1 s and 50-100 ms late
// (validate/data/h100/README.md, session 21); this is the clock the SM ran at.
class GpuClockProbe {
 public:
  struct Interval {
    double start_ms = 0, mhz = 0;
  };
  GpuClockProbe() {
    CK(cudaHostAlloc(reinterpret_cast<void**>(&stop_), sizeof(int), cudaHostAllocMapped));
    *stop_ = 1;
    CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&stop_dev_), stop_, 0));
    CK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    buf_.ensure(2 * sizeof(unsigned long long) * kMax + sizeof(int));
  }
  ~GpuClockProbe() {
    if (stop_) {
      *reinterpret_cast<volatile int*>(stop_) = 1;
      if (stream_) cudaStreamSynchronize(stream_);
      cudaFreeHost(stop_);
    }
    if (stream_) cudaStreamDestroy(stream_);
  }
  GpuClockProbe(const GpuClockProbe&) = delete;
  GpuClockProbe& operator=(const GpuClockProbe&) = delete;

  void start() {
    *reinterpret_cast<volatile int*>(stop_) = 0;
    clock_probe_kernel<<<1, 1, 0, stream_>>>(stop_dev_, 500000, pairs(), kMax, count());
    CK(cudaGetLastError());
  }
  std::vector<Interval> stop() {
    *reinterpret_cast<volatile int*>(stop_) = 1;
    CK(cudaStreamSynchronize(stream_));
    int n = 0;
    CK(cudaMemcpy(&n, count(), sizeof n, cudaMemcpyDeviceToHost));
    std::vector<unsigned long long> h(2 * static_cast<size_t>(n));
    CK(cudaMemcpy(h.data(), pairs(), h.size() * sizeof h[0], cudaMemcpyDeviceToHost));
    std::vector<Interval> out;
    for (int i = 1; i < n; ++i) {
      const double dt = static_cast<double>(h[2 * i] - h[2 * i - 2]);
      const double dc = static_cast<double>(h[2 * i + 1] - h[2 * i - 1]);
      if (dt > 0) out.push_back({static_cast<double>(h[2 * i - 2]) * 1e-6, dc / dt * 1e3});
    }
    return out;
  }

 private:
  static constexpr int kMax = 1 << 16;  // 0.5 ms pairs: loops up to 32 s
  unsigned long long* pairs() { return static_cast<unsigned long long*>(buf_.p); }
  int* count() {
    return reinterpret_cast<int*>(static_cast<char*>(buf_.p) +
                                  2 * sizeof(unsigned long long) * kMax);
  }
  int* stop_ = nullptr;
  int* stop_dev_ = nullptr;
  cudaStream_t stream_ = nullptr;
  DevBuf buf_;
};

// Time-weighted mean, min and max of the intervals' clocks (equal 0.5 ms intervals).
ClockStats interval_stats(const std::vector<GpuClockProbe::Interval>& v) {
  std::vector<double> mhz;
  mhz.reserve(v.size());
  for (const auto& i : v) mhz.push_back(i.mhz);
  return clock_stats(mhz);
}

double tolerance(DType d) {
  switch (d) {
    case DType::F32: return 1e-5;
    case DType::TF32: return 1e-3;
    default: return 1e-2;
  }
}

void cublas_gemm(cublasHandle_t h, DType d, const void* a, const void* b, float* c, int m, int n,
                 int k) {
  // Row-major C = A B is column-major C^T = B^T A^T: swap the operands, (n, m, k).
  const float one = 1.f, zero = 0.f;
  switch (d) {
    case DType::F32:
      CKB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, static_cast<const float*>(b), n,
                      static_cast<const float*>(a), k, &zero, c, n));
      break;
    case DType::TF32:
      CKB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_32F, n, a,
                       CUDA_R_32F, k, &zero, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F_FAST_TF32,
                       CUBLAS_GEMM_DEFAULT));
      break;
    case DType::F16:
      CKB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_16F, n, a,
                       CUDA_R_16F, k, &zero, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT));
      break;
    case DType::BF16:
      CKB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_16BF, n, a,
                       CUDA_R_16BF, k, &zero, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT));
      break;
  }
}

// Rules that depend on the problem size (the Hopper warp-specialized kernel's TMA row pitch).
const char* problem_violation(const SweepRow& r) {
  if (r.cfg.family != Family::WarpSpecialized) return nullptr;
  return ws_problem_violation(r.cfg, GemmProblem{r.m, r.n, r.k});
}

struct Timing {
  double median_us = 0, p10_us = 0, p90_us = 0;
  int reps = 0;
  ClockStats clock;       // read on the GPU (GpuClockProbe)
  ClockStats nvml_clock;  // NVML, read every millisecond
};

std::string shape_label(const SweepRow& r) {
  return std::to_string(r.m) + "x" + std::to_string(r.n) + "x" + std::to_string(r.k);
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

class Bench {
 public:
  explicit Bench(const Options& o) : opt_(o) {
    CK(cudaSetDevice(0));
    CK(cudaGetDeviceProperties(&prop_, 0));
    char bus[32] = {};
    CK(cudaDeviceGetPCIBusId(bus, sizeof bus, 0));
    monitor_ = std::make_unique<GpuMonitor>(bus);
    int rt = 0;
    CK(cudaRuntimeGetVersion(&rt));
    cuda_ = std::to_string(rt / 1000) + "." + std::to_string((rt % 1000) / 10);
    driver_ = monitor_->driver_version();
    gpu_ = prop_.name;
    CK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CKB(cublasCreate(&blas_));
    CKB(cublasSetStream(blas_, stream_));
    CKB(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH));
    flush_.ensure(2ull * static_cast<size_t>(prop_.l2CacheSize));
    if (!opt_.cta_trace.empty()) {
      if (std::ifstream(opt_.cta_trace).good())
        throw std::runtime_error("--cta-trace " + opt_.cta_trace + " exists; not overwriting it");
      trace_ = std::make_unique<std::ofstream>(opt_.cta_trace);
      if (!*trace_) throw std::runtime_error("cannot open --cta-trace " + opt_.cta_trace);
      *trace_ << "row,kernel,m,n,k,order,smid,slice,tile_m,tile_n,start_ns,end_ns,cycles\n";
    }
    if (!opt_.clock_trace.empty()) {
      if (std::ifstream(opt_.clock_trace).good())
        throw std::runtime_error("--clock-trace " + opt_.clock_trace +
                                 " exists; not overwriting it");
      clock_trace_ = std::make_unique<std::ofstream>(opt_.clock_trace);
      if (!*clock_trace_) throw std::runtime_error("cannot open --clock-trace " + opt_.clock_trace);
      *clock_trace_ << "label,kind,t_ms,value\n";
    }
    sums_.ensure(sizeof(CompareSums));
    ev0_.resize(opt_.max_reps);
    ev1_.resize(opt_.max_reps);
    for (int i = 0; i < opt_.max_reps; ++i) {
      CK(cudaEventCreate(&ev0_[i]));
      CK(cudaEventCreate(&ev1_[i]));
    }
    std::printf("gemmsim-bench: %s, driver %s, CUDA runtime %s, %d SMs, L2 %d B, clock source %s,"
                " SM clock now %d MHz (max %d)\n",
                gpu_.c_str(), driver_.c_str(), cuda_.c_str(), prop_.multiProcessorCount,
                prop_.l2CacheSize, monitor_->source(), monitor_->sm_clock_mhz(),
                monitor_->max_sm_clock_mhz());
  }
  ~Bench() {
    for (auto e : ev0_) cudaEventDestroy(e);
    for (auto e : ev1_) cudaEventDestroy(e);
    cublasDestroy(blas_);
    cudaStreamDestroy(stream_);
  }

  // Event-timed duration of an empty kernel queued behind other work, as the timed repetitions
  // are (each sits behind its L2-flush memset), so host submission latency is not included.
  // Median of 200; `idle_us` gets the same measured on an idle stream (host latency included).
  double measure_launch_overhead(double* idle_us) {
    for (int i = 0; i < 20; ++i) empty_kernel<<<1, 32, 0, stream_>>>();
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(stream_));
    std::vector<double> queued, idle;
    for (int i = 0; i < 200; ++i) {
      float ms = 0;
      spin_kernel<<<1, 1, 0, stream_>>>(30000);
      CK(cudaGetLastError());
      CK(cudaEventRecord(ev0_[0], stream_));
      empty_kernel<<<1, 32, 0, stream_>>>();
      CK(cudaGetLastError());
      CK(cudaEventRecord(ev1_[0], stream_));
      CK(cudaEventSynchronize(ev1_[0]));
      CK(cudaEventElapsedTime(&ms, ev0_[0], ev1_[0]));
      queued.push_back(ms * 1e3);
      CK(cudaEventRecord(ev0_[0], stream_));
      empty_kernel<<<1, 32, 0, stream_>>>();
      CK(cudaGetLastError());
      CK(cudaEventRecord(ev1_[0], stream_));
      CK(cudaEventSynchronize(ev1_[0]));
      CK(cudaEventElapsedTime(&ms, ev0_[0], ev1_[0]));
      idle.push_back(ms * 1e3);
    }
    *idle_us = percentile(idle, 0.5);
    launch_overhead_us_ = percentile(queued, 0.5);
    return launch_overhead_us_;
  }

  void prepare_inputs(DType d, long long m, long long n, long long k, uint64_t seed) {
    const size_t eb = element_bytes(d);
    a_.ensure(static_cast<size_t>(m * k) * eb);
    b_.ensure(static_cast<size_t>(k * n) * eb);
    c_.ensure(static_cast<size_t>(m * n) * 4);
    ref_.ensure(static_cast<size_t>(m * n) * 4);
    fill_random_kernel<<<prop_.multiProcessorCount * 8, 256, 0, stream_>>>(
        a_.p, m * k, static_cast<int>(d), seed * 2 + 1);
    CK(cudaGetLastError());
    fill_random_kernel<<<prop_.multiProcessorCount * 8, 256, 0, stream_>>>(
        b_.p, k * n, static_cast<int>(d), seed * 2 + 2);
    CK(cudaGetLastError());
  }

  GemmArgs kernel_args(const SweepRow& r) {
    GemmArgs a;
    a.a = a_.p;
    a.b = b_.p;
    a.c = static_cast<float*>(c_.p);
    const long long ws = cuda::workspace_floats(r.cfg, r.m, r.n);
    if (ws > 0) {
      ws_.ensure(static_cast<size_t>(ws) * 4);
      a.workspace = static_cast<float*>(ws_.p);
    }
    a.m = static_cast<int>(r.m);
    a.n = static_cast<int>(r.n);
    a.k = static_cast<int>(r.k);
    a.cfg = r.cfg;
    return a;
  }

  // rel_err, or +inf if any output is non-finite.
  double compare(long long mn, unsigned long long* nonfinite, float* max_abs) {
    CK(cudaMemsetAsync(sums_.p, 0, sizeof(CompareSums), stream_));
    compare_kernel<<<prop_.multiProcessorCount * 8, 256, 0, stream_>>>(
        static_cast<const float*>(c_.p), static_cast<const float*>(ref_.p), mn,
        static_cast<CompareSums*>(sums_.p));
    CK(cudaGetLastError());
    CompareSums s{};
    CK(cudaMemcpyAsync(&s, sums_.p, sizeof s, cudaMemcpyDeviceToHost, stream_));
    CK(cudaStreamSynchronize(stream_));
    *nonfinite = s.nonfinite;
    *max_abs = s.max_abs_diff;
    if (s.nonfinite > 0) return INFINITY;
    return s.ref2 > 0 ? std::sqrt(s.diff2 / s.ref2) : std::sqrt(s.diff2);
  }

  // The L2 flush of --flush (queued on the stream).
  void flush_l2() {
    if (opt_.flush == "memset") {
      CK(cudaMemsetAsync(flush_.p, ++flush_value_ & 0xff, flush_.bytes, stream_));
    } else if (opt_.flush == "read") {
      l2_clean_kernel<<<prop_.multiProcessorCount * 4, 512, 0, stream_>>>(
          static_cast<const uint4*>(flush_.p), static_cast<long long>(flush_.bytes / 16),
          static_cast<uint32_t*>(sums_.p));
      CK(cudaGetLastError());
    }
    // --flush-delay-us: one thread spins on %globaltimer, so the timed launch starts that long
    // after the flush ends (what the memory system does with the flush's dirty lines meanwhile).
    if (opt_.flush != "none" && opt_.flush_delay_us > 0) {
      spin_kernel<<<1, 1, 0, stream_>>>(static_cast<long long>(opt_.flush_delay_us * 1e3));
      CK(cudaGetLastError());
    }
  }

  // `warm`, when set, runs after each flush and before the timed launch (--prewarm).
  Timing time_op(const std::function<cudaError_t()>& op,
                 const std::function<cudaError_t()>& warm = {}) {
    auto flush = [&] {
      flush_l2();
      if (warm) CK(warm());
    };
    for (int i = 0; i < 2; ++i) CK(op());
    flush();
    CK(cudaEventRecord(ev0_[0], stream_));
    CK(op());
    CK(cudaEventRecord(ev1_[0], stream_));
    CK(cudaEventSynchronize(ev1_[0]));
    float est_ms = 0;
    CK(cudaEventElapsedTime(&est_ms, ev0_[0], ev1_[0]));
    const int reps = std::clamp(
        static_cast<int>(std::ceil(opt_.target_ms / std::max(est_ms, 1e-3f))), opt_.min_reps,
        opt_.max_reps);
    // The SM clock from the first repetition's launch until the last one ends: read on the GPU
    // (GpuClockProbe, the row's clock) and through NVML every millisecond (ClockSampler, which
    // reads high when the GPU is power-capped: validate/data/h100/README.md, session 21).
    ClockSampler clock(*monitor_, std::chrono::milliseconds(1));
    probe_->start();
    for (int r = 0; r < reps; ++r) {
      flush();
      CK(cudaEventRecord(ev0_[r], stream_));
      CK(op());
      CK(cudaEventRecord(ev1_[r], stream_));
    }
    CK(cudaStreamSynchronize(stream_));
    const std::vector<GpuClockProbe::Interval> gpu_clock = probe_->stop();
    Timing t;
    t.nvml_clock = clock.stop();
    t.clock = interval_stats(gpu_clock);
    std::vector<double> us(reps);
    for (int r = 0; r < reps; ++r) {
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, ev0_[r], ev1_[r]));
      us[r] = ms * 1e3;
    }
    if (clock_trace_ != nullptr) {
      // Each repetition's start (ms after the first one's) and duration, then the clock
      // readings (ms after the sampler started, just before the first launch).
      for (int r = 0; r < reps; ++r) {
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, ev0_[0], ev0_[r]));
        *clock_trace_ << trace_label_ << ",rep," << ms << ',' << us[r] << '\n';
      }
      for (const auto& c : clock.readings())
        *clock_trace_ << trace_label_ << ",clock," << c.ms << ',' << c.mhz << '\n';
      // The SM clock read on the GPU per 0.5 ms (ms after the probe started, MHz).
      for (const auto& i : gpu_clock)
        *clock_trace_ << trace_label_ << ",gpuclock," << i.start_ms << ',' << i.mhz << '\n';
      clock_trace_->flush();
    }
    t.reps = reps;
    t.median_us = percentile(us, 0.5);
    t.p10_us = percentile(us, 0.1);
    t.p90_us = percentile(us, 0.9);
    return t;
  }

  ResultRow base_result(const SweepRow& r) {
    ResultRow out;
    out.gpu = gpu_;
    out.driver = driver_;
    out.cuda = cuda_;
    out.row = r;
    out.launch_overhead_us = launch_overhead_us_;
    return out;
  }

  ResultRow run_cublas(const SweepRow& r) {
    SweepRow cr = r;
    cr.cublas = true;
    ResultRow out = base_result(cr);
    out.kernel = std::string("cublas_") + dtype_name(r.cfg.dtype);
    const int m = static_cast<int>(r.m), n = static_cast<int>(r.n), k = static_cast<int>(r.k);
    float* c = static_cast<float*>(c_.p);
    trace_label_ = out.kernel + " " + shape_label(r);
    const Timing t = time_op([&] {
      cublas_gemm(blas_, r.cfg.dtype, a_.p, b_.p, c, m, n, k);
      return cudaGetLastError();
    });
    fill_timing(out, t, r);
    return out;
  }

  void fill_timing(ResultRow& out, const Timing& t, const SweepRow& r) {
    out.median_us = t.median_us;
    out.p10_us = t.p10_us;
    out.p90_us = t.p90_us;
    out.reps = t.reps;
    out.sm_clock_mhz = t.clock.mean_mhz;
    out.sm_clock_min_mhz = t.clock.min_mhz;
    out.sm_clock_max_mhz = t.clock.max_mhz;
    out.clock_samples = t.clock.samples;
    out.nvml_clock_mhz = t.nvml_clock.mean_mhz;
    out.tflops = GemmProblem{r.m, r.n, r.k}.flops() / (t.median_us * 1e-6) / 1e12;
    out.timed = true;
  }

  // Returns false (and fills `why`) if the row fails before or at correctness.
  bool run_kernel(const SweepRow& r, ResultRow& out, std::string& why) {
    out = base_result(r);
    out.kernel = kernel_name(r.cfg);
    out.timed = false;
    if (const char* v = tile_rule_violation(r.cfg)) {
      why = std::string("illegal configuration: ") + v;
      return false;
    }
    if (const char* v = problem_violation(r)) {
      why = std::string("illegal for this problem: ") + v;
      return false;
    }
    const cuda::KernelEntry* e = cuda::find_kernel(r.cfg);
    if (!e) {
      why = "not in the compiled kernel library: " + kernel_name(cuda::base_config(r.cfg));
      return false;
    }
    cudaFuncAttributes attr{};
    CK(e->attributes(&attr));
    out.regs_per_thread = attr.numRegs;
    out.smem_bytes = e->smem_bytes + static_cast<int>(attr.sharedSizeBytes);
    const GemmArgs args = kernel_args(r);
    const long long mn = r.m * r.n;
    CK(cudaMemsetAsync(c_.p, 0xff, static_cast<size_t>(mn) * 4, stream_));  // NaN poison
    const cudaError_t le = e->launch(args, stream_);
    if (le != cudaSuccess) {
      if (sticky(le)) throw CudaError(le, std::string("launch: ") + cudaGetErrorString(le));
      why = std::string("launch failed: ") + cudaGetErrorName(le) + " " + cudaGetErrorString(le);
      cudaGetLastError();
      return false;
    }
    CK(cudaStreamSynchronize(stream_));
    unsigned long long bad = 0;
    float max_abs = 0;
    out.rel_err = compare(mn, &bad, &max_abs);
    const double tol = tolerance(r.cfg.dtype);
    if (bad > 0 || !(out.rel_err <= tol)) {
      char b[256];
      std::snprintf(b, sizeof b, "WRONG: rel_err %.3e (bound %.0e), %llu non-finite, max |diff| %g",
                    out.rel_err, tol, bad, max_abs);
      why = b;
      return false;
    }
    if (opt_.check_only) return true;
    std::function<cudaError_t()> warm;
    GemmArgs warm_args;
    if (opt_.prewarm) {
      // The same kernel on 12 x 12 tiles (>= one CTA per SM) in buffers of its own.
      SweepRow w = r;
      w.m = 12LL * r.cfg.block_m;
      w.n = 12LL * r.cfg.block_n;
      w.k = 4LL * r.cfg.block_k * std::max(1, r.cfg.split_k);
      if (const char* v = problem_violation(w)) {
        why = std::string("no --prewarm problem: ") + v;
        return false;
      }
      const size_t eb = element_bytes(r.cfg.dtype);
      warm_a_.ensure(static_cast<size_t>(w.m * w.k) * eb);
      warm_b_.ensure(static_cast<size_t>(w.k * w.n) * eb);
      warm_c_.ensure(static_cast<size_t>(w.m * w.n) * 4);
      CK(cudaMemsetAsync(warm_a_.p, 0, warm_a_.bytes, stream_));
      CK(cudaMemsetAsync(warm_b_.p, 0, warm_b_.bytes, stream_));
      warm_args = args;
      warm_args.a = warm_a_.p;
      warm_args.b = warm_b_.p;
      warm_args.c = static_cast<float*>(warm_c_.p);
      warm_args.m = static_cast<int>(w.m);
      warm_args.n = static_cast<int>(w.n);
      warm_args.k = static_cast<int>(w.k);
      const long long ws = cuda::workspace_floats(r.cfg, w.m, w.n);
      if (ws > 0) {
        warm_ws_.ensure(static_cast<size_t>(ws) * 4);
        warm_args.workspace = static_cast<float*>(warm_ws_.p);
      }
      warm = [&] { return e->launch(warm_args, stream_); };
    }
    trace_label_ = kernel_name(r.cfg) + " " + shape_label(r);
    const Timing t = time_op([&] { return e->launch(args, stream_); }, warm);
    fill_timing(out, t, r);
    return true;
  }

  void reference(const SweepRow& r) {
    cublas_gemm(blas_, r.cfg.dtype, a_.p, b_.p, static_cast<float*>(ref_.p),
                static_cast<int>(r.m), static_cast<int>(r.n), static_cast<int>(r.k));
    CK(cudaGetLastError());
  }

  // --once: one launch of the row's kernel on random inputs (for ncu); no reference, no timing.
  bool run_once(const SweepRow& r, int row, uint64_t seed, std::string& why) {
    if (r.cublas) {
      prepare_inputs(r.cfg.dtype, r.m, r.n, r.k, seed);
      reference(r);
      CK(cudaStreamSynchronize(stream_));
      return true;
    }
    if (const char* v = tile_rule_violation(r.cfg)) {
      why = v;
      return false;
    }
    if (const char* v = problem_violation(r)) {
      why = v;
      return false;
    }
    const cuda::KernelEntry* e = cuda::find_kernel(r.cfg);
    if (!e) {
      why = "not in library";
      return false;
    }
    prepare_inputs(r.cfg.dtype, r.m, r.n, r.k, seed);
    GemmArgs args = kernel_args(r);
    const GridDims g = grid_dims(r.cfg, GemmProblem{args.m, args.n, args.k});
    const size_t blocks = static_cast<size_t>(g.x) * g.y * g.z;
    if (trace_ != nullptr) {  // --cta-trace: warm up, then trace a launch behind the flush
      CK(e->launch(args, stream_));
      cta_trace_.ensure(blocks * kCtaTraceWords * sizeof(unsigned long long));
      CK(cudaMemsetAsync(cta_trace_.p, 0, blocks * kCtaTraceWords * 8, stream_));
      args.cta_trace = static_cast<unsigned long long*>(cta_trace_.p);
      flush_l2();
    } else if (opt_.flush_given) {
      flush_l2();  // for ncu --cache-control none: the timed runs' L2 state
    }
    CK(e->launch(args, stream_));
    CK(cudaStreamSynchronize(stream_));
    if (trace_ != nullptr) write_cta_trace(row, kernel_name(r.cfg), args, blocks);
    return true;
  }

  // One line per block: row, kernel, launch order, SM, split-K slice, output tile, start and
  // end in ns from the launch's first block start (end 0: the block recorded no end), and the
  // SM clock cycles from start to end (0 without an end).
  void write_cta_trace(int row, const std::string& kernel, const GemmArgs& args, size_t blocks) {
    std::vector<unsigned long long> h(blocks * kCtaTraceWords);
    CK(cudaMemcpy(h.data(), cta_trace_.p, h.size() * 8, cudaMemcpyDeviceToHost));
    unsigned long long t0 = ~0ull;
    for (size_t i = 0; i < blocks; ++i)
      if (h[i * kCtaTraceWords + 1] != 0) t0 = std::min(t0, h[i * kCtaTraceWords + 1]);
    for (size_t i = 0; i < blocks; ++i) {
      const unsigned long long* w = &h[i * kCtaTraceWords];
      if (w[1] == 0) continue;  // padding block, or a kernel that does not record
      *trace_ << row << "," << kernel << "," << args.m << "," << args.n << "," << args.k << "," << i
              << "," << (w[0] >> 32) << "," << (w[0] & 0xffffffffu) << "," << (w[3] >> 32) << ","
              << (w[3] & 0xffffffffu) << "," << (w[1] - t0) << "," << (w[2] != 0 ? w[2] - t0 : 0)
              << "," << (w[2] != 0 ? w[5] - w[4] : 0) << "\n";
    }
    trace_->flush();
  }

  const Options& opt_;
  cudaDeviceProp prop_{};
  std::unique_ptr<GpuMonitor> monitor_;
  std::string gpu_, driver_, cuda_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  DevBuf a_, b_, c_, ref_, ws_, flush_, sums_;
  DevBuf warm_a_, warm_b_, warm_c_, warm_ws_;  // --prewarm's own operands
  DevBuf cta_trace_;                           // --cta-trace's records
  std::unique_ptr<std::ofstream> trace_;       // --cta-trace's file, null without it
  std::unique_ptr<std::ofstream> clock_trace_;  // --clock-trace's file, null without it
  std::unique_ptr<GpuClockProbe> probe_ = std::make_unique<GpuClockProbe>();
  std::string trace_label_;                     // "row kernel mxnxk" of the timed run
  std::vector<cudaEvent_t> ev0_, ev1_;
  unsigned flush_value_ = 0;
  double launch_overhead_us_ = 0;
};

int run(const Options& opt) {
  if (opt.list) {
    for (const auto& e : cuda::kernel_library())
      std::printf("%s smem=%d threads=%d\n", e.name.c_str(), e.smem_bytes, e.cfg.threads());
    std::printf("%zu kernels\n", cuda::kernel_library().size());
    return 0;
  }
  const std::vector<SweepRow> rows = read_sweep(opt.sweep);
  std::vector<int> sel = opt.rows;
  if (sel.empty())
    for (int i = opt.first_row; i < static_cast<int>(rows.size()); ++i) sel.push_back(i);
  for (int i : sel)
    if (i < 0 || i >= static_cast<int>(rows.size()))
      usage(("row " + std::to_string(i) + " out of range").c_str());

  Bench b(opt);
  if (opt.once) {
    int fails = 0;
    for (int i : sel) {
      std::string why;
      const bool ok = b.run_once(rows[i], i, opt.seed + static_cast<uint64_t>(i), why);
      std::printf("once row %d %s %s%s\n", i,
                  rows[i].cublas ? "cublas" : kernel_name(rows[i].cfg).c_str(),
                  ok ? "ok" : "SKIPPED: ", why.c_str());
      fails += !ok;
    }
    return fails ? 1 : 0;
  }

  const bool header_out = !opt.append || !std::ifstream(opt.out).good();
  const bool header_failed = !opt.append || !std::ifstream(opt.failed).good();
  if (!header_out) {  // --append: only to a file with these columns
    std::ifstream in(opt.out);
    std::string first;
    std::getline(in, first);
    if (first != kResultColumns)
      throw std::runtime_error("--append: " + opt.out +
                               " has other columns than this gemmsim-bench writes (an older "
                               "format?); write to a new file");
  }
  std::ofstream out(opt.out, opt.append ? std::ios::app : std::ios::trunc);
  std::ofstream failed(opt.failed, opt.append ? std::ios::app : std::ios::trunc);
  if (!out || !failed) throw std::runtime_error("cannot open output files");
  if (header_out) out << kResultColumns << "\n";
  if (header_failed) failed << kResultColumns << ",row,reason\n";

  double idle_us = 0;
  const double lo = b.measure_launch_overhead(&idle_us);
  std::printf("launch overhead (empty kernel between events, queued behind work, median of 200): "
              "%.3f us; on an idle stream: %.3f us\n",
              lo, idle_us);

  std::set<std::tuple<int, long long, long long, long long>> cublas_done;
  int passed = 0, failed_n = 0, cublas_n = 0;
  struct Best {
    double tflops = 0;
    std::string kernel;
  };
  std::map<std::string, Best> best;            // "dtype mxnxk" -> best kernel
  std::map<std::string, double> cublas_tflops;  // same key
  const auto t_start = std::chrono::steady_clock::now();
  for (size_t s = 0; s < sel.size(); ++s) {
    const int i = sel[s];
    const SweepRow& r = rows[i];
    const std::string key = std::string(dtype_name(r.cfg.dtype)) + " " + std::to_string(r.m) +
                            "x" + std::to_string(r.n) + "x" + std::to_string(r.k);
    try {
      b.prepare_inputs(r.cfg.dtype, r.m, r.n, r.k, opt.seed + static_cast<uint64_t>(i));
      const auto ck = std::make_tuple(static_cast<int>(r.cfg.dtype), r.m, r.n, r.k);
      if ((opt.cublas || r.cublas) && !opt.check_only && !cublas_done.count(ck)) {
        b.reference(r);  // warm the cuBLAS heuristics for this shape
        const ResultRow cr = b.run_cublas(r);
        out << format_result(cr) << "\n";
        out.flush();
        cublas_done.insert(ck);
        cublas_tflops[key] = cr.tflops;
        ++cublas_n;
        std::printf("[%4d] %-62s %10.2f us %8.2f TFLOPS  (%d MHz, %d-%d)\n", i,
                    (cr.kernel + " " + key).c_str(), cr.median_us, cr.tflops, cr.sm_clock_mhz,
                    cr.sm_clock_min_mhz, cr.sm_clock_max_mhz);
      }
      if (r.cublas) continue;
      b.reference(r);
      ResultRow res;
      std::string why;
      if (b.run_kernel(r, res, why)) {
        out << format_result(res) << "\n";
        out.flush();
        ++passed;
        Best& bb = best[key];
        if (res.tflops > bb.tflops) bb = Best{res.tflops, res.kernel};
        std::printf("[%4d] %-62s %10.2f us %8.2f TFLOPS  err %.1e  %d regs  (%d MHz, %d-%d)\n", i,
                    (res.kernel + " " + key).c_str(), res.median_us, res.tflops, res.rel_err,
                    res.regs_per_thread, res.sm_clock_mhz, res.sm_clock_min_mhz,
                    res.sm_clock_max_mhz);
      } else {
        failed << format_result(res) << "," << i << ",\"" << why << "\"\n";
        failed.flush();
        ++failed_n;
        std::printf("[%4d] %-62s FAILED: %s\n", i, (res.kernel + " " + key).c_str(), why.c_str());
      }
    } catch (const CudaError& e) {
      failed << "# row " << i << " fatal: " << e.what() << "\n";
      failed.flush();
      std::fprintf(stderr, "FATAL at row %d: %s\n", i, e.what());
      if (sticky(e.code)) {
        std::fprintf(stderr, "context lost; rerun with --first-row %d --append\n", i + 1);
        return 3;
      }
      ++failed_n;
    }
    std::fflush(stdout);
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  std::printf("\n== summary: %d kernel rows passed, %d failed, %d cuBLAS rows, %.1f s ==\n", passed,
              failed_n, cublas_n, secs);
  std::printf("%-24s %10s %10s %7s  %s\n", "shape", "best TF", "cuBLAS TF", "ratio", "best kernel");
  for (const auto& [k, v] : best) {
    const double cb = cublas_tflops.count(k) ? cublas_tflops[k] : 0;
    std::printf("%-24s %10.2f %10.2f %6.1f%%  %s\n", k.c_str(), v.tflops, cb,
                cb > 0 ? 100.0 * v.tflops / cb : 0.0, v.kernel.c_str());
  }
  return failed_n ? 1 : 0;
}

}  // namespace
}  // namespace gemmsim::bench

int main(int argc, char** argv) {
  try {
    return gemmsim::bench::run(gemmsim::bench::parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemmsim-bench: %s\n", e.what());
    return 2;
  }
}
