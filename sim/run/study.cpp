#include "sim/run/study.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "hw/loader.hpp"
#include "kernels/common/kernel_name.hpp"
#include "kernels/common/legality.hpp"
#include "sim/core/error.hpp"
#include "sim/run/run.hpp"
#include "sim/run/sweep.hpp"
#include "sim/run/sweep_options.hpp"

namespace gemmsim {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxPoints = 4096;         // grid points x problems
constexpr std::size_t kMaxEvaluations = 200000;  // points x configurations searched

struct Reader {
  std::string file;
  [[noreturn]] void fail(const std::string& key, const std::string& msg) const {
    throw UserError(fmt::format("{}: {}: {}", file, key, msg));
  }
  std::string scalar(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(key, "expected a single value (a string or number)");
    return n.Scalar();
  }
  std::vector<std::string> list(const YAML::Node& n, const std::string& key) const {
    if (!n.IsSequence() || n.size() == 0) fail(key, "expected a non-empty list, e.g. [a, b]");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n.size(); ++i)
      out.push_back(scalar(n[i], fmt::format("{}[{}]", key, i)));
    return out;
  }
  bool boolean(const YAML::Node& n, const std::string& key) const {
    const std::string v = scalar(n, key);
    if (v == "true") return true;
    if (v == "false") return false;
    fail(key, fmt::format("'{}' is not true or false", v));
  }
  void only_keys(const YAML::Node& n, const std::string& where,
                 const std::set<std::string>& allowed) const {
    for (const auto& kv : n) {
      const std::string k = kv.first.as<std::string>();
      if (!allowed.count(k)) {
        std::string names;
        for (const auto& a : allowed) names += (names.empty() ? "" : ", ") + a;
        fail(where.empty() ? k : where + "." + k,
             fmt::format("unknown key (expected one of {})", names));
      }
    }
  }
};

