#include "sim/dist/distributed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "sim/core/error.hpp"
#include "sim/dist/journal.hpp"
#include "sim/dist/world.hpp"

#if GEMMSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace gemmsim::dist {
namespace {

using Finished = std::vector<std::pair<std::size_t, PointOutcome>>;

// The simulation threads of one rank. The main thread pushes point indices; the threads
// evaluate them and leave the outcomes for the main thread to collect. Only the main thread
// talks to other ranks and writes files.
class LocalPool {
 public:
  LocalPool(const PointFn& fn, int threads) : fn_(fn) {
    for (int t = 0; t < threads; ++t) pool_.emplace_back([this] { work(); });
  }
  ~LocalPool() {
    {
      const std::lock_guard lock(mutex_);
      closing_ = true;
    }
    work_ready_.notify_all();
    for (auto& t : pool_) t.join();
  }
  LocalPool(const LocalPool&) = delete;
  LocalPool& operator=(const LocalPool&) = delete;

  int threads() const { return int(pool_.size()); }

  void push(std::size_t index) {
    {
      const std::lock_guard lock(mutex_);
      queue_.push_back(index);
    }
    work_ready_.notify_one();
  }
  std::size_t queued() const {
    const std::lock_guard lock(mutex_);
    return queue_.size();
  }
  // Points pushed and not finished yet (queued or running).
  std::size_t pending() const {
    const std::lock_guard lock(mutex_);
    return queue_.size() + running_;
  }
  // Nothing pending and every outcome collected.
  bool idle() const {
    const std::lock_guard lock(mutex_);
    return queue_.empty() && running_ == 0 && finished_.empty();
  }
  // The outcomes finished since the last call, waiting up to `timeout` for one when there
  // are none yet.
  Finished collect(std::chrono::microseconds timeout) {
    std::unique_lock lock(mutex_);
    if (finished_.empty())
      result_ready_.wait_for(lock, timeout, [&] { return !finished_.empty(); });
    return std::exchange(finished_, {});
  }

 private:
  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      work_ready_.wait(lock, [&] { return closing_ || !queue_.empty(); });
      // Closing with points still queued happens only when the run stopped on an error:
      // they are dropped (a resumed run evaluates them).
      if (closing_) return;
      const std::size_t index = queue_.front();
      queue_.pop_front();
      ++running_;
      lock.unlock();
      PointOutcome o;
      try {
        o.row = fn_(index);
        o.ok = true;
      } catch (const std::exception& e) {
        o.error = e.what();
      } catch (...) {
        o.error = "unknown error";
      }
      lock.lock();
      --running_;  // with the outcome, under one lock: pending() + collected stays exact
      finished_.emplace_back(index, std::move(o));
      result_ready_.notify_one();
    }
  }

  const PointFn& fn_;
  mutable std::mutex mutex_;
  std::condition_variable work_ready_, result_ready_;
  std::deque<std::size_t> queue_;
  std::size_t running_ = 0;
  Finished finished_;
  bool closing_ = false;
  std::vector<std::thread> pool_;
};

// Rank 0's view of which points still have to be handed out.
class Dispenser {
 public:
  Dispenser(std::vector<bool> done, int total_threads)
      : done_(std::move(done)),
        remaining_(std::size_t(std::count(done_.begin(), done_.end(), false))),
        total_threads_(std::max(1, total_threads)) {}
  bool empty() const { return remaining_ == 0; }
  std::size_t take() {
    while (done_[next_]) ++next_;
    --remaining_;
    return next_++;
  }
  // Guided self-scheduling: a rank with `threads` of the job's threads gets its share of half
  // of what remains, so chunks shrink towards single points at the end and no rank is left
  // holding a long tail. The cap bounds the work a rank holds that others cannot take; 16
  // points per thread are already tens of milliseconds of work (the cheapest points, 256^3
  // problems, simulate in a few milliseconds), far above the time a request takes (a poll
  // interval or two).
  std::vector<std::size_t> take_chunk(int threads) {
    const std::size_t share = remaining_ * std::size_t(threads) / (2 * std::size_t(total_threads_));
    const std::size_t n =
        std::min(remaining_, std::clamp<std::size_t>(share, 1, 16 * std::size_t(threads)));
    std::vector<std::size_t> out;
    out.reserve(n);
    for (std::size_t k = 0; k < n; ++k) out.push_back(take());
    return out;
  }

 private:
  std::vector<bool> done_;
  std::size_t next_ = 0, remaining_ = 0;
  int total_threads_;
};

