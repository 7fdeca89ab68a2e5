#include "core/memory/bfc_allocator.h"

#include <algorithm>

#include "core/error.h"

namespace wick::memory {

namespace {

size_t rounded_bytes(size_t bytes) {
  constexpr size_t m = BfcAllocator::kMinAllocationSize;
  return (bytes + m - 1) / m * m;
}

// TensorFlow's MinSystemMemory for a device with `available` bytes free (compute capability 8).
size_t system_reserve(size_t available) {
  return available < (size_t{2} << 30) ? size_t{225} << 20 : size_t{1536} << 20;
}

}  // namespace

BfcAllocator::BfcAllocator(MemoryBackend* backend, BfcOptions options)
    : backend_(backend), options_(options) {
  if (options_.memory_fraction > 0.0) {
    memory_limit_ = static_cast<size_t>(options_.memory_fraction *
                                        static_cast<double>(backend_->total_memory()));
  } else {
    size_t available = backend_->free_memory();
    size_t reserve = system_reserve(available);
    memory_limit_ = available > reserve ? available - reserve : 0;
  }
  memory_limit_ = memory_limit_ / kMinAllocationSize * kMinAllocationSize;
  curr_region_allocation_bytes_ = options_.allow_growth
                                      ? rounded_bytes(std::min(memory_limit_, size_t{2} << 20))
                                      : memory_limit_;
}

BfcAllocator::~BfcAllocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Region& r : regions_) backend_->free(r.ptr, r.size);
}

int BfcAllocator::bin_for_size(size_t bytes) {
  uint64_t v = std::max<size_t>(bytes, kMinAllocationSize) >> 8;  // 256 = 1 << 8
  int b = 63 - __builtin_clzll(v);
  return std::min(kNumBins - 1, b);
}

BfcAllocator::ChunkHandle BfcAllocator::new_chunk() {
  if (!free_handles_.empty()) {
    ChunkHandle h = free_handles_.back();
    free_handles_.pop_back();
    return h;
  }
  chunks_.emplace_back();
  return static_cast<ChunkHandle>(chunks_.size() - 1);
}

void BfcAllocator::delete_chunk(ChunkHandle h) {
  chunks_[h] = Chunk();
  free_handles_.push_back(h);
}

void BfcAllocator::insert_into_bin(ChunkHandle h) {
  Chunk& c = chunks_[h];
  c.bin = bin_for_size(c.size);
  bins_[c.bin].emplace(c.size, reinterpret_cast<uintptr_t>(c.ptr), h);
}

void BfcAllocator::remove_from_bin(ChunkHandle h) {
  Chunk& c = chunks_[h];
  bins_[c.bin].erase(BinEntry(c.size, reinterpret_cast<uintptr_t>(c.ptr), h));
  c.bin = -1;
}

