// The compiled kernels' main-loop schedules: per kernel template instantiation, the cycles its
// loop's integer instructions wait for earlier results, read from the SASS the compiler wrote
// (validate/harness/sass_loop_table.py, run on a build of the kernel library; one CSV per SM
// target, e.g. validate/data/sass_sm90.csv). `gemmsim validate --sass FILE` simulates each row
// with its kernel's wait (SimOptions::alu_wait), a property of the binary that ran, like its
// register count; rows whose kernel is not in the table get the model's estimate. Not the
// default: on the H200's 4096^3 rows it made the predictions worse (validate/data/README.md).
#pragma once

#include <map>
#include <string>

#include "kernels/common/gemm_config.hpp"

namespace gemmsim {

struct LoopSchedules {
  std::map<std::string, double> alu_wait;  // by loop_key()
  // The kernel's wait, or a negative number where the table has no such kernel.
  double wait_of(const GemmConfig& c) const;
};

// The instantiation a configuration runs: its GemmConfig fields in declaration order, ';'-
// separated, with split-K, its mode and the swizzle at their defaults (kernel arguments, not
// template parameters).
std::string loop_key(const GemmConfig& c);

// Throws UserError naming file and line: unreadable file, a missing column, a config that is not
// 16 integers, a wait outside 0..15 cycles, a config listed twice.
LoopSchedules read_loop_schedules(const std::string& path);

}  // namespace gemmsim
