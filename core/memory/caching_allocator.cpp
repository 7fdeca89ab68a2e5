#include "core/memory/caching_allocator.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "core/error.h"

namespace wick::memory {

// A block is a piece of a segment. The blocks of one segment form a doubly linked list in address
// order (prev/next), so a freed block can find its neighbours to merge with in O(1).
struct CachingAllocator::Block {
  StreamId stream = 0;  // the stream it was allocated on; it is reused only there
  size_t size = 0;
  size_t requested = 0;  // the size asked for, while allocated
  char* ptr = nullptr;
  BlockPool* pool = nullptr;
  bool allocated = false;
  Block* prev = nullptr;
  Block* next = nullptr;
  int event_count = 0;                // outstanding events before it may be reused
  std::vector<StreamId> stream_uses;  // other streams that used it (record_stream)
  uint64_t gc_count_base = 0;         // pool's get_free_block count when it was cached

  bool is_split() const { return prev != nullptr || next != nullptr; }
};

// The free blocks of one pool, ordered by (stream, size, address) so that lower_bound finds the
// best fit on a stream (Note [best fit per stream]).
struct CachingAllocator::BlockPool {
  BlockPool(bool small, NodePool* nodes)
      : blocks(BlockLess(), PoolAllocator<Block*>(nodes)), is_small(small) {}
  std::set<Block*, BlockLess, PoolAllocator<Block*>> blocks;
  const bool is_small;
  uint64_t get_free_blocks_call_count = 0;  // the clock of Note [garbage collection]
};

bool CachingAllocator::BlockLess::operator()(const Block* a, const Block* b) const {
  if (a->stream != b->stream) return a->stream < b->stream;
  if (a->size != b->size) return a->size < b->size;
  return reinterpret_cast<uintptr_t>(a->ptr) < reinterpret_cast<uintptr_t>(b->ptr);
}

namespace {

// Adds `delta` to a stat for all pools and for the block's pool. (A free function, not a member:
// in a shared library only functions with internal linkage are reliably inlined, and this runs
// a dozen times per allocation.)
inline void update(StatArray& stat, bool small_pool, int64_t delta) {
  StatType type = small_pool ? kSmallPool : kLargePool;
  if (delta > 0) {
    stat[kAggregate].increase(delta);
    stat[type].increase(delta);
  } else if (delta < 0) {
    stat[kAggregate].decrease(-delta);
    stat[type].decrease(-delta);
  }
}

}  // namespace

struct CachingAllocator::Request {
  StreamId stream;
  size_t size;        // rounded request
  size_t alloc_size;  // segment size if a device malloc is needed
  BlockPool* pool;
  Block* block = nullptr;  // the block found or allocated
};

CachingAllocator::CachingAllocator(MemoryBackend* backend, AllocatorConfig config)
    : backend_(backend),
      config_(std::move(config)),
      small_pool_(std::make_unique<BlockPool>(true, &nodes_)),
      large_pool_(std::make_unique<BlockPool>(false, &nodes_)),
      allocated_(1024, std::hash<void*>(), std::equal_to<void*>(),
                 PoolAllocator<std::pair<void* const, Block*>>(&nodes_)) {}

// Block records come from the node pool too.
CachingAllocator::Block* CachingAllocator::new_block() {
  return new (nodes_.allocate(sizeof(Block))) Block();
}

void CachingAllocator::delete_block(Block* block) {
  block->~Block();
  nodes_.deallocate(block, sizeof(Block));
}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_cached_blocks();
  // What remains are segments with blocks still allocated: the memory stays with the device (a
  // tensor may still use it), but the records go with the allocator.
  std::vector<Block*> rest;
  for (BlockPool* pool : {small_pool_.get(), large_pool_.get()}) {
    rest.insert(rest.end(), pool->blocks.begin(), pool->blocks.end());
    pool->blocks.clear();
  }
  for (auto& [ptr, block] : allocated_) rest.push_back(block);
  allocated_.clear();
  for (Block* b : rest) delete_block(b);
}

// ---- sizes ----------------------------------------------------------------------------------

