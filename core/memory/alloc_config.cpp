#include "core/memory/alloc_config.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/error.h"

namespace wick::memory {

namespace {

constexpr const char* kOp = "WICK_ALLOC_CONF";

bool is_power_of_two(size_t v) { return v != 0 && (v & (v - 1)) == 0; }

int log2_floor(size_t v) { return 63 - __builtin_clzll(v); }

size_t parse_size(const std::string& option, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  // strtoull accepts "-5" (as 2**64 - 5) and saturates on overflow, setting ERANGE: refuse both.
  check_value(!text.empty() && *end == '\0' && text[0] != '-' && text[0] != '+' && errno == 0, kOp,
              "option ", option, " expects a non-negative integer that fits 64 bits; got '", text,
              "'");
  return static_cast<size_t>(v);
}

// A size in MiB as bytes; one that overflows size_t is a mistake, not "no limit".
size_t mib_to_bytes(const std::string& option, size_t mib) {
  check_value(mib <= SIZE_MAX / kMiB, kOp, "option ", option, " of ", mib,
              " MiB overflows when converted to bytes (at most ", SIZE_MAX / kMiB, ")");
  return mib * kMiB;
}

double parse_double(const std::string& option, const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  check_value(!text.empty() && *end == '\0', kOp, "option ", option, " expects a number; got '",
              text, "'");
  return v;
}

// Splits "a:1,b:[x:1,y:2],c:3" at the commas outside brackets.
std::vector<std::string> split_options(const std::string& text) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  for (char c : text) {
    if (c == ' ') continue;
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) parts.push_back(current);
  return parts;
}

// "[64:8,256:4,>:1]": each key is a power-of-two size in MiB naming the interval that starts
// there. As in PyTorch, the first key's value also covers every interval below it, and '>'
// covers the intervals after the last key.
void parse_divisions(const std::string& value, AllocatorConfig& config) {
  auto& table = config.roundup_power2_divisions;
  if (value.empty() || value.front() != '[') {
    size_t divisions = parse_size("roundup_power2_divisions", value);
    check_value(divisions == 0 || is_power_of_two(divisions), kOp,
                "roundup_power2_divisions must be a power of two; got ", divisions);
    table.fill(divisions);
    return;
  }
  check_value(value.back() == ']', kOp, "unbalanced brackets in roundup_power2_divisions: ", value);
  std::string inner = value.substr(1, value.size() - 2);
  bool first = true;
  int last_index = 0;
  size_t start = 0;
  while (start <= inner.size()) {
    size_t comma = inner.find(',', start);
    std::string item = inner.substr(start, comma == std::string::npos ? comma : comma - start);
    start = comma == std::string::npos ? inner.size() + 1 : comma + 1;
    size_t colon = item.find(':');
    check_value(colon != std::string::npos, kOp, "expected interval:divisions in ", value,
                "; got '", item, "'");
    std::string key = item.substr(0, colon);
    size_t divisions = parse_size("roundup_power2_divisions", item.substr(colon + 1));
    check_value(is_power_of_two(divisions), kOp,
                "roundup_power2_divisions must be powers of two; got ", divisions);
    if (key == ">") {
      for (int i = first ? 0 : last_index + 1; i < kRoundupIntervals; ++i) table[i] = divisions;
      continue;
    }
    size_t mib = parse_size("roundup_power2_divisions", key);
    check_value(is_power_of_two(mib), kOp,
                "roundup_power2_divisions intervals must be powers "
                "of two (in MiB); got ",
                mib);
    int index = std::min(log2_floor(mib), kRoundupIntervals - 1);
    if (first) {
      for (int i = 0; i < index; ++i) table[i] = divisions;
    }
    table[index] = divisions;
    last_index = index;
    first = false;
  }
}

}  // namespace

AllocatorConfig AllocatorConfig::parse(const std::string& text) {
  AllocatorConfig config;
  for (const std::string& option : split_options(text)) {
    size_t colon = option.find(':');
    check_value(colon != std::string::npos, kOp, "expected option:value; got '", option, "'");
    std::string key = option.substr(0, colon), value = option.substr(colon + 1);
    if (key == "max_split_size_mb") {
      size_t mib = parse_size(key, value);
      // PyTorch's floor: a block smaller than a large segment (20 MiB) must stay splittable.
      check_value(mib >= 20, kOp, "max_split_size_mb must be at least 20; got ", mib);
      config.max_split_size = mib_to_bytes(key, mib);
    } else if (key == "max_non_split_rounding_mb") {
      config.max_non_split_rounding_size = mib_to_bytes(key, parse_size(key, value));
    } else if (key == "garbage_collection_threshold") {
      double t = parse_double(key, value);
      check_value(t > 0.0 && t < 1.0, kOp,
                  "garbage_collection_threshold must be between 0 and 1 (exclusive); got ", t);
      config.garbage_collection_threshold = t;
    } else if (key == "roundup_power2_divisions") {
      parse_divisions(value, config);
    } else if (key == "policy") {
      check_policy_name(value, kOp);
      config.policy = value;
    } else {
      throw_value_error(kOp, "unknown option '", key,
                        "' (known: max_split_size_mb, max_non_split_rounding_mb, "
                        "roundup_power2_divisions, garbage_collection_threshold, policy)");
    }
  }
  return config;
}

void check_policy_name(const std::string& name, const char* op) {
  check_value(name == "caching" || name == "no_caching" || name == "bfc" || name == "bfc_growth",
              op, "policy must be caching, no_caching, bfc or bfc_growth; got '", name, "'");
}

AllocatorConfig AllocatorConfig::from_env() {
  const char* text = std::getenv("WICK_ALLOC_CONF");
  return text == nullptr ? AllocatorConfig() : parse(text);
}

size_t AllocatorConfig::divisions_for(size_t size) const {
  // Interval 0 is [1, 2) MiB (and everything below); interval 15 is [32, 64) GiB and above.
  int index = size == 0 ? 0 : log2_floor(size) - 20;
  index = std::max(0, std::min(index, kRoundupIntervals - 1));
  return roundup_power2_divisions[index];
}

}  // namespace wick::memory
