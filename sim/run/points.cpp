#include "sim/run/points.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace gemmsim {

int resolve_threads(int threads) {
  if (threads > 0) return threads;
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

std::vector<PointOutcome> run_points(std::size_t count, const PointFn& fn, const PointsOptions& o) {
  if (o.runner) return o.runner(count, fn, o);
  std::vector<PointOutcome> out(count);
  std::atomic<std::size_t> next{0};
  std::size_t done = 0;
  std::mutex progress_mutex;
  auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      try {
        out[i].row = fn(i);
        out[i].ok = true;
      } catch (const std::exception& e) {
        out[i].error = e.what();
      } catch (...) {
        out[i].error = "unknown error";
      }
      if (o.progress) {
        const std::lock_guard lock(progress_mutex);
        o.progress(++done, count);
      }
    }
  };
  const int n = int(std::min<std::size_t>(std::size_t(resolve_threads(o.threads)), std::max<std::size_t>(count, 1)));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return out;
}

}  // namespace gemmsim
