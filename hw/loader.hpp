// Loading a GPU description: name resolution, YAML parsing, `--set` overrides, validation.
//
// Contract: load_gpu either returns a GpuSpec in which every field has been parsed from its
// unit string, range-checked and cross-checked (hw/schema.hpp lists the fields and the rules),
// or throws HwError. The error's message is complete and user-facing: one line per problem,
// each naming the file, the line (or the `--set` override) and the key path, and what was
// expected. Nothing is defaulted silently: a field is either in the file, or optional with a
// documented default. Combinations that are implausible but modelable (e.g. dram.sustained
// above dram.peak after an override) load, with a line in GpuSpec::warnings.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "hw/gpu_spec.hpp"

namespace gemmsim {

struct HwError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A bare name ("a100", "a100.yaml") is looked up in configs/hw of the source tree, then of the
// install; anything else (or a bare name not found there) is a path. Throws HwError listing
// the known names if nothing is found.
std::filesystem::path resolve_gpu_path(std::string_view name_or_path);

// Loads, applies `overrides` ("key.path=value", e.g. "l2.size=80MiB") before validation, and
// validates. An override is checked exactly like a value in the file; naming a key the schema
// does not have is an error.
GpuSpec load_gpu(std::string_view name_or_path, const std::vector<std::string>& overrides = {});

// File stems in configs/hw (source tree and install), sorted, without duplicates.
std::vector<std::string> known_gpus();

}  // namespace gemmsim
