// The gemmsim command line.
//
//   gemmsim --hw a100 --tiles 128x128x32                 one prediction (default problem)
//   gemmsim hw show h100 [--json]                         a GPU description with its peaks
//   gemmsim validate --data validate/data/h100 [--json]   predictions vs measurements
//   gemmsim sweep --hw h100 --problem 4096x4096x4096     rank every legal configuration
//   gemmsim study configs/studies/a100_h100_l2.yaml       what-if hardware grid
//
// Exit codes: 0 success, 2 bad input (flag, file, configuration), 1 anything else.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "hw/describe.hpp"
#include "hw/loader.hpp"
#include "kernels/common/kernel_name.hpp"
#include "kernels/common/legality.hpp"
#include "sim/cli/commands.hpp"
#include "sim/core/error.hpp"
#include "sim/dist/world.hpp"
#include "sim/run/run.hpp"
#include "traces/cta_trace.hpp"
#include "traces/traces.hpp"
#include "validate/compare/validate.hpp"

namespace {

using namespace gemmsim;

constexpr const char* kExamples = R"(Examples:
  gemmsim --hw a100 --tiles 128x128x32
  gemmsim --hw h100 --problem 8192x8192x8192 --dtype bf16 --tiles 128x256x32 --warps 2x4 --stages 4
  gemmsim --hw h100 --kernel tiled --dtype f32 --tiles 64x64x8 --thread-tile 4x4 --json
  gemmsim --hw h100 --kernel warp-specialized --ws-variant hopper --consumers 2 --dtype bf16 --tiles 128x256x64
  gemmsim --hw a100 --problem 1024x1024x16384 --split-k 8 --split-k-mode reduction
  gemmsim --hw a100 --set l2.size=80MiB --tiles 128x128x32        (what if L2 were twice as large?)
  gemmsim hw show h100 --json
  gemmsim validate --data validate/data/h100 --family pipelined
  gemmsim validate --data validate/data/h200 --hw h200 --problem 2048x2048x2048
  gemmsim validate --data validate/data/h100 --model cutlass-latency
  gemmsim sweep --hw h100 --problem 4096x4096x4096 --dtype f16 [--library] [--best]
  gemmsim study configs/studies/h100_dram_bandwidth.yaml

Defaults: problem 4096x4096x4096, fp16 inputs with fp32 accumulation on tensor cores, the
pipelined family, 2x2 warps, 3 stages where the GPU has cp.async (sm_80+) and 2 otherwise,
padded shared memory, no split-K, no threadblock swizzle. SIMT fp32 (--dtype f32) defaults to
8x8 thread tiles; the tiled family is SIMT fp32 with one buffer. Warp-specialized: 4 stages,
1 consumer warpgroup, warps (2 x consumers)x2 (ampere) or (4 x consumers)x1 (hopper, which
also defaults to block_k 64 and the swizzled layout its TMA writes).)";

// "AxBxC" -> three positive integers; `what` names the flag in errors.
std::vector<long long> parse_dims(const std::string& text, int count, const std::string& what) {
  std::vector<long long> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t x = text.find('x', pos);
    const std::string part = text.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    long long v = 0;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || v < 1)
      throw UserError(fmt::format("{} '{}': expected {} positive integers separated by 'x'", what,
                                  text, count == 3 ? "three" : "two"));
    out.push_back(v);
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  if (int(out.size()) != count)
    throw UserError(fmt::format("{} '{}': expected {} positive integers separated by 'x'", what,
                                text, count == 3 ? "three" : "two"));
  return out;
}

int to_int(long long v, const std::string& what) {
  if (v > 1 << 20) throw UserError(fmt::format("{} value {} is too large", what, v));
  return int(v);
}

struct PredictOptions {
  std::string hw;
  std::vector<std::string> overrides;
  std::string tiles, problem = "4096x4096x4096", dtype = "f16", kernel = "pipelined";
  std::string warps, thread_tile = "8x8", split_k_mode = "atomic", smem_layout = "pad";
  std::optional<int> stages;
  std::string ws_variant = "ampere";  // warp-specialized only
  int consumers = 1;
  bool smem_layout_given = false;
  bool ws_flags_given = false;  // --ws-variant or --consumers
  int split_k = 1, swizzle = 1;
  bool json = false;
  std::string l2_start = "clean";  // --l2-start
  int regs = 0;                    // --regs (0: estimate)
  double alu_wait = -1;            // --alu-wait (negative: estimate)
  traces::TraceRequest traces;  // --trace, --report, --critical-path and their filters
};

DType parse_dtype(const std::string& s) {
  if (s == "f16" || s == "fp16") return DType::F16;
  if (s == "bf16") return DType::BF16;
  if (s == "tf32") return DType::TF32;
  if (s == "f32" || s == "fp32") return DType::F32;
  throw UserError(fmt::format("--dtype '{}': expected one of f16, bf16, tf32, f32", s));
}

