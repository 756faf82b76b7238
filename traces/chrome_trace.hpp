// The Chrome trace event format (JSON object form) that Perfetto, chrome://tracing and
// speedscope open: one process per SM with a track per resident-CTA slot (CTA lifetimes) and
// per warp of that slot (named by the warp's role when the kernel model gives one); complete
// ("X") spans for issued operations and waits, async ("b"/"e") spans for memory requests in
// flight, and a "GPU" process with counter ("C") tracks for bytes in flight to L2 and DRAM
// and pipe utilisation. Timestamps are microseconds from the first launch.
#pragma once

#include <string>

#include "traces/recorder.hpp"

namespace gemmsim::traces {

struct TraceSummary {
  std::string kernel, gpu;  // written into the trace's metadata
};

// Writes the trace to `path`. Throws UserError if the file cannot be written.
void write_chrome_trace(const RunRecorder& rec, const TraceSummary& summary,
                        const std::string& path);

// Counter samples written per series (longer runs are averaged down to this many intervals).
inline constexpr int kMaxCounterSamples = 2000;

}  // namespace gemmsim::traces
