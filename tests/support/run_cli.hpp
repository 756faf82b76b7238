// Runs the gemmsim binary the tests were built with (GEMMSIM_BINARY) as a user would, and
// returns its exit code and everything it printed (stdout and stderr together).
#pragma once

#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace gemmsim::test {

struct CliResult {
  int code = -1;    // exit status, -1 if the process did not exit normally
  std::string out;  // stdout and stderr
};

inline CliResult run_cli(const std::string& args) {
  const std::string cmd = std::string(GEMMSIM_BINARY) + " " + args + " 2>&1";
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), int(buf.size()), p)) r.out += buf.data();
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace gemmsim::test