// What rank 0 prepared before the first point: the journal and the points it already holds.
struct Prepared {
  std::optional<JournalWriter> journal;
  std::vector<PointOutcome> outcomes;
  std::vector<bool> done;
  std::size_t done_count = 0;
};

bool exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

Prepared prepare(std::size_t count, const DistributedOptions& o, const std::string& hash) {
  Prepared p;
  p.outcomes.resize(count);
  p.done.assign(count, false);
  if (o.resume && o.force)
    throw UserError("--resume and --force exclude each other: resume a run, or start it afresh");
  if (o.output.empty()) {
    if (o.resume)
      throw UserError("--resume needs --output: the journal of a run lives next to its output");
    return p;
  }
  const std::string journal = journal_path(o.output);
  if (o.resume) {
    if (!exists(journal) && exists(o.output))
      throw UserError(fmt::format(
          "--resume: {} exists but its journal {} does not, so there is nothing to resume from; "
          "use --force to run again from scratch",
          o.output, journal));
    JournalContents c = read_journal(journal, count, hash);
    if (c.torn_tail)
      std::fprintf(stderr, "gemmsim: journal %s: dropped a torn last line (that point is redone)\n",
                   journal.c_str());
    for (auto& [i, outcome] : c.points) {
      p.outcomes[i] = std::move(outcome);
      p.done[i] = true;
    }
    p.done_count = c.points.size();
    p.journal = JournalWriter::resume(journal, c.valid_bytes, count, hash);
    return p;
  }
  if (!o.force) {
    for (const auto& path : {o.output, journal})
      if (exists(path))
        throw UserError(fmt::format(
            "{} exists: pass --resume to continue the run it belongs to (from {}), or --force "
            "to replace it",
            path, journal));
  }
  p.journal = JournalWriter::create(journal, count, hash);
  return p;
}

// Rank 0's bookkeeping of outcomes, wherever they were evaluated.
struct Recorder {
  Prepared& p;
  std::size_t count;
  const DistributedOptions& o;
  std::size_t done = p.done_count;

  void record(std::size_t index, PointOutcome&& outcome) {
    GEMMSIM_ASSERT(index < count && !p.done[index]);
    if (p.journal) p.journal->append(index, outcome);
    p.outcomes[index] = std::move(outcome);
    p.done[index] = true;
    ++done;
    if (o.progress) o.progress(done, count);
  }
};

#if GEMMSIM_HAVE_MPI

// Messages between rank 0 and the others (tags). A worker asks for work (its thread count),
// rank 0 answers with point indices (none: there is no more), the worker sends outcomes as
// they finish and, when its last point is sent, says it is done.
enum Tag : int { kRequest = 101, kWork = 102, kResults = 103, kDone = 104 };

void put_u64(std::vector<char>& buf, std::uint64_t v) {
  const std::size_t at = buf.size();
  buf.resize(at + sizeof v);
  std::memcpy(buf.data() + at, &v, sizeof v);
}
std::uint64_t get_u64(const std::vector<char>& buf, std::size_t& at) {
  std::uint64_t v = 0;
  GEMMSIM_ASSERT(at + sizeof v <= buf.size());
  std::memcpy(&v, buf.data() + at, sizeof v);
  at += sizeof v;
  return v;
}

std::vector<char> encode_results(const Finished& results) {
  std::vector<char> buf;
  for (const auto& [index, o] : results) {
    put_u64(buf, index);
    put_u64(buf, o.ok ? 1 : 0);
    const std::string& text = o.ok ? o.row : o.error;
    put_u64(buf, text.size());
    buf.insert(buf.end(), text.begin(), text.end());
  }
  return buf;
}
Finished decode_results(const std::vector<char>& buf) {
  Finished out;
  for (std::size_t at = 0; at < buf.size();) {
    const std::size_t index = get_u64(buf, at);
    PointOutcome o;
    o.ok = get_u64(buf, at) != 0;
    const std::size_t n = get_u64(buf, at);
    GEMMSIM_ASSERT(at + n <= buf.size());
    (o.ok ? o.row : o.error).assign(buf.data() + at, n);
    at += n;
    out.emplace_back(index, std::move(o));
  }
  return out;
}

