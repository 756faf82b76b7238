// The journal of finished points: exact round trip, a torn last line dropped and cut off,
// anything else malformed or foreign refused with the file and line named.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/core/error.hpp"
#include "sim/dist/journal.hpp"

using namespace gemmsim;
using namespace gemmsim::dist;

namespace {

std::string scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("gemmsim_journal_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::filesystem::remove(path);
  return path.string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void append_raw(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::app) << text;
}

PointOutcome ok(std::string row) {
  return {true, std::move(row), {}};
}
PointOutcome failed(std::string error) {
  return {false, {}, std::move(error)};
}

const std::string kHash = inputs_hash("study A");

}  // namespace

TEST_CASE("A journal returns every point's row byte for byte, in the order they finished",
          "[dist][journal]") {
  const auto path = scratch("roundtrip.journal");
  // Rows with the characters a JSON-in-JSON encoding could alter: quotes, backslashes,
  // escapes, non-ASCII, a float printed with many digits, an embedded newline.
  const std::string tricky = R"({"name":"a\"b\\c","t":1.2345678901234567e-05,"µ":"é"})";
  {
    auto w = JournalWriter::create(path, 10, kHash);
    w.append(7, ok(tricky));
    w.append(2, failed("tiles 48x64x32: illegal\nsecond line"));
    w.append(0, ok("{}\n"));
  }
  const auto c = read_journal(path, 10, kHash);
  REQUIRE(c.points.size() == 3);
  CHECK_FALSE(c.torn_tail);
  CHECK(c.valid_bytes == std::filesystem::file_size(path));
  CHECK(c.points[0].first == 7);
  CHECK(c.points[0].second.ok);
  CHECK(c.points[0].second.row == tricky);
  CHECK(c.points[1].first == 2);
  CHECK_FALSE(c.points[1].second.ok);
  CHECK(c.points[1].second.error == "tiles 48x64x32: illegal\nsecond line");
  CHECK(c.points[2].second.row == "{}\n");
}

TEST_CASE("A missing journal, or one whose header was torn, reads as empty", "[dist][journal]") {
  const auto path = scratch("torn_header.journal");
  CHECK(read_journal(path, 5, kHash).points.empty());
  append_raw(path, R"({"gemmsim_jour)");
  const auto c = read_journal(path, 5, kHash);
  CHECK(c.points.empty());
  CHECK(c.valid_bytes == 0);
}

TEST_CASE("A torn last line is dropped on reading and cut off before the next append",
          "[dist][journal]") {
  const auto path = scratch("torn.journal");
  {
    auto w = JournalWriter::create(path, 4, kHash);
    w.append(1, ok(R"({"x":1})"));
    w.append(3, ok(R"({"x":3})"));
  }
  const auto whole = slurp(path);
  append_raw(path, R"({"i":2,"ok":true,"row":"{\"x\")");  // a write cut short
  auto c = read_journal(path, 4, kHash);
  CHECK(c.torn_tail);
  REQUIRE(c.points.size() == 2);
  CHECK(c.valid_bytes == whole.size());
  {
    auto w = JournalWriter::resume(path, c.valid_bytes, 4, kHash);
    w.append(2, ok(R"({"x":2})"));
  }
  c = read_journal(path, 4, kHash);
  CHECK_FALSE(c.torn_tail);
  REQUIRE(c.points.size() == 3);
  CHECK(c.points[2].first == 2);
  CHECK(c.points[2].second.row == R"({"x":2})");
  CHECK(slurp(path).rfind(whole, 0) == 0);  // what was whole is kept as it was
}

TEST_CASE("A malformed line before the last is an error naming the file and the line",
          "[dist][journal]") {
  const auto path = scratch("bad_line.journal");
  {
    auto w = JournalWriter::create(path, 4, kHash);
    w.append(0, ok("{}"));
  }
  append_raw(path, "{\"i\":1,\"ok\":true}\n");  // no row
  append_raw(path, "{\"i\":2,\"ok\":true,\"row\":\"{}\"}\n");
  CHECK_THROWS_WITH(read_journal(path, 4, kHash),
                    Catch::Contains("bad_line.journal line 3") && Catch::Contains("malformed"));
}

TEST_CASE("A journal of other inputs, another point count, or a foreign file is refused",
          "[dist][journal]") {
  const auto path = scratch("foreign.journal");
  { JournalWriter::create(path, 4, kHash); }
  CHECK_THROWS_WITH(read_journal(path, 4, inputs_hash("study B")),
                    Catch::Contains("written for other inputs") && Catch::Contains("--force"));
  CHECK_THROWS_WITH(read_journal(path, 5, kHash), Catch::Contains("written for other inputs"));
  const auto csv = scratch("not_a_journal.csv");
  append_raw(csv, "m,n,k\n1,2,3\n");
  CHECK_THROWS_WITH(read_journal(csv, 4, kHash), Catch::Contains("not a gemmsim journal"));
}

TEST_CASE("A journal naming a point twice or out of range is refused", "[dist][journal]") {
  const auto path = scratch("twice.journal");
  {
    auto w = JournalWriter::create(path, 4, kHash);
    w.append(1, ok("{}"));
    w.append(1, ok("{}"));
  }
  CHECK_THROWS_WITH(read_journal(path, 4, kHash), Catch::Contains("point 1 is recorded twice"));
  {
    auto w = JournalWriter::create(path, 4, kHash);
    w.append(9, ok("{}"));
  }
  CHECK_THROWS_WITH(read_journal(path, 4, kHash), Catch::Contains("out of range"));
}

TEST_CASE("The inputs hash tells inputs apart and is stable across runs", "[dist][journal]") {
  CHECK(inputs_hash("") == "cbf29ce484222325");   // FNV-1a 64-bit offset basis
  CHECK(inputs_hash("a") == "af63dc4c8601ec8c");  // published FNV-1a test vector
  CHECK(inputs_hash("study A") != inputs_hash("study B"));
}

TEST_CASE("A journal being written cannot be opened by a second writer, and is left intact",
          "[dist][journal]") {
  const auto path = scratch("locked.journal");
  auto first = JournalWriter::create(path, 4, kHash);
  first.append(0, ok("{}"));
  const auto before = slurp(path);
  CHECK_THROWS_WITH(JournalWriter::create(path, 4, kHash), Catch::Contains("in use"));
  CHECK_THROWS_WITH(JournalWriter::resume(path, before.size(), 4, kHash),
                    Catch::Contains("in use"));
  CHECK(slurp(path) == before);  // not truncated by the refused writers
  first.append(1, ok("{}"));
  CHECK(read_journal(path, 4, kHash).points.size() == 2);
}