void* BfcAllocator::malloc(size_t nbytes, StreamId stream) {
  if (nbytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  size_t rounded = rounded_bytes(nbytes);
  if (void* p = find_chunk(rounded, nbytes)) return p;
  if (extend(rounded)) {
    if (void* p = find_chunk(rounded, nbytes)) return p;
  }
  if (options_.garbage_collection && deallocate_free_regions(rounded) && extend(rounded)) {
    if (void* p = find_chunk(rounded, nbytes)) return p;
  }
  ++stats_.num_ooms;
  note(HistoryEntry::Oom, 0, nbytes, stream);
  size_t largest = 0;
  for (const auto& bin : bins_) {
    if (!bin.empty()) largest = std::max(largest, std::get<0>(*bin.rbegin()));
  }
  throw OutOfMemoryError(error_message(
      backend_->name().c_str(), "out of memory. Tried to allocate ", format_size(nbytes),
      " (bfc allocator). Its memory limit is ", format_size(memory_limit_), ", of which ",
      format_size(stats_.allocated_bytes[kAggregate].current), " is in use in ",
      format_size(total_region_allocated_bytes_), " of regions; the largest free chunk is ",
      format_size(largest), "."));
}

// Best fit: the first chunk in size order that fits, from the request's bin upwards.
void* BfcAllocator::find_chunk(size_t rounded, size_t requested) {
  for (int b = bin_for_size(rounded); b < kNumBins; ++b) {
    auto it = bins_[b].lower_bound(BinEntry(rounded, 0, 0));
    if (it == bins_[b].end()) continue;
    ChunkHandle h = std::get<2>(*it);
    remove_from_bin(h);
    // Split when the rest is big enough to be useful: at least half the chunk, or 128 MiB.
    if (chunks_[h].size >= rounded * 2 || chunks_[h].size - rounded >= kMaxInternalFragmentation) {
      split_chunk(h, rounded);
    }
    Chunk& c = chunks_[h];
    c.in_use = true;
    c.requested = requested;
    in_use_.emplace(c.ptr, h);
    note(HistoryEntry::Alloc, reinterpret_cast<uintptr_t>(c.ptr), c.size, kDefaultStream);
    auto grow = [](StatArray& a, int64_t v) {
      a[kAggregate].increase(v);
      a[kLargePool].increase(v);
    };
    grow(stats_.allocation, 1), grow(stats_.active, 1);
    grow(stats_.allocated_bytes, static_cast<int64_t>(c.size));
    grow(stats_.active_bytes, static_cast<int64_t>(c.size));
    grow(stats_.requested_bytes, static_cast<int64_t>(requested));
    return c.ptr;
  }
  return nullptr;
}

void BfcAllocator::split_chunk(ChunkHandle h, size_t size) {
  ChunkHandle rest = new_chunk();  // may reallocate chunks_: take references afterwards
  Chunk& c = chunks_[h];
  Chunk& r = chunks_[rest];
  r.ptr = c.ptr + size;
  r.size = c.size - size;
  r.prev = h;
  r.next = c.next;
  if (c.next != kInvalid) chunks_[c.next].prev = rest;
  c.next = rest;
  c.size = size;
  insert_into_bin(rest);
}

// h2 is the chunk right after h1; h1 absorbs it.
void BfcAllocator::merge(ChunkHandle h1, ChunkHandle h2) {
  Chunk& c1 = chunks_[h1];
  Chunk& c2 = chunks_[h2];
  c1.size += c2.size;
  c1.next = c2.next;
  if (c2.next != kInvalid) chunks_[c2.next].prev = h1;
  delete_chunk(h2);
}

void BfcAllocator::free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = in_use_.find(ptr);
  check_state(it != in_use_.end(), backend_->name().c_str(),
              "bfc allocator: free of a pointer it did not allocate: ", ptr);
  ChunkHandle h = it->second;
  in_use_.erase(it);
  Chunk& c = chunks_[h];
  note(HistoryEntry::Free, reinterpret_cast<uintptr_t>(c.ptr), c.size, kDefaultStream);
  auto shrink = [](StatArray& a, int64_t v) {
    a[kAggregate].decrease(v);
    a[kLargePool].decrease(v);
  };
  shrink(stats_.allocation, 1), shrink(stats_.active, 1);
  shrink(stats_.allocated_bytes, static_cast<int64_t>(c.size));
  shrink(stats_.active_bytes, static_cast<int64_t>(c.size));
  shrink(stats_.requested_bytes, static_cast<int64_t>(c.requested));
  c.in_use = false;
  c.requested = 0;
  // Coalesce at once with free neighbours (TryToCoalesce).
  ChunkHandle next = c.next;
  if (next != kInvalid && !chunks_[next].in_use) {
    remove_from_bin(next);
    merge(h, next);
  }
  ChunkHandle prev = chunks_[h].prev;
  if (prev != kInvalid && !chunks_[prev].in_use) {
    remove_from_bin(prev);
    merge(prev, h);
    h = prev;
  }
  insert_into_bin(h);
}

