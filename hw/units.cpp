// Unit-string parsing for GPU descriptions: a number, optional spaces, then a unit.
//
// Units are case-sensitive ("MB" is bytes, "Mb" would be bits and is rejected). Decimal prefixes
// are powers of 1000 (GB = 1e9 B), binary ones powers of 1024 (GiB = 2^30 B), as in
// shared/reference/hardware.md. A unit of the wrong kind ("1555GB/s" where a size is expected)
// is named as such in the error.
#include "hw/units.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <span>

namespace gemmsim {
namespace {

struct UnitDef {
  std::string_view symbol;
  double scale;  // to the SI base: bytes, Hz, bytes/s, seconds, cycles
};

constexpr std::array kByteUnits{UnitDef{"B", 1.0},
                                UnitDef{"kB", 1e3},
                                UnitDef{"KB", 1e3},
                                UnitDef{"MB", 1e6},
                                UnitDef{"GB", 1e9},
                                UnitDef{"TB", 1e12},
                                UnitDef{"KiB", 1024.0},
                                UnitDef{"MiB", 1048576.0},
                                UnitDef{"GiB", 1073741824.0},
                                UnitDef{"TiB", 1099511627776.0}};
constexpr std::array kFrequencyUnits{UnitDef{"Hz", 1.0}, UnitDef{"kHz", 1e3}, UnitDef{"MHz", 1e6},
                                     UnitDef{"GHz", 1e9}};
constexpr std::array kBandwidthUnits{UnitDef{"B/s", 1.0},
                                     UnitDef{"kB/s", 1e3},
                                     UnitDef{"KB/s", 1e3},
                                     UnitDef{"MB/s", 1e6},
                                     UnitDef{"GB/s", 1e9},
                                     UnitDef{"TB/s", 1e12},
                                     UnitDef{"KiB/s", 1024.0},
                                     UnitDef{"MiB/s", 1048576.0},
                                     UnitDef{"GiB/s", 1073741824.0},
                                     UnitDef{"TiB/s", 1099511627776.0}};
constexpr std::array kDurationUnits{UnitDef{"s", 1.0},   UnitDef{"ms", 1e-3}, UnitDef{"us", 1e-6},
                                    UnitDef{"µs", 1e-6}, UnitDef{"ns", 1e-9}, UnitDef{"ps", 1e-12}};
constexpr std::array kCycleUnits{UnitDef{"cycles", 1.0}, UnitDef{"cycle", 1.0}};
// Units that are none of the above but that people write; named in the error.
constexpr std::array kPerClockUnits{UnitDef{"B/clk", 1.0}, UnitDef{"B/cycle", 1.0},
                                    UnitDef{"clk", 1.0}};

struct UnitKind {
  std::string_view noun;  // "a size in bytes"
  std::string_view example;
  std::span<const UnitDef> units;
};

constexpr UnitKind kBytes{"a size in bytes", "40MiB", kByteUnits};
constexpr UnitKind kFrequency{"a frequency", "1410MHz", kFrequencyUnits};
constexpr UnitKind kBandwidth{"a bandwidth", "1555GB/s", kBandwidthUnits};
constexpr UnitKind kDuration{"a duration", "4us", kDurationUnits};
constexpr UnitKind kCycles{"a cycle count", "200cycles", kCycleUnits};
constexpr UnitKind kPerClock{"a per-clock rate (not a physical unit here)", "", kPerClockUnits};
constexpr std::array<const UnitKind*, 6> kAllKinds{&kBytes,    &kFrequency, &kBandwidth,
                                                   &kDuration, &kCycles,    &kPerClock};

std::string unit_list(const UnitKind& kind) {
  std::string out;
  for (const auto& u : kind.units) {
    if (!out.empty()) out += ", ";
    out += u.symbol;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

[[noreturn]] void fail(const UnitKind& kind, std::string_view text, std::string_view why) {
  throw UnitError{fmt::format("expected {} like '{}' (units: {}); got '{}': {}", kind.noun,
                              kind.example, unit_list(kind), text, why)};
}

// Returns the value in the kind's SI base unit.
double parse_quantity(std::string_view text, const UnitKind& kind) {
  const std::string_view s = trim(text);
  if (s.empty()) fail(kind, text, "empty value");
  double number = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), number);
  if (ec != std::errc{} || end == s.data()) fail(kind, text, "it does not start with a number");
  if (!std::isfinite(number)) fail(kind, text, "the number is not finite");
  const std::string_view unit = trim(std::string_view(end, std::size_t(s.data() + s.size() - end)));
  if (unit.empty()) fail(kind, text, "the unit is missing");
  for (const auto& u : kind.units)
    if (u.symbol == unit) return number * u.scale;
  for (const UnitKind* other : kAllKinds)
    for (const auto& u : other->units)
      if (u.symbol == unit)
        fail(kind, text, fmt::format("'{}' is the unit of {}", unit, other->noun));
  fail(kind, text, fmt::format("unknown unit '{}'", unit));
}

// Decimal text of a double with ten significant digits ("1410", "1.5", "29.3"), so values
// parsed from "1.41GHz" do not print as 1409.9999999999998.
std::string number_text(double v) {
  return fmt::format("{:.10g}", v);
}

}  // namespace

Bytes parse_bytes(std::string_view text) {
  const double v = parse_quantity(text, kBytes);
  if (v < 0) fail(kBytes, text, "a size cannot be negative");
  if (v > 1.8e19) fail(kBytes, text, "too large");
  const double rounded = std::round(v);
  if (std::abs(v - rounded) > 1e-6 * std::max(1.0, v))
    fail(kBytes, text, "not a whole number of bytes");
  return Bytes{static_cast<std::uint64_t>(rounded)};
}

Frequency parse_frequency(std::string_view text) {
  return Frequency{parse_quantity(text, kFrequency)};
}

Bandwidth parse_bandwidth(std::string_view text) {
  return Bandwidth{parse_quantity(text, kBandwidth)};
}

Duration parse_duration(std::string_view text) {
  return Duration{parse_quantity(text, kDuration)};
}

Cycles parse_cycles(std::string_view text) {
  return Cycles{parse_quantity(text, kCycles)};
}

std::string to_string(Bytes b) {
  // The largest unit that represents the value exactly, so the text parses back to it.
  constexpr std::array<UnitDef, 8> order{UnitDef{"TiB", 1099511627776.0}, UnitDef{"TB", 1e12},
                                         UnitDef{"GiB", 1073741824.0},    UnitDef{"GB", 1e9},
                                         UnitDef{"MiB", 1048576.0},       UnitDef{"MB", 1e6},
                                         UnitDef{"KiB", 1024.0},          UnitDef{"kB", 1e3}};
  for (const auto& u : order) {
    const auto scale = static_cast<std::uint64_t>(u.scale);
    if (b.value != 0 && b.value % scale == 0) return fmt::format("{}{}", b.value / scale, u.symbol);
  }
  return fmt::format("{}B", b.value);
}

std::string to_string(Frequency f) {
  return number_text(f.hz / 1e6) + "MHz";
}
std::string to_string(Bandwidth b) {
  return number_text(b.bytes_per_s / 1e9) + "GB/s";
}
std::string to_string(Duration d) {
  if (d.seconds != 0 && std::abs(d.seconds) < 1e-6) return number_text(d.seconds * 1e9) + "ns";
  return number_text(d.seconds * 1e6) + "us";
}
std::string to_string(Cycles c) {
  return number_text(c.value) + "cycles";
}

}  // namespace gemmsim
