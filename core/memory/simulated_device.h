// A simulated device: a MemoryBackend with a fixed capacity, streams and events, living in host
// memory. The allocator tests and the allocator labs run on it, so every rule of the caching
// allocator can be checked on a machine without a GPU.
//
// Streams are simulated as queues of work: enqueue_work(s) stands for a kernel launched on s, and
// finish_work(s) for the device catching up. An event recorded on s completes when the work
// enqueued on s before it has finished, exactly the guarantee a cudaEvent gives.
//
// Backing::Host returns real, usable host memory (tensors can live in it). Backing::Virtual hands
// out addresses that are never touched, so a trace recorded on an 80 GB GPU can be replayed on a
// laptop (tools/alloc_replay).
#pragma once

#include <atomic>
#include <mutex>
#include <vector>

#include "core/memory/backend.h"

namespace wick::memory {

class SimulatedDevice final : public MemoryBackend {
 public:
  enum class Backing { Host, Virtual };

  explicit SimulatedDevice(size_t capacity, Backing backing = Backing::Host,
                           Device device = Device(kCPU));
  ~SimulatedDevice() override;

  std::string name() const override { return "simulated device"; }
  Device device() const override { return device_; }
  void* malloc(size_t nbytes) override;
  void free(void* ptr, size_t nbytes) override;
  size_t total_memory() const override { return capacity_; }
  size_t free_memory() const override;

  StreamId current_stream() const override;
  EventId record_event(StreamId stream) override;
  bool query_event(EventId event) override;
  void synchronize_event(EventId event) override;
  void release_event(EventId event) override;

  // ---- the simulation ----
  StreamId create_stream();
  void set_current_stream(StreamId stream);  // one current stream per simulated device
  void enqueue_work(StreamId stream);        // a kernel was launched on `stream`
  void finish_work(StreamId stream);         // all work queued on `stream` so far has run
  void finish_all();

  // ---- counters ----
  int64_t num_mallocs() const;
  int64_t num_frees() const;
  int64_t bytes_in_use() const;
  int64_t peak_bytes_in_use() const;
  int64_t num_events_recorded() const;

 private:
  struct StreamState {
    uint64_t enqueued = 0;   // work items launched
    uint64_t completed = 0;  // work items finished
  };
  struct EventState {
    StreamId stream = 0;
    uint64_t target = 0;  // complete once the stream's `completed` reaches it
    bool in_use = false;
  };
  StreamState& stream_state(StreamId stream);
  EventState& event_state(EventId event);

  const size_t capacity_;
  const Backing backing_;
  const Device device_;
  mutable std::mutex mutex_;
  std::vector<StreamState> streams_;
  std::vector<EventState> events_;  // EventId = index + 1
  std::vector<EventId> free_events_;
  std::atomic<StreamId> current_stream_{kDefaultStream};  // read on every allocation
  uint64_t next_virtual_address_ = uint64_t{1} << 40;
  int64_t in_use_ = 0, peak_ = 0, mallocs_ = 0, frees_ = 0, events_recorded_ = 0;
};

}  // namespace wick::memory
