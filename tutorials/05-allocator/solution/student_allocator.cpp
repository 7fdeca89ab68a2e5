// Lab 05: the caching allocator's rules and steps. Fill in each gap; the comments in
// student_allocator.h say what each function must do, tests/test_allocator.cpp checks it.
#include "student_allocator.h"

#include <cstdlib>
#include <iterator>
#include <new>
#include <vector>

#include "core/error.h"
#include "lab.h"

namespace lab05 {

size_t round_size(size_t nbytes) {
  // BEGIN SOLUTION: round_size: up to a multiple of 512 B, never below 512
  if (nbytes < kMinBlockSize) return kMinBlockSize;
  return (nbytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
  // END SOLUTION
}

size_t segment_size(size_t size) {
  // BEGIN SOLUTION: segment_size: <=1 MiB: 2 MiB; <10 MiB: 20 MiB; else round up to 2 MiB
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return (size + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
  // END SOLUTION
}

bool should_split(const Block* block, size_t size) {
  // BEGIN SOLUTION: should_split: remainder >= 512 B (small pool), > 1 MiB (large pool)
  size_t remaining = block->size - size;
  return block->small ? remaining >= kMinBlockSize : remaining > kSmallSize;
  // END SOLUTION
}

Block* StudentAllocator::find_free_block(Pool& pool, size_t size) {
  // BEGIN SOLUTION: find_free_block: lower_bound on a key Block of `size` bytes
  Block key;
  key.size = size;
  auto it = pool.lower_bound(&key);
  if (it == pool.end()) return nullptr;
  Block* block = *it;
  pool.erase(it);
  return block;
  // END SOLUTION
}

Block* StudentAllocator::split(Block* block, size_t size) {
  // BEGIN SOLUTION: split: a new Block for the rest at block->ptr + size, into the pool
  Block* rest = new Block;
  rest->ptr = block->ptr + size;
  rest->size = block->size - size;
  rest->small = block->small;
  rest->prev = block;
  rest->next = block->next;
  if (block->next != nullptr) block->next->prev = rest;
  block->next = rest;
  block->size = size;
  pool_of(rest).insert(rest);
  return block;
  // END SOLUTION
}

Block* StudentAllocator::coalesce(Block* block) {
  // BEGIN SOLUTION: coalesce: absorb a free next neighbour, then merge into a free prev one
  Pool& pool = pool_of(block);
  if (Block* next = block->next; next != nullptr && !next->allocated) {
    pool.erase(next);
    block->size += next->size;
    block->next = next->next;
    if (next->next != nullptr) next->next->prev = block;
    delete next;
  }
  if (Block* prev = block->prev; prev != nullptr && !prev->allocated) {
    pool.erase(prev);
    prev->size += block->size;
    prev->next = block->next;
    if (block->next != nullptr) block->next->prev = prev;
    delete block;
    block = prev;
  }
  return block;
  // END SOLUTION
}

void StudentAllocator::empty_cache() {
  // BEGIN SOLUTION: empty_cache: release_segment every whole free segment of both pools
  for (Pool* pool : {&small_, &large_}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* block = *it;
      if (block->prev == nullptr && block->next == nullptr) {
        it = pool->erase(it);
        release_segment(block);
      } else {
        ++it;
      }
    }
  }
  // END SOLUTION
}

// ---- given: malloc and free put the steps together and keep PyTorch's statistics ----

void* StudentAllocator::malloc(size_t nbytes, StreamId /*stream: one stream in this lab*/) {
  if (nbytes == 0) return nullptr;
  size_t size = round_size(nbytes);
  bool small = size <= kSmallSize;
  Block* block = find_free_block(small ? small_ : large_, size);
  if (block == nullptr) block = new_segment(segment_size(size), small);
  if (should_split(block, size)) block = split(block, size);
  block->allocated = true;
  allocated_[block->ptr] = block;
  int type = small ? wick::memory::kSmallPool : wick::memory::kLargePool;
  for (int t : {int(wick::memory::kAggregate), type}) {
    stats_.allocation[t].increase(1);
    stats_.allocated_bytes[t].increase(int64_t(block->size));
    stats_.requested_bytes[t].increase(int64_t(nbytes));
  }
  return block->ptr;
}

void StudentAllocator::free(void* ptr) {
  if (ptr == nullptr) return;
  auto it = allocated_.find(ptr);
  wick::check_value(it != allocated_.end(), "lab05",
                    "free of a pointer this allocator did not hand out");
  Block* block = it->second;
  allocated_.erase(it);
  int type = block->small ? wick::memory::kSmallPool : wick::memory::kLargePool;
  for (int t : {int(wick::memory::kAggregate), type}) {
    stats_.allocation[t].decrease(1);
    stats_.allocated_bytes[t].decrease(int64_t(block->size));
  }
  block->allocated = false;
  block = coalesce(block);
  pool_of(block).insert(block);
}

Block* StudentAllocator::new_segment(size_t size, bool small) {
  Block* block = new Block;
  block->ptr = static_cast<char*>(backend_->malloc(size));
  if (block->ptr == nullptr) {
    delete block;
    throw std::bad_alloc();
  }
  block->size = size;
  block->small = small;
  int type = small ? wick::memory::kSmallPool : wick::memory::kLargePool;
  for (int t : {int(wick::memory::kAggregate), type}) {
    stats_.segment[t].increase(1);
    stats_.reserved_bytes[t].increase(int64_t(size));
  }
  stats_.num_device_alloc++;
  return block;
}

void StudentAllocator::release_segment(Block* block) {
  wick::check_state(block->prev == nullptr && block->next == nullptr && !block->allocated, "lab05",
                    "release_segment needs a whole, free segment");
  backend_->free(block->ptr, block->size);
  int type = block->small ? wick::memory::kSmallPool : wick::memory::kLargePool;
  for (int t : {int(wick::memory::kAggregate), type}) {
    stats_.segment[t].decrease(1);
    stats_.reserved_bytes[t].decrease(int64_t(block->size));
  }
  stats_.num_device_free++;
  delete block;
}

size_t StudentAllocator::largest_free_block() const {
  size_t largest = 0;
  if (!small_.empty()) largest = (*small_.rbegin())->size;
  if (!large_.empty() && (*large_.rbegin())->size > largest) largest = (*large_.rbegin())->size;
  return largest;
}

StudentAllocator::~StudentAllocator() {
  // Whatever is still cached goes back to the device; blocks still allocated are leaked.
  std::vector<Block*> cached(small_.begin(), small_.end());
  cached.insert(cached.end(), large_.begin(), large_.end());
  for (Block* b : cached) {
    if (b->prev == nullptr && b->next == nullptr) {
      backend_->free(b->ptr, b->size);
      delete b;
    }
  }
}

size_t host_size_class(size_t nbytes) {
  // BEGIN SOLUTION: host_size_class: a power of two stays; else the next quarter step above it
  if ((nbytes & (nbytes - 1)) == 0) return nbytes;
  size_t floor = size_t{1} << (63 - __builtin_clzll(nbytes));
  size_t step = floor / 4;
  if (step == 0) return floor * 2;
  return (nbytes + step - 1) / step * step;
  // END SOLUTION
}

HostBlockCache::~HostBlockCache() {
  for (auto& [size, blocks] : free_) {
    for (void* ptr : blocks) std::free(ptr);
  }
}

void* HostBlockCache::acquire(size_t nbytes) {
  const size_t size = host_size_class(nbytes);
  // BEGIN SOLUTION: HostBlockCache::acquire: the back of free_[size] (a hit), else aligned_alloc
  auto it = free_.find(size);
  if (it != free_.end() && !it->second.empty()) {
    void* ptr = it->second.back();
    it->second.pop_back();
    cached_ -= size;
    ++hits_;
    return ptr;
  }
  void* ptr = std::aligned_alloc(64, (size + 63) / 64 * 64);
  if (ptr == nullptr) throw std::bad_alloc();
  return ptr;
  // END SOLUTION
}

void HostBlockCache::release(void* ptr, size_t nbytes) {
  const size_t size = host_size_class(nbytes);
  // BEGIN SOLUTION: HostBlockCache::release: push onto free_[size] if within limit_, else std::free
  if (cached_ + size <= limit_) {
    free_[size].push_back(ptr);
    cached_ += size;
    return;
  }
  std::free(ptr);
  // END SOLUTION
}

}  // namespace lab05
