// Allocator policies: the ways a framework can turn "a tensor needs n bytes" into device memory.
//
// Note [allocator policies]
// A device malloc (cudaMalloc) costs tens of microseconds to milliseconds and synchronizes the
// device on free, so frameworks keep memory they have obtained and hand it out again. How they do
// it is a design choice with measurable consequences, and wick has one of each, all behind this
// interface and all runnable on a real GPU or on the simulated device:
//
//   caching      PyTorch's caching allocator (caching_allocator.h): many segments (2 MiB for
//                small blocks, 20 MiB or exact for large ones), best fit per stream, split and
//                coalesce, give memory back on OOM or empty_cache.
//   no_caching   a device malloc and free per tensor (PYTORCH_NO_CUDA_MEMORY_CACHING=1): the
//                baseline that shows what caching buys.
//   bfc          TensorFlow's best-fit-with-coalescing allocator (bfc_allocator.h), which
//                reserves a fixed fraction of the device up front and manages it in bins.
//   bfc_growth   the same, growing its regions on demand (TF's allow_growth).
//
// Replaying one recorded trace under each (trace.h, tools/alloc_replay) compares their device
// mallocs, peak reserved memory and fragmentation.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/memory/alloc_config.h"
#include "core/memory/alloc_stats.h"
#include "core/memory/backend.h"
#include "core/memory/history.h"

namespace wick::memory {

class AllocatorPolicy {
 public:
  virtual ~AllocatorPolicy() = default;

  virtual const char* name() const = 0;
  // Memory for `nbytes` used on `stream` (nullptr for 0 bytes); throws wick::OutOfMemoryError.
  virtual void* malloc(size_t nbytes, StreamId stream) = 0;
  virtual void free(void* ptr) = 0;
  // The block holding `ptr` is also used on `stream`: it must not be reused before the work
  // queued there has finished (PyTorch's Tensor.record_stream).
  virtual void record_stream(void* ptr, StreamId stream) {
    (void)ptr;
    (void)stream;
  }
  // Gives cached, unused memory back to the device.
  virtual void empty_cache() {}

  virtual DeviceStats stats() const = 0;
  virtual void reset_peak_stats() = 0;
  virtual void reset_accumulated_stats() = 0;
  // The largest block that could be handed out without a device malloc (fragmentation metric).
  virtual size_t largest_free_block() const = 0;
  virtual MemoryBackend* backend() const = 0;

  // Every segment and its blocks now, sorted by address (PyTorch's memory_snapshot()). Not
  // pure, so a lab's policy (tutorials/05) need not have one.
  virtual std::vector<SegmentInfo> snapshot() const { return {}; }

  // Starts recording into `history` (Note [memory history]), or stops with nullptr. The
  // policies below record; one that does not leaves the history empty.
  void set_history(std::shared_ptr<MemoryHistory> history);
  std::shared_ptr<MemoryHistory> history() const;

 protected:
  // Records one entry if a history is set. Policies call it under their own lock, so entries
  // come in the order the policy did things; the flag keeps the cost at one load when off.
  void note(HistoryEntry::Action action, uint64_t address, uint64_t size, StreamId stream) const {
    if (recording_.load(std::memory_order_relaxed)) note_slow(action, address, size, stream);
  }

 private:
  void note_slow(HistoryEntry::Action action, uint64_t address, uint64_t size,
                 StreamId stream) const;
  mutable std::mutex history_mutex_;
  // A shared_ptr copied under the mutex for each entry: set_history(nullptr) on another thread
  // cannot free a history that an entry is being written to.
  std::shared_ptr<MemoryHistory> history_;
  std::atomic<bool> recording_{false};
};

// The policy's snapshot with its history (empty when none is recording).
MemorySnapshot take_snapshot(const AllocatorPolicy& policy);

// "caching", "no_caching", "bfc" or "bfc_growth" over `backend`.
std::unique_ptr<AllocatorPolicy> make_policy(const std::string& name, MemoryBackend* backend,
                                             const AllocatorConfig& config = AllocatorConfig());

// The baseline: one device malloc per allocation, freed at once.
class NoCachingAllocator final : public AllocatorPolicy {
 public:
  explicit NoCachingAllocator(MemoryBackend* backend);
  ~NoCachingAllocator() override;

  const char* name() const override { return "no_caching"; }
  void* malloc(size_t nbytes, StreamId stream) override;
  void free(void* ptr) override;
  DeviceStats stats() const override;
  void reset_peak_stats() override;
  void reset_accumulated_stats() override;
  size_t largest_free_block() const override { return 0; }
  MemoryBackend* backend() const override { return backend_; }
  std::vector<SegmentInfo> snapshot() const override;

 private:
  struct State;
  MemoryBackend* backend_;
  std::unique_ptr<State> state_;
};

}  // namespace wick::memory
