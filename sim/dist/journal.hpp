// The journal of a run of points: an append-only file next to the run's output holding every
// finished point, so that an interrupted run (a killed job, a node lost, a wall-clock limit)
// can be resumed without redoing them.
//
// Format: JSON lines. The first line says which run it belongs to:
//   {"gemmsim_journal":1,"points":<count>,"inputs":"<64-bit FNV-1a of the inputs, hex>"}
// then one line per finished point, in the order they finished:
//   {"i":<index>,"ok":true,"row":"<the point's row, as a JSON string>"}
//   {"i":<index>,"ok":false,"error":"<message>"}
// The row is stored as a string, not re-parsed JSON, so that a resumed run returns exactly the
// bytes the point produced. Each line is written with one call and flushed, so a process
// killed mid-write leaves at most one torn last line; reading drops it (the point is redone)
// and the writer cuts it off before appending. Any other malformed line is an error naming the
// file and line: the journal was not written by gemmsim, or was edited.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "sim/run/points.hpp"

namespace gemmsim::dist {

// 64-bit FNV-1a of `text` as 16 hex digits: identifies the inputs a journal was written for.
std::string inputs_hash(const std::string& text);

struct JournalContents {
  std::vector<std::pair<std::size_t, PointOutcome>> points;  // in the order they finished
  std::uintmax_t valid_bytes = 0;  // the file up to the end of its last whole line
  bool torn_tail = false;          // a partial last line was dropped
};

// Reads the journal at `path` written for `count` points of the inputs whose hash is
// `hash`. A missing or empty file, or one holding only a torn header, reads as empty. Throws
// UserError naming the file (and line) when it belongs to other inputs or is malformed.
JournalContents read_journal(const std::string& path, std::size_t count, const std::string& hash);

// Holds an exclusive lock (flock) on the journal while it is open: a second writer of the same
// journal gets a UserError instead of mixing its lines in.
class JournalWriter {
 public:
  // Starts a new journal at `path` (replacing any file there) with its header.
  static JournalWriter create(const std::string& path, std::size_t count, const std::string& hash);
  // Continues the journal at `path` whose first `valid_bytes` are whole lines (see
  // read_journal); a torn tail beyond them is cut off. valid_bytes 0 starts it anew.
  static JournalWriter resume(const std::string& path, std::uintmax_t valid_bytes,
                              std::size_t count, const std::string& hash);

  JournalWriter(JournalWriter&& other) noexcept;
  JournalWriter& operator=(JournalWriter&& other) noexcept;
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;
  ~JournalWriter();

  // Appends point `index` as one line and flushes it to the operating system.
  void append(std::size_t index, const PointOutcome& outcome);

 private:
  JournalWriter(std::FILE* file, std::string path) : file_(file), path_(std::move(path)) {}
  void write_line(const std::string& line);
  std::FILE* file_ = nullptr;
  std::string path_;
};

}  // namespace gemmsim::dist
