// One compiled part of the kernel library: instantiates the entries i of lib::kLibrary with
// i % GEMMSIM_LIB_PARTS == GEMMSIM_LIB_PART (CMake generates one .cu per part so the build
// spreads over all cores).
#pragma once

#include <utility>

#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/library.inc"

#ifndef GEMMSIM_LIB_PART
#error "GEMMSIM_LIB_PART must be defined"
#endif
#ifndef GEMMSIM_LIB_PARTS
#error "GEMMSIM_LIB_PARTS must be defined"
#endif

namespace gemmsim::cuda {
namespace {

template <int I>
void add_if_mine(std::vector<KernelEntry>& out) {
  if constexpr (I % GEMMSIM_LIB_PARTS == GEMMSIM_LIB_PART) {
    out.push_back(make_entry<ConfigTag<lib::kLibrary[I]>>());
  }
}
template <int... I>
void add_part(std::vector<KernelEntry>& out, std::integer_sequence<int, I...>) {
  (add_if_mine<I>(out), ...);
}

}  // namespace

#define GEMMSIM_CAT2(a, b) a##b
#define GEMMSIM_CAT(a, b) GEMMSIM_CAT2(a, b)
void GEMMSIM_CAT(register_library_part_, GEMMSIM_LIB_PART)(std::vector<KernelEntry>& out) {
  add_part(out, std::make_integer_sequence<int, lib::kLibrarySize>{});
}

}  // namespace gemmsim::cuda