// Note [block rounding]
// Every request is rounded up to a multiple of 512 bytes (kMinBlockSize), so block addresses stay
// aligned and nearly equal requests share cached blocks. With roundup_power2_divisions = N, a
// request above 512 * N is instead rounded to the next of N equal steps between two powers of
// two (1200 B with N = 4 lies in [1024, 2048) whose steps are 1024, 1280, 1536, 1792 -> 1280),
// which trades a little internal waste for far fewer distinct block sizes.
size_t CachingAllocator::round_size(size_t size, const AllocatorConfig& config) {
  if (size < kMinBlockSize) return kMinBlockSize;
  size_t divisions = config.divisions_for(size);
  if (divisions > 1 && size > kMinBlockSize * divisions) {
    return roundup_power2_next_division(size, divisions);
  }
  return kMinBlockSize * ((size + kMinBlockSize - 1) / kMinBlockSize);
}

size_t CachingAllocator::roundup_power2_next_division(size_t size, size_t divisions) {
  if ((size & (size - 1)) == 0) return size;
  size_t floor = size_t{1} << (63 - __builtin_clzll(size));
  size_t step = floor >> (63 - __builtin_clzll(divisions));
  if (step == 0) return floor << 1;
  size_t rounded = size & ~(step - 1);
  return rounded == size ? size : rounded + step;
}

// Note [two pools]
// Small requests (<= 1 MiB) and large ones live in separate pools so that many small tensors do
// not fragment the big segments. A small request that finds no cached block gets a 2 MiB segment;
// a large one below 10 MiB a 20 MiB segment (room for a few more of its kind); anything bigger a
// segment of exactly its size rounded up to 2 MiB.
size_t CachingAllocator::segment_size(size_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return kRoundLarge * ((size + kRoundLarge - 1) / kRoundLarge);
}

// ---- malloc -----------------------------------------------------------------------------------

