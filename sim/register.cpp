// The sim device's backend description (sim/sim.h).
//
// Note [the sim device]
// A backend port starts with few kernels: PyTorch's PrivateUse1 and TensorFlow's pluggable
// devices both let an accelerator register a handful and leave the rest to a CPU fallback,
// which copies the inputs to the host, runs the CPU kernel and copies the results back. The
// seeds' example is tf.where without a GPU kernel: 10 ms becomes 200 ms, all of it copies. sim
// reproduces that shape on a machine without an accelerator:
// - memory: a SimulatedDevice (host-backed) under the caching allocator, the policy the CUDA
//   backend uses, so memory statistics and fragmentation behave as on a GPU;
// - kernels: the CPU kernels of the elementwise, reduction, indexing, random, copy, GEMM and
//   optimizer ops (the device's memory is host memory, so they run in place); no kernel for
//   where, softmax, convolution, pooling, batch norm or scatter_add, which fall back;
// - copies: a fallback's copies are real copies between two allocators, timed per op
//   (fallback_stats() in core/dispatch.h), as a PCIe round trip would be.
// benchmarks/bench_fallback.py measures an op with and without its sim kernel.
#include "sim/sim.h"

#include <cstring>
#include <memory>

#include "core/backend.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "core/memory/alloc_stats.h"
#include "core/memory/caching_allocator.h"
#include "core/memory/device_allocator.h"
#include "core/memory/simulated_device.h"
#include "core/op_table.h"

namespace wick::sim {
namespace {

constexpr size_t kCapacity = size_t{16} << 30;  // host-backed: only what is allocated is used

memory::DeviceAllocator& sim_allocator() {
  static memory::SimulatedDevice device(kCapacity, memory::SimulatedDevice::Backing::Host,
                                        Device(kPrivateUse1));
  static memory::DeviceAllocator allocator(&device,
                                           std::make_unique<memory::CachingAllocator>(&device));
  return allocator;
}

bool has_sim_kernel(const OpInfo& op) {
  static const char* const families[] = {"unary",           "binary",         "ReduceKernel",
                                         "ArgReduceKernel", "CopyKernel",     "FillKernel",
                                         "ArangeKernel",    "RandomKernel",   "BmmKernel",
                                         "IndexKernel",     "AdamStepKernel", "SgdStepKernel"};
  for (const char* f : families)
    if (std::strcmp(op.family, f) == 0) return true;
  return false;
}

void register_kernels(KernelRegistry& registry) {
  for (const OpInfo& op : op_table())
    if (has_sim_kernel(op)) registry.add_cpu_kernel_for(op.key, kPrivateUse1);
}

Backend sim_backend() {
  Backend b;
  b.type = kPrivateUse1;
  b.name = "sim";
  b.register_kernels = register_kernels;
  b.allocator = []() -> Allocator* { return &sim_allocator(); };
  b.device_count = [] { return 1; };
  b.synchronize = [](int) {};  // kernels run synchronously on the host
  return b;
}

[[maybe_unused]] const bool registered = register_backend(sim_backend());

}  // namespace

void register_sim_backend() { register_backend(sim_backend()); }

std::vector<std::string> ops_with_kernels() {
  std::vector<std::string> names;
  for (const OpInfo& op : op_table())
    if (has_sim_kernel(op)) names.push_back(op.name);
  return names;
}

void set_kernel(const std::string& op, bool enabled) {
  const OpInfo* info = find_op(op);
  check_value(info != nullptr, "sim.set_kernel", "no op named '", op, "' in the op table");
  if (enabled)
    kernel_registry().add_cpu_kernel_for(info->key, kPrivateUse1);
  else
    kernel_registry().remove(info->key, kPrivateUse1);
}

std::map<std::string, int64_t> memory_stats() {
  return memory::stats_to_map(sim_allocator().policy().stats());
}

}  // namespace wick::sim