Family parse_family(const std::string& s) {
  if (s == "tiled") return Family::Tiled;
  if (s == "pipelined") return Family::Pipelined;
  if (s == "warp-specialized") return Family::WarpSpecialized;
  throw UserError(
      fmt::format("--kernel '{}': expected one of tiled, pipelined, warp-specialized", s));
}

GemmConfig resolve_config(const PredictOptions& o, const GpuSpec& gpu) {
  GemmConfig c = default_config(gpu);
  c.family = parse_family(o.kernel);
  c.dtype = parse_dtype(o.dtype);
  if (c.family == Family::Tiled && o.dtype == "f16") c.dtype = DType::F32;  // tiled is SIMT
  const bool ws = c.family == Family::WarpSpecialized;
  if (!ws && o.ws_flags_given)
    throw UserError("--ws-variant and --consumers apply only to --kernel warp-specialized");
  if (ws) {
    if (o.ws_variant == "ampere")
      c.ws_variant = WsVariant::Ampere;
    else if (o.ws_variant == "hopper")
      c.ws_variant = WsVariant::Hopper;
    else
      throw UserError(fmt::format("--ws-variant '{}': expected ampere or hopper", o.ws_variant));
    c.consumers = o.consumers;
    // Warp-specialized defaults: the kernels' thread layout (GemmConfig), 4 stages, and for
    // Hopper a 64-wide K tile (one 128-byte swizzle atom) in the TMA's swizzled layout.
    const bool hopper = c.ws_variant == WsVariant::Hopper;
    c.warps_m = hopper ? 4 * c.consumers : 2 * c.consumers;
    c.warps_n = hopper ? 1 : 2;
    c.stages = 4;
    if (hopper) c.block_k = 64;
    if (hopper && !o.smem_layout_given) c.smem_layout = SmemLayout::Swizzled;
  }
  if (!o.tiles.empty()) {
    const auto t = parse_dims(o.tiles, 3, "--tiles");
    c.block_m = to_int(t[0], "--tiles");
    c.block_n = to_int(t[1], "--tiles");
    c.block_k = to_int(t[2], "--tiles");
  } else if (!c.tensor_core()) {
    c.block_m = 128, c.block_n = 128, c.block_k = 8;
  }
  const auto tt = parse_dims(o.thread_tile, 2, "--thread-tile");
  c.thread_m = to_int(tt[0], "--thread-tile");
  c.thread_n = to_int(tt[1], "--thread-tile");
  if (!o.warps.empty()) {
    const auto w = parse_dims(o.warps, 2, "--warps");
    c.warps_m = to_int(w[0], "--warps");
    c.warps_n = to_int(w[1], "--warps");
  } else if (!c.tensor_core()) {
    // SIMT: lanes form a 4 x 8 grid of thread tiles inside each warp tile.
    c.warps_m = std::max(1, c.block_m / (4 * c.thread_m));
    c.warps_n = std::max(1, c.block_n / (8 * c.thread_n));
  }
  if (o.stages) {
    c.stages = *o.stages;
  } else if (ws) {
  } else if (c.family == Family::Tiled) {
    c.stages = 1;
  } else if (!c.tensor_core()) {
    c.stages = 2;
  }
  c.split_k = o.split_k;
  if (o.split_k_mode == "atomic")
    c.split_k_mode = SplitKMode::Atomic;
  else if (o.split_k_mode == "reduction")
    c.split_k_mode = SplitKMode::Reduction;
  else
    throw UserError(fmt::format("--split-k-mode '{}': expected atomic or reduction", o.split_k_mode));
  c.swizzle = o.swizzle;
  if (ws && !o.smem_layout_given)
    ;  // the variant's default, set above
  else if (o.smem_layout == "pad")
    c.smem_layout = SmemLayout::Padded;
  else if (o.smem_layout == "swz")
    c.smem_layout = SmemLayout::Swizzled;
  else if (o.smem_layout == "naive")
    c.smem_layout = SmemLayout::Naive;
  else
    throw UserError(fmt::format("--smem-layout '{}': expected pad, swz or naive", o.smem_layout));
  return c;
}

// Implausible but modelable values (e.g. a what-if override above the datasheet) load with a
// warning that names them.
GpuSpec load_and_warn(const std::string& name, const std::vector<std::string>& overrides) {
  GpuSpec gpu = load_gpu(name, overrides);
  for (const auto& w : gpu.warnings) std::cerr << "gemmsim: warning: " << w << "\n";
  return gpu;
}

