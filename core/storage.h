// Storage: a block of bytes on one device, shared by every tensor that views it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "core/allocator.h"
#include "core/device.h"

namespace wick {

class Storage {
 public:
  // Owns `nbytes` from `allocator`.
  Storage(size_t nbytes, Allocator* allocator);
  // Borrows memory owned elsewhere (a NumPy array, a DLPack tensor); `release` runs when the last
  // tensor viewing it goes away.
  Storage(void* data, size_t nbytes, Device device, std::function<void()> release);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // Throws std::runtime_error if free_memory() released the bytes (Note [freed storage]).
  void* data() const {
    if (__builtin_expect(freed_, 0)) throw_freed();
    return data_;
  }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  Allocator* allocator() const { return allocator_; }

  // Note [version counter]
  // Every in-place write bumps the version of the storage it writes to. Views and detached
  // tensors share storage, so they share the counter too. Autograd remembers the version of each
  // tensor it saves and refuses to use one whose version moved: an in-place change after saving
  // would otherwise silently give a wrong gradient.
  uint64_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

  // Note [freed storage]
  // Fully sharded data parallel (distributed/fsdp in Python) keeps a unit's whole parameters only
  // while the unit runs: it frees them after the forward and gathers them again before the
  // backward. Autograd has saved views of them in between, so the bytes must go while the Storage
  // object - which every view and saved tensor points at - stays; allocate_memory() then gives
  // the same object new bytes, and the saved views see what is gathered into them. This is
  // PyTorch's `untyped_storage().resize_(0)` / `resize_(n)`. Reading a freed storage throws
  // instead of touching freed memory. Only storages that own their bytes can be freed.
  void free_memory();
  void allocate_memory();
  bool memory_freed() const { return freed_; }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  Allocator* allocator_ = nullptr;  // null for borrowed memory
  std::function<void()> release_;
  std::atomic<uint64_t> version_{0};
  bool freed_ = false;

  [[noreturn]] static void throw_freed();
};

}  // namespace wick
