#include "validate/compare/csv.hpp"

#include <fmt/format.h>

#include <charconv>
#include <fstream>

#include "sim/core/error.hpp"

namespace gemmsim {
namespace {

std::vector<std::string> split_line(const std::string& line, const CsvPos& at) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        field += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.push_back(field);
      field.clear();
    } else if (ch != '\r') {
      field += ch;
    }
  }
  if (quoted) throw UserError(fmt::format("{}: unterminated quoted field", at.where()));
  out.push_back(field);
  return out;
}

}  // namespace

CsvTable read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UserError(fmt::format("{}: cannot open the file", path));
  CsvTable t;
  t.file = path;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line == "\r" || line[0] == '#') continue;
    const CsvPos at{path, n};
    auto fields = split_line(line, at);
    if (t.header.empty()) {
      t.header = fields;
      for (std::size_t i = 0; i < fields.size(); ++i)
        if (!t.column.emplace(fields[i], i).second)
          throw UserError(fmt::format("{}: column '{}' appears twice in the header", at.where(), fields[i]));
      continue;
    }
    if (fields.size() != t.header.size())
      throw UserError(fmt::format("{}: {} fields, but the header has {}", at.where(), fields.size(),
                                  t.header.size()));
    t.rows.push_back(std::move(fields));
    t.lines.push_back(n);
  }
  if (t.header.empty()) throw UserError(fmt::format("{}: empty file (no header row)", path));
  return t;
}

bool CsvRecord::has(const std::string& col) const { return t.column.count(col) != 0; }

const std::string& CsvRecord::str(const std::string& col) const {
  auto it = t.column.find(col);
  if (it == t.column.end())
    throw UserError(fmt::format("{}: no column '{}' in the header", t.file, col));
  return t.rows[i][it->second];
}

double CsvRecord::num(const std::string& col) const {
  const std::string& s = str(col);
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size())
    throw UserError(fmt::format("{}:{}: column '{}' = '{}' is not a number", t.file, t.lines[i], col, s));
  return v;
}

int CsvRecord::integer(const std::string& col) const {
  const std::string& s = str(col);
  int v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size())
    throw UserError(fmt::format("{}:{}: column '{}' = '{}' is not an integer", t.file, t.lines[i], col, s));
  return v;
}

}  // namespace gemmsim
