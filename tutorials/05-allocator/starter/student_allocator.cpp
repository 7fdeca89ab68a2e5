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
  // TODO(05): round_size: up to a multiple of 512 B, never below 512
  throw lab::NotImplemented("round_size: up to a multiple of 512 B, never below 512");
}

size_t segment_size(size_t size) {
  // TODO(05): segment_size: <=1 MiB: 2 MiB; <10 MiB: 20 MiB; else round up to 2 MiB
  throw lab::NotImplemented(
      "segment_size: <=1 MiB: 2 MiB; <10 MiB: 20 MiB; else round up to 2 MiB");
}

bool should_split(const Block* block, size_t size) {
  // TODO(05): should_split: remainder >= 512 B (small pool), > 1 MiB (large pool)
  throw lab::NotImplemented("should_split: remainder >= 512 B (small pool), > 1 MiB (large pool)");
}

Block* StudentAllocator::find_free_block(Pool& pool, size_t size) {
  // TODO(05): find_free_block: lower_bound on a key Block of `size` bytes
  throw lab::NotImplemented("find_free_block: lower_bound on a key Block of `size` bytes");
}

Block* StudentAllocator::split(Block* block, size_t size) {
  // TODO(05): split: a new Block for the rest at block->ptr + size, into the pool
  throw lab::NotImplemented("split: a new Block for the rest at block->ptr + size, into the pool");
}

Block* StudentAllocator::coalesce(Block* block) {
  // TODO(05): coalesce: absorb a free next neighbour, then merge into a free prev one
  throw lab::NotImplemented(
      "coalesce: absorb a free next neighbour, then merge into a free prev one");
}

void StudentAllocator::empty_cache() {
  // TODO(05): empty_cache: release_segment every whole free segment of both pools
  throw lab::NotImplemented("empty_cache: release_segment every whole free segment of both pools");
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
  // TODO(05): host_size_class: a power of two stays; else the next quarter step above it
  throw lab::NotImplemented(
      "host_size_class: a power of two stays; else the next quarter step above it");
}

HostBlockCache::~HostBlockCache() {
  for (auto& [size, blocks] : free_) {
    for (void* ptr : blocks) std::free(ptr);
  }
}

void* HostBlockCache::acquire(size_t nbytes) {
  const size_t size = host_size_class(nbytes);
  // TODO(05): HostBlockCache::acquire: the back of free_[size] (a hit), else aligned_alloc
  throw lab::NotImplemented(
      "HostBlockCache::acquire: the back of free_[size] (a hit), else aligned_alloc");
}

void HostBlockCache::release(void* ptr, size_t nbytes) {
  const size_t size = host_size_class(nbytes);
  // TODO(05): HostBlockCache::release: push onto free_[size] if within limit_, else std::free
  throw lab::NotImplemented(
      "HostBlockCache::release: push onto free_[size] if within limit_, else std::free");
}

}  // namespace lab05
