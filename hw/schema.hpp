// The GPU-description schema as data: one entry per YAML field, and one per cross-field rule.
//
// Contract: the loader, `gemmsim hw show`, and hw/SCHEMA.md all read these two tables, so a
// field exists, is validated, is printed and is documented in exactly one place. A field entry
// says where its value lives in GpuSpec (an accessor), how it is written (its kind: a plain
// number, or a unit string parsed once at load), whether it must be present, its allowed range
// in SI base units (bytes, Hz, B/s, s, cycles, counts), and what it means. Paths under
// `tensor.*.` repeat once per tensor-core data type present in the file.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "hw/gpu_spec.hpp"

namespace gemmsim {

// Tensor-core data-type names as they appear under `tensor:` ("f16", "bf16", "tf32").
std::string_view dtype_name(DType t);
std::optional<DType> parse_tensor_dtype(std::string_view name);  // F32 is not a tensor type
std::string tensor_dtype_names();                                // "bf16, f16, tf32"

// "m16n8k16" <-> MmaShape.
std::optional<MmaShape> parse_mma_shape(std::string_view text);
std::string to_string(const MmaShape& s);

template <class T>
using FieldAccessor = T& (*)(GpuSpec&, DType);
// The variant index is the field's kind; keep FieldKind in the same order.
using FieldRef =
    std::variant<FieldAccessor<int>, FieldAccessor<double>, FieldAccessor<bool>,
                 FieldAccessor<std::string>, FieldAccessor<Bytes>, FieldAccessor<Frequency>,
                 FieldAccessor<Bandwidth>, FieldAccessor<Duration>, FieldAccessor<Cycles>,
                 FieldAccessor<std::vector<Bytes>>, FieldAccessor<MmaShape>,
                 FieldAccessor<std::optional<MmaShape>>, FieldAccessor<std::vector<double>>>;
enum class FieldKind {
  Int,
  Double,
  Bool,
  String,
  Bytes,
  Frequency,
  Bandwidth,
  Duration,
  Cycles,
  BytesList,
  Shape,
  OptionalShape,
  NumberList,
};

enum class Presence {
  Required,
  Optional,     // absent: the GpuSpec default, which the doc string states
  WithFeature,  // required when features.<feature> is true, forbidden when it is false
};

struct FieldSpec {
  std::string_view path;  // "l2.size"; "tensor.*.mma" for every tensor data type
  FieldRef ref;
  Presence presence = Presence::Required;
  std::string_view feature;  // WithFeature: the flag under `features:`
  double min = 0, max = 0;   // inclusive, SI base unit; ignored for bool/string/shape kinds
  std::string_view choices;  // strings: allowed values separated by '|'; empty = any
  std::string_view doc;      // meaning, and unit/convention where the kind does not say it

  FieldKind kind() const { return static_cast<FieldKind>(ref.index()); }
  bool per_tensor_dtype() const { return path.starts_with("tensor.*."); }
};

const std::vector<FieldSpec>& gpu_schema();
// The field whose path (with a concrete data type under tensor, e.g. "tensor.f16.mma")
// matches; nullptr if none. `dtype` receives the data type of a tensor path.
const FieldSpec* find_field(std::string_view concrete_path, DType* dtype = nullptr);
// The value of features.<feature> (a FieldSpec::feature name) in `gpu`.
bool feature_enabled(const GpuSpec& gpu, std::string_view feature);
// "tensor.*.mma" with f16 -> "tensor.f16.mma"; other paths unchanged.
std::string concrete_path(const FieldSpec& f, DType t);

// Human-readable kind, e.g. "size in bytes (e.g. 40MiB)".
std::string kind_description(FieldKind k);
// Allowed range in the field's units, e.g. "[1, 1024]" or "[100MHz, 5000MHz]"; empty when the
// kind has no range.
std::string range_description(const FieldSpec& f);
// Value of the field in `gpu` as YAML would write it ("1410MHz", "[0B, 8KiB]", "m16n8k16").
std::string value_text(const FieldSpec& f, GpuSpec& gpu, DType t);

// Cross-field consistency rules. An Error rejects the file; a Warning (a physically
// implausible but modelable combination, typical of what-if overrides) is recorded in
// GpuSpec::warnings.
enum class Severity { Error, Warning };
struct ConsistencyRule {
  std::string_view key;  // the field blamed (its line is reported); "tensor.*.x" per data type
  Severity severity;
  std::string_view description;  // for SCHEMA.md
  // Returns a message when the rule is violated.
  std::function<std::optional<std::string>(const GpuSpec&, DType)> check;
};
const std::vector<ConsistencyRule>& consistency_rules();

// Compute-capability table: the architecture name and the PTX feature/shape limits the rules
// check against.
std::optional<std::string_view> arch_of_compute_capability(int cc);

// hw/SCHEMA.md, generated from the two tables above.
std::string schema_markdown();

}  // namespace gemmsim
