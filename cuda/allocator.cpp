// The CUDA backend of the caching allocator: segments from cudaMalloc, stream ordering from
// cudaEvents, one allocator policy per device, installed as core's allocator for kCUDA.
#include <cuda_runtime.h>

#include <iostream>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/memory/device_allocator.h"
#include "cuda/allocator.h"
#include "cuda/runtime.h"

namespace wick::cuda {

namespace {

using memory::EventId;
using memory::StreamId;

class CudaBackend final : public memory::MemoryBackend {
 public:
  explicit CudaBackend(int device) : device_(device) {
    DeviceGuard guard(device);
    size_t free = 0;
    WICK_CUDA_CHECK(cudaMemGetInfo(&free, &total_));
  }
  ~CudaBackend() override {
    for (cudaEvent_t e : event_pool_) (void)cudaEventDestroy(e);
  }

  std::string name() const override { return "cuda:" + std::to_string(device_); }
  Device device() const override { return Device(kCUDA, device_); }

  void* malloc(size_t nbytes) override {
    DeviceGuard guard(device_);
    void* ptr = nullptr;
    cudaError_t e = cudaMalloc(&ptr, nbytes);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // an OOM is an answer, not a sticky error
      return nullptr;
    }
    WICK_CUDA_CHECK(e);
    return ptr;
  }

  void free(void* ptr, size_t) override {
    DeviceGuard guard(device_);
    WICK_CUDA_CHECK(cudaFree(ptr));
  }

  size_t total_memory() const override { return total_; }
  size_t free_memory() const override {
    DeviceGuard guard(device_);
    size_t free = 0, total = 0;
    WICK_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free;
  }

  StreamId current_stream() const override {
    return reinterpret_cast<StreamId>(current_raw_stream(device_));
  }

  // Events come from a pool: creating one costs microseconds, and the allocator records one per
  // stream use of every freed block.
  EventId record_event(StreamId stream) override {
    DeviceGuard guard(device_);
    cudaEvent_t e;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (event_pool_.empty()) {
        WICK_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      } else {
        e = event_pool_.back();
        event_pool_.pop_back();
      }
    }
    WICK_CUDA_CHECK(cudaEventRecord(e, reinterpret_cast<cudaStream_t>(stream)));
    return reinterpret_cast<EventId>(e);
  }

  bool query_event(EventId event) override {
    cudaError_t e = cudaEventQuery(reinterpret_cast<cudaEvent_t>(event));
    if (e == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    WICK_CUDA_CHECK(e);
    return true;
  }

  void synchronize_event(EventId event) override {
    WICK_CUDA_CHECK(cudaEventSynchronize(reinterpret_cast<cudaEvent_t>(event)));
  }

  void release_event(EventId event) override {
    std::lock_guard<std::mutex> lock(mutex_);
    event_pool_.push_back(reinterpret_cast<cudaEvent_t>(event));
  }

 private:
  const int device_;
  size_t total_ = 0;
  std::mutex mutex_;
  std::vector<cudaEvent_t> event_pool_;
};

// core's Allocator for kCUDA: routes each call to the current device's DeviceAllocator.
class CudaAllocator final : public Allocator {
 public:
  CudaAllocator()
      : devices_(device_count_or_zero()), once_(devices_.size()), created_(devices_.size()) {}

  memory::DeviceAllocator& on(int device) {
    std::call_once(once_.at(device), [&] {
      auto backend = std::make_unique<CudaBackend>(device);
      memory::AllocatorConfig config = memory::AllocatorConfig::from_env();
      auto policy = memory::make_policy(config.policy, backend.get(), config);
      devices_[device].backend = std::move(backend);
      devices_[device].allocator = std::make_unique<memory::DeviceAllocator>(
          devices_[device].backend.get(), std::move(policy));
      if (!trace_path_.empty()) devices_[device].allocator->start_trace(trace_for(device));
      std::lock_guard<std::mutex> lock(created_mutex_);
      created_[device] = true;
    });
    return *devices_[device].allocator;
  }