std::string join_list(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

GemmConfig fixed_config(const Reader& rd, const YAML::Node& n, DType dtype, const GpuSpec& gpu) {
  rd.only_keys(n, "config",
               {"kernel", "tiles", "warps", "thread_tile", "stages", "split_k", "split_k_mode",
                "swizzle", "smem_layout"});
  GemmConfig c = default_config(gpu);
  c.dtype = dtype;
  if (n["kernel"])
    c.family =
        parse_family_name(rd.scalar(n["kernel"], "config.kernel"), rd.file + ": config.kernel");
  auto dims = [&](const char* key, int count) {
    const std::string text = rd.scalar(n[key], std::string("config.") + key);
    std::vector<int> v;
    std::size_t pos = 0;
    while (true) {
      const std::size_t x = text.find('x', pos);
      v.push_back(parse_int_list(text.substr(pos, x == std::string::npos ? x : x - pos),
                                 rd.file + ": config." + key, 1, 1024)[0]);
      if (x == std::string::npos) break;
      pos = x + 1;
    }
    if (int(v.size()) != count)
      rd.fail(std::string("config.") + key,
              fmt::format("'{}': expected {} integers separated by 'x'", text, count));
    return v;
  };
  auto integer = [&](const char* key, int lo, int hi) {
    return parse_int_list(rd.scalar(n[key], std::string("config.") + key),
                          rd.file + ": config." + key, lo, hi)[0];
  };
  if (n["tiles"]) {
    const auto t = dims("tiles", 3);
    c.block_m = t[0], c.block_n = t[1], c.block_k = t[2];
  }
  if (n["warps"]) {
    const auto w = dims("warps", 2);
    c.warps_m = w[0], c.warps_n = w[1];
  }
  if (n["thread_tile"]) {
    const auto t = dims("thread_tile", 2);
    c.thread_m = t[0], c.thread_n = t[1];
  }
  if (n["stages"]) c.stages = integer("stages", 1, 16);
  if (n["split_k"]) c.split_k = integer("split_k", 1, 16);
  if (n["split_k_mode"]) {
    const auto m = parse_split_k_modes(rd.scalar(n["split_k_mode"], "config.split_k_mode"),
                                       rd.file + ": config.split_k_mode");
    if (m.size() != 1) rd.fail("config.split_k_mode", "expected one mode, atomic or reduction");
    c.split_k_mode = m[0];
  }
  if (n["swizzle"]) c.swizzle = integer("swizzle", 1, 8);
  if (n["smem_layout"]) {
    const std::string l = rd.scalar(n["smem_layout"], "config.smem_layout");
    if (l == "pad")
      c.smem_layout = SmemLayout::Padded;
    else if (l == "swz")
      c.smem_layout = SmemLayout::Swizzled;
    else if (l == "naive")
      c.smem_layout = SmemLayout::Naive;
    else
      rd.fail("config.smem_layout", fmt::format("'{}' is not pad, swz or naive", l));
  }
  return c;
}

// Every combination of the grid's values, first field slowest.
std::vector<std::vector<std::string>> grid_points(const StudySpec& s) {
  std::vector<std::vector<std::string>> out{{}};
  for (const auto& [field, values] : s.grid) {
    std::vector<std::vector<std::string>> next;
    for (const auto& prefix : out)
      for (const auto& v : values) {
        auto p = prefix;
        p.push_back(v);
        next.push_back(std::move(p));
      }
    out = std::move(next);
  }
  return out;
}

std::vector<std::string> overrides_at(const StudySpec& s, const std::vector<std::string>& point) {
  std::vector<std::string> o = s.fixed_overrides;
  for (std::size_t i = 0; i < s.grid.size(); ++i) o.push_back(s.grid[i].first + "=" + point[i]);
  const auto& first = s.grid[0].second;
  const auto at = std::size_t(std::find(first.begin(), first.end(), point[0]) - first.begin());
  for (const auto& [field, values] : s.linked) o.push_back(field + "=" + values[at]);
  return o;
}

std::string point_name(const StudySpec& s, const std::vector<std::string>& point) {
  std::string n;
  for (std::size_t i = 0; i < s.grid.size(); ++i)
    n += (n.empty() ? "" : ", ") + s.grid[i].first + "=" + point[i];
  return n;
}

}  // namespace

