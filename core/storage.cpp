#include "core/storage.h"

#include <stdexcept>

namespace wick {

Storage::Storage(size_t nbytes, Allocator* allocator)
    : data_(allocator->allocate(nbytes)),
      nbytes_(nbytes),
      device_(allocator->device()),
      allocator_(allocator) {}

Storage::Storage(void* data, size_t nbytes, Device device, std::function<void()> release)
    : data_(data), nbytes_(nbytes), device_(device), release_(std::move(release)) {}

Storage::~Storage() {
  if (allocator_ != nullptr) {
    if (freed_) return;
    allocator_->deallocate(data_, nbytes_);
  } else if (release_) {
    release_();
  }
}

void Storage::free_memory() {
  if (allocator_ == nullptr) {
    throw std::runtime_error(
        "free_memory: this storage borrows its bytes (from NumPy or DLPack); only storages "
        "that own their bytes can be freed");
  }
  if (freed_) return;
  allocator_->deallocate(data_, nbytes_);
  data_ = nullptr;
  freed_ = true;
}

void Storage::allocate_memory() {
  if (!freed_) return;
  data_ = allocator_->allocate(nbytes_);
  freed_ = false;
}

void Storage::throw_freed() {
  throw std::runtime_error(
      "this tensor's storage was freed (Note [freed storage]: FullyShardedDataParallel frees a "
      "unit's whole parameters outside its forward and backward); gather it again before use");
}

}  // namespace wick
