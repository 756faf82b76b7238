// hw/SCHEMA.md, generated from the field and rule tables.
#include <fmt/format.h>

#include "hw/schema.hpp"

namespace gemmsim {
namespace {

std::string escape_cell(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string presence_text(const FieldSpec& f) {
  switch (f.presence) {
    case Presence::Required:
      return "required";
    case Presence::Optional:
      return "optional";
    case Presence::WithFeature:
      return fmt::format("iff features.{}", f.feature);
  }
  return "?";
}

}  // namespace

std::string schema_markdown() {
  std::string out = R"(# GPU description schema (`configs/hw/*.yaml`)

Generated from the tables in `hw/schema.cpp` (fields) and `hw/rules.cpp` (consistency rules):
do not edit by hand. Regenerate with `build/hw/gemmsim_hw_schema > hw/SCHEMA.md`; a test
fails when this file and the tables differ.

## Conventions

- Physical quantities are unit strings, parsed once at load. Sizes: `B`, `kB`/`KB`, `MB`,
  `GB`, `TB` (powers of 1000) and `KiB`, `MiB`, `GiB`, `TiB` (powers of 1024). Frequencies:
  `Hz`, `kHz`, `MHz`, `GHz`. Bandwidths: a size unit + `/s` (`1555GB/s`). Durations: `s`,
  `ms`, `us`, `ns`, `ps`. Cycle counts: `cycles`, always SM-clock cycles. Unit symbols are
  case-sensitive; a unit of the wrong kind (`GB/s` where a size is expected) is an error.
- Rates per clock (`*_per_clk*`) are plain numbers, per SM clock and per SM.
- Presence: *required*; *optional* (absent = the default the meaning states); *iff
  features.X*: required when that flag is true and an error when it is false.
- `tensor:` holds one section per tensor-core data type the GPU has (`bf16`, `f16`, `tf32`);
  a type the GPU lacks is simply absent. Paths below write it as `tensor.*`.
- Ranges are inclusive. Every value in a shipped file cites its source in a comment.
- Errors (unknown or duplicate key, wrong type, missing field, bad unit, out of range, a
  violated *error* rule) name the file, the line and the key path; the CLI exits 2. A
  violated *warning* rule still loads and is listed in `GpuSpec::warnings`: those are
  implausible but modelable combinations, typical of what-if studies.
- `--set key.path=value` (repeatable) replaces a field before validation and is checked the
  same way; an unknown key is an error. Example: `--set l2.size=80MiB --set sm_count=200`.

## Fields
)";
  std::string section = "-";
  for (const auto& f : gpu_schema()) {
    const auto dot = f.path.rfind('.');
    const std::string_view s = dot == std::string_view::npos ? "" : f.path.substr(0, dot);
    if (s != section) {
      section = std::string(s);
      out += fmt::format(
          "\n### {}\n\n| key | value | presence | range | meaning |\n"
          "|---|---|---|---|---|\n",
          section.empty() ? "top level" : fmt::format("`{}`", section));
    }
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", f.path,
                       escape_cell(kind_description(f.kind())), presence_text(f),
                       escape_cell(range_description(f)), escape_cell(f.doc));
  }
  out += "\n## Consistency rules\n\n| field blamed | severity | rule |\n|---|---|---|\n";
  for (const auto& r : consistency_rules())
    out += fmt::format("| `{}` | {} | {} |\n", r.key,
                       r.severity == Severity::Error ? "error" : "warning",
                       escape_cell(r.description));
  return out;
}

}  // namespace gemmsim
