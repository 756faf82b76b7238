// mbarrier wrappers shared by the warp-specialized kernels (PTX ISA, "Parallel synchronization
// and communication instructions: mbarrier"). sm_80 has init/arrive/test_wait and the cp.async
// arrive; sm_90 adds try_wait (the waiting warp may be suspended rather than spin) and the
// expect-tx transaction count that TMA completes.
#pragma once

#include <cstdint>

namespace gemmsim::dev {

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

// Plain arrive (release semantics at CTA scope: orders this thread's prior shared accesses).
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile(
      "{\n .reg .b64 st;\n mbarrier.arrive.shared.b64 st, [%0];\n}\n" ::"r"(bar)
      : "memory");
}

// Arrive-on triggered when all of this thread's prior cp.async copies have landed; `noinc`: the
// arrival counts against the barrier's expected count (which must include it).
__device__ __forceinline__ void cp_async_mbar_arrive_noinc(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(bar) : "memory");
}

// Wait for every cp.async this thread issued, committed to a group or not (cp.async.wait_group
// only covers committed groups).
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

// Wait until the phase with parity `parity` has completed. GEMMSIM_WS_SPIN_WAIT (experiment):
// poll with test_wait on sm_90 too instead of try_wait, which may suspend the waiting thread.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(GEMMSIM_WS_SPIN_WAIT)
  asm volatile(
      "{\n"
      " .reg .pred p;\n"
      " WAIT_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra WAIT_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
#else
  asm volatile(
      "{\n"
      " .reg .pred p;\n"
      " WAIT_%=:\n"
      " mbarrier.test_wait.parity.shared.b64 p, [%0], %1;\n"
      " @!p bra WAIT_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
#endif
}

}  // namespace gemmsim::dev