  void* allocate(size_t nbytes) override {
    int device;
    WICK_CUDA_CHECK(cudaGetDevice(&device));
    void* ptr = on(device).allocate(nbytes);
    if (devices_.size() > 1 && ptr != nullptr) {
      std::lock_guard<std::mutex> lock(owners_mutex_);
      owners_[ptr] = device;
    }
    return ptr;
  }

  // Note [frees after a sticky error]: deallocate runs from destructors (Storage, DeviceBuffer),
  // which must not throw. After a sticky CUDA error (an illegal address, a failed launch) every
  // CUDA call fails, including the event record and query a free does for a block used on other
  // streams (record_stream); the error is reported once on stderr and the block is leaked: the
  // context is unusable anyway, and the exception the op itself threw says what happened.
  void deallocate(void* ptr, size_t nbytes) override {
    try {
      deallocate_or_throw(ptr, nbytes);
    } catch (const std::exception& e) {
      static std::once_flag reported;
      std::call_once(reported, [&] {
        std::cerr << "[wick] warning: freeing GPU memory failed (" << e.what()
                  << "); the block is leaked, and later frees that fail are not reported\n";
      });
    }
  }

  void deallocate_or_throw(void* ptr, size_t nbytes) {
    if (ptr == nullptr) return;
    int device = 0;
    if (devices_.size() > 1) {
      std::lock_guard<std::mutex> lock(owners_mutex_);
      auto it = owners_.find(ptr);
      check_state(it != owners_.end(), "cuda allocator", "free of an unknown pointer ", ptr);
      device = it->second;
      owners_.erase(it);
    }
    on(device).deallocate(ptr, nbytes);
  }

  Device device() const override {
    int device = 0;
    WICK_CUDA_CHECK(cudaGetDevice(&device));
    return Device(kCUDA, device);
  }
  const char* name() const override { return "cuda caching"; }
  AllocatorStats stats() const override {
    return const_cast<CudaAllocator*>(this)->on(current_device()).stats();
  }
  void reset_peak() override { on(current_device()).reset_peak(); }

  int num_devices() const { return static_cast<int>(devices_.size()); }
  // Whether `device` has an allocator yet (asking for one would create a CUDA context there).
  bool created(int device) {
    std::lock_guard<std::mutex> lock(created_mutex_);
    return created_.at(device);
  }

  void start_trace(const std::string& path) {
    trace_path_ = path;
    for (int d = 0; d < num_devices(); ++d) {
      if (devices_[d].allocator) devices_[d].allocator->start_trace(trace_for(d));
    }
  }
  void stop_trace() {
    trace_path_.clear();
    for (auto& d : devices_) {
      if (d.allocator) d.allocator->stop_trace();
    }
  }

 private:
  // Device 0 writes to `path` itself; other devices to path.<device>.
  std::string trace_for(int device) const {
    return device == 0 ? trace_path_ : trace_path_ + "." + std::to_string(device);
  }

  struct PerDevice {
    std::unique_ptr<CudaBackend> backend;
    std::unique_ptr<memory::DeviceAllocator> allocator;
  };
  std::vector<PerDevice> devices_;
  std::vector<std::once_flag> once_;
  std::mutex created_mutex_;
  std::vector<bool> created_;
  std::mutex owners_mutex_;
  std::unordered_map<void*, int> owners_;  // with several devices: which one owns a pointer
  std::string trace_path_;
};

// Never destroyed: tensors may be freed during static destruction.
CudaAllocator& cuda_allocator() {
  static auto* allocator = new CudaAllocator();
  return *allocator;
}

// What kCUDA allocates with when there is no device: a clear error instead of a crash.
class NoDeviceAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    throw_no_device("cuda");
  }
  void deallocate(void*, size_t) override {}
  Device device() const override { return Device(kCUDA, 0); }
  const char* name() const override { return "no cuda device"; }
  AllocatorStats stats() const override { return {}; }
  void reset_peak() override {}
};

