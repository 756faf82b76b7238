// Cross-field consistency rules of a GPU description, and the compute-capability tables they
// check against. Each rule blames one field, whose line the error names.
#include <fmt/format.h>

#include <array>
#include <bit>
#include <cmath>

#include "hw/schema.hpp"

namespace gemmsim {
namespace {

using Msg = std::optional<std::string>;

constexpr std::array<std::pair<int, std::string_view>, 8> kArchOfCc{
    std::pair{70, "volta"},  std::pair{72, "volta"},  std::pair{75, "turing"},
    std::pair{80, "ampere"}, std::pair{86, "ampere"}, std::pair{87, "ampere"},
    std::pair{89, "ada"},    std::pair{90, "hopper"}};

// The first compute capability with each PTX feature (PTX ISA target notes, hardware.md S11).
struct FeatureSupport {
  std::string_view key;
  bool Features::*flag;
  int min_cc;
};
constexpr std::array<FeatureSupport, 6> kFeatureSupport{
    FeatureSupport{"features.ldmatrix", &Features::ldmatrix, 75},
    FeatureSupport{"features.cp_async", &Features::cp_async, 80},
    FeatureSupport{"features.mbarrier", &Features::mbarrier, 80},
    FeatureSupport{"features.tma", &Features::tma, 90},
    FeatureSupport{"features.wgmma", &Features::wgmma, 90},
    FeatureSupport{"features.clusters", &Features::clusters, 90}};

// mma.sync shapes that run on the tensor cores at full rate, per data type and compute
// capability (hardware.md S11, S16: m8n8k4 f16 is Volta's; later GPUs emulate it slowly).
struct MmaSupport {
  DType type;
  MmaShape shape;
  int min_cc, max_cc;
};
constexpr std::array<MmaSupport, 7> kMmaSupport{
    MmaSupport{DType::F16, {8, 8, 4}, 70, 72},     MmaSupport{DType::F16, {16, 8, 8}, 75, 999},
    MmaSupport{DType::F16, {16, 8, 16}, 80, 999},  MmaSupport{DType::BF16, {16, 8, 8}, 80, 999},
    MmaSupport{DType::BF16, {16, 8, 16}, 80, 999}, MmaSupport{DType::TF32, {16, 8, 4}, 80, 999},
    MmaSupport{DType::TF32, {16, 8, 8}, 80, 999}};

// First compute capability with tensor cores for each data type.
int tensor_min_cc(DType t) {
  return t == DType::F16 ? 70 : 80;
}
// wgmma K per data type (PTX: m64nNk16 for f16/bf16, m64nNk8 for tf32).
int wgmma_k(DType t) {
  return t == DType::TF32 ? 8 : 16;
}

bool pow2(std::uint64_t v) {
  return v != 0 && std::has_single_bit(v);
}

std::string legal_mma_shapes(DType t, int cc) {
  std::string out;
  for (const auto& s : kMmaSupport)
    if (s.type == t && cc >= s.min_cc && cc <= s.max_cc)
      out += (out.empty() ? "" : ", ") + to_string(s.shape);
  return out.empty() ? "none" : out;
}

Msg line_and_sector(Bytes line, Bytes sector) {
  if (!pow2(line.value) || !pow2(sector.value))
    return fmt::format("line {} and sector {} must be powers of two", to_string(line),
                       to_string(sector));
  if (sector > line)
    return fmt::format("sector {} must divide line {}", to_string(sector), to_string(line));
  return std::nullopt;
}

std::vector<ConsistencyRule> build_rules() {
  constexpr auto E = Severity::Error;
  constexpr auto W = Severity::Warning;
  std::vector<ConsistencyRule> rules{
      {"compute_capability", E, "compute_capability is a known SM version",
       [](const GpuSpec& g, DType) -> Msg {
         if (arch_of_compute_capability(g.compute_capability)) return std::nullopt;
         std::string known;
         for (const auto& [cc, a] : kArchOfCc)
           known += (known.empty() ? "" : ", ") + std::to_string(cc);
         return fmt::format("{} is not a known SM version; expected one of {}",
                            g.compute_capability, known);
       }},
      {"arch", E,
       "arch matches compute_capability (70/72 volta, 75 turing, 80/86/87 ampere, "
       "89 ada, 90 hopper)",
       [](const GpuSpec& g, DType) -> Msg {
         const auto a = arch_of_compute_capability(g.compute_capability);
         if (!a || *a == g.arch) return std::nullopt;
         return fmt::format("'{}' does not match compute_capability {}; expected '{}'", g.arch,
                            g.compute_capability, *a);
       }},
      {"l2.sm_shares", E, "l2.sm_shares, where given, lists one share per SM (sm_count)",
       [](const GpuSpec& g, DType) -> Msg {
         const auto n = g.l2.sm_shares.size();
         if (n == 0 || n == std::size_t(g.sm_count)) return std::nullopt;
         return fmt::format("lists {} shares for {} SMs (sm_count); give one per SM", n,
                            g.sm_count);
       }},
      {"clocks.gpc_deviation", E,
       "clocks.gpc_deviation, where given, lists one deviation per GPC (gpcs), with "
       "clocks.gpc_deviation_at below clocks.gpc_deviation_vanishes_at",
       [](const GpuSpec& g, DType) -> Msg {
         const auto& c = g.clocks;
         const auto n = c.gpc_deviation.size();
         if (n == 0) return std::nullopt;
         if (n != std::size_t(std::max(1, g.gpcs)))
           return fmt::format("lists {} deviations for {} GPCs (gpcs); give one per GPC", n,
                              std::max(1, g.gpcs));
         if (c.gpc_deviation_at.hz <= 0 || c.gpc_deviation_vanishes_at.hz <= 0)
           return std::string("needs clocks.gpc_deviation_at and clocks.gpc_deviation_vanishes_at");
         if (c.gpc_deviation_vanishes_at.hz <= c.gpc_deviation_at.hz)
           return fmt::format(
               "clocks.gpc_deviation_vanishes_at {:.0f} MHz is not above "
               "clocks.gpc_deviation_at {:.0f} MHz",
               c.gpc_deviation_vanishes_at.hz / 1e6, c.gpc_deviation_at.hz / 1e6);
         return std::nullopt;
       }},
      {"sm.max_warps", E, "sm.max_warps x 32 = sm.max_threads",
       [](const GpuSpec& g, DType) -> Msg {
         if (g.sm.max_warps * 32 == g.sm.max_threads) return std::nullopt;
         return fmt::format("{} warps x 32 != sm.max_threads {}", g.sm.max_warps, g.sm.max_threads);
       }},
      {"sm.max_threads_per_block", E, "sm.max_threads_per_block <= sm.max_threads",
       [](const GpuSpec& g, DType) -> Msg {
         if (g.sm.max_threads_per_block <= g.sm.max_threads) return std::nullopt;
         return fmt::format("{} exceeds sm.max_threads {}", g.sm.max_threads_per_block,
                            g.sm.max_threads);
       }},
      {"sm.max_registers_per_block", E, "sm.max_registers_per_block <= sm.registers",
       [](const GpuSpec& g, DType) -> Msg {
         if (g.sm.max_registers_per_block <= g.sm.registers) return std::nullopt;
         return fmt::format("{} exceeds sm.registers {}", g.sm.max_registers_per_block,
                            g.sm.registers);
       }},
      {"sm.smem_per_sm", E, "sm.smem_per_sm <= sm.l1_smem_unified",
       [](const GpuSpec& g, DType) -> Msg {
         if (g.sm.smem_per_sm <= g.sm.l1_smem_unified) return std::nullopt;
         return fmt::format("{} exceeds sm.l1_smem_unified {}", to_string(g.sm.smem_per_sm),
                            to_string(g.sm.l1_smem_unified));
       }},
      {"sm.smem_per_block", E, "sm.smem_per_block + sm.smem_reserved_per_block <= sm.smem_per_sm",
       [](const GpuSpec& g, DType) -> Msg {
         if (g.sm.smem_per_block.value + g.sm.smem_reserved_per_block.value <=
             g.sm.smem_per_sm.value)
           return std::nullopt;
         return fmt::format("{} plus the {} reserved per block exceeds sm.smem_per_sm {}",
                            to_string(g.sm.smem_per_block), to_string(g.sm.smem_reserved_per_block),
                            to_string(g.sm.smem_per_sm));
       }},
      {"sm.smem_carveouts", E,
       "sm.smem_carveouts is non-empty, strictly ascending and ends at sm.smem_per_sm",
       [](const GpuSpec& g, DType) -> Msg {
         const auto& c = g.sm.smem_carveouts;
         if (c.empty()) return "the list is empty";
         for (std::size_t i = 1; i < c.size(); ++i)
           if (c[i] <= c[i - 1])
             return fmt::format("entries must ascend strictly ({} follows {})", to_string(c[i]),
                                to_string(c[i - 1]));
         if (c.back() != g.sm.smem_per_sm)
           return fmt::format("the largest carve-out {} must equal sm.smem_per_sm {}",
                              to_string(c.back()), to_string(g.sm.smem_per_sm));
         return std::nullopt;
       }},
      {"clocks.base", E, "clocks.base <= clocks.boost (when given)",
       [](const GpuSpec& g, DType) -> Msg {
         if (g.clocks.base <= g.clocks.boost) return std::nullopt;
         return fmt::format("{} exceeds clocks.boost {}", to_string(g.clocks.base),
                            to_string(g.clocks.boost));
       }},
      {"clocks.sustained", W, "clocks.sustained <= clocks.boost",
       [](const GpuSpec& g, DType) -> Msg {
         if (g.clocks.sustained <= g.clocks.boost) return std::nullopt;
         return fmt::format("{} is above clocks.boost {}", to_string(g.clocks.sustained),
                            to_string(g.clocks.boost));
       }},
      {"clocks.tensor_spec", W, "clocks.tensor_spec <= clocks.boost",
       [](const GpuSpec& g, DType) -> Msg {
         if (g.clocks.tensor_spec <= g.clocks.boost) return std::nullopt;
         return fmt::format("{} is above clocks.boost {}", to_string(g.clocks.tensor_spec),
                            to_string(g.clocks.boost));
       }},
      {"smem.bytes_per_clk", E, "smem.bytes_per_clk <= smem.banks x smem.bank_width",
       [](const GpuSpec& g, DType) -> Msg {
         const double wavefront = double(g.smem.banks) * double(g.smem.bank_width.value);
         if (g.smem.bytes_per_clk <= wavefront) return std::nullopt;
         return fmt::format("{:g} B/clk exceeds one wavefront of {} banks x {} = {:g} B",
                            g.smem.bytes_per_clk, g.smem.banks, to_string(g.smem.bank_width),
                            wavefront);
       }},
      {"l1.sector", E, "l1.line and l1.sector are powers of two and the sector divides the line",
       [](const GpuSpec& g, DType) { return line_and_sector(g.l1.line, g.l1.sector); }},
      {"l1.size", E, "l1.size <= sm.l1_smem_unified",
       [](const GpuSpec& g, DType) -> Msg {
         if (g.l1.size <= g.sm.l1_smem_unified) return std::nullopt;
         return fmt::format("{} exceeds sm.l1_smem_unified {}", to_string(g.l1.size),
                            to_string(g.sm.l1_smem_unified));
       }},
      {"l2.sector", E, "l2.line and l2.sector are powers of two and the sector divides the line",
       [](const GpuSpec& g, DType) { return line_and_sector(g.l2.line, g.l2.sector); }},
      {"l2.size", W,
       "l2.size is a whole number of lines per slice (otherwise each slice holds "
       "floor(size / (slices x line)) lines)",
       [](const GpuSpec& g, DType) -> Msg {
         const std::uint64_t unit = std::uint64_t(g.l2.slices) * g.l2.line.value;
         if (g.l2.size.value % unit == 0) return std::nullopt;
         return fmt::format(
             "{} does not divide into {} slices of whole {} lines; each slice "
             "holds {} lines ({} in all)",
             to_string(g.l2.size), g.l2.slices, to_string(g.l2.line), g.l2.size.value / unit,
             to_string(Bytes{g.l2.size.value / unit * unit}));
       }},
      {"l2.associativity", E, "l2.associativity <= lines per slice",
       [](const GpuSpec& g, DType) -> Msg {
         const std::uint64_t unit = std::uint64_t(g.l2.slices) * g.l2.line.value;
         const std::uint64_t lines = g.l2.size.value / unit;
         if (std::uint64_t(g.l2.associativity) <= lines) return std::nullopt;
         return fmt::format("{} ways exceed the {} lines of one slice", g.l2.associativity, lines);
       }},
      {"l2.slices", E, "l2.slices is a multiple of l2.partitions",
       [](const GpuSpec& g, DType) -> Msg {
         if (g.l2.slices % g.l2.partitions == 0) return std::nullopt;
         return fmt::format("{} slices do not split evenly into {} partitions", g.l2.slices,
                            g.l2.partitions);
       }},
      {"l2.far_extra_latency", E, "l2.far_extra_latency is 0 when l2.partitions is 1",
       [](const GpuSpec& g, DType) -> Msg {
         if (g.l2.partitions > 1 || g.l2.far_extra_latency.value == 0) return std::nullopt;
         return fmt::format("{} with a single L2 partition; expected 0cycles",
                            to_string(g.l2.far_extra_latency));
       }},
      {"l2.usable_ways", E, "l2.usable_ways is at most l2.associativity",
       [](const GpuSpec& g, DType) -> Msg {
         if (g.l2.usable_ways <= g.l2.associativity) return std::nullopt;
         return fmt::format("{} usable ways exceed the {} ways of a set", g.l2.usable_ways,
                            g.l2.associativity);
       }},
      {"dram.channels", E, "dram.bus_width_bits is a multiple of dram.channels",
       [](const GpuSpec& g, DType) -> Msg {
         if (g.dram.bus_width_bits % g.dram.channels == 0) return std::nullopt;
         return fmt::format("{} channels do not split the {}-bit bus evenly", g.dram.channels,
                            g.dram.bus_width_bits);
       }},
      {"dram.interleave", E, "dram.interleave is a power of two and at least l2.sector",
       [](const GpuSpec& g, DType) -> Msg {
         if (pow2(g.dram.interleave.value) && g.dram.interleave >= g.l2.sector) return std::nullopt;
         return fmt::format("{} must be a power of two of at least l2.sector {}",
                            to_string(g.dram.interleave), to_string(g.l2.sector));
       }},
      {"dram.banks", E,
       "dram.banks, dram.row_size and dram.row_miss_time are all set or banks is 0; row_size "
       "is a multiple of dram.interleave",
       [](const GpuSpec& g, DType) -> Msg {
         if (g.dram.banks == 0) return std::nullopt;
         if (g.dram.row_size.value == 0 || g.dram.row_miss_time.seconds == 0)
           return fmt::format("{} banks need dram.row_size and dram.row_miss_time above 0",
                              g.dram.banks);
         if (g.dram.interleave.value != 0 && g.dram.row_size.value % g.dram.interleave.value == 0)
           return std::nullopt;
         return fmt::format("dram.row_size {} is not a multiple of dram.interleave {}",
                            to_string(g.dram.row_size), to_string(g.dram.interleave));
       }},
      {"dram.row_miss_jitter", E, "dram.row_miss_jitter needs dram.banks",
       [](const GpuSpec& g, DType) -> Msg {
         if (g.dram.row_miss_jitter.seconds == 0 || g.dram.banks > 0) return std::nullopt;
         return fmt::format("{} is set but dram.banks is 0 (no rows to miss)",
                            to_string(g.dram.row_miss_jitter));
       }},
      {"dram.sustained", W, "dram.sustained <= dram.peak",
       [](const GpuSpec& g, DType) -> Msg {
         if (g.dram.sustained <= g.dram.peak) return std::nullopt;
         return fmt::format("{} is above dram.peak {}", to_string(g.dram.sustained),
                            to_string(g.dram.peak));
       }},
      {"dram.peak", W,
       "dram.peak is within 5% of bus_width_bits / 8 x clocks.memory x transfers_per_clk",
       [](const GpuSpec& g, DType) -> Msg {
         const double bus = double(g.dram.bus_width_bits) / 8.0 * g.clocks.memory.hz *
                            double(g.dram.transfers_per_clk);
         if (std::abs(g.dram.peak.bytes_per_s - bus) <= 0.05 * bus) return std::nullopt;
         return fmt::format("{} differs by more than 5% from the bus rate {} ({} bits x {} x {})",
                            to_string(g.dram.peak), to_string(Bandwidth{bus}),
                            g.dram.bus_width_bits, to_string(g.clocks.memory),
                            g.dram.transfers_per_clk);
       }},
      {"tensor.*.dense_fma_per_clk_per_sm", E,
       "the tensor data type exists at this compute capability (f16: 70+, bf16/tf32: 80+)",
       [](const GpuSpec& g, DType t) -> Msg {
         if (g.compute_capability >= tensor_min_cc(t)) return std::nullopt;
         return fmt::format("{} tensor cores need compute_capability >= {} (this GPU: {})",
                            dtype_name(t), tensor_min_cc(t), g.compute_capability);
       }},
      {"tensor.*.mma", E,
       "the mma.sync shape runs at tensor-core rate for this data type and compute capability",
       [](const GpuSpec& g, DType t) -> Msg {
         const MmaShape shape = g.tensor.at(t).mma;
         for (const auto& s : kMmaSupport)
           if (s.type == t && s.shape == shape && g.compute_capability >= s.min_cc &&
               g.compute_capability <= s.max_cc)
             return std::nullopt;
         return fmt::format(
             "{} is not a full-rate {} mma.sync shape on compute capability {}; "
             "expected one of: {}",
             to_string(shape), dtype_name(t), g.compute_capability,
             legal_mma_shapes(t, g.compute_capability));
       }},
      {"tensor.*.mma_sync_fma_per_clk_per_sm", E,
       "tensor.*.mma_sync_fma_per_clk_per_sm <= tensor.*.dense_fma_per_clk_per_sm",
       [](const GpuSpec& g, DType t) -> Msg {
         const auto& ts = g.tensor.at(t);
         if (ts.mma_sync_fma_per_clk_per_sm <= ts.dense_fma_per_clk_per_sm) return std::nullopt;
         return fmt::format("{:g} exceeds the dense rate {:g}", ts.mma_sync_fma_per_clk_per_sm,
                            ts.dense_fma_per_clk_per_sm);
       }},
      {"tensor.*.wgmma", E,
       "the wgmma shape is m64nNkK with N a multiple of 8 up to 256 and "
       "K = 16 (f16/bf16) or 8 (tf32)",
       [](const GpuSpec& g, DType t) -> Msg {
         const auto& w = g.tensor.at(t).wgmma;
         if (!w) return std::nullopt;
         if (w->m == 64 && w->n % 8 == 0 && w->n >= 8 && w->n <= 256 && w->k == wgmma_k(t))
           return std::nullopt;
         return fmt::format(
             "{} is not a {} wgmma shape; expected m64nNk{} with N in 8..256 "
             "step 8",
             to_string(*w), dtype_name(t), wgmma_k(t));
       }},
  };
  // Descriptions must outlive the table (ConsistencyRule holds a string_view).
  static const auto feature_docs = [] {
    std::array<std::string, kFeatureSupport.size()> docs;
    for (std::size_t i = 0; i < docs.size(); ++i)
      docs[i] = fmt::format("{} is true only at compute_capability >= {}", kFeatureSupport[i].key,
                            kFeatureSupport[i].min_cc);
    return docs;
  }();
  for (std::size_t i = 0; i < kFeatureSupport.size(); ++i) {
    const FeatureSupport& f = kFeatureSupport[i];
    rules.push_back({f.key, E, feature_docs[i], [f](const GpuSpec& g, DType) -> Msg {
                       if (!(g.features.*f.flag) || g.compute_capability >= f.min_cc)
                         return std::nullopt;
                       return fmt::format("needs compute_capability >= {} (this GPU: {})", f.min_cc,
                                          g.compute_capability);
                     }});
  }
  return rules;
}

}  // namespace

std::optional<std::string_view> arch_of_compute_capability(int cc) {
  for (const auto& [c, a] : kArchOfCc)
    if (c == cc) return a;
  return std::nullopt;
}

const std::vector<ConsistencyRule>& consistency_rules() {
  static const std::vector<ConsistencyRule> rules = build_rules();
  return rules;
}

}  // namespace gemmsim
