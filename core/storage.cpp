#include "core/storage.h"

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
    allocator_->deallocate(data_, nbytes_);
  } else if (release_) {
    release_();
  }
}

}  // namespace wick
