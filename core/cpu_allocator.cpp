#include <atomic>
#include <cstdlib>
#include <new>

#include "core/allocator.h"
#include "core/backend.h"
#include "core/error.h"
#include "core/memory/host_cache.h"

namespace wick {

namespace {

constexpr size_t kSmall = 4096;

class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    // Small blocks come from plain malloc (16-byte aligned, and much cheaper than an aligned
    // allocation); larger ones are aligned to a cache line so vector loops start on a boundary,
    // and from kHostCacheMin up they are kept for reuse (Note [host block cache]).
    void* ptr = nbytes < kSmall ? std::malloc(nbytes) : memory::host_try_acquire(nbytes);
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
    memory::host_release(ptr, nbytes);  // small blocks: std::free
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

std::atomic<Allocator*> g_allocators[kNumDeviceTypes] = {};

}  // namespace

Allocator* cpu_allocator() {
  static CpuAllocator allocator;
  return &allocator;
}

Allocator* get_allocator(DeviceType type) {
  Allocator* a = g_allocators[static_cast<int>(type)];
  if (a != nullptr) return a;
  if (type == kCPU) return cpu_allocator();
  // A backend's allocator is installed on its first tensor (core/backend.h).
  const Backend* backend = find_backend(type);
  check_state(backend != nullptr, "allocator", "no backend is registered for ",
              device_type_name(type),
              type == kCUDA ? " (wick was built without CUDA: rebuild with -DWICK_CUDA=ON)" : "");
  a = backend->allocator();
  Allocator* expected = nullptr;
  // Two threads may race to the first tensor; both get the one that was installed first.
  if (!g_allocators[static_cast<int>(type)].compare_exchange_strong(expected, a)) a = expected;
  return a;
}

Allocator* set_allocator(DeviceType type, Allocator* allocator) {
  return g_allocators[static_cast<int>(type)].exchange(allocator);
}

}  // namespace wick