// Grows by one region: the current region size (doubled until the request fits), capped by what
// the limit leaves; on a device failure, backs off by 10% steps down to the request.
bool BfcAllocator::extend(size_t rounded) {
  size_t available = memory_limit_ - total_region_allocated_bytes_;
  available = available / kMinAllocationSize * kMinAllocationSize;
  if (rounded > available) return false;
  bool increased = false;
  while (rounded > curr_region_allocation_bytes_) {
    curr_region_allocation_bytes_ *= 2;
    increased = true;
  }
  size_t bytes = std::min(curr_region_allocation_bytes_, available);
  void* ptr = backend_->malloc(bytes);
  while (ptr == nullptr) {
    size_t smaller = rounded_bytes(static_cast<size_t>(static_cast<double>(bytes) * 0.9));
    if (smaller < rounded || smaller >= bytes) return false;
    bytes = smaller;
    ptr = backend_->malloc(bytes);
  }
  if (!increased) curr_region_allocation_bytes_ *= 2;  // the next region will be bigger
  ++stats_.num_device_alloc;
  note(HistoryEntry::SegmentAlloc, reinterpret_cast<uintptr_t>(ptr), bytes, kDefaultStream);
  total_region_allocated_bytes_ += bytes;
  stats_.segment[kAggregate].increase(1);
  stats_.segment[kLargePool].increase(1);
  stats_.reserved_bytes[kAggregate].increase(static_cast<int64_t>(bytes));
  stats_.reserved_bytes[kLargePool].increase(static_cast<int64_t>(bytes));
  ChunkHandle h = new_chunk();
  chunks_[h].ptr = static_cast<char*>(ptr);
  chunks_[h].size = bytes;
  regions_.push_back({static_cast<char*>(ptr), bytes, h});
  insert_into_bin(h);
  return true;
}

bool BfcAllocator::deallocate_free_regions(size_t rounded) {
  size_t free_bytes = 0;
  std::vector<size_t> free_regions;
  for (size_t i = 0; i < regions_.size(); ++i) {
    const Chunk& c = chunks_[regions_[i].first];  // a region with nothing in use is one chunk
    if (!c.in_use && c.next == kInvalid) {
      free_regions.push_back(i);
      free_bytes += regions_[i].size;
    }
  }
  if (free_bytes == 0) return false;
  if (rounded > memory_limit_ - total_region_allocated_bytes_ + free_bytes) return false;
  for (auto it = free_regions.rbegin(); it != free_regions.rend(); ++it) {
    Region r = regions_[*it];
    remove_from_bin(r.first);
    delete_chunk(r.first);
    backend_->free(r.ptr, r.size);
    note(HistoryEntry::SegmentFree, reinterpret_cast<uintptr_t>(r.ptr), r.size, kDefaultStream);
    ++stats_.num_device_free;
    total_region_allocated_bytes_ -= r.size;
    stats_.segment[kAggregate].decrease(1);
    stats_.segment[kLargePool].decrease(1);
    stats_.reserved_bytes[kAggregate].decrease(static_cast<int64_t>(r.size));
    stats_.reserved_bytes[kLargePool].decrease(static_cast<int64_t>(r.size));
    regions_.erase(regions_.begin() + static_cast<int64_t>(*it));
  }
  return true;
}

void BfcAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  deallocate_free_regions(0);
}

DeviceStats BfcAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  DeviceStats s = stats_;
  // Free chunks in regions that are partly in use: the BFC analogue of inactive_split.
  int64_t count = 0, bytes = 0;
  for (const Region& r : regions_) {
    if (chunks_[r.first].next == kInvalid && !chunks_[r.first].in_use) continue;
    for (ChunkHandle h = r.first; h != kInvalid; h = chunks_[h].next) {
      if (!chunks_[h].in_use) ++count, bytes += static_cast<int64_t>(chunks_[h].size);
    }
  }
  for (int t : {kAggregate, kLargePool}) {
    s.inactive_split[t].current = count;
    s.inactive_split_bytes[t].current = bytes;
  }
  return s;
}

void BfcAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.reset_peak();
}

void BfcAllocator::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.reset_accumulated();
}

size_t BfcAllocator::largest_free_block() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t largest = 0;
  for (const auto& bin : bins_) {
    if (!bin.empty()) largest = std::max(largest, std::get<0>(*bin.rbegin()));
  }
  return largest;
}

// A region is a segment and its chunks are its blocks; TensorFlow has one stream, so all are on
// the default one.
std::vector<SegmentInfo> BfcAllocator::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<SegmentInfo> out;
  for (const Region& r : regions_) {
    SegmentInfo seg;
    seg.address = reinterpret_cast<uintptr_t>(r.ptr);
    seg.size = r.size;
    for (ChunkHandle h = r.first; h != kInvalid; h = chunks_[h].next) {
      const Chunk& c = chunks_[h];
      seg.blocks.push_back({reinterpret_cast<uintptr_t>(c.ptr), c.size, c.requested, c.in_use});
    }
    out.push_back(std::move(seg));
  }
  std::sort(out.begin(), out.end(),
            [](const SegmentInfo& a, const SegmentInfo& b) { return a.address < b.address; });
  return out;
}

}  // namespace wick::memory
