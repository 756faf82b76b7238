// Parsing of the values sweep and study take from the command line and from study files. Every
// parser throws UserError naming `what` (the flag or the file:key) and the accepted values.
#pragma once

#include <string>
#include <vector>

#include "kernels/common/gemm_config.hpp"

namespace gemmsim {

GemmProblem parse_problem(const std::string& text, const std::string& what);  // "MxNxK"
DType parse_dtype_name(const std::string& text, const std::string& what);
Family parse_family_name(const std::string& text, const std::string& what);
std::vector<Family> parse_family_list(const std::string& text,
                                      const std::string& what);  // "" = all
// Comma-separated integers, each in [lo, hi], no duplicates.
std::vector<int> parse_int_list(const std::string& text, const std::string& what, int lo, int hi);
std::vector<SplitKMode> parse_split_k_modes(const std::string& text, const std::string& what);

}  // namespace gemmsim