StudySpec load_study(const std::string& path) {
  Reader rd{path};
  if (!fs::is_regular_file(path))
    throw UserError(fmt::format("study file '{}' does not exist", path));
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw UserError(fmt::format("{}:{}:{}: YAML syntax error: {}", path, e.mark.line + 1,
                                e.mark.column + 1, e.msg));
  }
  if (!root.IsMap()) throw UserError(fmt::format("{}: expected a mapping of study keys", path));
  rd.only_keys(root, "",
               {"name", "hw", "description", "set", "grid", "linked", "baseline", "problems",
                "dtype", "config", "search"});
  StudySpec s;
  s.file = path;
  for (const char* key : {"name", "hw", "grid", "problems", "config"})
    if (!root[key]) rd.fail(key, "required key is missing");
  s.name = rd.scalar(root["name"], "name");
  if (s.name.empty() || !std::all_of(s.name.begin(), s.name.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_';
      }))
    rd.fail("name",
            fmt::format("'{}': use letters, digits, '-' and '_' only (it names files)", s.name));
  s.hw = rd.scalar(root["hw"], "hw");
  if (root["description"]) s.description = rd.scalar(root["description"], "description");
  if (root["set"]) s.fixed_overrides = rd.list(root["set"], "set");
  const YAML::Node grid = root["grid"];
  if (!grid.IsMap() || grid.size() == 0 || grid.size() > 2)
    rd.fail("grid", "expected a mapping of one or two GPU fields to lists of values");
  for (const auto& kv : grid) {
    const std::string field = kv.first.as<std::string>();
    auto values = rd.list(kv.second, "grid." + field);
    std::set<std::string> seen;
    for (const auto& v : values)
      if (!seen.insert(v).second)
        rd.fail("grid." + field, fmt::format("value '{}' appears twice", v));
    s.grid.emplace_back(field, std::move(values));
  }
  if (root["linked"]) {
    if (!root["linked"].IsMap())
      rd.fail("linked", "expected a mapping of GPU fields to lists of values");
    for (const auto& kv : root["linked"]) {
      const std::string field = kv.first.as<std::string>();
      auto values = rd.list(kv.second, "linked." + field);
      if (values.size() != s.grid[0].second.size())
        rd.fail("linked." + field,
                fmt::format("{} values, but grid.{} has {}: one per value", values.size(),
                            s.grid[0].first, s.grid[0].second.size()));
      s.linked.emplace_back(field, std::move(values));
    }
  }
  s.baseline = s.grid[0].second.front();
  if (root["baseline"]) {
    s.baseline = rd.scalar(root["baseline"], "baseline");
    const auto& v = s.grid[0].second;
    if (std::find(v.begin(), v.end(), s.baseline) == v.end())
      rd.fail("baseline", fmt::format("'{}' is not one of the values of grid.{} ({})", s.baseline,
                                      s.grid[0].first, join_list(v)));
  }
  for (const auto& p : rd.list(root["problems"], "problems"))
    s.problems.push_back(parse_problem(p, path + ": problems"));
  if (root["dtype"])
    s.dtype = parse_dtype_name(rd.scalar(root["dtype"], "dtype"), path + ": dtype");
  s.search.dtype = s.dtype;

  // Every grid point's GPU description must load (values checked against the schema).
  const auto points = grid_points(s);
  if (points.size() * s.problems.size() > kMaxPoints)
    rd.fail("grid", fmt::format("{} points x {} problems is more than {} evaluations points",
                                points.size(), s.problems.size(), kMaxPoints));
  std::vector<GpuSpec> gpus;
  for (const auto& pt : points) {
    try {
      gpus.push_back(load_gpu(s.hw, overrides_at(s, pt)));
    } catch (const HwError& e) {
      throw UserError(fmt::format("{}: grid point {}: {}", path, point_name(s, pt), e.what()));
    }
  }

  const YAML::Node config = root["config"];
  if (config.IsScalar()) {
    if (config.Scalar() != "best")
      rd.fail("config", fmt::format("'{}': expected 'best' or a mapping", config.Scalar()));
  } else if (config.IsMap()) {
    s.config = fixed_config(rd, config, s.dtype, gpus.front());
  } else {
    rd.fail("config", "expected 'best' or a mapping of configuration keys");
  }
  if (root["search"]) {
    if (s.config) rd.fail("search", "only meaningful with config: best");
    const YAML::Node sr = root["search"];
    if (!sr.IsMap()) rd.fail("search", "expected a mapping");
    rd.only_keys(sr, "search",
                 {"library", "kernel", "split_k", "split_k_mode", "swizzle", "exact"});
    if (sr["library"]) s.search.library_only = rd.boolean(sr["library"], "search.library");
    if (sr["kernel"])
      s.search.families =
          parse_family_list(rd.scalar(sr["kernel"], "search.kernel"), path + ": search.kernel");
    if (sr["split_k"])
      s.search.split_k = parse_int_list(join_list(rd.list(sr["split_k"], "search.split_k")),
                                        path + ": search.split_k", 1, 16);
    if (sr["split_k_mode"])
      s.search.split_k_modes =
          parse_split_k_modes(join_list(rd.list(sr["split_k_mode"], "search.split_k_mode")),
                              path + ": search.split_k_mode");
    if (sr["swizzle"]) {
      s.search.swizzle = parse_int_list(join_list(rd.list(sr["swizzle"], "search.swizzle")),
                                        path + ": search.swizzle", 1, 8);
      for (int v : s.search.swizzle)
        if (v != 1 && v != 2 && v != 4 && v != 8)
          rd.fail("search.swizzle", fmt::format("{} is not 1, 2, 4 or 8", v));
    }
    if (sr["exact"]) s.exact = rd.boolean(sr["exact"], "search.exact");
  }

  // An impossible grid is an error before any simulation: a fixed configuration must be legal
  // at every point, and a search must find at least one legal configuration at every point.
  std::size_t evaluations = 0;
  for (std::size_t g = 0; g < points.size(); ++g)
    for (const auto& p : s.problems) {
      const std::string where = fmt::format("{}: grid point {}, problem {}x{}x{}", path,
                                            point_name(s, points[g]), p.m, p.n, p.k);
      if (s.config) {
        if (auto why = legality_violation(*s.config, p, gpus[g]))
          throw UserError(
              fmt::format("{}: config {} is illegal: {}", where, kernel_name(*s.config), *why));
        ++evaluations;
      } else {
        const std::size_t n = enumerate_configs(gpus[g], p, s.search).legal.size();
        if (n == 0) throw UserError(fmt::format("{}: no legal configuration to search", where));
        evaluations += n;
      }
    }
  if (evaluations > kMaxEvaluations)
    rd.fail("grid", fmt::format("{} simulations needed (more than {}): narrow the grid, the "
                                "problems or the search (search.library: true)",
                                evaluations, kMaxEvaluations));
  return s;
}

