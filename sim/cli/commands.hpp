// Subcommands defined outside main.cpp: each adds itself to the app and returns how to run it.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>

namespace gemmsim::cli {

struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;  // call when *app was given; may throw UserError / HwError
};

Subcommand add_sweep_command(CLI::App& parent);  // gemmsim sweep
Subcommand add_study_command(CLI::App& parent);  // gemmsim study

}  // namespace gemmsim::cli
