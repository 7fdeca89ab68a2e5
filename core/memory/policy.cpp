#include "core/memory/policy.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "core/error.h"
#include "core/memory/bfc_allocator.h"
#include "core/memory/caching_allocator.h"

namespace wick::memory {

struct NoCachingAllocator::State {
  std::mutex mutex;
  std::unordered_map<void*, size_t> sizes;
  DeviceStats stats;
};

NoCachingAllocator::NoCachingAllocator(MemoryBackend* backend)
    : backend_(backend), state_(std::make_unique<State>()) {}

NoCachingAllocator::~NoCachingAllocator() = default;

// Every allocation is its own segment, so the allocation and segment stats move together and
// nothing is ever cached, split or inactive.
void* NoCachingAllocator::malloc(size_t nbytes, StreamId stream) {
  if (nbytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(state_->mutex);
  DeviceStats& s = state_->stats;
  void* ptr = backend_->malloc(nbytes);
  if (ptr == nullptr) {
    ++s.num_ooms;
    note(HistoryEntry::Oom, 0, nbytes, stream);
    throw OutOfMemoryError(error_message(
        backend_->name().c_str(), "out of memory. Tried to allocate ", format_size(nbytes), ". ",
        backend_->name(), " has a total capacity of ", format_size(backend_->total_memory()),
        " of which ", format_size(backend_->free_memory()), " is free (no caching policy)."));
  }
  ++s.num_device_alloc;
  state_->sizes.emplace(ptr, nbytes);
  note(HistoryEntry::SegmentAlloc, reinterpret_cast<uintptr_t>(ptr), nbytes, stream);
  note(HistoryEntry::Alloc, reinterpret_cast<uintptr_t>(ptr), nbytes, stream);
  StatType pool = nbytes <= kSmallSize ? kSmallPool : kLargePool;
  auto grow = [&](StatArray& a, int64_t v) {
    a[kAggregate].increase(v);
    a[pool].increase(v);
  };
  int64_t n = static_cast<int64_t>(nbytes);
  grow(s.allocation, 1), grow(s.segment, 1), grow(s.active, 1);
  grow(s.allocated_bytes, n), grow(s.reserved_bytes, n), grow(s.active_bytes, n);
  grow(s.requested_bytes, n);
  return ptr;
}

void NoCachingAllocator::free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(state_->mutex);
  auto it = state_->sizes.find(ptr);
  check_state(it != state_->sizes.end(), backend_->name().c_str(),
              "no_caching allocator: free of a pointer it did not allocate: ", ptr);
  size_t nbytes = it->second;
  state_->sizes.erase(it);
  note(HistoryEntry::Free, reinterpret_cast<uintptr_t>(ptr), nbytes, kDefaultStream);
  note(HistoryEntry::SegmentFree, reinterpret_cast<uintptr_t>(ptr), nbytes, kDefaultStream);
  // cudaFree waits for the device, so no stream can still be using the memory afterwards.
  backend_->free(ptr, nbytes);
  DeviceStats& s = state_->stats;
  ++s.num_device_free;
  StatType pool = nbytes <= kSmallSize ? kSmallPool : kLargePool;
  auto shrink = [&](StatArray& a, int64_t v) {
    a[kAggregate].decrease(v);
    a[pool].decrease(v);
  };
  int64_t n = static_cast<int64_t>(nbytes);
  shrink(s.allocation, 1), shrink(s.segment, 1), shrink(s.active, 1);
  shrink(s.allocated_bytes, n), shrink(s.reserved_bytes, n), shrink(s.active_bytes, n);
  shrink(s.requested_bytes, n);
}

// Each allocation is a segment of one block.
std::vector<SegmentInfo> NoCachingAllocator::snapshot() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  std::vector<SegmentInfo> out;
  for (const auto& [ptr, nbytes] : state_->sizes) {
    uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
    out.push_back({address,
                   nbytes,
                   kDefaultStream,
                   nbytes <= kSmallSize,
                   {{address, nbytes, nbytes, true, false}}});
  }
  std::sort(out.begin(), out.end(),
            [](const SegmentInfo& a, const SegmentInfo& b) { return a.address < b.address; });
  return out;
}

DeviceStats NoCachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->stats;
}

void NoCachingAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->stats.reset_peak();
}

void NoCachingAllocator::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->stats.reset_accumulated();
}

std::unique_ptr<AllocatorPolicy> make_policy(const std::string& name, MemoryBackend* backend,
                                             const AllocatorConfig& config) {
  if (name == "caching") return std::make_unique<CachingAllocator>(backend, config);
  if (name == "no_caching") return std::make_unique<NoCachingAllocator>(backend);
  if (name == "bfc" || name == "bfc_growth") {
    BfcOptions options;
    options.allow_growth = name == "bfc_growth";
    return std::make_unique<BfcAllocator>(backend, options);
  }
  throw_value_error("make_policy", "unknown allocator policy '", name,
                    "' (known: caching, no_caching, bfc, bfc_growth)");
}

}  // namespace wick::memory