void* CachingAllocator::malloc(size_t nbytes, StreamId stream) {
  if (nbytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (nbytes >= kMaxRequest) {
    ++stats_.num_ooms;
    throw OutOfMemoryError(error_message(backend_->name().c_str(),
                                         "out of memory. Tried to allocate more than 1EB memory."));
  }
  process_events();
  size_t size = round_size(nbytes, config_);
  BlockPool& pool = size <= kSmallSize ? *small_pool_ : *large_pool_;
  Request r{stream, size, segment_size(size), &pool};

  // Note [out of memory]
  // When no cached block fits, the allocator asks the device for a new segment. If the device is
  // full it first frees cached segments that are big enough (only those of at least
  // max_split_size, largest first), then every unsplit cached segment after waiting for all
  // outstanding events, retrying the device malloc after each step (the second retry counts in
  // num_alloc_retries). Only then is the request refused.
  bool found = get_free_block(r);
  if (!found) {
    if (fraction_set_ && config_.garbage_collection_threshold > 0.0) {
      garbage_collect_cached_blocks();
    }
    found = alloc_block(r, false) ||
            (release_available_cached_blocks(r) && alloc_block(r, false)) ||
            (release_cached_blocks() && alloc_block(r, true));
  }
  if (!found) throw_out_of_memory(nbytes, size);
  return finish_alloc(r, nbytes);
}

// Note [best fit per stream]
// The pool is ordered by (stream, size, address); lower_bound on (stream, rounded size, 0) is the
// smallest free block of this stream that fits, the lowest-addressed among equals. A block from
// another stream is never taken: work queued there may still be using it.
bool CachingAllocator::get_free_block(Request& r) {
  BlockPool& pool = *r.pool;
  if (fraction_set_ && config_.garbage_collection_threshold > 0.0) {
    ++pool.get_free_blocks_call_count;
  }
  Block key;
  key.stream = r.stream;
  key.size = r.size;
  auto it = pool.blocks.lower_bound(&key);
  if (it == pool.blocks.end() || (*it)->stream != r.stream) return false;
  // Oversize blocks (>= max_split_size) are kept for large requests, and a large request does not
  // take a cached block much bigger than itself, since it would not be split.
  if (r.size < config_.max_split_size && (*it)->size >= config_.max_split_size) return false;
  if (r.size >= config_.max_split_size &&
      (*it)->size >= r.size + config_.max_non_split_rounding_size) {
    return false;
  }
  r.block = *it;
  pool.blocks.erase(it);
  return true;
}

bool CachingAllocator::alloc_block(Request& r, bool is_retry) {
  if (is_retry) ++stats_.num_alloc_retries;
  size_t size = r.alloc_size;
  // Note [memory fraction]
  // set_memory_fraction(f) caps what this allocator reserves at f times the device's memory; a
  // segment that would cross the cap fails like a device OOM, which starts the retry path.
  if (fraction_set_ && reserved_ + size > allowed_max_) return false;
  void* ptr = backend_->malloc(size);
  if (ptr == nullptr) return false;
  ++stats_.num_device_alloc;
  reserved_ += size;
  Block* block = new_block();
  block->stream = r.stream;
  block->size = size;
  block->ptr = static_cast<char*>(ptr);
  block->pool = r.pool;
  r.block = block;
  note(HistoryEntry::SegmentAlloc, reinterpret_cast<uintptr_t>(ptr), size, r.stream);
  update(stats_.segment, r.pool->is_small, 1);
  update(stats_.reserved_bytes, r.pool->is_small, static_cast<int64_t>(size));
  if (size >= config_.max_split_size) stats_.oversize_segments.increase(1);
  return true;
}

// Note [splitting]
// A block bigger than the request is split when the rest is worth keeping: in the small pool if
// at least 512 bytes remain, in the large pool only if more than 1 MiB remains (a smaller rest
// would be a sliver no large request can use) and the request is below max_split_size. The front
// part is handed out, the remainder goes back to the pool as a free block of the same segment.
bool CachingAllocator::should_split(const Block* block, size_t size) const {
  size_t remaining = block->size - size;
  if (block->pool->is_small) return remaining >= kMinBlockSize;
  return size < config_.max_split_size && remaining > kSmallSize;
}

void* CachingAllocator::finish_alloc(Request& r, size_t nbytes) {
  Block* block = r.block;
  BlockPool& pool = *r.pool;
  const bool already_split = block->is_split();
  if (should_split(block, r.size)) {
    Block* remaining = block;
    block = new_block();
    block->stream = r.stream;
    block->size = r.size;
    block->ptr = remaining->ptr;
    block->pool = &pool;
    block->prev = remaining->prev;
    if (block->prev != nullptr) block->prev->next = block;
    block->next = remaining;
    remaining->prev = block;
    remaining->ptr += r.size;
    remaining->size -= r.size;
    pool_insert(pool, remaining);
    if (already_split) {
      // A free block inside a split segment shrank.
      update(stats_.inactive_split_bytes, pool.is_small, -static_cast<int64_t>(block->size));
    } else {
      // A whole segment became split: its remainder is now an inactive split block.
      update(stats_.inactive_split_bytes, pool.is_small, static_cast<int64_t>(remaining->size));
      update(stats_.inactive_split, pool.is_small, 1);
    }
  } else if (already_split) {
    update(stats_.inactive_split_bytes, pool.is_small, -static_cast<int64_t>(block->size));
    update(stats_.inactive_split, pool.is_small, -1);
  }
  block->allocated = true;
  block->requested = nbytes;
  allocated_.emplace(block->ptr, block);
  note(HistoryEntry::Alloc, reinterpret_cast<uintptr_t>(block->ptr), block->size, block->stream);
  update(stats_.allocation, pool.is_small, 1);
  update(stats_.allocated_bytes, pool.is_small, static_cast<int64_t>(block->size));
  update(stats_.active, pool.is_small, 1);
  update(stats_.active_bytes, pool.is_small, static_cast<int64_t>(block->size));
  update(stats_.requested_bytes, pool.is_small, static_cast<int64_t>(nbytes));
  if (block->size >= config_.max_split_size) stats_.oversize_allocations.increase(1);
  return block->ptr;
}

// ---- free -------------------------------------------------------------------------------------

void CachingAllocator::free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = allocated_.find(ptr);
  if (it == allocated_.end()) {
    throw std::runtime_error(
        error_message(backend_->name().c_str(),
                      "caching allocator: free of a pointer it did not allocate: ", ptr));
  }
  Block* block = it->second;
  allocated_.erase(it);
  block->allocated = false;
  note(HistoryEntry::Free, reinterpret_cast<uintptr_t>(ptr), block->size, block->stream);
  update(stats_.allocation, block->pool->is_small, -1);
  update(stats_.allocated_bytes, block->pool->is_small, -static_cast<int64_t>(block->size));
  if (block->size >= config_.max_split_size) stats_.oversize_allocations.decrease(1);
  if (!block->stream_uses.empty()) {
    insert_events(block);
  } else {
    free_block(block);
  }
}

