#include "core/memory/host_cache.h"

#include <pthread.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/memory/caching_allocator.h"

namespace wick::memory {

namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kClassesPerPowerOfTwo = 4;

size_t default_limit() {
  const char* mb = std::getenv("WICK_HOST_CACHE_MB");
  if (mb == nullptr || *mb == '\0') return size_t{1024} << 20;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(mb, &end, 10);
  check_value(*end == '\0' && mb[0] != '-', "WICK_HOST_CACHE_MB",
              "must be a whole number of MiB; got '", mb, "'");
  return static_cast<size_t>(value) << 20;
}

void* system_alloc(size_t nbytes) {
  return std::aligned_alloc(kAlignment, (nbytes + kAlignment - 1) / kAlignment * kAlignment);
}

class HostCache {
 public:
  HostCache() : limit_(default_limit()) {
    // A data-loader worker forked while another thread holds the lock would inherit it locked.
    pthread_atfork([] { instance().mutex_.lock(); }, [] { instance().mutex_.unlock(); },
                   [] { instance().mutex_.unlock(); });
  }

  static HostCache& instance() {
    static HostCache* cache = new HostCache();  // never destroyed: tensors outlive statics
    return *cache;
  }

  void* acquire(size_t size) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = free_.find(size);
      if (it != free_.end() && !it->second.empty()) {
        void* ptr = it->second.back();
        it->second.pop_back();
        cached_ -= size;
        ++hits_;
        return ptr;
      }
      ++misses_;
    }
    return system_alloc(size);
  }

  void release(void* ptr, size_t size) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cached_ + size <= limit_) {
        free_[size].push_back(ptr);
        cached_ += size;
        return;
      }
      ++given_back_;
    }
    std::free(ptr);
  }

  HostCacheStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return {static_cast<int64_t>(cached_), static_cast<int64_t>(limit_), hits_, misses_,
            given_back_};
  }

  void set_limit(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    limit_ = bytes;
    trim_to(limit_);
  }

  void empty() {
    std::lock_guard<std::mutex> lock(mutex_);
    trim_to(0);
  }

 private:
  // Frees cached blocks, largest classes first (they hold the most memory per block), until at
  // most `target` bytes stay. Called with the lock held; free() takes no lock of ours.
  void trim_to(size_t target) {
    for (auto it = free_.rbegin(); cached_ > target && it != free_.rend(); ++it) {
      while (cached_ > target && !it->second.empty()) {
        std::free(it->second.back());
        it->second.pop_back();
        cached_ -= it->first;
      }
    }
  }

  std::mutex mutex_;
  std::map<size_t, std::vector<void*>> free_;  // size class -> blocks, last in first out
  size_t cached_ = 0, limit_;
  int64_t hits_ = 0, misses_ = 0, given_back_ = 0;
};

}  // namespace

size_t host_block_size(size_t nbytes) {
  // Beyond kMaxRequest (refused by host_try_acquire) the rounding could overflow.
  if (nbytes < kHostCacheMin || nbytes > kMaxRequest) return nbytes;
  return CachingAllocator::roundup_power2_next_division(nbytes, kClassesPerPowerOfTwo);
}

void* host_try_acquire(size_t nbytes) {
  if (nbytes > kMaxRequest) return nullptr;  // refused at once, as the caching allocator does
  if (nbytes < kHostCacheMin) return system_alloc(nbytes);
  return HostCache::instance().acquire(host_block_size(nbytes));
}

void* host_acquire(size_t nbytes) {
  void* ptr = host_try_acquire(nbytes);
  if (ptr == nullptr) {
    throw OutOfMemoryError(
        error_message("host allocator", "out of memory: tried to allocate ", nbytes, " bytes"));
  }
  return ptr;
}

void host_release(void* ptr, size_t nbytes) {
  if (ptr == nullptr) return;
  if (nbytes < kHostCacheMin) {
    std::free(ptr);
    return;
  }
  HostCache::instance().release(ptr, host_block_size(nbytes));
}

HostCacheStats host_cache_stats() { return HostCache::instance().stats(); }
void empty_host_cache() { HostCache::instance().empty(); }
void set_host_cache_limit(size_t bytes) { HostCache::instance().set_limit(bytes); }

}  // namespace wick::memory
