// A free list of fixed-size nodes, and a standard-library allocator over it, so the caching
// allocator's own bookkeeping (set and hash-map nodes, Block records) does not call malloc on
// every allocation and free. Without it, malloc and free of those nodes were half the cost of a
// cached allocation. Not thread-safe: the owner's mutex protects it.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace wick::memory {

class NodePool {
 public:
  NodePool() = default;
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;
  ~NodePool() {
    for (auto& list : lists_) {
      for (void* p : list.free) ::operator delete(p);
    }
  }

  void* allocate(size_t size) {
    std::vector<void*>& free = list_for(size);
    if (free.empty()) return ::operator new(size);
    void* p = free.back();
    free.pop_back();
    return p;
  }
  void deallocate(void* p, size_t size) { list_for(size).push_back(p); }

 private:
  struct List {
    size_t size;
    std::vector<void*> free;
  };
  std::vector<void*>& list_for(size_t size) {
    for (List& list : lists_) {
      if (list.size == size) return list.free;
    }
    lists_.push_back({size, {}});
    return lists_.back().free;
  }
  std::vector<List> lists_;  // a handful of node sizes
};

// Single nodes come from the pool; arrays (hash buckets) from operator new.
template <class T>
class PoolAllocator {
 public:
  using value_type = T;
  explicit PoolAllocator(NodePool* pool) : pool_(pool) {}
  template <class U>
  PoolAllocator(const PoolAllocator<U>& other) : pool_(other.pool()) {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    if (n == 1) return static_cast<T*>(pool_->allocate(sizeof(T)));
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) {
    if (n == 1) {
      pool_->deallocate(p, sizeof(T));
    } else {
      ::operator delete(p);
    }
  }
  NodePool* pool() const { return pool_; }
  template <class U>
  bool operator==(const PoolAllocator<U>& o) const {
    return pool_ == o.pool();
  }
  template <class U>
  bool operator!=(const PoolAllocator<U>& o) const {
    return pool_ != o.pool();
  }

 private:
  NodePool* pool_;
};

}  // namespace wick::memory
