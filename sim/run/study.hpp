// `gemmsim study <file.yaml>`: what-if hardware studies. A grid of GPU-description overrides
// (any field hw/SCHEMA.md lists) crossed with problems, each point evaluated with a fixed
// configuration or with the best configuration re-searched at that point (sim/run/sweep.hpp),
// written as CSV with each point's speedup over the baseline value, plus a plot.
//
// Study file (every key is checked; an unknown key, a wrong type or an impossible grid is a
// UserError naming the file and the key):
//   name: a100-h100-l2              # names the output files (letters, digits, - and _)
//   hw: a100                        # GPU name or YAML path
//   description: ...                # optional, free text
//   set: [l2.slices=80]             # optional fixed overrides applied at every point
//   grid:                           # 1 or 2 GPU fields, each a list of values (YAML strings
//     l2.size: [40MiB, 50MiB]       #   with units, as in configs/hw); the first is the x axis
//   linked:                         # optional: fields set in lockstep with the first grid field
//     sm.smem_carveouts: ["[0KiB, 64KiB]", "[0KiB, 228KiB]"]   # (one value per its value)
//   baseline: 40MiB                 # optional: value of the first field speedups are relative
//                                   #   to (default: its first value)
//   problems: [4096x4096x4096]
//   dtype: f16                      # optional (default f16)
//   config: best                    # or a mapping: kernel, tiles, warps, thread_tile, stages,
//                                   #   split_k, split_k_mode, swizzle, smem_layout
//   search:                         # optional, with config: best
//     library: true                 #   only the kernel library's configurations
//     kernel: pipelined             #   families (comma-separated)
//     split_k: [1, 2, 4]            #   split-K values (default 1,2,4,8,16)
//     split_k_mode: [atomic]        #   (default atomic, reduction)
//     swizzle: [1]                  #   (default 1,2,4,8)
//     exact: false                  #   exact simulation instead of the reduced-K fast path
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernels/common/enumerate.hpp"
#include "kernels/common/gemm_config.hpp"
#include "sim/run/points.hpp"

namespace gemmsim {

struct StudySpec {
  std::string file;
  std::string name, hw, description;
  std::vector<std::string> fixed_overrides;
  std::vector<std::pair<std::string, std::vector<std::string>>> grid;    // field -> values
  std::vector<std::pair<std::string, std::vector<std::string>>> linked;  // follow grid[0]
  std::string baseline;                                                  // a value of grid[0]
  std::vector<GemmProblem> problems;
  DType dtype = DType::F16;
  std::optional<GemmConfig> config;  // nullopt: best per point
  EnumerateOptions search;
  bool exact = false;
};

// Parses and checks the file (YAML syntax, keys, types, values, and every grid point's GPU
// description and configuration). Throws UserError.
StudySpec load_study(const std::string& path);

struct StudyResult {
  std::vector<nlohmann::json> rows;  // one per (grid point, problem), grid-major order
  std::size_t evaluations = 0;
  double seconds = 0;
  int threads = 1;
};

StudyResult run_study(const StudySpec& spec, const PointsOptions& run);
std::string study_csv(const StudySpec& spec, const StudyResult& r);

// Runs the plotting script (python3 + matplotlib) on the CSV. Returns "" on success, else why
// the plot was not made (e.g. python3-matplotlib is not installed).
std::string plot_study(const StudySpec& spec, const std::string& csv_path,
                       const std::string& image_path);

}  // namespace gemmsim
