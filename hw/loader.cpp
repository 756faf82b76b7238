// GPU description loader: YAML text -> validated GpuSpec, driven by the schema tables.
//
// Order of work: read the YAML (syntax errors stop here), apply `--set` overrides to the tree,
// walk the tree against the schema (unknown keys, duplicate keys, sections that are not
// mappings), parse every field from its unit string with its range (missing fields,
// feature-gated fields), then run the consistency rules. Each stage reports every problem it
// finds; the next stage runs only on a clean result, so one mistake gives one message.
#include "hw/loader.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "hw/schema.hpp"

namespace gemmsim {
namespace fs = std::filesystem;
namespace {

// Where a value came from: a line of the file, or a `--set` override.
struct Origin {
  int line = 0;  // 1-based; 0 when unknown (a key the file lacks)
  std::string override_text;
};

class Diagnostics {
 public:
  explicit Diagnostics(std::string file) : file_(std::move(file)) {}

  void error(const Origin& at, std::string_view path, std::string_view message) {
    errors_.push_back(fmt::format("{}: {}: {}", where(at), path, message));
  }
  void warning(const Origin& at, std::string_view path, std::string_view message) {
    warnings_.push_back(fmt::format("{}: {}: {}", where(at), path, message));
  }
  // Throws the collected errors, if any.
  void raise_if_any() const {
    if (errors_.empty()) return;
    std::string all;
    for (const auto& e : errors_) all += (all.empty() ? "" : "\n") + e;
    throw HwError(all);
  }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::string where(const Origin& at) const {
    if (!at.override_text.empty()) return fmt::format("{}: --set {}", file_, at.override_text);
    if (at.line > 0) return fmt::format("{}:{}", file_, at.line);
    return file_;
  }
  std::string file_;
  std::vector<std::string> errors_;
  std::vector<std::string> warnings_;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    parts.emplace_back(path.substr(start, dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

std::string join_path(std::string_view prefix, std::string_view key) {
  return prefix.empty() ? std::string(key) : fmt::format("{}.{}", prefix, key);
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The schema seen as a tree: for every section ("", "l2", "tensor.*") the names it may hold,
// in schema order, and whether each is a section or a field.
class SchemaTree {
 public:
  SchemaTree() {
    for (const auto& f : gpu_schema()) {
      const auto parts = split_path(f.path);
      std::string prefix;
      for (std::size_t i = 0; i < parts.size(); ++i) {
        const bool leaf = i + 1 == parts.size();
        auto& names = children_[prefix];
        if (std::find(names.begin(), names.end(), parts[i]) == names.end())
          names.push_back(parts[i]);
        prefix = join_path(prefix, parts[i]);
        if (!leaf) sections_.insert(prefix);
      }
    }
  }
  bool is_section(const std::string& pattern) const { return sections_.count(pattern) != 0; }
  const std::vector<std::string>& children(const std::string& pattern) const {
    static const std::vector<std::string> none;
    const auto it = children_.find(pattern);
    return it == children_.end() ? none : it->second;
  }
  // "tensor.f16.mma" -> "tensor.*.mma"
  static std::string pattern_of(std::string_view concrete) {
    auto parts = split_path(concrete);
    if (parts.size() >= 2 && parts[0] == "tensor") parts[1] = "*";
    std::string out;
    for (const auto& p : parts) out = join_path(out, p);
    return out;
  }

 private:
  std::map<std::string, std::vector<std::string>> children_;
  std::set<std::string> sections_;
};

const SchemaTree& schema_tree() {
  static const SchemaTree tree;
  return tree;
}

std::string unknown_key_message(const std::string& section, std::string_view key) {
  const auto& names = schema_tree().children(section);
  std::string list, best;
  std::size_t best_distance = 3;  // suggest only close matches
  for (const auto& n : names) {
    list += (list.empty() ? "" : ", ") + n;
    const auto d = edit_distance(key, n);
    if (d < best_distance) best_distance = d, best = n;
  }
  const std::string where = section.empty() ? "at the top level" : fmt::format("in '{}'", section);
  return fmt::format("unknown key '{}' {}{}; expected one of: {}", key, where,
                     best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best), list);
}

// Why `path` names no schema field: its first unknown component, or that it is a section.
std::string unknown_path_message(const std::string& path) {
  const auto parts = split_path(path);
  std::string section;  // the pattern of the section reached so far
  for (const auto& part : parts) {
    if (section == "tensor") {
      if (!parse_tensor_dtype(part))
        return fmt::format("unknown tensor data type '{}'; expected one of: {}", part,
                           tensor_dtype_names());
      section = "tensor.*";
      continue;
    }
    const std::string child = join_path(section, part);
    if (schema_tree().is_section(child)) {
      section = child;
      continue;
    }
    const auto& names = schema_tree().children(section);
    if (std::find(names.begin(), names.end(), part) != names.end())
      return fmt::format("'{}' is a field and has no sub-keys", child);
    return unknown_key_message(section, part);
  }
  return fmt::format("is a section, not a field; name one of its fields: {}",
                     fmt::join(schema_tree().children(section), ", "));
}

// The innermost `key:` path enclosing `line` of a YAML text, by indentation; for syntax
// errors, which yaml-cpp reports with a line but no key.
std::string key_path_at_line(const std::string& text, int line) {
  std::istringstream in(text);
  std::vector<std::pair<std::size_t, std::string>> stack;  // (indent, key)
  std::string row;
  for (int n = 1; n <= line && std::getline(in, row); ++n) {
    const auto indent = row.find_first_not_of(' ');
    if (indent == std::string::npos || row[indent] == '#' || row[indent] == '-') continue;
    const auto colon = row.find(':', indent);
    if (colon == std::string::npos) continue;
    const auto key = trim(std::string_view(row).substr(indent, colon - indent));
    if (key.empty() || key.find_first_of(" \"'{[") != std::string_view::npos) continue;
    while (!stack.empty() && stack.back().first >= indent) stack.pop_back();
    stack.emplace_back(indent, std::string(key));
  }
  std::string path;
  for (const auto& [indent, key] : stack) path = join_path(path, key);
  return path;
}

std::string describe_node_type(const YAML::Node& node) {
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a list";
  if (node.IsNull()) return "no value";
  return fmt::format("'{}'", node.Scalar());
}

std::string expectation(const FieldSpec& f) {
  const auto range = range_description(f);
  if (range.empty()) return kind_description(f.kind());
  if (f.kind() == FieldKind::String)
    return fmt::format("{}, {}", kind_description(f.kind()), range);
  return fmt::format("{} in {}", kind_description(f.kind()), range);
}

// --- parsing one value -----------------------------------------------------------------------

// A parsed value, or why not.
template <class T>
struct Parsed {
  std::optional<T> value;
  std::string error;
};

template <class T>
Parsed<T> fail(std::string message) {
  return Parsed<T>{std::nullopt, std::move(message)};
}

std::optional<std::string> range_error(const FieldSpec& f, double si, std::string_view text) {
  if (si >= f.min && si <= f.max) return std::nullopt;
  return fmt::format("'{}' is out of range; expected {}", text, expectation(f));
}

template <class T>
std::optional<T> parse_number(std::string_view s) {
  T v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

template <class Q>
Parsed<Q> parse_unit(const FieldSpec& f, std::string_view text, Q (*parse)(std::string_view),
                     double (*si)(const Q&)) {
  try {
    const Q q = parse(text);
    if (auto e = range_error(f, si(q), text)) return fail<Q>(*e);
    return {q, {}};
  } catch (const UnitError& e) {
    return fail<Q>(e.message);
  }
}

template <class T>
Parsed<T> parse_scalar(const FieldSpec& f, std::string_view s);

template <>
Parsed<int> parse_scalar<int>(const FieldSpec& f, std::string_view s) {
  const auto v = parse_number<int>(s);
  if (!v) return fail<int>(fmt::format("expected {}, got '{}'", expectation(f), s));
  if (auto e = range_error(f, *v, s)) return fail<int>(*e);
  return {v, {}};
}
template <>
Parsed<double> parse_scalar<double>(const FieldSpec& f, std::string_view s) {
  const auto v = parse_number<double>(s);
  if (!v || !std::isfinite(*v))
    return fail<double>(fmt::format("expected {}, got '{}'", expectation(f), s));
  if (auto e = range_error(f, *v, s)) return fail<double>(*e);
  return {v, {}};
}
template <>
Parsed<bool> parse_scalar<bool>(const FieldSpec& f, std::string_view s) {
  if (s == "true") return {true, {}};
  if (s == "false") return {false, {}};
  return fail<bool>(fmt::format("expected {}, got '{}'", expectation(f), s));
}
template <>
Parsed<std::string> parse_scalar<std::string>(const FieldSpec& f, std::string_view s) {
  if (s.empty())
    return fail<std::string>(fmt::format("expected {}, got an empty string", expectation(f)));
  if (f.choices.empty()) return {std::string(s), {}};
  std::string_view rest = f.choices;
  while (!rest.empty()) {
    const auto bar = rest.find('|');
    if (rest.substr(0, bar) == s) return {std::string(s), {}};
    rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
  }
  return fail<std::string>(fmt::format("'{}' is not allowed; expected {}", s, expectation(f)));
}
template <>
Parsed<Bytes> parse_scalar<Bytes>(const FieldSpec& f, std::string_view s) {
  return parse_unit<Bytes>(f, s, parse_bytes, [](const Bytes& b) { return double(b.value); });
}
template <>
Parsed<Frequency> parse_scalar<Frequency>(const FieldSpec& f, std::string_view s) {
  return parse_unit<Frequency>(f, s, parse_frequency, [](const Frequency& q) { return q.hz; });
}
template <>
Parsed<Bandwidth> parse_scalar<Bandwidth>(const FieldSpec& f, std::string_view s) {
  return parse_unit<Bandwidth>(f, s, parse_bandwidth,
                               [](const Bandwidth& q) { return q.bytes_per_s; });
}
template <>
Parsed<Duration> parse_scalar<Duration>(const FieldSpec& f, std::string_view s) {
  return parse_unit<Duration>(f, s, parse_duration, [](const Duration& q) { return q.seconds; });
}
template <>
Parsed<Cycles> parse_scalar<Cycles>(const FieldSpec& f, std::string_view s) {
  return parse_unit<Cycles>(f, s, parse_cycles, [](const Cycles& q) { return q.value; });
}
template <>
Parsed<MmaShape> parse_scalar<MmaShape>(const FieldSpec& f, std::string_view s) {
  if (auto shape = parse_mma_shape(s)) return {*shape, {}};
  return fail<MmaShape>(fmt::format("expected {}, got '{}'", expectation(f), s));
}
template <>
Parsed<std::optional<MmaShape>> parse_scalar<std::optional<MmaShape>>(const FieldSpec& f,
                                                                      std::string_view s) {
  auto p = parse_scalar<MmaShape>(f, s);
  if (!p.value) return fail<std::optional<MmaShape>>(p.error);
  return {std::optional<MmaShape>(*p.value), {}};
}

template <class T>
Parsed<T> parse_node(const FieldSpec& f, const YAML::Node& node) {
  if constexpr (std::is_same_v<T, std::vector<Bytes>> || std::is_same_v<T, std::vector<double>>) {
    using Element = typename T::value_type;
    if (!node.IsSequence())
      return fail<T>(fmt::format("expected {}, got {}", expectation(f), describe_node_type(node)));
    T out;
    for (std::size_t i = 0; i < node.size(); ++i) {
      const auto& item = node[i];
      if (!item.IsScalar())
        return fail<T>(fmt::format("element {}: expected {}, got {}", i + 1,
                                   std::is_same_v<Element, Bytes> ? "a size in bytes" : "a number",
                                   describe_node_type(item)));
      auto p = parse_scalar<Element>(f, trim(item.Scalar()));
      if (!p.value) return fail<T>(fmt::format("element {}: {}", i + 1, p.error));
      out.push_back(*p.value);
    }
    return {std::move(out), {}};
  } else {
    if (!node.IsScalar())
      return fail<T>(fmt::format("expected {}, got {}", expectation(f), describe_node_type(node)));
    return parse_scalar<T>(f, trim(node.Scalar()));
  }
}

// --- the loader proper -----------------------------------------------------------------------

struct Leaf {
  YAML::Node node;
  Origin origin;
};

class Loader {
 public:
  Loader(std::string file, YAML::Node root, const std::vector<std::string>& overrides)
      : diag_(std::move(file)), root_(std::move(root)) {
    if (!root_.IsMap()) {
      diag_.error(
          {1, {}}, "(top level)",
          fmt::format("expected a mapping of GPU fields, got {}",
                      root_.IsNull() ? std::string("an empty file") : describe_node_type(root_)));
      diag_.raise_if_any();
    }
    for (const auto& text : overrides) apply_override(text);
    diag_.raise_if_any();
  }

  GpuSpec load() {
    walk(root_, "", Origin{});
    diag_.raise_if_any();
    GpuSpec gpu;
    read_fields(gpu);
    diag_.raise_if_any();
    fit_per_unit_lists(gpu);
    check_rules(gpu);
    diag_.raise_if_any();
    gpu.warnings = diag_.warnings();
    return gpu;
  }

 private:
  Origin origin_of(const std::string& path, const YAML::Node& key) const {
    if (auto it = overrides_.find(path); it != overrides_.end()) return {0, it->second};
    return {key.Mark().is_null() ? 0 : key.Mark().line + 1, {}};
  }

  // --set key.path=value: the key must be a schema field; the value replaces the file's.
  void apply_override(const std::string& text) {
    const auto eq = text.find('=');
    const Origin at{0, text};
    if (eq == std::string::npos) {
      diag_.error(at, trim(text), "expected key.path=value (e.g. l2.size=80MiB)");
      return;
    }
    const std::string path(trim(std::string_view(text).substr(0, eq)));
    const std::string value(trim(std::string_view(text).substr(eq + 1)));
    if (!find_field(path)) {
      diag_.error(at, path, unknown_path_message(path));
      return;
    }
    YAML::Node value_node;
    try {
      value_node = YAML::Load(value);
    } catch (const YAML::ParserException& e) {
      diag_.error(at, path, fmt::format("the value is not valid YAML: {}", e.msg));
      return;
    }
    const auto parts = split_path(path);
    YAML::Node cursor = root_;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      if (!cursor[parts[i]] || !cursor[parts[i]].IsMap())
        cursor[parts[i]] = YAML::Node(YAML::NodeType::Map);
      YAML::Node next = cursor[parts[i]];
      cursor.reset(next);
    }
    cursor[parts.back()] = value_node;
    overrides_[path] = text;
  }

  // Checks the tree's shape against the schema and records every field node.
  void walk(const YAML::Node& map, const std::string& path, const Origin& map_origin) {
    sections_[path] = map_origin;
    const std::string pattern = SchemaTree::pattern_of(path);
    std::map<std::string, int> seen;  // key -> line of its first occurrence
    for (const auto& entry : map) {
      if (!entry.first.IsScalar()) {
        diag_.error(origin_of(path, entry.first), path.empty() ? "(top level)" : path,
                    "a key must be a plain name");
        continue;
      }
      const std::string key = entry.first.Scalar();
      const std::string child = join_path(path, key);
      const Origin at = origin_of(child, entry.first);
      if (auto [it, inserted] = seen.emplace(key, at.line); !inserted) {
        diag_.error(
            at, child,
            fmt::format("duplicate key (first given at line {}); give each key once", it->second));
        continue;
      }
      if (pattern == "tensor" && !parse_tensor_dtype(key)) {
        diag_.error(at, child,
                    fmt::format("unknown tensor data type '{}'; expected one of: {}", key,
                                tensor_dtype_names()));
        continue;
      }
      const std::string child_pattern = SchemaTree::pattern_of(child);
      if (schema_tree().is_section(child_pattern)) {
        if (!entry.second.IsMap()) {
          diag_.error(at, child,
                      fmt::format("expected a section (a mapping of {} fields), got {}", child,
                                  describe_node_type(entry.second)));
          continue;
        }
        walk(entry.second, child, at);
      } else if (find_field(child)) {
        leaves_[child] = Leaf{entry.second, at};
      } else {
        diag_.error(at, child, unknown_key_message(pattern, key));
      }
    }
  }

  void missing(const FieldSpec& f, const std::string& path, std::string_view why) {
    // Report a whole missing section once rather than each of its fields.
    const auto parts = split_path(path);
    std::string prefix;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      prefix = join_path(prefix, parts[i]);
      if (!sections_.count(prefix)) {
        if (reported_sections_.insert(prefix).second)
          diag_.error(Origin{}, prefix, fmt::format("required section missing{}", why));
        return;
      }
    }
    const auto parent = sections_.find(prefix);
    diag_.error(
        parent == sections_.end() ? Origin{} : parent->second, path,
        fmt::format("required field missing{}; expected {}: {}", why, expectation(f), f.doc));
  }

  void read_field(const FieldSpec& f, GpuSpec& gpu, DType t) {
    const std::string path = concrete_path(f, t);
    const auto leaf = leaves_.find(path);
    const bool present = leaf != leaves_.end();
    if (f.presence == Presence::WithFeature) {
      // A flag that is missing or malformed has its own error; judging its fields by it would
      // only add noise.
      const std::string flag = fmt::format("features.{}", f.feature);
      if (!leaves_.count(flag) || failed_.count(flag)) return;
      const bool on = feature_enabled(gpu, f.feature);
      if (on && !present) {
        missing(f, path, fmt::format(" (required because features.{} is true)", f.feature));
        return;
      }
      // A feature switched off by an override drops the file's values of its fields; a value
      // given for them by an override, or in the file with the flag off there, is an error.
      const bool switched_off = overrides_.count(flag) != 0;
      if (!on && present && switched_off && leaf->second.origin.override_text.empty()) return;
      if (!on && present) {
        diag_.error(leaf->second.origin, path,
                    fmt::format("only allowed when features.{} is true (it is false); remove "
                                "it or set the flag",
                                f.feature));
        return;
      }
      if (!on) return;
    }
    if (!present) {
      if (f.presence != Presence::Optional) missing(f, path, "");
      return;
    }
    origins_[path] = leaf->second.origin;
    std::visit(
        [&](auto accessor) {
          using T = std::remove_reference_t<decltype(accessor(gpu, t))>;
          auto parsed = parse_node<T>(f, leaf->second.node);
          if (parsed.value) {
            accessor(gpu, t) = std::move(*parsed.value);
          } else {
            diag_.error(leaf->second.origin, path, parsed.error);
            failed_.insert(path);
          }
        },
        f.ref);
  }

  void read_fields(GpuSpec& gpu) {
    std::vector<DType> dtypes;
    for (const auto& [path, origin] : sections_)
      if (path.starts_with("tensor.")) dtypes.push_back(*parse_tensor_dtype(path.substr(7)));
    for (const DType t : dtypes) gpu.tensor[t];  // present even if all its fields are missing
    // Flags first: whether a feature-gated field is required depends on them.
    const auto is_flag = [](const FieldSpec& f) { return f.path.starts_with("features."); };
    for (const bool flags : {true, false})
      for (const auto& f : gpu_schema()) {
        if (is_flag(f) != flags) continue;
        if (!f.per_tensor_dtype()) {
          read_field(f, gpu, DType::F32);
          continue;
        }
        for (const DType t : dtypes) read_field(f, gpu, t);
      }
  }

  // l2.sm_shares are per SM, clocks.gpc_deviation per GPC. A what-if that changes sm_count
  // (--set sm_count=200) or gpcs and not the list leaves the file's entries without their SMs
  // or GPCs: the list is dropped (equal shares, one clock) and a warning says so. A file or
  // override that gives a wrong count itself is an error (rules).
  void fit_per_unit_lists(GpuSpec& gpu) {
    fit_to_count(gpu.l2.sm_shares, std::size_t(gpu.sm_count), "sm_count", "l2.sm_shares",
                 "every SM gets an equal share (give l2.sm_shares one per SM to set them)");
    fit_to_count(gpu.clocks.gpc_deviation, std::size_t(std::max(1, gpu.gpcs)), "gpcs",
                 "clocks.gpc_deviation",
                 "every SM runs at the one clock (give clocks.gpc_deviation one per GPC to set "
                 "them)");
  }
  void fit_to_count(std::vector<double>& list, std::size_t count, const std::string& count_path,
                    const std::string& path, const std::string& instead) {
    const auto n = list.size();
    if (n == 0 || n == count || !overrides_.contains(count_path) || overrides_.contains(path))
      return;
    const auto it = origins_.find(count_path);
    diag_.warning(it == origins_.end() ? Origin{} : it->second, path,
                  fmt::format("warning: the file's {} entries of {} do not fit {} {}; {}", n, path,
                              count_path, count, instead));
    list.clear();
  }

  void check_rules(const GpuSpec& gpu) {
    for (const auto& rule : consistency_rules()) {
      std::vector<DType> dtypes{DType::F32};
      if (rule.key.starts_with("tensor.*.")) {
        dtypes.clear();
        for (const auto& [t, spec] : gpu.tensor) dtypes.push_back(t);
      }
      for (const DType t : dtypes) {
        const auto message = rule.check(gpu, t);
        if (!message) continue;
        const std::string path =
            rule.key.starts_with("tensor.*.")
                ? fmt::format("tensor.{}.{}", dtype_name(t), rule.key.substr(9))
                : std::string(rule.key);
        const auto it = origins_.find(path);
        const Origin at = it == origins_.end() ? Origin{} : it->second;
        if (rule.severity == Severity::Error)
          diag_.error(at, path, *message);
        else
          diag_.warning(at, path, "warning: " + *message);
      }
    }
  }

  Diagnostics diag_;
  YAML::Node root_;
  std::map<std::string, std::string> overrides_;  // field path -> the override's text
  std::map<std::string, Origin> sections_;        // section path -> line of its key
  std::set<std::string> reported_sections_;
  std::map<std::string, Leaf> leaves_;     // field path -> its node
  std::map<std::string, Origin> origins_;  // field path -> where its value came from
  std::set<std::string> failed_;           // field paths whose value did not parse
};

std::vector<fs::path> config_dirs() {
  return {fs::path(GEMMSIM_SOURCE_CONFIG_DIR) / "hw", fs::path(GEMMSIM_INSTALL_CONFIG_DIR) / "hw"};
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw HwError(fmt::format("{}: cannot read the file", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::vector<std::string> known_gpus() {
  std::set<std::string> names;
  for (const auto& dir : config_dirs()) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.is_regular_file() && entry.path().extension() == ".yaml")
        names.insert(entry.path().stem().string());
  }
  return {names.begin(), names.end()};
}

fs::path resolve_gpu_path(std::string_view name_or_path) {
  const fs::path given{std::string(name_or_path)};
  const bool bare = !name_or_path.empty() && !given.has_parent_path();
  if (bare) {
    const auto ext = given.extension();
    const std::string stem =
        (ext == ".yaml" || ext == ".yml") ? given.stem().string() : given.string();
    for (const auto& dir : config_dirs())
      if (fs::is_regular_file(dir / (stem + ".yaml"))) return dir / (stem + ".yaml");
  }
  if (!name_or_path.empty() && fs::is_regular_file(given)) return given;
  std::string known;
  for (const auto& n : known_gpus()) known += (known.empty() ? "" : ", ") + n;
  const auto dirs = config_dirs();
  throw HwError(fmt::format(
      "unknown GPU '{}': not a file, and not a name in {} or {}; known GPUs: {}", name_or_path,
      dirs[0].string(), dirs[1].string(), known.empty() ? "(none found)" : known));
}

GpuSpec load_gpu(std::string_view name_or_path, const std::vector<std::string>& overrides) {
  const fs::path path = resolve_gpu_path(name_or_path);
  const std::string file = path.string();
  const std::string text = read_text(path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    const int line = e.mark.line + 1;
    const std::string key = key_path_at_line(text, line);
    throw HwError(fmt::format("{}:{}: {}: YAML syntax error at column {}: {}", file, line,
                              key.empty() ? "(top level)" : key, e.mark.column + 1, e.msg));
  }
  GpuSpec gpu = Loader(file, root, overrides).load();
  gpu.key = path.stem().string();
  gpu.source_file = file;
  return gpu;
}

}  // namespace gemmsim
