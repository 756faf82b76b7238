#include "hw/describe.hpp"

#include <fmt/format.h>

#include "hw/peaks.hpp"
#include "hw/schema.hpp"

namespace gemmsim {
namespace {

// A field that has a value in this description (feature-gated fields of an absent feature
// do not).
bool applies(const FieldSpec& f, const GpuSpec& gpu) {
  return f.presence != Presence::WithFeature || feature_enabled(gpu, f.feature);
}

std::string_view section_of(std::string_view path) {
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : path.substr(0, dot);
}
std::string_view leaf_of(std::string_view path) {
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

// Calls fn(field, concrete path, dtype) for every field in schema order, tensor fields grouped
// per data type after the other fields of their position.
template <class Fn>
void for_each_field(GpuSpec& gpu, Fn&& fn) {
  const auto& schema = gpu_schema();
  for (std::size_t i = 0; i < schema.size(); ++i) {
    if (!schema[i].per_tensor_dtype()) {
      fn(schema[i], std::string(schema[i].path), DType::F32);
      continue;
    }
    std::size_t end = i;
    while (end < schema.size() && schema[end].per_tensor_dtype()) ++end;
    for (const auto& [t, spec] : gpu.tensor)
      for (std::size_t j = i; j < end; ++j) fn(schema[j], concrete_path(schema[j], t), t);
    i = end - 1;
  }
}

nlohmann::json json_value(const FieldSpec& f, GpuSpec& gpu, DType t, std::string& key) {
  return std::visit(
      [&](auto accessor) -> nlohmann::json {
        const auto& v = accessor(gpu, t);
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, Bytes>) {
          key += "_bytes";
          return v.value;
        } else if constexpr (std::is_same_v<V, std::vector<Bytes>>) {
          key += "_bytes";
          nlohmann::json list = nlohmann::json::array();
          for (const auto& b : v) list.push_back(b.value);
          return list;
        } else if constexpr (std::is_same_v<V, std::vector<double>>) {
          return nlohmann::json(v);
        } else if constexpr (std::is_same_v<V, Frequency>) {
          key += "_mhz";
          return v.mhz();
        } else if constexpr (std::is_same_v<V, Bandwidth>) {
          key += "_gbs";
          return v.gb_per_s();
        } else if constexpr (std::is_same_v<V, Duration>) {
          key += "_us";
          return v.us();
        } else if constexpr (std::is_same_v<V, Cycles>) {
          key += "_cycles";
          return v.value;
        } else if constexpr (std::is_same_v<V, MmaShape>) {
          return {{"m", v.m}, {"n", v.n}, {"k", v.k}};
        } else if constexpr (std::is_same_v<V, std::optional<MmaShape>>) {
          if (!v) return nullptr;
          return {{"m", v->m}, {"n", v->n}, {"k", v->k}};
        } else {
          return v;
        }
      },
      f.ref);
}

nlohmann::json peaks_json(const Peaks& p) {
  nlohmann::json tensor = nlohmann::json::object(), mma = nlohmann::json::object();
  for (const auto& [t, v] : p.tensor_tflops) tensor[std::string(dtype_name(t))] = v;
  for (const auto& [t, v] : p.mma_sync_tflops) mma[std::string(dtype_name(t))] = v;
  return {{"fp32_tflops", p.fp32_tflops},
          {"fp64_tflops", p.fp64_tflops},
          {"tensor_tflops", tensor},  // dense, at clocks.tensor_spec
          {"mma_sync_tflops", mma},
          {"dram_peak_gbs", p.dram_peak_gbs},
          {"dram_sustained_gbs", p.dram_sustained_gbs},
          {"dram_bus_gbs", p.dram_bus_gbs},
          {"l2_gbs", p.l2_gbs},
          {"smem_bytes_per_clk_per_sm", p.smem_bytes_per_clk_per_sm},
          {"smem_tbs_total", p.smem_tbs_total}};
}

}  // namespace

std::string describe_text(const GpuSpec& spec) {
  GpuSpec gpu = spec;  // the schema's accessors take a mutable spec
  const GpuSpec defaults;
  std::string out = fmt::format("{} ({}: {}, sm_{}, {} SMs)\nsource: {}\n", gpu.name, gpu.key,
                                gpu.arch, gpu.compute_capability, gpu.sm_count, gpu.source_file);
  std::string current = "-";
  for_each_field(gpu, [&](const FieldSpec& f, const std::string& path, DType t) {
    const std::string section(section_of(path));
    if (section != current) {
      out += fmt::format("\n{}\n", section.empty() ? "gpu" : section);
      current = section;
    }
    std::string value = applies(f, gpu) ? value_text(f, gpu, t) : "n/a (feature absent)";
    if (f.presence == Presence::Optional) {
      GpuSpec d = defaults;
      if (value == value_text(f, d, t)) value += " (default)";
    }
    out += fmt::format("  {:<30} {}\n", leaf_of(path), value);
  });

  const Peaks p = derive_peaks(gpu);
  out += "\nderived peaks\n";
  out += fmt::format("  {:<30} {:.1f} TFLOPS at boost {}\n", "FP32", p.fp32_tflops,
                     to_string(gpu.clocks.boost));
  out += fmt::format("  {:<30} {:.2f} TFLOPS at boost\n", "FP64", p.fp64_tflops);
  for (const auto& [t, v] : p.tensor_tflops)
    out += fmt::format("  {:<30} {:.1f} TFLOPS at tensor_spec {}\n",
                       fmt::format("tensor {} (dense)", dtype_name(t)), v,
                       to_string(gpu.clocks.tensor_spec));
  for (const auto& [t, v] : p.mma_sync_tflops)
    out +=
        fmt::format("  {:<30} {:.1f} TFLOPS at sustained {}\n",
                    fmt::format("mma.sync {}", dtype_name(t)), v, to_string(gpu.clocks.sustained));
  out += fmt::format("  {:<30} {:.0f} GB/s peak, {:.0f} GB/s sustained (bus rate {:.0f} GB/s)\n",
                     "DRAM", p.dram_peak_gbs, p.dram_sustained_gbs, p.dram_bus_gbs);
  out += fmt::format("  {:<30} {:.0f} GB/s\n", "L2", p.l2_gbs);
  out += fmt::format("  {:<30} {:g} B/clk per SM, {:.1f} TB/s over all SMs at boost\n",
                     "shared memory", p.smem_bytes_per_clk_per_sm, p.smem_tbs_total);
  if (!gpu.warnings.empty()) {
    out += "\nwarnings\n";
    for (const auto& w : gpu.warnings) out += fmt::format("  {}\n", w);
  }
  return out;
}

nlohmann::json describe_json(const GpuSpec& spec) {
  GpuSpec gpu = spec;
  nlohmann::json out = {{"key", gpu.key}, {"source_file", gpu.source_file}};
  for_each_field(gpu, [&](const FieldSpec& f, const std::string& path, DType t) {
    nlohmann::json* node = &out;
    std::string_view rest = path;
    for (auto dot = rest.find('.'); dot != std::string_view::npos; dot = rest.find('.')) {
      node = &(*node)[std::string(rest.substr(0, dot))];
      rest.remove_prefix(dot + 1);
    }
    std::string key(rest);
    nlohmann::json value = json_value(f, gpu, t, key);
    (*node)[key] = applies(f, gpu) ? std::move(value) : nlohmann::json(nullptr);
  });
  out["peaks"] = peaks_json(derive_peaks(gpu));
  out["warnings"] = gpu.warnings;
  return out;
}

}  // namespace gemmsim
