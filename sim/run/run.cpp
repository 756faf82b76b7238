#include "sim/run/run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "hw/describe.hpp"
#include "kernels/common/aux_models.hpp"
#include "kernels/common/kernel_name.hpp"
#include "kernels/common/legality.hpp"
#include "kernels/pipelined/model.hpp"
#include "kernels/tiled/model.hpp"
#include "kernels/warp_specialized/model.hpp"
#include "sim/core/error.hpp"
#include "sim/gpu/memory_system.hpp"

namespace gemmsim {

struct FlushMemo::State {
  State(const sim::MemorySystem& m, sim::Tick e) : memory(m), end(e) {}
  sim::MemorySystem memory;  // right after the flush, recency forgotten
  sim::Tick end;             // when the flush ended: the timed launches' origin
};

struct FlushMemo::Impl {
  std::mutex mutex;
  std::size_t capacity = 0;
  std::list<std::pair<std::string, std::shared_ptr<const State>>> states;  // latest used first
  std::size_t hits = 0, misses = 0;
};

FlushMemo::FlushMemo(std::size_t capacity) : impl_(std::make_unique<Impl>()) {
  impl_->capacity = std::max<std::size_t>(1, capacity);
}

FlushMemo::~FlushMemo() = default;

std::shared_ptr<const FlushMemo::State> FlushMemo::find(const std::string& key) {
  const std::lock_guard lock(impl_->mutex);
  auto& states = impl_->states;
  const auto it = std::find_if(states.begin(), states.end(),
                               [&](const auto& entry) { return entry.first == key; });
  if (it == states.end()) {
    ++impl_->misses;
    return nullptr;
  }
  ++impl_->hits;
  states.splice(states.begin(), states, it);
  return it->second;
}

void FlushMemo::keep(const std::string& key, std::shared_ptr<const State> state) {
  const std::lock_guard lock(impl_->mutex);
  auto& states = impl_->states;
  // Another thread may have kept the same state meanwhile (the same, as the flush is
  // deterministic): keep one.
  std::erase_if(states, [&](const auto& entry) { return entry.first == key; });
  states.emplace_front(key, std::move(state));
  while (states.size() > impl_->capacity) states.pop_back();
}

std::size_t FlushMemo::hits() const {
  const std::lock_guard lock(impl_->mutex);
  return impl_->hits;
}

std::size_t FlushMemo::misses() const {
  const std::lock_guard lock(impl_->mutex);
  return impl_->misses;
}

namespace {

std::unique_ptr<sim::KernelModel> make_main_model(const GemmConfig& c, const GemmProblem& p,
                                                  const GpuSpec& gpu, int regs) {
  if (!c.tensor_core()) return make_simt_model(c, p, gpu, regs);
  switch (c.family) {
    case Family::Pipelined:
      return make_tensor_pipelined_model(c, p, gpu, regs);
    case Family::WarpSpecialized:
      return make_warp_specialized_model(c, p, gpu, regs);
    default: break;
  }
  throw UserError(fmt::format("family {} has no model yet", family_name(c.family)));
}

// Peak of the pipe this configuration computes on, at the sustained clock.
double pipe_peak_tflops(const GpuSpec& gpu, const GemmConfig& c) {
  const double hz = gpu.clocks.sustained.hz;
  if (!c.tensor_core()) return gpu.sm_count * gpu.fp32.ops_per_clk_per_sm * 2.0 * hz / 1e12;
  const auto& t = gpu.tensor.at(c.dtype);
  if (c.family == Family::WarpSpecialized && c.ws_variant == WsVariant::Hopper)
    return gpu.sm_count * t.dense_fma_per_clk_per_sm * 2.0 * hz / 1e12;  // wgmma
  return gpu.sm_count * t.mma_sync_fma_per_clk_per_sm * 2.0 * hz / 1e12;
}

}  // namespace

nlohmann::json config_to_json(const GemmConfig& c) {
  return {
      {"family", family_name(c.family)},
      {"dtype", dtype_name(c.dtype)},
      {"block_m", c.block_m},
      {"block_n", c.block_n},
      {"block_k", c.block_k},
      {"warps_m", c.warps_m},
      {"warps_n", c.warps_n},
      {"thread_m", c.thread_m},
      {"thread_n", c.thread_n},
      {"stages", c.stages},
      {"split_k", c.split_k},
      {"split_k_mode", c.split_k_mode == SplitKMode::Atomic ? "atomic" : "reduction"},
      {"swizzle", c.swizzle},
      {"smem_layout", layout_name(c.smem_layout)},
      {"consumers", c.consumers},
      {"ws_variant", c.ws_variant == WsVariant::Hopper ? "hopper" : "ampere"},
  };
}

// The SM clock a kernel runs at. Tensor-core kernels run at most at clocks.tensor_spec, the
// clock the vendor rates tensor throughput at: H100 SXM caps its clock there while the tensor
// cores are busy (1830 MHz against a 1980 MHz boost). Our Nsight Compute counters confirm it:
// sm__cycles_elapsed.avg / gpu__time_duration.sum gives 1742-1873 MHz (median 1800) over the
// 36 tensor-core launches in validate/data/h100/counters.csv, and 1966-2004 MHz over the 22
// SIMT ones, while NVML reported 1980 MHz for both. On GPUs whose tensor_spec equals the
// boost clock this changes nothing. (A split-K reduction launch of a tensor-core GEMM is
// simulated at the same clock: it is a few microseconds.)
Frequency kernel_clock(const GpuSpec& gpu, const GemmConfig& config) {
  if (!config.tensor_core()) return gpu.clocks.sustained;
  return Frequency{std::min(gpu.clocks.sustained.hz, gpu.clocks.tensor_spec.hz)};
}

namespace {

// Where the simulated harness flush writes: below the GEMM's matrices (AddressMap puts A at
// 4 GiB), and 2 x l2.size (at most 2 GiB, see hw/schema.cpp) fits in between.
constexpr std::uint64_t kFlushBuffer = std::uint64_t(1) << 30;

Prediction simulate(const GpuSpec& spec, const GemmConfig& config, const GemmProblem& problem,
                    const SimOptions& options, int main_ctas) {
  check_legal(config, problem, spec);
  if (options.regs_per_thread < 0 || options.regs_per_thread > spec.sm.max_registers_per_thread)
    throw UserError(fmt::format("registers per thread {}: expected 1 to {} ({}), or 0 to estimate",
                                options.regs_per_thread, spec.sm.max_registers_per_thread,
                                spec.name));
  if (!(options.alu_wait < 16))  // a stall count is 4 bits
    throw UserError(
        fmt::format("integer wait {} cycles: expected 0 to 15 (or negative for the "
                    "model's estimate)",
                    options.alu_wait));
  const L2Start start = options.l2_start;
  GpuSpec gpu = spec;
  gpu.clocks.sustained = kernel_clock(spec, config);
  Prediction out;
  out.gpu_key = gpu.key;
  out.gpu_name = gpu.name;
  out.kernel = kernel_name(config);
  out.config = config;
  out.problem = problem;
  out.sm_clock_mhz = gpu.clocks.sustained.mhz();

  const sim::ClockDomain clock(gpu.clocks.sustained);
  const sim::Tick launch = sim::Tick(gpu.launch_overhead.ps());

  // The harness's flush runs before the timed region (its CUDA events bracket the GEMM's
  // launches only): times count from its end. It leaves the L2's lines, dirty and clean, in no
  // recency order (MemorySystem::forget_recency).
  sim::Tick origin = 0;
  const bool flushed = start == L2Start::AfterMemsetFlush;
  const std::string memo_key =
      flushed && options.flush_memo ? describe_json(gpu).dump() : std::string();
  std::optional<sim::MemorySystem> memory_slot;  // constructed, or copied from the memo
  if (!memo_key.empty()) {
    if (const auto state = options.flush_memo->find(memo_key)) {
      memory_slot.emplace(state->memory);
      origin = state->end;
    }
  }
  if (!memory_slot) {
    memory_slot.emplace(gpu, clock);
    if (flushed) {
      sim::GpuModel flusher(gpu, *memory_slot);
      const auto flush = make_memset_model(kFlushBuffer, 2 * gpu.l2.size.value);
      origin = flusher.run(*flush, launch).end;
      memory_slot->forget_recency();
      if (!memo_key.empty())
        options.flush_memo->keep(
            memo_key, std::make_shared<const FlushMemo::State>(*memory_slot, origin));
    }
  }
  sim::MemorySystem& memory = *memory_slot;
  sim::GpuModel model(gpu, memory);
  // The launches of one GEMM, in order: split-K's fill of C (atomic), the main kernel, split-K's
  // reduction. Each waits for the one before plus the launch overhead.
  const auto main_model = make_main_model(config, problem, gpu, options.regs_per_thread);
  if (options.regs_per_thread > 0 &&
      sim::GpuModel::ctas_per_sm(gpu, main_model->geometry(), nullptr) < 1)
    throw UserError(fmt::format(
        "{} registers per thread: a CTA of {} threads does not fit the register file of a {} SM "
        "({} registers, allocated per warp in units of {} within each of its {} sub-partitions)",
        options.regs_per_thread, main_model->geometry().threads_per_cta, gpu.name, gpu.sm.registers,
        gpu.sm.register_alloc_unit, gpu.sm.sub_partitions));
  std::vector<std::unique_ptr<sim::KernelModel>> aux;
  std::vector<const sim::KernelModel*> sequence;
  if (config.split_k > 1 && config.split_k_mode == SplitKMode::Atomic)
    sequence.push_back(aux.emplace_back(make_fill_model(problem, config.dtype)).get());
  sequence.push_back(main_model.get());
  if (config.split_k > 1 && config.split_k_mode == SplitKMode::Reduction)
    sequence.push_back(aux.emplace_back(make_splitk_reduction_model(config, problem)).get());
  auto cta_limit = [&](const sim::KernelModel* k) { return k == main_model.get() ? main_ctas : 0; };
  auto alu_wait = [&](const sim::KernelModel* k) {
    return k == main_model.get() ? options.alu_wait : -1.0;
  };

  if (start == L2Start::Warm) {
    // The same launches once before, untimed.
    for (const sim::KernelModel* k : sequence)
      origin = model.run(*k, origin + launch, cta_limit(k), alu_wait(k)).end;
  }
  model.set_observer(options.observer);

  sim::Tick now = origin;
  sim::KernelStats s;  // the main kernel's
  sim::MemoryCounters before, after;
  for (const sim::KernelModel* k : sequence) {
    const bool is_main = k == main_model.get();
    if (is_main) before = memory.counters();
    const sim::KernelStats ks = model.run(*k, now + launch, cta_limit(k), alu_wait(k));
    if (is_main) {
      after = memory.counters();
      s = ks;
    }
    out.launches.push_back(
        {k->name(), double(ks.end - now) / 1e6, double(ks.end - ks.start) / 1e6, ks.ctas});
    out.events += ks.events;
    out.warp_instructions += ks.warp_instructions;
    now = ks.end;
  }

  // Totals.
  out.time_us = double(now - origin) / 1e6;
  out.cycles = clock.cycles(now - origin);
  out.tflops = problem.flops() / (out.time_us * 1e-6) / 1e12;
  out.peak_tflops = pipe_peak_tflops(gpu, config);
  const auto geo = main_model->geometry();
  out.ctas = s.ctas;
  out.waves = s.waves;
  out.ctas_per_sm = s.ctas_per_sm;
  out.occupancy_limit = s.occupancy_limit;
  out.regs_per_thread = geo.regs_per_thread;
  out.regs_estimated = options.regs_per_thread == 0;
  out.alu_wait_estimated = options.alu_wait < 0;
  out.alu_wait = options.alu_wait >= 0 ? options.alu_wait : sim::alu_wait_estimate(gpu);
  out.smem_per_cta = geo.smem_per_cta;

  // Utilisation of each resource over the main kernel's duration.
  const double cycles = std::max(1.0, clock.cycles(s.end - s.start));
  const double nsm = gpu.sm_count, nsp = gpu.sm.sub_partitions;
  const double dur_ps = std::max(1.0, double(s.end - s.start));
  auto frac = [](double v) { return std::clamp(v, 0.0, 1.0); };
  out.utilisation["tensor_pipe"] = frac(s.tensor_busy_cycles / (cycles * nsm * nsp));
  out.utilisation["fp32_pipe"] = frac(s.fma_busy_cycles / (cycles * nsm * nsp));
  out.utilisation["issue"] =
      frac(double(s.warp_instructions) / (cycles * nsm * nsp * gpu.sm.issue_per_clk));
  out.utilisation["shared_memory"] = frac(s.mio_busy_cycles / (cycles * nsm));
  const double l2_busy = double(after.l2_busy - before.l2_busy);
  const double dram_busy = double(after.dram_busy - before.dram_busy);
  out.utilisation["l2"] = frac(l2_busy / (dur_ps * std::max(1, gpu.l2.slices)));
  out.utilisation["dram"] = frac(dram_busy / (dur_ps * std::max(1, gpu.dram.channels)));

  const double stall_total = s.stalls.memory + s.stalls.shared + s.stalls.math +
                             s.stalls.barrier + s.stalls.issue;
  auto share = [&](double v) { return stall_total > 0 ? v / stall_total : 0.0; };
  out.stalls["memory"] = share(s.stalls.memory);
  out.stalls["shared_memory"] = share(s.stalls.shared);
  out.stalls["math_dependency"] = share(s.stalls.math);
  out.stalls["barrier"] = share(s.stalls.barrier);
  out.stalls["issue_or_pipe_busy"] = share(s.stalls.issue);

  // The bound: the busiest resource, if it was busy most of the time; otherwise the run was
  // limited by latency (too little work in flight) or by a short, partial last wave.
  const auto busiest = std::max_element(
      out.utilisation.begin(), out.utilisation.end(),
      [](const auto& a, const auto& b) { return a.second < b.second; });
  if (busiest->second >= 0.6) {
    out.bound = busiest->first;
  } else if (s.waves <= 1 && s.ctas < gpu.sm_count) {
    out.bound = "parallelism (fewer CTAs than SMs)";
  } else {
    const auto top = std::max_element(out.stalls.begin(), out.stalls.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
    out.bound = "latency (" + top->first + ")";
  }

  const double l2_sectors = double(after.l2_sector_hits - before.l2_sector_hits +
                                   after.l2_sector_misses - before.l2_sector_misses);
  out.counters["gpu__time_duration.sum"] = double(s.end - s.start) / 1e3;  // ns
  out.counters["dram__bytes_read.sum"] = double(after.dram_bytes_read - before.dram_bytes_read);
  out.counters["dram__bytes_write.sum"] = double(after.dram_bytes_write - before.dram_bytes_write);
  // Bytes through the slices' tag stage: what the L2 moved for the SMs, less the reads the
  // request coalescer answered, plus the fills from DRAM (Nsight Compute's lts__t_bytes counts
  // those too: 1.27 x the tile bytes on a skinny row whose B comes from DRAM once).
  out.counters["lts__t_bytes.sum"] = double((after.l2_bytes - before.l2_bytes) -
                                            (after.l2_coalesced_bytes - before.l2_coalesced_bytes) +
                                            (after.dram_bytes_read - before.dram_bytes_read));
  out.counters["lts__t_sector_hit_rate.pct"] =
      l2_sectors > 0 ? 100.0 * double(after.l2_sector_hits - before.l2_sector_hits) / l2_sectors
                     : 0.0;
  out.counters["l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"] =
      double(s.smem_conflict_wavefronts);
  out.counters["sm__inst_executed_pipe_tensor.sum"] = double(s.tensor_instructions);
  out.counters["smsp__inst_executed_pipe_fma.sum"] = double(s.fma_instructions);
  out.counters["smsp__inst_executed.sum"] = double(s.warp_instructions);
  return out;
}

}  // namespace

const char* l2_start_name(L2Start s) {
  switch (s) {
    case L2Start::Clean:
      return "clean";
    case L2Start::AfterMemsetFlush:
      return "memset-flush";
    case L2Start::Warm:
      return "warm";
  }
  return "?";
}

L2Start parse_l2_start(const std::string& name) {
  if (name == "clean") return L2Start::Clean;
  if (name == "memset-flush") return L2Start::AfterMemsetFlush;
  if (name == "warm") return L2Start::Warm;
  throw UserError(fmt::format("--l2-start '{}': expected clean, memset-flush or warm", name));
}

Prediction predict(const GpuSpec& gpu, const GemmConfig& config, const GemmProblem& problem,
                   const SimOptions& options) {
  return simulate(gpu, config, problem, options, 0);
}

Prediction predict_grid_prefix(const GpuSpec& gpu, const GemmConfig& config,
                               const GemmProblem& problem, int main_ctas) {
  if (main_ctas < 1)
    throw std::invalid_argument("predict_grid_prefix: main_ctas " + std::to_string(main_ctas) +
                                " must be at least 1");
  return simulate(gpu, config, problem, SimOptions{}, main_ctas);
}

nlohmann::json to_json(const Prediction& p) {
  nlohmann::json launches = nlohmann::json::array();
  for (const auto& l : p.launches)
    launches.push_back({{"kernel", l.kernel},
                        {"time_us", l.time_us},
                        {"duration_us", l.duration_us},
                        {"ctas", l.ctas}});
  nlohmann::json j = {
      {"gpu", p.gpu_key},
      {"gpu_name", p.gpu_name},
      {"kernel", p.kernel},
      {"problem", {{"m", p.problem.m}, {"n", p.problem.n}, {"k", p.problem.k}}},
      {"time_us", p.time_us},
      {"cycles", p.cycles},
      {"sm_clock_mhz", p.sm_clock_mhz},
      {"tflops", p.tflops},
      {"peak_tflops", p.peak_tflops},
      {"pct_of_peak", p.peak_tflops > 0 ? 100.0 * p.tflops / p.peak_tflops : 0.0},
      {"ctas", p.ctas},
      {"waves", p.waves},
      {"ctas_per_sm", p.ctas_per_sm},
      {"occupancy_limit", p.occupancy_limit},
      {"regs_per_thread", p.regs_per_thread},
      {"regs_per_thread_source", p.regs_estimated ? "estimate" : "given"},
      {"alu_wait_cycles", p.alu_wait},
      {"alu_wait_source", p.alu_wait_estimated ? "estimate" : "given"},
      {"smem_per_cta_bytes", p.smem_per_cta},
      {"bound", p.bound},
      {"utilisation", p.utilisation},
      {"stalls", p.stalls},
      {"counters", p.counters},
      {"launches", launches},
      {"config", config_to_json(p.config)},
      {"simulated_events", p.events},
      {"simulated_warp_instructions", p.warp_instructions},
  };
  if (!p.critical_path.empty())
    j["critical_path"] = {{"total_us", p.critical_path_us}, {"shares", p.critical_path}};
  return j;
}

std::string format_report(const Prediction& p) {
  std::string s;
  s += fmt::format("gemmsim prediction: {} on {} ({})\n", p.kernel, p.gpu_name, p.gpu_key);
  s += fmt::format("  problem        {} x {} x {} ({})\n", p.problem.m, p.problem.n, p.problem.k,
                   dtype_name(p.config.dtype));
  s += fmt::format("  time           {:.2f} us  ({:.0f} cycles at {:.0f} MHz)\n", p.time_us,
                   p.cycles, p.sm_clock_mhz);
  s += fmt::format("  throughput     {:.1f} TFLOPS  ({:.1f}% of the {:.1f} TFLOPS {} peak)\n",
                   p.tflops, p.peak_tflops > 0 ? 100.0 * p.tflops / p.peak_tflops : 0.0,
                   p.peak_tflops,
                   !p.config.tensor_core() ? "FFMA"
                   : (p.config.family == Family::WarpSpecialized &&
                      p.config.ws_variant == WsVariant::Hopper)
                       ? "wgmma"
                       : "mma.sync");
  s += fmt::format("  CTAs           {} in {} wave(s), {} per SM (limited by {})\n", p.ctas,
                   p.waves, p.ctas_per_sm, p.occupancy_limit);
  s += fmt::format("  resources      {}{} registers/thread ({}), {} B shared memory/CTA\n",
                   p.regs_estimated ? "~" : "", p.regs_per_thread,
                   p.regs_estimated ? "estimate" : "given", p.smem_per_cta);
  s += fmt::format("  loop code      {}{:.2f} cycles waited per integer instruction ({})\n",
                   p.alu_wait_estimated ? "~" : "", p.alu_wait,
                   p.alu_wait_estimated ? "estimate" : "given");
  if (p.launches.size() > 1) {
    s += "  launches\n";
    for (const auto& l : p.launches)
      s += fmt::format("    {:<44} {:>10.2f} us  ({} CTAs)\n", l.kernel, l.time_us, l.ctas);
  }
  s += "  utilisation\n";
  for (const auto& [k, v] : p.utilisation) s += fmt::format("    {:<16} {:>5.1f}%\n", k, 100 * v);
  s += "  warp stalls\n";
  for (const auto& [k, v] : p.stalls) s += fmt::format("    {:<20} {:>5.1f}%\n", k, 100 * v);
  s += fmt::format("  DRAM           {:.1f} MB read, {:.1f} MB written; L2 hit rate {:.1f}%\n",
                   p.counters.at("dram__bytes_read.sum") / 1e6,
                   p.counters.at("dram__bytes_write.sum") / 1e6,
                   p.counters.at("lts__t_sector_hit_rate.pct"));
  s += fmt::format("  smem conflicts {:.0f} extra wavefronts\n",
                   p.counters.at("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"));
  s += fmt::format("  bound          {}\n", p.bound);
  if (!p.critical_path.empty()) {
    s += fmt::format("  critical path  {:.2f} us, share per resource\n", p.critical_path_us);
    for (const auto& [k, v] : p.critical_path)
      s += fmt::format("    {:<20} {:>5.1f}%\n", k, 100 * v);
  }
  return s;
}

}  // namespace gemmsim