int run_predict(const PredictOptions& o) {
  if (o.hw.empty()) throw UserError("--hw is required: a GPU name (e.g. a100, h100) or a YAML path");
  const GpuSpec gpu = load_and_warn(o.hw, o.overrides);
  const GemmConfig c = resolve_config(o, gpu);
  const auto d = parse_dims(o.problem, 3, "--problem");
  const GemmProblem p{d[0], d[1], d[2]};
  const L2Start start = parse_l2_start(o.l2_start);
  traces::check_request(o.traces);
  if (o.traces.active()) {
    if (start != L2Start::Clean)
      throw UserError(fmt::format(
          "--l2-start {} cannot be combined with --trace, --report or --critical-path (they "
          "follow a run from a clean L2)",
          l2_start_name(start)));
  }
  std::optional<traces::CtaTimeline> timeline;
  if (!o.traces.cta_trace_path.empty()) timeline.emplace(kernel_name(c));
  sim::SimObserver* const cta_observer = timeline ? &*timeline : nullptr;
  const Prediction pred = o.traces.active() ? traces::predict_traced(gpu, c, p, o.traces, o.regs,
                                                                     o.alu_wait, cta_observer)
                                            : predict(gpu, c, p,
                                                      {.observer = cta_observer,
                                                       .l2_start = start,
                                                       .regs_per_thread = o.regs,
                                                       .alu_wait = o.alu_wait});
  if (timeline) timeline->write(o.traces.cta_trace_path, c, p);
  if (o.json)
    std::cout << to_json(pred).dump(2) << "\n";
  else
    std::cout << format_report(pred);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Under mpirun every rank runs this main(): sweep and study spread their points over the
  // ranks (sim/dist) and only rank 0 writes and prints. Input errors are the same on every
  // rank (they read the same files), so only rank 0 reports them.
  std::optional<dist::World> world;
  try {
    world.emplace(argc, argv);
  } catch (const UserError& e) {
    std::cerr << "gemmsim: " << e.what() << "\n";
    return 2;
  }
  CLI::App app{"gemmsim: a cycle-level simulator of GEMM kernels on NVIDIA GPUs", "gemmsim"};
  app.footer(kExamples);
  app.set_version_flag("--version", std::string("gemmsim ") + GEMMSIM_VERSION);
  app.require_subcommand(0, 1);

  PredictOptions o;
  app.add_option("--hw", o.hw, "GPU: a name in configs/hw (t4, v100, a100, a6000, h100, h200) or a YAML path");
  app.add_option("--set", o.overrides, "Override a GPU field before validation, KEY.PATH=VALUE (repeatable)");
  app.add_option("--tiles", o.tiles, "Threadblock tile MxNxK (default 128x128x32; SIMT 128x128x8)");
  app.add_option("--problem", o.problem, "GEMM size MxNxK")->capture_default_str();
  app.add_option("--dtype", o.dtype, "Input type: f16, bf16, tf32 (tensor cores, fp32 accumulate) or f32 (SIMT)")
      ->capture_default_str();
  app.add_option("--kernel", o.kernel, "Kernel family: tiled, pipelined, warp-specialized")
      ->capture_default_str();
  app.add_option("--warps", o.warps, "Warp arrangement MxN (default 2x2; SIMT: from the thread tile)");
  app.add_option("--thread-tile", o.thread_tile, "SIMT thread tile MxN")->capture_default_str();
  app.add_option("--stages", o.stages, "Pipeline stages (default 3 with cp.async, else 2; tiled 1)");
  app.add_option("--split-k", o.split_k, "Split-K slices (1-16)")->capture_default_str();
  app.add_option("--split-k-mode", o.split_k_mode, "atomic or reduction")->capture_default_str();
  app.add_option("--swizzle", o.swizzle, "Threadblock swizzle: 1, 2, 4 or 8")->capture_default_str();
  auto* smem_layout_opt =
      app.add_option("--smem-layout", o.smem_layout, "Shared-memory layout: pad, swz or naive")
          ->capture_default_str();
  auto* ws_variant_opt = app.add_option("--ws-variant", o.ws_variant,
                 "Warp-specialized variant: ampere (cp.async + mma.sync, sm_80+) or hopper (TMA + "
                 "wgmma, sm_90)")
      ->capture_default_str();
  auto* consumers_opt = app.add_option("--consumers", o.consumers,
                 "Warp-specialized consumer warpgroups (4 warps each): 1 or 2")
      ->capture_default_str();
  app.add_flag("--json", o.json, "Print one JSON object instead of the report");
  app.add_option("--l2-start", o.l2_start,
                 "L2 at the first launch: clean; memset-flush (right after gemmsim-bench's "
                 "flush, a memset over 2x L2, which leaves dirty lines to write back); or warm "
                 "(the same launches just before, as back-to-back repetitions find it)")
      ->capture_default_str();
  app.add_option("--regs", o.regs,
                 "Registers per thread of the compiled kernel (ptxas -v), which sets how many "
                 "CTAs fit an SM (default: estimated from the tile shapes)")
      ->check(CLI::Range(1, 255));
  app.add_option("--alu-wait", o.alu_wait,
                 "Cycles the compiled main loop's integer instructions wait for earlier results: "
                 "its non-math instructions' mean SASS stall count less one "
                 "(validate/harness/sass_loop_table.py; default: the model's estimate)")
      ->check(CLI::Range(0.0, 15.0));
  traces::add_trace_options(app, o.traces);

  // gemmsim hw show <gpu>
  auto* hw = app.add_subcommand("hw", "GPU descriptions");
  hw->require_subcommand(1);
  auto* show = hw->add_subcommand("show", "Print a resolved GPU description with derived peaks");
  std::string show_gpu;
  bool show_json = false;
  std::vector<std::string> show_overrides;
  show->add_option("gpu", show_gpu, "GPU name or YAML path")->required();
  show->add_flag("--json", show_json, "Print JSON");
  show->add_option("--set", show_overrides, "Override a field, KEY.PATH=VALUE (repeatable)");
  auto* list = hw->add_subcommand("list", "List the GPUs in configs/hw");

  // gemmsim validate
  auto* val = app.add_subcommand("validate", "Compare predictions with committed measurements");
  ValidateOptions vo;
  val->add_option("--data", vo.data_dir, "Directory of measurement CSVs")->capture_default_str();
  val->add_option("--hw", vo.hw, "GPU description to predict with")->capture_default_str();
  val->add_option("--family", vo.family, "Only this family (tiled, pipelined, warp-specialized)");
  val->add_option("--problem", vo.problems, "Only the rows of this GEMM size MxNxK (repeatable)");
  val->add_flag("--json", vo.json, "Print JSON");
  val->add_option("--set", vo.overrides, "Override a GPU field, KEY.PATH=VALUE (repeatable)");
  val->add_option("--threads", vo.threads, "Worker threads (default: all cores)");
  val->add_option("--rows", vo.rows_csv, "Write every row's prediction and error to this CSV");
  val->add_option("--l2-start", vo.l2_start,
                  "L2 each timed row starts from: memset-flush (the harness's flush before "
                  "every timed run, simulated: how the committed rows were measured), clean, or "
                  "warm (the row's launches just before)")
      ->capture_default_str();
  val->add_option("--regs", vo.regs,
                  "Register counts: recorded (the compiled kernel's, from each row; the estimate "
                  "where a row has none) or estimate (from the tile shapes)")
      ->capture_default_str();
  val->add_option("--sass", vo.sass,
                  "Simulate each row with its kernel's main-loop integer wait from this CSV of "
                  "sass_loop_table.py (e.g. validate/data/sass_sm90.csv; default: the model's "
                  "estimate)");
  val->add_option("--model", vo.model,
                  "des (simulator), cutlass-latency, ws-recurrence, roofline or cosma (ranking only)")
      ->capture_default_str();

  const cli::Subcommand sweep_cmd = cli::add_sweep_command(app);
  const cli::Subcommand study_cmd = cli::add_study_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (!dist::is_root()) return e.get_exit_code() == 0 ? 0 : 2;
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  o.smem_layout_given = smem_layout_opt->count() > 0;
  o.ws_flags_given = ws_variant_opt->count() > 0 || consumers_opt->count() > 0;

  try {
    if (*show) {
      const GpuSpec gpu = load_and_warn(show_gpu, show_overrides);
      if (show_json)
        std::cout << describe_json(gpu).dump(2) << "\n";
      else
        std::cout << describe_text(gpu);
      return 0;
    }
    if (*list) {
      for (const auto& g : known_gpus()) std::cout << g << "\n";
      return 0;
    }
    if (*val) return run_validate(vo, std::cout);
    if (*sweep_cmd.app) return sweep_cmd.run();
    if (*study_cmd.app) return study_cmd.run();
    return run_predict(o);
  } catch (const dist::RankExit& e) {
    return e.exit_code;  // an MPI rank other than 0: its points are done, or rank 0 stopped
  } catch (const HwError& e) {
    if (dist::is_root()) std::cerr << "gemmsim: " << e.what() << "\n";
    return 2;
  } catch (const UserError& e) {
    if (dist::is_root()) std::cerr << "gemmsim: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    // Not an input error, so it may be this rank's alone: every rank says it.
    if (dist::is_root())
      std::cerr << "gemmsim: error: " << e.what() << "\n";
    else
      std::cerr << "gemmsim: rank " << dist::rank() << ": error: " << e.what() << "\n";
    return 1;
  }
}
