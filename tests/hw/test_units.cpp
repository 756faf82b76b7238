// Unit strings: parsed once at load into strong types, SI-valued, strict about units.
#include <catch2/catch.hpp>
#include <string>

#include "hw/units.hpp"

using namespace gemmsim;
using Catch::Matchers::Contains;

namespace {
std::string unit_error(void (*parse)(std::string_view), std::string_view text) {
  try {
    parse(text);
  } catch (const UnitError& e) {
    return e.message;
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("Unit strings parse to SI values and reject unknown units", "[hw][units]") {
  CHECK(parse_bytes("40MiB").value == 40ull << 20);
  CHECK(parse_bytes("48KiB").value == 48ull << 10);
  CHECK(parse_bytes("128B").value == 128);
  CHECK(parse_bytes("50MB").value == 50'000'000);
  CHECK(parse_bytes("141GB").value == 141'000'000'000ull);
  CHECK(parse_bytes("1.5KiB").value == 1536);
  CHECK(parse_bytes(" 80 GiB ").value == 80ull << 30);
  CHECK(parse_frequency("1.41GHz").hz == Approx(1.41e9));
  CHECK(parse_frequency("1215MHz").hz == Approx(1.215e9));
  CHECK(parse_bandwidth("1555GB/s").bytes_per_s == Approx(1.555e12));
  CHECK(parse_bandwidth("3.35TB/s").bytes_per_s == Approx(3.35e12));
  CHECK(parse_bandwidth("1GiB/s").bytes_per_s == Approx(1073741824.0));
  CHECK(parse_duration("4us").seconds == Approx(4e-6));
  CHECK(parse_duration("2.5ns").seconds == Approx(2.5e-9));
  CHECK(parse_duration("1ms").seconds == Approx(1e-3));
  CHECK(parse_cycles("200cycles").value == 200);
  CHECK(parse_cycles("29.3cycles").value == Approx(29.3));

  const auto bytes = +[](std::string_view t) { parse_bytes(t); };
  const auto freq = +[](std::string_view t) { parse_frequency(t); };
  const auto cycles = +[](std::string_view t) { parse_cycles(t); };
  CHECK_THAT(unit_error(bytes, "40mib"), Contains("unknown unit 'mib'"));
  CHECK_THAT(unit_error(freq, "1410MHZ"), Contains("unknown unit 'MHZ'"));
  CHECK_THAT(unit_error(cycles, "200"), Contains("the unit is missing"));
  CHECK_THAT(unit_error(bytes, "MiB"), Contains("does not start with a number"));
  CHECK_THAT(unit_error(bytes, "-1KiB"), Contains("cannot be negative"));
  CHECK_THAT(unit_error(bytes, "0.5B"), Contains("not a whole number of bytes"));
  CHECK_THAT(unit_error(bytes, "40MiB"), Contains("(no error)"));
}

TEST_CASE("A unit of the wrong kind is rejected and its kind named", "[hw][units]") {
  const auto bytes = +[](std::string_view t) { parse_bytes(t); };
  const auto freq = +[](std::string_view t) { parse_frequency(t); };
  const auto bandwidth = +[](std::string_view t) { parse_bandwidth(t); };
  CHECK_THAT(unit_error(bytes, "1555GB/s"),
             Contains("'GB/s' is the unit of a bandwidth") && Contains("expected a size in bytes"));
  CHECK_THAT(unit_error(freq, "5ns"), Contains("'ns' is the unit of a duration"));
  CHECK_THAT(unit_error(bandwidth, "128B/clk"), Contains("per-clock rate"));
  CHECK_THAT(unit_error(bandwidth, "40MiB"), Contains("'MiB' is the unit of a size in bytes"));
}

TEST_CASE("A printed quantity parses back to the same value", "[hw][units]") {
  for (const auto b : {Bytes{0}, Bytes{128}, Bytes{1536}, Bytes{40ull << 20},
                       Bytes{141'000'000'000ull}, Bytes{52428800}, Bytes{1234567}})
    CHECK(parse_bytes(to_string(b)) == b);
  CHECK(to_string(Bytes{40ull << 20}) == "40MiB");
  CHECK(to_string(parse_frequency("1.41GHz")) == "1410MHz");
  CHECK(parse_frequency(to_string(Frequency{1.83e9})).hz == Approx(1.83e9));
  CHECK(parse_bandwidth(to_string(Bandwidth{3.352e12})).bytes_per_s == Approx(3.352e12));
  CHECK(parse_duration(to_string(Duration{4e-6})).seconds == Approx(4e-6));
  CHECK(parse_duration(to_string(Duration{2.5e-9})).seconds == Approx(2.5e-9));
  CHECK(parse_cycles(to_string(Cycles{29.3})).value == Approx(29.3));
}
