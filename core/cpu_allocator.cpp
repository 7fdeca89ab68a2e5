#include <atomic>
#include <cstdlib>
#include <new>

#include "core/allocator.h"
#include "core/dispatch.h"
#include "core/error.h"

namespace wick {

namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kSmall = 4096;

class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    // Small blocks come from plain malloc (16-byte aligned, and much cheaper than an aligned
    // allocation); large ones are aligned to a cache line so vector loops start on a boundary.
    void* ptr =
        nbytes < kSmall
            ? std::malloc(nbytes)
            : std::aligned_alloc(kAlignment, (nbytes + kAlignment - 1) / kAlignment * kAlignment);
    if (ptr == nullptr) {
      throw OutOfMemoryError(error_message("cpu allocator", "out of memory: tried to allocate ",
                                           nbytes, " bytes with ", allocated_.load(),
                                           " bytes already allocated"));
    }
    int64_t now = allocated_.fetch_add(static_cast<int64_t>(nbytes)) + nbytes;
    int64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
    allocs_.fetch_add(1, std::memory_order_relaxed);
    return ptr;
  }

  void deallocate(void* ptr, size_t nbytes) override {
    if (ptr == nullptr) return;
    std::free(ptr);
    allocated_.fetch_sub(static_cast<int64_t>(nbytes));
    frees_.fetch_add(1, std::memory_order_relaxed);
  }

  Device device() const override { return Device(kCPU); }
  const char* name() const override { return "cpu"; }

  AllocatorStats stats() const override {
    return {allocated_.load(), peak_.load(), allocs_.load(), frees_.load()};
  }
  void reset_peak() override { peak_.store(allocated_.load()); }

 private:
  // Data-loader workers allocate batches on their own threads, hence atomics.
  std::atomic<int64_t> allocated_{0}, peak_{0}, allocs_{0}, frees_{0};
};

Allocator* g_allocators[kNumDeviceTypes] = {nullptr, nullptr};

}  // namespace

Allocator* cpu_allocator() {
  static CpuAllocator allocator;
  return &allocator;
}

Allocator* get_allocator(DeviceType type) {
  Allocator* a = g_allocators[static_cast<int>(type)];
  if (a != nullptr) return a;
  if (type != kCPU) {
    // Device backends install their allocators when they register their kernels, which happens
    // on the registry's first use; a device tensor may be the first thing a program makes.
    kernel_registry();
    if ((a = g_allocators[static_cast<int>(type)]) != nullptr) return a;
  }
  check_state(type == kCPU, "allocator", "no allocator is registered for ", device_type_name(type),
              " (was wick built with CUDA, and is a device present?)");
  return cpu_allocator();
}

Allocator* set_allocator(DeviceType type, Allocator* allocator) {
  Allocator*& slot = g_allocators[static_cast<int>(type)];
  Allocator* previous = slot;
  slot = allocator;
  return previous;
}

}  // namespace wick
