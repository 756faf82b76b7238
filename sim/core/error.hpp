// Two kinds of failure, kept apart (gem5's fatal/panic):
//  - UserError: the user's input is wrong (bad flag, illegal configuration, malformed file).
//    The message is complete and user-facing; the CLI prints it and exits with code 2.
//  - GEMMSIM_ASSERT: a bug in gemmsim. It aborts with the location.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace gemmsim {

struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void assertion_failed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "gemmsim: internal error: %s (%s:%d)\n", expr, file, line);
  std::abort();
}

}  // namespace gemmsim

#define GEMMSIM_ASSERT(expr) \
  ((expr) ? static_cast<void>(0) : ::gemmsim::assertion_failed(#expr, __FILE__, __LINE__))
