// Allocators hand out raw bytes for Storage. Each device type has one current allocator, which
// can be swapped (the CUDA caching allocator registers itself at start-up; labs swap in other
// policies). Every allocator counts what it does, because memory is something students measure.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/device.h"

namespace wick {

struct AllocatorStats {
  int64_t allocated_bytes = 0;       // bytes in live allocations now
  int64_t peak_allocated_bytes = 0;  // the most there ever were (since reset_peak)
  int64_t num_allocs = 0;            // allocate() calls served
  int64_t num_frees = 0;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns memory for `nbytes` (nullptr for 0 bytes) or throws wick::OutOfMemoryError.
  virtual void* allocate(size_t nbytes) = 0;
  virtual void deallocate(void* ptr, size_t nbytes) = 0;
  virtual Device device() const = 0;
  virtual const char* name() const = 0;
  virtual AllocatorStats stats() const = 0;
  virtual void reset_peak() = 0;
};

// The host allocator: malloc, with blocks of 4 KiB and more aligned to 64 bytes (a cache line and
// a full AVX-512 vector), and blocks of 128 KiB and more kept for reuse when freed (Note [host
// block cache] in core/memory/host_cache.h); counted as the bytes asked for.
Allocator* cpu_allocator();

Allocator* get_allocator(DeviceType type);
// Installs `allocator` for `type` and returns the previous one; nullptr restores the default.
Allocator* set_allocator(DeviceType type, Allocator* allocator);

}  // namespace wick
