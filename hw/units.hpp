// Strong types for the physical quantities a GPU description carries.
//
// YAML values are unit strings ("1.41GHz", "1555GB/s", "40MiB", "200cycles", "4us") parsed
// once at load time (parse_* below); inside gemmsim a quantity is always one of these types, so
// a frequency cannot be passed where a bandwidth is expected.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gemmsim {

struct Bytes {
  std::uint64_t value = 0;
  constexpr double kib() const { return double(value) / 1024.0; }
  constexpr double mib() const { return double(value) / (1024.0 * 1024.0); }
  constexpr auto operator<=>(const Bytes&) const = default;
};

struct Frequency {
  double hz = 0;
  constexpr double mhz() const { return hz / 1e6; }
  constexpr double ghz() const { return hz / 1e9; }
  // Clock period in picoseconds.
  constexpr double period_ps() const { return 1e12 / hz; }
  constexpr auto operator<=>(const Frequency&) const = default;
};

struct Bandwidth {
  double bytes_per_s = 0;
  constexpr double gb_per_s() const { return bytes_per_s / 1e9; }
  // Bytes moved per cycle of the given clock.
  constexpr double bytes_per_cycle(Frequency f) const { return bytes_per_s / f.hz; }
  constexpr auto operator<=>(const Bandwidth&) const = default;
};

struct Duration {
  double seconds = 0;
  constexpr double us() const { return seconds * 1e6; }
  constexpr double ns() const { return seconds * 1e9; }
  constexpr double ps() const { return seconds * 1e12; }
  constexpr auto operator<=>(const Duration&) const = default;
};

// A count of cycles of a named clock (SM clock unless the field says otherwise).
struct Cycles {
  double value = 0;
  constexpr auto operator<=>(const Cycles&) const = default;
};

// Parsers. Each throws UnitError with a message naming what was expected.
struct UnitError {
  std::string message;
};
Bytes parse_bytes(std::string_view text);          // "40MiB", "48KiB", "128B", "50MB"
Frequency parse_frequency(std::string_view text);  // "1.41GHz", "1215MHz"
Bandwidth parse_bandwidth(std::string_view text);  // "1555GB/s", "3.35TB/s", "128B/clk" is not a bandwidth
Duration parse_duration(std::string_view text);    // "4us", "2.5ns", "1ms"
Cycles parse_cycles(std::string_view text);        // "200cycles", "19cycles"

std::string to_string(Bytes);
std::string to_string(Frequency);
std::string to_string(Bandwidth);
std::string to_string(Duration);
std::string to_string(Cycles);

}  // namespace gemmsim