// Non-blocking sends with their buffers kept alive until MPI is done with them. Blocking
// sends could deadlock: rank 0 sending work to a rank that is itself blocked sending results.
class Outbox {
 public:
  void send(int to, Tag tag, std::vector<char> buf) {
    auto& [request, data] = pending_.emplace_back(MPI_REQUEST_NULL, std::move(buf));
    MPI_Isend(data.data(), int(data.size()), MPI_BYTE, to, tag, MPI_COMM_WORLD, &request);
  }
  void progress() {
    for (auto it = pending_.begin(); it != pending_.end();) {
      int done = 0;
      MPI_Test(&it->first, &done, MPI_STATUS_IGNORE);
      it = done ? pending_.erase(it) : std::next(it);
    }
  }
  void wait_all() {
    for (auto& [request, data] : pending_) MPI_Wait(&request, MPI_STATUS_IGNORE);
    pending_.clear();
  }

 private:
  std::list<std::pair<MPI_Request, std::vector<char>>> pending_;  // stable addresses
};

// The next message for this rank, if one has arrived (never blocks).
std::optional<std::pair<MPI_Status, std::vector<char>>> poll(int source) {
  int flag = 0;
  MPI_Status status;
  MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
  if (!flag) return std::nullopt;
  int bytes = 0;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  std::vector<char> buf(std::size_t(std::max(bytes, 0)));
  MPI_Recv(buf.data(), bytes, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  return std::make_pair(status, std::move(buf));
}

// How often the main threads look at the network when their own threads have nothing for
// them: short next to a point (>= 1 ms), and idle enough not to take a core from the
// simulation threads (MPI's own blocking receives spin).
constexpr std::chrono::microseconds kPollInterval{500};

void coordinate(std::size_t count, Recorder& rec, LocalPool& local, Dispenser& disp) {
  Outbox out;
  int workers_left = size() - 1;
  std::vector<bool> exhausted(std::size_t(size()), false);
  while (rec.done < count || workers_left > 0) {
    while (local.pending() < std::size_t(local.threads()) && !disp.empty()) local.push(disp.take());
    for (auto& [i, o] : local.collect(kPollInterval)) rec.record(i, std::move(o));
    while (auto msg = poll(MPI_ANY_SOURCE)) {
      const int from = msg->first.MPI_SOURCE;
      std::size_t at = 0;
      switch (msg->first.MPI_TAG) {
        case kRequest: {
          const auto threads = int(get_u64(msg->second, at));
          std::vector<char> reply;
          for (const std::size_t i : disp.take_chunk(threads)) put_u64(reply, i);
          GEMMSIM_ASSERT(!exhausted[std::size_t(from)]);
          exhausted[std::size_t(from)] = reply.empty();
          out.send(from, kWork, std::move(reply));
          break;
        }
        case kResults:
          for (auto& [i, o] : decode_results(msg->second)) rec.record(i, std::move(o));
          break;
        case kDone:
          --workers_left;
          break;
        default:
          GEMMSIM_ASSERT(false && "unexpected message tag");
      }
    }
    out.progress();
  }
  out.wait_all();
}

void work_for_root(LocalPool& local) {
  Outbox out;
  bool requested = false, exhausted = false;
  for (;;) {
    const Finished finished = local.collect(kPollInterval);
    if (!finished.empty()) out.send(0, kResults, encode_results(finished));
    // Ask for more while fewer points are queued than there are threads, so that a thread
    // finds work waiting when it finishes (the answer takes a poll interval or two).
    if (!requested && !exhausted && local.queued() < std::size_t(local.threads())) {
      std::vector<char> req;
      put_u64(req, std::uint64_t(local.threads()));
      out.send(0, kRequest, std::move(req));
      requested = true;
    }
    while (auto msg = poll(0)) {
      GEMMSIM_ASSERT(msg->first.MPI_TAG == kWork && requested);
      requested = false;
      exhausted = msg->second.empty();
      for (std::size_t at = 0; at < msg->second.size();) local.push(get_u64(msg->second, at));
    }
    out.progress();
    if (exhausted && local.idle()) break;
  }
  out.send(0, kDone, {});
  out.wait_all();
}

// Rank 0's outcomes to every rank (`outcomes` holds them on rank 0 and is filled on the
// others), in pieces below MPI's int count limit.
void broadcast_outcomes(std::vector<PointOutcome>& outcomes) {
  std::vector<char> buf;
  if (is_root()) {
    Finished all;
    all.reserve(outcomes.size());
    for (std::size_t i = 0; i < outcomes.size(); ++i) all.emplace_back(i, outcomes[i]);
    buf = encode_results(all);
  }
  std::uint64_t bytes = buf.size();
  MPI_Bcast(&bytes, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  buf.resize(bytes);
  constexpr std::uint64_t kPiece = 1u << 30;
  for (std::uint64_t at = 0; at < bytes; at += kPiece)
    MPI_Bcast(buf.data() + at, int(std::min(kPiece, bytes - at)), MPI_BYTE, 0, MPI_COMM_WORLD);
  if (is_root()) return;
  for (auto& [i, o] : decode_results(buf)) outcomes.at(i) = std::move(o);
}

#endif  // GEMMSIM_HAVE_MPI

}  // namespace

void distribute(PointsOptions& run, DistributedOptions o) {
  run.runner = [o = std::move(o)](std::size_t count, const PointFn& fn, const PointsOptions& call) {
    DistributedOptions d = o;
    d.threads = call.threads;
    d.progress = call.progress;
    auto outcomes = run_points_distributed(count, fn, d);
    if (!outcomes) throw RankExit{0};
    return std::move(*outcomes);
  };
}

std::string journal_path(const std::string& output) {
  return output + ".journal";
}

int threads_per_rank(int threads) {
  if (threads > 0) return threads;
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores / std::max(1, ranks_on_this_host()));
}