StudyResult run_study(const StudySpec& spec, const PointsOptions& run) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto points = grid_points(spec);
  struct Eval {
    std::size_t row;  // (grid point, problem) index
    GemmConfig config;
  };
  std::vector<GpuSpec> gpus;
  for (const auto& pt : points) gpus.push_back(load_gpu(spec.hw, overrides_at(spec, pt)));
  std::vector<Eval> evals;
  std::vector<std::pair<std::size_t, std::size_t>> row_of;  // (grid point, problem)
  for (std::size_t g = 0; g < points.size(); ++g)
    for (std::size_t pi = 0; pi < spec.problems.size(); ++pi) {
      const std::size_t row = row_of.size();
      row_of.emplace_back(g, pi);
      if (spec.config) {
        evals.push_back({row, *spec.config});
      } else {
        for (const auto& c : enumerate_configs(gpus[g], spec.problems[pi], spec.search).legal)
          evals.push_back({row, c});
      }
    }
  SweepSpec sweep;
  sweep.exact = spec.exact;
  // Every evaluation is one point of the shared runner: the searches of all grid points are
  // balanced over the threads together.
  const auto outcomes = run_points(
      evals.size(),
      [&](std::size_t i) {
        const Eval& e = evals[i];
        SweepSpec s = sweep;
        s.problem = spec.problems[row_of[e.row].second];
        return sweep_point(gpus[row_of[e.row].first], s, e.config, i).dump();
      },
      run);

  StudyResult r;
  r.evaluations = evals.size();
  r.threads = resolve_threads(run.threads);
  std::vector<nlohmann::json> best(row_of.size());
  std::vector<std::size_t> searched(row_of.size(), 0);
  for (std::size_t i = 0; i < evals.size(); ++i) {
    if (!outcomes[i].ok) {
      const auto [g, pi] = row_of[evals[i].row];
      const auto& p = spec.problems[pi];
      throw UserError(fmt::format("grid point {}, problem {}x{}x{}, {}: {}",
                                  point_name(spec, points[g]), p.m, p.n, p.k,
                                  kernel_name(evals[i].config), outcomes[i].error));
    }
    nlohmann::json row = nlohmann::json::parse(outcomes[i].row);
    auto& b = best[evals[i].row];
    ++searched[evals[i].row];
    if (b.is_null() || row["time_us"].get<double>() < b["time_us"].get<double>())
      b = std::move(row);
  }
  for (std::size_t k = 0; k < row_of.size(); ++k) {
    const auto [g, pi] = row_of[k];
    nlohmann::json row = best[k];
    row["grid"] = nlohmann::json::object();
    for (std::size_t f = 0; f < spec.grid.size(); ++f)
      row["grid"][spec.grid[f].first] = points[g][f];
    const auto& p = spec.problems[pi];
    row["problem"] = fmt::format("{}x{}x{}", p.m, p.n, p.k);
    row["configs_searched"] = searched[k];
    r.rows.push_back(std::move(row));
  }
  // Speedup over the baseline value of the first field, same problem and same other fields.
  for (auto& row : r.rows) {
    for (const auto& other : r.rows) {
      bool same =
          other["problem"] == row["problem"] && other["grid"][spec.grid[0].first] == spec.baseline;
      for (std::size_t f = 1; f < spec.grid.size(); ++f)
        same = same && other["grid"][spec.grid[f].first] == row["grid"][spec.grid[f].first];
      if (same) row["speedup"] = other["time_us"].get<double>() / row["time_us"].get<double>();
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::string study_csv(const StudySpec& spec, const StudyResult& r) {
  std::string s;
  for (const auto& [field, values] : spec.grid) s += field + ",";
  s += "problem,dtype,kernel,block_m,block_n,block_k,warps_m,warps_n,stages,split_k,split_k_mode,"
       "swizzle,smem_layout,time_us,tflops,speedup,bound,configs_searched,method\n";
  for (const auto& row : r.rows) {
    for (const auto& [field, values] : spec.grid) s += row["grid"][field].get<std::string>() + ",";
    const auto& c = row["config"];
    s += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{:.4f},{:.3f},{:.4f},\"{}\",{},{}\n",
        row["problem"].get<std::string>(), dtype_name(spec.dtype), row["kernel"].get<std::string>(),
        c["block_m"].get<int>(), c["block_n"].get<int>(), c["block_k"].get<int>(),
        c["warps_m"].get<int>(), c["warps_n"].get<int>(), c["stages"].get<int>(),
        c["split_k"].get<int>(), c["split_k_mode"].get<std::string>(), c["swizzle"].get<int>(),
        c["smem_layout"].get<std::string>(), row["time_us"].get<double>(),
        row["tflops"].get<double>(), row["speedup"].get<double>(), row["bound"].get<std::string>(),
        row["configs_searched"].get<std::size_t>(), row["method"].get<std::string>());
  }
  return s;
}

std::string plot_study(const StudySpec& spec, const std::string& csv_path,
                       const std::string& image_path) {
  fs::path script;
  for (const char* dir : {GEMMSIM_SOURCE_CONFIG_DIR, GEMMSIM_INSTALL_CONFIG_DIR}) {
    const fs::path p = fs::path(dir) / "studies" / "plot_study.py";
    if (fs::exists(p)) {
      script = p;
      break;
    }
  }
  if (script.empty()) return "the plotting script configs/studies/plot_study.py was not found";
  // Single quotes around every argument; the study name and paths hold no quote (checked).
  for (const auto& a : {csv_path, image_path, spec.name, script.string()})
    if (a.find('\'') != std::string::npos) return "a path holds a single quote; not plotting";
  std::string cmd = fmt::format("python3 '{}' '{}' '{}' --title '{}' --x '{}'", script.string(),
                                csv_path, image_path, spec.name, spec.grid[0].first);
  if (spec.grid.size() > 1) cmd += fmt::format(" --series '{}'", spec.grid[1].first);
  const int rc = std::system(cmd.c_str());
  if (rc == -1) return "could not start python3";
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 127)
    return "python3 is not installed (Debian: apt-get install python3 python3-matplotlib)";
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 3)
    return "python3-matplotlib is not installed (Debian: apt-get install python3-matplotlib)";
  if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0)
    return fmt::format("the plotting script failed (exit status {})",
                       WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
  return "";
}

}  // namespace gemmsim
