#include "sim/dist/journal.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"

namespace gemmsim::dist {
namespace {

using nlohmann::json;

constexpr int kFormatVersion = 1;

std::string header_line(std::size_t count, const std::string& hash) {
  return json{{"gemmsim_journal", kFormatVersion}, {"points", count}, {"inputs", hash}}.dump();
}

// Error messages may carry bytes that are not UTF-8 (a file name, a system message); they are
// stored with U+FFFD in their place. Rows are JSON texts, UTF-8 by construction: a row that is
// not is a bug of its producer and stops the run (strict).
std::string point_line(std::size_t index, const PointOutcome& o) {
  json j{{"i", index}, {"ok", o.ok}};
  if (o.ok)
    j["row"] = o.row;
  else
    j["error"] = o.error;
  return j.dump(-1, ' ', false,
                o.ok ? json::error_handler_t::strict : json::error_handler_t::replace);
}

}  // namespace

std::string inputs_hash(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a offset basis and prime (64-bit)
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

JournalContents read_journal(const std::string& path, std::size_t count, const std::string& hash) {
  JournalContents out;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!std::filesystem::exists(path)) return out;
    throw UserError(fmt::format("journal {}: cannot read it ({})", path, std::strerror(errno)));
  }
  std::vector<bool> seen(count, false);
  std::string line;
  std::uintmax_t offset = 0;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (in.eof()) {  // no newline after it: the write of this line was cut short
      out.torn_tail = !line.empty();
      break;
    }
    const json j = json::parse(line, nullptr, false);
    const auto where = fmt::format("journal {} line {}", path, number);
    if (number == 1) {
      if (j.is_discarded() || !j.is_object() || !j.contains("gemmsim_journal"))
        throw UserError(fmt::format("{}: not a gemmsim journal (no header line)", where));
      if (j.value("gemmsim_journal", json()) != kFormatVersion || !j.contains("points") ||
          !j.contains("inputs"))
        throw UserError(fmt::format("{}: unsupported journal header {}", where, line));
      if (j["points"] != count || j["inputs"] != hash)
        throw UserError(fmt::format(
            "{}: written for other inputs ({} points, inputs {}; this run has {} points, inputs "
            "{}): the study, its flags or the gemmsim version changed. Use --force to start "
            "afresh",
            where, j["points"].dump(), j["inputs"].dump(), count, hash));
    } else {
      const bool ok = j.is_object() && j.contains("i") && j["i"].is_number_unsigned() &&
                      j.contains("ok") && j["ok"].is_boolean() &&
                      ((j["ok"] == true && j.contains("row") && j["row"].is_string()) ||
                       (j["ok"] == false && j.contains("error") && j["error"].is_string()));
      if (j.is_discarded() || !ok)
        throw UserError(
            fmt::format("{}: malformed entry (expected {{\"i\":N,\"ok\":true,\"row\":\"...\"}} or "
                        "{{\"i\":N,\"ok\":false,\"error\":\"...\"}})",
                        where));
      const auto index = j["i"].get<std::size_t>();
      if (index >= count)
        throw UserError(fmt::format("{}: point {} is out of range (the run has {} points)", where,
                                    index, count));
      if (seen[index]) throw UserError(fmt::format("{}: point {} is recorded twice", where, index));
      seen[index] = true;
      PointOutcome o;
      o.ok = j["ok"].get<bool>();
      (o.ok ? o.row : o.error) = j[o.ok ? "row" : "error"].get<std::string>();
      out.points.emplace_back(index, std::move(o));
    }
    offset += line.size() + 1;
    out.valid_bytes = offset;
  }
  if (in.bad()) throw UserError(fmt::format("journal {}: read error", path));
  return out;
}

namespace {

// Opens `path` for appending (creating it) and takes an exclusive lock on it, so that two runs
// writing the same journal (the same study started twice, or ranks started without an MPI
// launcher) stop with an error instead of mixing their lines. The lock goes with the file's
// closing. A file system without locks (some network ones) is used without.
std::FILE* open_locked(const std::string& path, std::uintmax_t keep_bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    throw UserError(fmt::format("journal {}: cannot open it ({})", path, std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    ::close(fd);
    throw UserError(fmt::format(
        "journal {}: in use by another gemmsim run (the same study started twice?)", path));
  }
  // Only now, under the lock, cut the file: to nothing for a new journal, after its last
  // whole line for a resumed one.
  if (::ftruncate(fd, off_t(keep_bytes)) != 0) {
    const int e = errno;
    ::close(fd);
    throw UserError(fmt::format("journal {}: cannot cut it to {} bytes ({})", path, keep_bytes,
                                std::strerror(e)));
  }
  std::FILE* f = ::fdopen(fd, "ab");
  if (f == nullptr) {
    ::close(fd);
    throw UserError(fmt::format("journal {}: cannot open it ({})", path, std::strerror(errno)));
  }
  return f;
}

}  // namespace

JournalWriter JournalWriter::create(const std::string& path, std::size_t count,
                                    const std::string& hash) {
  JournalWriter w(open_locked(path, 0), path);
  w.write_line(header_line(count, hash));
  return w;
}

JournalWriter JournalWriter::resume(const std::string& path, std::uintmax_t valid_bytes,
                                    std::size_t count, const std::string& hash) {
  if (valid_bytes == 0) return create(path, count, hash);
  return JournalWriter(open_locked(path, valid_bytes), path);
}

JournalWriter::JournalWriter(JournalWriter&& other) noexcept
    : file_(std::exchange(other.file_, nullptr)), path_(std::move(other.path_)) {}

JournalWriter& JournalWriter::operator=(JournalWriter&& other) noexcept {
  if (this != &other) {
    if (file_ != nullptr) std::fclose(file_);
    file_ = std::exchange(other.file_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

JournalWriter::~JournalWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void JournalWriter::append(std::size_t index, const PointOutcome& outcome) {
  write_line(point_line(index, outcome));
}

void JournalWriter::write_line(const std::string& line) {
  std::string text = line;
  text += '\n';
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0)
    throw std::runtime_error(
        fmt::format("journal {}: write failed ({})", path_, std::strerror(errno)));
}

}  // namespace gemmsim::dist
