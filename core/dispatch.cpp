#include "core/dispatch.h"

#include <atomic>
#include <iostream>
#include <mutex>

#include "core/backend.h"
#include "core/op_table.h"

namespace wick {

namespace {

std::atomic<FallbackMode> g_fallback_mode{FallbackMode::Warn};
std::atomic<int64_t> g_fallback_counts[kNumOps];
std::atomic<int64_t> g_fallback_copy_ns[kNumOps];
std::atomic<int64_t> g_fallback_kernel_ns[kNumOps];

}  // namespace

void KernelRegistry::check_signature(OpKey op, const std::type_info& signature) {
  const OpInfo& info = op_info(op);
  check_state(*info.kernel == signature, "dispatch", "a kernel for ", info.name,
              " was registered with another signature than the op table's ", info.family);
}

// Note [backend registration]
// The table is built on first use with the CPU column; each registered backend fills its own
// column, whether it registered before that first use (its kernels are added as the table is
// built) or after it (they are added at once). Backends usually register from a static
// initializer while the library loads, and an op may run in another static initializer first,
// so neither order may lose kernels.
namespace {

struct Backends {
  std::mutex mutex;
  Backend slot[kNumDeviceTypes];       // by device type; a slot is empty while its name is ""
  KernelRegistry* registry = nullptr;  // set once the table is built
  bool present(int i) const { return slot[i].register_kernels != nullptr; }
};

Backends& backends() {
  static auto* b = new Backends();  // never destroyed: kernels may run during static teardown
  return *b;
}

}  // namespace

KernelRegistry& kernel_registry() {
  static KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();  // never destroyed, like backends()
    register_cpu_kernels(*r);
    Backends& b = backends();
    std::lock_guard<std::mutex> lock(b.mutex);
    for (int i = 0; i < kNumDeviceTypes; ++i) {
      if (b.present(i)) b.slot[i].register_kernels(*r);
    }
    b.registry = r;
    return r;
  }();
  return *registry;
}

bool register_backend(const Backend& backend) {
  check_value(backend.type != kCPU, "register_backend", "the CPU backend is part of core");
  check_value(backend.register_kernels != nullptr && backend.allocator != nullptr,
              "register_backend", "backend '", backend.name,
              "' needs register_kernels and allocator");
  Backends& b = backends();
  std::lock_guard<std::mutex> lock(b.mutex);
  b.slot[static_cast<int>(backend.type)] = backend;
  if (b.registry != nullptr) {
    b.registry->remove_all(backend.type);  // a replaced backend's kernels go with it
    backend.register_kernels(*b.registry);
  }
  return true;
}

const Backend* find_backend(DeviceType type) {
  Backends& b = backends();
  std::lock_guard<std::mutex> lock(b.mutex);
  int i = static_cast<int>(type);
  return b.present(i) ? &b.slot[i] : nullptr;
}

const Backend* find_backend(const std::string& name) {
  Backends& b = backends();
  std::lock_guard<std::mutex> lock(b.mutex);
  for (int i = 0; i < kNumDeviceTypes; ++i) {
    if (b.present(i) && name == b.slot[i].name) return &b.slot[i];
  }
  return nullptr;
}

BackendDeviceGuard::BackendDeviceGuard(Device device) {
  if (device.type == kCPU || device.index == 0) return;
  const Backend* backend = find_backend(device.type);
  if (backend == nullptr || backend->exchange_device == nullptr) return;
  previous_ = backend->exchange_device(device.index);
  backend_ = backend;
}

BackendDeviceGuard::~BackendDeviceGuard() {
  if (backend_ != nullptr && previous_ >= 0) backend_->exchange_device(previous_);
}

std::vector<Backend> registered_backends() {
  Backends& b = backends();
  std::lock_guard<std::mutex> lock(b.mutex);
  std::vector<Backend> list;
  for (int i = 0; i < kNumDeviceTypes; ++i) {
    if (b.present(i)) list.push_back(b.slot[i]);
  }
  return list;
}

std::vector<std::string> missing_kernels(DeviceType device) {
  std::vector<std::string> missing;
  for (const OpInfo& info : op_table()) {
    if (!kernel_registry().has(info.key, device)) missing.push_back(info.name);
  }
  return missing;
}

void set_fallback_mode(FallbackMode mode) { g_fallback_mode = mode; }
FallbackMode fallback_mode() { return g_fallback_mode; }

std::vector<std::pair<std::string, int64_t>> fallback_counts() {
  std::vector<std::pair<std::string, int64_t>> counts;
  for (int i = 0; i < kNumOps; ++i) {
    if (int64_t n = g_fallback_counts[i].load()) counts.emplace_back(op_name(OpKey(i)), n);
  }
  return counts;
}

void reset_fallback_counts() {
  for (int i = 0; i < kNumOps; ++i)
    g_fallback_counts[i] = g_fallback_copy_ns[i] = g_fallback_kernel_ns[i] = 0;
}

std::vector<FallbackStats> fallback_stats() {
  std::vector<FallbackStats> stats;
  for (int i = 0; i < kNumOps; ++i) {
    if (int64_t n = g_fallback_counts[i].load())
      stats.push_back({op_name(OpKey(i)), n, g_fallback_copy_ns[i].load() * 1e-9,
                       g_fallback_kernel_ns[i].load() * 1e-9});
  }
  return stats;
}

void note_fallback_time(OpKey op, int64_t copy_ns, int64_t kernel_ns) {
  g_fallback_copy_ns[static_cast<int>(op)] += copy_ns;
  g_fallback_kernel_ns[static_cast<int>(op)] += kernel_ns;
}

void note_fallback(OpKey op, Device device) {
  FallbackMode mode = g_fallback_mode;
  check_state(mode != FallbackMode::Error, op_name(op), "no ", device_type_name(device.type),
              " kernel, and the CPU fallback is disabled (FallbackMode::Error)");
  int64_t previous = g_fallback_counts[static_cast<int>(op)].fetch_add(1);
  if (previous == 0 && mode == FallbackMode::Warn) {
    std::cerr << "[wick] warning: " << op_name(op) << " has no " << device_type_name(device.type)
              << " kernel; it runs on the CPU, with copies to and from " << device.str()
              << " (see Note [operator fallback])\n";
  }
}

}  // namespace wick