// Note [coalescing]
// A freed block absorbs its free neighbours in the same segment, so a segment whose blocks are
// all free becomes one unsplit block again, which empty_cache can give back to the device.
// Segments never merge with each other: they are separate device mallocs.
void CachingAllocator::free_block(Block* block) {
  size_t original_size = block->size, requested = block->requested;
  BlockPool& pool = *block->pool;
  int64_t net_blocks = 0, net_bytes = 0;
  Block* const candidates[2] = {block->prev, block->next};
  for (Block* candidate : candidates) {
    size_t subsumed = try_merge(block, candidate);
    if (subsumed > 0) {
      net_blocks -= 1;
      net_bytes -= static_cast<int64_t>(subsumed);
    }
  }
  block->requested = 0;
  pool_insert(pool, block);
  if (block->is_split()) {
    net_blocks += 1;
    net_bytes += static_cast<int64_t>(block->size);
  }
  update(stats_.inactive_split, pool.is_small, net_blocks);
  update(stats_.inactive_split_bytes, pool.is_small, net_bytes);
  update(stats_.active, pool.is_small, -1);
  update(stats_.active_bytes, pool.is_small, -static_cast<int64_t>(original_size));
  update(stats_.requested_bytes, pool.is_small, -static_cast<int64_t>(requested));
}

size_t CachingAllocator::try_merge(Block* dst, Block* src) {
  if (src == nullptr || src->allocated || src->event_count > 0 || !src->stream_uses.empty()) {
    return 0;
  }
  src->pool->blocks.erase(src);  // before dst changes: the pool is ordered by size and address
  if (dst->prev == src) {        // [src dst]
    dst->ptr = src->ptr;
    dst->prev = src->prev;
    if (dst->prev != nullptr) dst->prev->next = dst;
  } else {  // [dst src]
    dst->next = src->next;
    if (dst->next != nullptr) dst->next->prev = dst;
  }
  size_t subsumed = src->size;
  dst->size += subsumed;
  delete_block(src);
  return subsumed;
}

void CachingAllocator::pool_insert(BlockPool& pool, Block* block) {
  block->gc_count_base = pool.get_free_blocks_call_count;
  pool.blocks.insert(block);
}

// ---- streams and events -----------------------------------------------------------------------

// Note [streams and events]
// A block belongs to the stream it was allocated on: work on that stream runs in order, so once
// the tensor is freed (on the host), the next allocation on the same stream may reuse the block
// without waiting, because any kernel using the new tensor is queued after the old ones. Another
// stream gives no such order. record_stream(ptr, s) notes that stream s also uses the block; when
// the block is freed, an event is recorded on each such stream, and the block returns to the pool
// only after all of them have completed (checked without blocking at the next malloc).
void CachingAllocator::record_stream(void* ptr, StreamId stream) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = allocated_.find(ptr);
  if (it == allocated_.end()) {
    throw std::runtime_error(error_message(
        backend_->name().c_str(),
        "record_stream: the pointer was not allocated by this caching allocator: ", ptr));
  }
  Block* block = it->second;
  if (stream == block->stream) return;
  if (std::find(block->stream_uses.begin(), block->stream_uses.end(), stream) ==
      block->stream_uses.end()) {
    block->stream_uses.push_back(stream);
  }
}

void CachingAllocator::insert_events(Block* block) {
  std::vector<StreamId> streams = std::move(block->stream_uses);
  block->stream_uses.clear();
  for (StreamId s : streams) {
    EventId event = backend_->record_event(s);
    ++block->event_count;
    outstanding_[s].emplace_back(event, block);
    ++outstanding_count_;
  }
}

