// A small CSV reader for the measurement files: a header row, then records. Fields may be
// quoted ("a,b"). Errors name the file and line.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gemmsim {

struct CsvPos {
  std::string file;
  int line = 0;
  std::string where() const { return file + ":" + std::to_string(line); }
};

struct CsvTable {
  std::string file;
  std::vector<std::string> header;
  std::map<std::string, std::size_t> column;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> lines;  // 1-based line of each row
};

// Throws UserError: unreadable file, empty file, a row with the wrong number of fields,
// an unterminated quote, a duplicate column.
CsvTable read_csv(const std::string& path);

// Typed access to one record, with errors naming file, line and column.
struct CsvRecord {
  const CsvTable& t;
  std::size_t i;
  bool has(const std::string& col) const;
  const std::string& str(const std::string& col) const;
  double num(const std::string& col) const;
  int integer(const std::string& col) const;
};

}  // namespace gemmsim
