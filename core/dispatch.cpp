#include "core/dispatch.h"

#include <atomic>
#include <iostream>
#include <mutex>

namespace wick {

namespace {

// In the order of OpKey.
// clang-format off
constexpr const char* kOpNames[] = {
    "neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu", "gelu",
    "gelu_tanh", "silu", "leaky_relu", "clamp", "pow_scalar", "logical_not",
    "add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
    "logical_and", "logical_or",
    "relu_backward", "gelu_backward", "gelu_tanh_backward", "silu_backward", "sigmoid_backward",
    "tanh_backward",
    "where",
    "sum", "max_dim", "min_dim",
    "copy", "fill", "arange", "uniform", "normal",
    "bmm",
    "index_select", "gather", "scatter_add",
    "softmax", "log_softmax",
    "conv2d", "conv2d_backward", "max_pool2d", "max_pool2d_backward", "avg_pool2d",
    "avg_pool2d_backward", "adaptive_avg_pool2d", "adaptive_avg_pool2d_backward", "batch_norm",
    "batch_norm_backward",
    "adam_step", "sgd_step",
};
// clang-format on
static_assert(sizeof(kOpNames) / sizeof(kOpNames[0]) == kNumOps, "kOpNames must follow OpKey");

std::atomic<FallbackMode> g_fallback_mode{FallbackMode::Warn};
std::atomic<int64_t> g_fallback_counts[kNumOps];

}  // namespace

const char* op_name(OpKey op) { return kOpNames[static_cast<int>(op)]; }

KernelRegistry& kernel_registry() {
  static KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();  // never destroyed: kernels may run during static teardown
    register_cpu_kernels(*r);
    register_cuda_kernels(*r);
    return r;
  }();
  return *registry;
}

std::vector<std::string> missing_kernels(DeviceType device) {
  std::vector<std::string> missing;
  for (int i = 0; i < kNumOps; ++i) {
    if (!kernel_registry().has(static_cast<OpKey>(i), device)) missing.push_back(kOpNames[i]);
  }
  return missing;
}

void set_fallback_mode(FallbackMode mode) { g_fallback_mode = mode; }
FallbackMode fallback_mode() { return g_fallback_mode; }

std::vector<std::pair<std::string, int64_t>> fallback_counts() {
  std::vector<std::pair<std::string, int64_t>> counts;
  for (int i = 0; i < kNumOps; ++i) {
    if (int64_t n = g_fallback_counts[i].load()) counts.emplace_back(kOpNames[i], n);
  }
  return counts;
}

void reset_fallback_counts() {
  for (auto& c : g_fallback_counts) c = 0;
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