void CachingAllocator::process_events() {
  if (outstanding_count_ == 0) return;
  // Events are checked per stream, oldest first; a stream whose oldest event is not done holds
  // back only its own later events, not other streams'.
  for (auto it = outstanding_.begin(); it != outstanding_.end();) {
    auto& events = it->second;
    size_t done = 0;
    while (done < events.size()) {
      auto [event, block] = events[done];
      if (!backend_->query_event(event)) break;
      backend_->release_event(event);
      --outstanding_count_;
      ++done;
      if (--block->event_count == 0) free_block(block);
    }
    events.erase(events.begin(), events.begin() + done);
    it = events.empty() ? outstanding_.erase(it) : std::next(it);
  }
}

void CachingAllocator::synchronize_and_free_events() {
  ++stats_.num_sync_all_streams;
  for (auto& [stream, events] : outstanding_) {
    for (auto [event, block] : events) {
      backend_->synchronize_event(event);
      backend_->release_event(event);
      if (--block->event_count == 0) free_block(block);
    }
  }
  outstanding_.clear();
  outstanding_count_ = 0;
}

// ---- giving memory back -----------------------------------------------------------------------

void CachingAllocator::release_block(Block* block) {
  backend_->free(block->ptr, block->size);
  note(HistoryEntry::SegmentFree, reinterpret_cast<uintptr_t>(block->ptr), block->size,
       block->stream);
  ++stats_.num_device_free;
  reserved_ -= block->size;
  update(stats_.segment, block->pool->is_small, -1);
  update(stats_.reserved_bytes, block->pool->is_small, -static_cast<int64_t>(block->size));
  if (block->size >= config_.max_split_size) stats_.oversize_segments.decrease(1);
  block->pool->blocks.erase(block);
  delete_block(block);
}

// Only unsplit blocks (whole segments) can be given back to the device.
void CachingAllocator::release_blocks(BlockPool& pool) {
  for (auto it = pool.blocks.begin(); it != pool.blocks.end();) {
    Block* block = *it++;
    if (!block->is_split()) release_block(block);
  }
}

bool CachingAllocator::release_available_cached_blocks(const Request& r) {
  if (config_.max_split_size == SIZE_MAX) return false;
  BlockPool& pool = *r.pool;
  Block key;
  key.stream = r.stream;
  key.size = std::max(r.size, config_.max_split_size);
  auto it = pool.blocks.lower_bound(&key);
  if (it == pool.blocks.end() || (*it)->stream != r.stream) {
    // No single cached block is big enough: free oversize blocks of this stream, largest first,
    // until enough memory has been released.
    if (it == pool.blocks.begin()) return false;
    size_t released = 0;
    --it;
    while (released < key.size && (*it)->size >= config_.max_split_size &&
           (*it)->stream == r.stream) {
      auto current = it;
      bool is_first = current == pool.blocks.begin();
      if (!is_first) --it;
      Block* block = *current;
      if (!block->is_split()) {
        released += block->size;
        release_block(block);
      }
      if (is_first) break;
    }
    return released >= key.size;
  }
  if ((*it)->is_split()) return false;
  release_block(*it);
  return true;
}

bool CachingAllocator::release_cached_blocks() {
  synchronize_and_free_events();
  release_blocks(*large_pool_);
  release_blocks(*small_pool_);
  return true;
}

// Note [garbage collection]
// With a memory fraction set and garbage_collection_threshold t, an allocation that needs a new
// segment first checks whether reserved memory exceeds t times the cap. If so, it frees unsplit
// cached large segments whose age (get_free_block calls since they were cached) is at least the
// average age, repeatedly, until the excess is reclaimed: old, unused segments go before ones a
// loop is likely to ask for again. Unlike empty_cache it never waits on events.
void CachingAllocator::garbage_collect_cached_blocks() {
  size_t threshold =
      static_cast<size_t>(config_.garbage_collection_threshold * static_cast<double>(allowed_max_));
  if (reserved_ <= threshold) return;
  size_t target = reserved_ - threshold, reclaimed = 0;
  BlockPool& pool = *large_pool_;
  auto age = [&](const Block* b) { return pool.get_free_blocks_call_count - b->gc_count_base; };
  double total_age = 0;
  int64_t freeable = 0;
  for (const Block* b : pool.blocks) {
    if (!b->is_split()) {
      total_age += static_cast<double>(age(b));
      ++freeable;
    }
  }
  bool freed = true;
  while (reclaimed < target && freeable > 0 && freed) {
    double age_threshold = total_age / static_cast<double>(freeable);
    freed = false;
    for (auto it = pool.blocks.begin(); it != pool.blocks.end() && reclaimed < target;) {
      Block* b = *it++;
      if (b->is_split() || static_cast<double>(age(b)) < age_threshold) continue;
      freed = true;
      reclaimed += b->size;
      total_age -= static_cast<double>(age(b));
      --freeable;
      release_block(b);
    }
  }
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_cached_blocks();
}

