#include "core/autocast.h"

#include <unordered_map>

#include "core/grad_mode.h"
#include "core/ops.h"

namespace wick {

namespace {

// Per thread, like PyTorch: a data-loader worker never inherits the training thread's autocast.
struct State {
  bool enabled[kNumDeviceTypes] = {false, false, false};
  DType dtype[kNumDeviceTypes] = {kBFloat16, kFloat16, kBFloat16};
  int depth = 0;  // enabled guards alive; the cast cache lives while it is positive
  struct Key {
    const TensorImpl* impl;
    DType dtype;
    bool operator==(const Key& o) const { return impl == o.impl && dtype == o.dtype; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<const void*>()(k.impl) ^ (static_cast<size_t>(k.dtype) << 1);
    }
  };
  std::unordered_map<Key, Tensor, KeyHash> cache;
  bool recording = false;
  std::vector<std::pair<std::string, DType>> records;
};

State& state() {
  thread_local State s;
  return s;
}

int index(DeviceType device) { return static_cast<int>(device); }

}  // namespace

AutocastGuard::AutocastGuard(DeviceType device, DType dtype, bool enabled) : device_(device) {
  check_type(dtype == kFloat16 || dtype == kBFloat16, "autocast",
             "the lower-precision dtype must be float16 or bfloat16; got ", dtype);
  State& s = state();
  previous_enabled_ = s.enabled[index(device)];
  previous_dtype_ = s.dtype[index(device)];
  s.enabled[index(device)] = enabled;
  s.dtype[index(device)] = dtype;
  if (enabled) ++s.depth;
}

AutocastGuard::AutocastGuard(DeviceType device, bool enabled)
    : AutocastGuard(device, autocast::default_lower_dtype(device), enabled) {}

AutocastGuard::~AutocastGuard() {
  State& s = state();
  if (s.enabled[index(device_)] && --s.depth == 0) s.cache.clear();
  s.enabled[index(device_)] = previous_enabled_;
  s.dtype[index(device_)] = previous_dtype_;
}

const char* autocast_policy_name(AutocastPolicy policy) {
  switch (policy) {
    case AutocastPolicy::LowerPrecision:
      return "lower_precision";
    case AutocastPolicy::Float32:
      return "float32";
    case AutocastPolicy::Keep:
      break;
  }
  return "keep";
}

namespace autocast {

bool is_enabled(DeviceType device) { return state().enabled[index(device)]; }
DType lower_dtype(DeviceType device) { return state().dtype[index(device)]; }
DType default_lower_dtype(DeviceType device) { return device == kCPU ? kBFloat16 : kFloat16; }

Tensor cast(AutocastPolicy policy, const Tensor& t) {
  if (!t.defined() || policy == AutocastPolicy::Keep) return t;
  State& s = state();
  DeviceType device = t.device().type;
  if (!s.enabled[index(device)] || !t.is_floating_point() || t.dtype() == kFloat64) return t;
  DType target = policy == AutocastPolicy::LowerPrecision ? s.dtype[index(device)] : kFloat32;
  if (t.dtype() == target) return t;
  // Leaves that require grad are parameters: cast each once per scope (Note [autocast]).
  bool cacheable = t.is_leaf() && t.requires_grad() && GradMode::is_enabled();
  if (!cacheable) return t.to(target);
  State::Key key{t.impl(), target};
  auto it = s.cache.find(key);
  if (it != s.cache.end()) return it->second;
  Tensor cast = t.to(target);
  s.cache.emplace(key, cast);
  return cast;
}

void set_recording(bool on) { state().recording = on; }
bool is_recording() { return state().recording; }
std::vector<std::pair<std::string, DType>> recorded() { return state().records; }
void clear_recorded() { state().records.clear(); }

void record(const char* op, DType dtype) {
  State& s = state();
  if (s.recording && s.depth > 0) s.records.emplace_back(op, dtype);
}

}  // namespace autocast

}  // namespace wick
