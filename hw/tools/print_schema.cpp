// Prints hw/SCHEMA.md from the schema tables: build/hw/gemmsim_hw_schema > hw/SCHEMA.md
#include <iostream>

#include "hw/schema.hpp"

int main() {
  std::cout << gemmsim::schema_markdown();
  return 0;
}
