// GraphPool: the memory a captured CUDA Graph replays into (PyTorch's private graph pool).
//
// Note [graph pool]
// A CUDA Graph replays its kernels with the pointers they had when they were captured: every
// buffer an op allocated during the capture (an output, a cuDNN workspace, reduction partials)
// is baked into the graph. In eager code those buffers go back to the caching allocator when
// their tensors die, and the next allocation may take them; a replay would then write over
// someone else's tensor. So while a capture runs, the capturing thread allocates through a
// GraphPool:
//
//   - a block freed during or after the capture stays in the pool, unused but reserved;
//   - an allocation during the capture first takes the smallest unused pool block that fits
//     (a buffer freed earlier in the captured sequence: the graph's kernels run in stream order,
//     as the eager ones did), so the pool's size is the captured sequence's peak, not its sum;
//   - only when the pool is destroyed (with the graph, after the device has finished with it)
//     do its unused blocks go back to the allocator; blocks still held by tensors go back when
//     those tensors die.
//
// Other threads' allocations never see the pool. The pool is device-agnostic: the CPU tests run
// it over the simulated device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <thread>
#include <unordered_map>

namespace wick::memory {

class DeviceAllocator;

class GraphPool {
 public:
  // Unregisters from the allocator: unused blocks are freed, blocks in use stop being the pool's.
  ~GraphPool();
  GraphPool(const GraphPool&) = delete;
  GraphPool& operator=(const GraphPool&) = delete;

  int64_t blocks() const;  // blocks the pool owns, in use or not
  int64_t bytes() const;   // their requested sizes, summed
  int64_t reused() const;  // allocations served from an unused pool block
  bool capturing() const;  // whether a thread allocates through it now

 private:
  friend class DeviceAllocator;
  explicit GraphPool(DeviceAllocator* allocator) : allocator_(allocator) {}

  DeviceAllocator* const allocator_;
  // Guarded by the allocator's pool mutex.
  std::unordered_map<void*, size_t> owned_;  // every block of the pool, by its requested size
  std::multimap<size_t, void*> unused_;      // those no tensor holds, smallest first
  std::thread::id capturing_thread_;
  bool capturing_ = false;
  int64_t reused_ = 0;
};

}  // namespace wick::memory
