// The pinned (page-locked) host allocator and pin_memory().
//
// Note [pinned memory]
// A copy from pageable host memory to a GPU goes through a staging buffer and blocks the host;
// from page-locked memory the DMA engine reads it directly and cudaMemcpyAsync returns at once, so
// the next batch can be copied while the GPU computes. cudaHostAlloc is slow (it maps pages for
// the device), so blocks are cached like PyTorch's CachingHostAllocator: sizes are rounded up to
// a power of two, and a freed block goes back to a free list of its size. Because an
// asynchronous copy may still be reading a block when its tensor is freed, each copy records an
// event on its stream (record_pinned_use), and a freed block is reused only after its events have
// completed.
#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "cuda/allocator.h"
#include "cuda/runtime.h"

namespace wick::cuda {

namespace {

class PinnedAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    if (!is_available()) throw_no_device("pin_memory");
    size_t size = round_up(nbytes);
    std::lock_guard<std::mutex> lock(mutex_);
    process_events();
    Block* block = nullptr;
    auto& free_list = free_[size];
    if (!free_list.empty()) {
      block = free_list.back();
      free_list.pop_back();
    } else {
      void* ptr = nullptr;
      WICK_CUDA_CHECK(cudaHostAlloc(&ptr, size, cudaHostAllocDefault));
      block = new Block{ptr, size, false, {}};
      blocks_.emplace(ptr, block);
      ++host_allocs_;
    }
    block->allocated = true;
    allocated_ += static_cast<int64_t>(size);
    peak_ = std::max(peak_, allocated_);
    ++allocs_;
    return block->ptr;
  }

  void deallocate(void* ptr, size_t) override {
    if (ptr == nullptr) return;
    std::lock_guard<std::mutex> lock(mutex_);
    Block* block = blocks_.at(ptr);
    block->allocated = false;
    allocated_ -= static_cast<int64_t>(block->size);
    ++frees_;
    if (block->events.empty()) {
      free_[block->size].push_back(block);
    } else {
      pending_.push_back(block);
    }
  }

  bool record_use(const void* ptr, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(const_cast<void*>(ptr));
    if (it == blocks_.end() || !it->second->allocated) return false;
    // Bounded: a block copied from again and again (a reused pinned staging buffer) keeps at
    // most kMaxEvents events; finished ones are dropped first, then the oldest is waited for.
    auto& events = it->second->events;
    if (events.size() >= kMaxEvents) {
      events.erase(std::remove_if(events.begin(), events.end(),
                                  [](cudaEvent_t e) {
                                    cudaError_t state = cudaEventQuery(e);
                                    if (state == cudaErrorNotReady) {
                                      (void)cudaGetLastError();
                                      return false;
                                    }
                                    (void)cudaEventDestroy(e);
                                    return true;
                                  }),
                   events.end());
      while (events.size() >= kMaxEvents) {
        WICK_CUDA_CHECK(cudaEventSynchronize(events.front()));
        WICK_CUDA_CHECK(cudaEventDestroy(events.front()));
        events.erase(events.begin());
      }
    }
    cudaEvent_t event;
    WICK_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    WICK_CUDA_CHECK(cudaEventRecord(event, stream));
    it->second->events.push_back(event);
    return true;
  }

  bool owns(const void* ptr) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return blocks_.count(const_cast<void*>(ptr)) > 0;
  }

  Device device() const override { return Device(kCPU); }
  const char* name() const override { return "cuda pinned"; }
  AllocatorStats stats() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return {allocated_, peak_, allocs_, frees_};
  }
  void reset_peak() override {
    std::lock_guard<std::mutex> lock(mutex_);
    peak_ = allocated_;
  }

 private:
  static constexpr size_t kMaxEvents = 64;

  struct Block {
    void* ptr;
    size_t size;
    bool allocated = false;
    std::vector<cudaEvent_t> events;  // copies that may still read it
  };

  static size_t round_up(size_t n) {
    size_t size = 512;
    while (size < n) size <<= 1;
    return size;
  }

  // Moves freed blocks whose copies have all finished back to their free lists.
  void process_events() {
    for (auto it = pending_.begin(); it != pending_.end();) {
      Block* block = *it;
      auto& events = block->events;
      while (!events.empty()) {
        cudaError_t e = cudaEventQuery(events.back());
        if (e == cudaErrorNotReady) {
          (void)cudaGetLastError();
          break;
        }
        WICK_CUDA_CHECK(e);
        WICK_CUDA_CHECK(cudaEventDestroy(events.back()));
        events.pop_back();
      }
      if (events.empty()) {
        free_[block->size].push_back(block);
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
  }

  mutable std::mutex mutex_;
  std::map<void*, Block*> blocks_;
  std::map<size_t, std::vector<Block*>> free_;
  std::vector<Block*> pending_;
  int64_t allocated_ = 0, peak_ = 0, allocs_ = 0, frees_ = 0, host_allocs_ = 0;
};

PinnedAllocator& pinned() {
  static auto* allocator = new PinnedAllocator();  // never destroyed, like the device allocator
  return *allocator;
}

}  // namespace

Allocator* pinned_allocator() { return &pinned(); }

bool record_pinned_use(const void* ptr, cudaStream_t stream) {
  return pinned().record_use(ptr, stream);
}

bool is_pinned(const Tensor& tensor) {
  return tensor.defined() && tensor.device().is_cpu() &&
         tensor.storage()->allocator() == pinned_allocator();
}

Tensor pin_memory(const Tensor& tensor) {
  check_value(tensor.defined(), "pin_memory", "got an undefined tensor");
  check_value(tensor.device().is_cpu(), "pin_memory", "only CPU tensors can be pinned; got one on ",
              tensor.device().str());
  if (is_pinned(tensor)) return tensor;
  auto storage = std::make_shared<Storage>(tensor.nbytes(), pinned_allocator());
  Tensor out(std::make_shared<TensorImpl>(std::move(storage), 0, tensor.shape(),
                                          contiguous_strides(tensor.shape()), tensor.dtype()));
  out.copy_(tensor.detach());
  return out;
}

}  // namespace wick::cuda