void CachingAllocator::throw_out_of_memory(size_t nbytes, size_t rounded) {
  (void)rounded;
  ++stats_.num_ooms;
  note(HistoryEntry::Oom, 0, nbytes, backend_->current_stream());
  int64_t allocated = stats_.allocated_bytes[kAggregate].current;
  std::ostringstream os;
  os << "out of memory. Tried to allocate " << format_size(nbytes) << ". " << backend_->name()
     << " has a total capacity of " << format_size(backend_->total_memory()) << " of which "
     << format_size(backend_->free_memory()) << " is free.";
  if (fraction_set_) {
    os << " The memory fraction " << fraction_ << " allows this process "
       << format_size(allowed_max_) << ".";
  }
  os << " Of the allocated memory " << format_size(allocated) << " is allocated by wick, and "
     << format_size(reserved_ - allocated) << " is reserved by wick but unallocated."
     << " If reserved but unallocated memory is large, try setting max_split_size_mb in "
        "WICK_ALLOC_CONF to avoid fragmentation.";
  throw OutOfMemoryError(error_message(backend_->name().c_str(), os.str()));
}

// ---- stats ------------------------------------------------------------------------------------

DeviceStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  DeviceStats s = stats_;
  s.max_split_size =
      config_.max_split_size == SIZE_MAX ? -1 : static_cast<int64_t>(config_.max_split_size);
  return s;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.reset_peak();
}

void CachingAllocator::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.reset_accumulated();
}

size_t CachingAllocator::largest_free_block() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t largest = 0;
  for (const BlockPool* pool : {small_pool_.get(), large_pool_.get()}) {
    for (const Block* b : pool->blocks) largest = std::max(largest, b->size);
  }
  return largest;
}

void CachingAllocator::set_memory_fraction(double fraction) {
  check_value(fraction >= 0.0 && fraction <= 1.0, "set_per_process_memory_fraction",
              "invalid fraction ", fraction, "; it must be between 0 and 1");
  std::lock_guard<std::mutex> lock(mutex_);
  fraction_ = fraction;
  fraction_set_ = true;
  allowed_max_ = static_cast<size_t>(fraction * static_cast<double>(backend_->total_memory()));
}

double CachingAllocator::memory_fraction() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fraction_;
}

std::vector<SegmentInfo> CachingAllocator::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<const Block*> all;
  for (const BlockPool* pool : {small_pool_.get(), large_pool_.get()}) {
    all.insert(all.end(), pool->blocks.begin(), pool->blocks.end());
  }
  for (const auto& [ptr, block] : allocated_) all.push_back(block);
  for (const auto& [stream, events] : outstanding_) {
    for (const auto& [event, block] : events) all.push_back(block);
  }
  std::map<uintptr_t, SegmentInfo> segments;
  for (const Block* b : all) {
    if (b->prev != nullptr) continue;  // walk each segment from its first block
    SegmentInfo seg;
    seg.address = reinterpret_cast<uintptr_t>(b->ptr);
    seg.stream = b->stream;
    seg.small_pool = b->pool->is_small;
    for (const Block* x = b; x != nullptr; x = x->next) {
      seg.size += x->size;
      seg.blocks.push_back({reinterpret_cast<uintptr_t>(x->ptr), x->size,
                            x->allocated ? x->requested : 0, x->allocated, x->event_count > 0});
    }
    segments.emplace(seg.address, std::move(seg));
  }
  std::vector<SegmentInfo> out;
  for (auto& [address, seg] : segments) out.push_back(std::move(seg));
  return out;
}

}  // namespace wick::memory