int resolve(int device) {
  if (!is_available()) throw_no_device("cuda");
  return device < 0 ? current_device() : device;
}

memory::CachingAllocator* caching(int device, const char* op) {
  auto* c = dynamic_cast<memory::CachingAllocator*>(&device_policy(device));
  check_state(c != nullptr, op, "needs the caching allocator policy; WICK_ALLOC_CONF chose ",
              device_policy(device).name());
  return c;
}

}  // namespace

Allocator* cuda_backend_allocator() {
  static NoDeviceAllocator no_device;
  if (device_count_or_zero() > 0) return &cuda_allocator();
  return &no_device;
}

memory::AllocatorPolicy& device_policy(int device) {
  device = resolve(device);
  check_index(device < cuda_allocator().num_devices(), "cuda", "no device ", device);
  return cuda_allocator().on(device).policy();
}

memory::DeviceAllocator& device_allocator(int device) {
  device = resolve(device);
  check_index(device < cuda_allocator().num_devices(), "cuda", "no device ", device);
  return cuda_allocator().on(device);
}

DeviceBuffer::DeviceBuffer(size_t nbytes) : nbytes_(nbytes) {
  data_ = get_allocator(kCUDA)->allocate(nbytes);
}

DeviceBuffer::~DeviceBuffer() { get_allocator(kCUDA)->deallocate(data_, nbytes_); }

// ---- the public memory API (cuda/api.h) ----

std::map<std::string, int64_t> memory_stats(int device) {
  return memory::stats_to_map(device_policy(device).stats());
}

int64_t memory_allocated(int device) {
  return device_policy(device).stats().allocated_bytes[memory::kAggregate].current;
}
int64_t memory_reserved(int device) {
  return device_policy(device).stats().reserved_bytes[memory::kAggregate].current;
}
int64_t max_memory_allocated(int device) {
  return device_policy(device).stats().allocated_bytes[memory::kAggregate].peak;
}
int64_t max_memory_reserved(int device) {
  return device_policy(device).stats().reserved_bytes[memory::kAggregate].peak;
}

std::string memory_summary(int device, bool abbreviated) {
  device = resolve(device);
  return memory::memory_summary(device_policy(device).stats(),
                                "device ID " + std::to_string(device), abbreviated);
}

void reset_peak_memory_stats(int device) { device_policy(device).reset_peak_stats(); }
void reset_accumulated_memory_stats(int device) { device_policy(device).reset_accumulated_stats(); }

void empty_cache() {
  if (!is_available()) throw_no_device("cuda");
  for (int d = 0; d < device_count(); ++d) {
    if (cuda_allocator().created(d)) device_policy(d).empty_cache();
  }
}

void set_per_process_memory_fraction(double fraction, int device) {
  caching(device, "set_per_process_memory_fraction")->set_memory_fraction(fraction);
}

void record_stream(const Tensor& tensor, const Stream& stream) {
  check_cuda_tensor("record_stream", tensor);
  // The storage's base pointer names the block, so a view at an offset protects it too.
  device_policy(tensor.device().index)
      .record_stream(tensor.storage()->data(), reinterpret_cast<memory::StreamId>(stream.handle()));
}

void start_memory_trace(const std::string& path) {
  if (!is_available()) throw_no_device("cuda");
  cuda_allocator().start_trace(path);
}

void stop_memory_trace() {
  if (is_available()) cuda_allocator().stop_trace();
}

void record_memory_history(bool enabled, size_t max_entries, int device) {
  device = resolve(device);
  device_policy(device).set_history(enabled ? std::make_shared<memory::MemoryHistory>(max_entries)
                                            : nullptr);
}

std::string memory_snapshot_json(int device) {
  device = resolve(device);
  return memory::snapshot_to_json(memory::take_snapshot(device_policy(device)));
}

}  // namespace wick::cuda