void write_output(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".partial";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr)
    throw UserError(fmt::format("{}: cannot write it ({})", tmp, std::strerror(errno)));
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !written)
    throw UserError(fmt::format("{}: write failed ({})", tmp, std::strerror(errno)));
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw UserError(fmt::format("{}: cannot replace it ({})", path, ec.message()));
}

std::optional<std::vector<PointOutcome>> run_points_distributed(std::size_t count,
                                                                const PointFn& fn,
                                                                const DistributedOptions& o) {
  const std::string hash = inputs_hash(o.inputs);
  const int threads = threads_per_rank(o.threads);

  // Rank 0 prepares (output policy, journal) and tells the others whether to go on; all
  // ranks check that they were given the same points.
  std::optional<Prepared> prepared;
  std::exception_ptr root_error;  // rethrown on rank 0 once the others know to stop
  if (is_root()) {
    try {
      prepared = prepare(count, o, hash);
    } catch (...) {
      if (size() == 1) throw;
      root_error = std::current_exception();
    }
  }
  int total_threads = threads;
#if GEMMSIM_HAVE_MPI
  if (size() > 1) {
    std::uint64_t header[3] = {root_error ? 1u : 0u, count, std::stoull(hash, nullptr, 16)};
    MPI_Bcast(header, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (header[0] != 0) {
      if (is_root()) std::rethrow_exception(root_error);
      throw RankExit{2};
    }
    const int differs = header[1] != count || header[2] != std::stoull(hash, nullptr, 16);
    int any_differs = 0;
    MPI_Allreduce(&differs, &any_differs, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_differs) {
      if (is_root())
        throw UserError(
            "the MPI ranks were given different points (count or inputs differ): every rank "
            "must read the same study files and flags (a shared file system, same gemmsim)");
      throw RankExit{2};
    }
    MPI_Allreduce(&threads, &total_threads, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
#endif

  LocalPool local(fn, threads);
  try {
#if GEMMSIM_HAVE_MPI
    if (!is_root()) {
      work_for_root(local);
      if (!o.all_ranks) return std::nullopt;
      std::vector<PointOutcome> outcomes(count);
      broadcast_outcomes(outcomes);
      return outcomes;
    }
    Recorder rec{*prepared, count, o};
    Dispenser disp(prepared->done, total_threads);
    if (size() > 1) {
      coordinate(count, rec, local, disp);
      if (o.all_ranks) broadcast_outcomes(prepared->outcomes);
      return std::move(prepared->outcomes);
    }
#else
    Recorder rec{*prepared, count, o};
    Dispenser disp(prepared->done, total_threads);
#endif
    while (rec.done < count) {
      while (local.pending() < std::size_t(local.threads()) && !disp.empty())
        local.push(disp.take());
      for (auto& [i, outcome] : local.collect(std::chrono::milliseconds(100)))
        rec.record(i, std::move(outcome));
    }
    return std::move(prepared->outcomes);
  } catch (const std::exception& e) {
    // A rank that stops here (a journal that cannot be written) would leave the others
    // waiting for it forever: stop the whole job.
    if (size() > 1) {
      std::fprintf(stderr, "gemmsim: rank %d: %s\n", rank(), e.what());
      abort_job(1);
    }
    throw;
  }
}

}  // namespace gemmsim::dist
