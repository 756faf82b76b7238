// Paths and small helpers shared by the hw tests.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace gemmsim::test {

inline std::filesystem::path source_path(std::string_view relative) {
  return std::filesystem::path(GEMMSIM_SOURCE_DIR) / relative;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The six GPU descriptions the project ships.
inline constexpr std::string_view kShippedGpus[] = {"a100", "a6000", "h100", "h200", "t4", "v100"};

}  // namespace gemmsim::test
