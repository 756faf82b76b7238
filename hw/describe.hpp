// A resolved GPU description as text or JSON, with its derived peaks (`gemmsim hw show`).
//
// Both walk the schema table (hw/schema.hpp), so every field appears, in schema order.
// JSON keys mirror the YAML paths with the unit in the leaf name: quantities become numbers in
// fixed units (`clocks.sustained` -> {"clocks": {"sustained_mhz": 1980}}; suffixes _bytes,
// _mhz, _gbs, _us, _cycles), shapes {"m", "n", "k"} objects, fields of an absent feature null.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "hw/gpu_spec.hpp"

namespace gemmsim {

std::string describe_text(const GpuSpec& gpu);  // human-readable, grouped, with units and the peaks
nlohmann::json describe_json(const GpuSpec& gpu);  // every field + "peaks" + "warnings"

}  // namespace gemmsim
