// wick::cuda - the CUDA API for programs: devices, streams, events, the caching allocator's
// statistics, pinned memory, and the math-mode switches. It mirrors torch.cuda:
//
//   if (wick::cuda::is_available()) {
//     Tensor x = randn({1024, 1024}).to(Device(kCUDA));
//     std::cout << wick::cuda::memory_summary();
//   }
//
// This header needs no CUDA headers, so every build has it. In a build without CUDA
// (cuda/no_cuda.cpp) is_available() is false, device_count() is 0, and everything else throws
// "[cuda] wick was built without CUDA". In a CUDA build on a machine without a GPU the same
// calls throw "[cuda] no CUDA device is available".
//
// A `device` argument of -1 means the current device.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "core/tensor.h"

namespace wick::cuda {

// ---- devices ------------------------------------------------------------------------------------

bool is_built();  // wick was compiled with CUDA (a GPU may still be missing)
bool is_available();
int device_count();
int current_device();
void set_device(int device);
std::string get_device_name(int device = -1);

struct DeviceProperties {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int64_t total_memory = 0;  // bytes
  int multiprocessor_count = 0;
};
DeviceProperties get_device_properties(int device = -1);

// Waits until all work queued on `device` has finished.
void synchronize(int device = -1);

// Makes `device` current for its lifetime, then restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_;
};

// Versions: the CUDA runtime and driver (e.g. 13000), cuDNN (e.g. 91900) as found at run time.
int runtime_version();
int driver_version();
int cudnn_version();

// ---- streams and events -------------------------------------------------------------------------

// A queue of work on one device. Copies of a Stream name the same queue. Streams made by
// create() live until the process exits, like PyTorch's stream pool, because the caching
// allocator may hold blocks and events tied to them.
class Stream {
 public:
  Stream() = default;  // the default stream of device 0
  static Stream create(int device = -1);
  static Stream default_stream(int device = -1);
  static Stream current(int device = -1);  // this thread's current stream on `device`

  int device() const { return device_; }
  void* handle() const { return handle_; }  // the cudaStream_t
  bool query() const;                       // true when all its work has finished
  void synchronize() const;
  bool operator==(const Stream& o) const { return handle_ == o.handle_ && device_ == o.device_; }
  bool operator!=(const Stream& o) const { return !(*this == o); }

 private:
  Stream(int device, void* handle) : device_(device), handle_(handle) {}
  int device_ = 0;
  void* handle_ = nullptr;
};

// Queues a kernel that busy-waits for about `cycles` GPU clock cycles on the current stream, to
// keep a stream busy in tests and stream labs (PyTorch's torch.cuda._sleep).
void spin(int64_t cycles);

// Makes `stream` this thread's current stream on its device (ops queue their kernels there).
void set_current_stream(const Stream& stream);

class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream previous_;
};

class Event {
 public:
  explicit Event(bool enable_timing = false);
  void record(const Stream& stream);
  void record();                          // on the current stream
  void wait(const Stream& stream) const;  // `stream` waits for the event (no host wait)
  bool query() const;
  void synchronize() const;
  // Milliseconds from this event to `end` (both recorded, with timing enabled).
  float elapsed_ms(const Event& end) const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

// ---- graphs ------------------------------------------------------------------------------------

// A CUDA Graph (PyTorch's torch.cuda.CUDAGraph). Between capture_begin() and capture_end() the
// work queued on the current stream is recorded, not run; replay() then launches all of it with
// one call, with the pointers it had when captured. What ops allocate during the capture comes
// from a pool that stays the graph's until the graph is reset or destroyed (Note [graph pool] in
// core/memory/graph_pool.h). To give a replay new data, copy it into the tensors the captured
// work read. Capture on a stream made by Stream::create(): the default stream cannot be captured.
class CUDAGraph {
 public:
  CUDAGraph();
  ~CUDAGraph();  // waits for the device, then frees the graph and its pool
  CUDAGraph(const CUDAGraph&) = delete;
  CUDAGraph& operator=(const CUDAGraph&) = delete;

  // Throws std::runtime_error on the default stream or when this graph is captured already.
  void capture_begin();
  // Throws std::runtime_error when the capture failed (an op synchronised with the host, or used
  // another stream without joining it back); the graph is then empty and may capture again.
  void capture_end();
  void replay();  // on the current stream
  void reset();   // back to empty, its memory freed
  bool captured() const;
  int64_t num_nodes() const;   // kernels, copies and memsets in the graph
  int64_t pool_bytes() const;  // what its pool holds (requested sizes)

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// ---- memory ------------------------------------------------------------------------------------

// The caching allocator's statistics for `device` (PyTorch's names; see core/memory/alloc_stats.h).
int64_t memory_allocated(int device = -1);
int64_t memory_reserved(int device = -1);
int64_t max_memory_allocated(int device = -1);
int64_t max_memory_reserved(int device = -1);
std::map<std::string, int64_t> memory_stats(int device = -1);
std::string memory_summary(int device = -1, bool abbreviated = false);
void reset_peak_memory_stats(int device = -1);
void reset_accumulated_memory_stats(int device = -1);
// Gives every cached, unused block back to the device (on all devices).
void empty_cache();
// Caps what the allocator may reserve on `device` at `fraction` of its memory.
void set_per_process_memory_fraction(double fraction, int device = -1);
// The tensor's memory is also used on `stream`: do not reuse it before that work is done.
void record_stream(const Tensor& tensor, const Stream& stream);
// Records every allocation and free on every device as JSON lines (tools/alloc_replay).
void start_memory_trace(const std::string& path);
void stop_memory_trace();
// PyTorch's torch.cuda.memory._record_memory_history / _snapshot for `device`: a bounded history
// of what its caching allocator did (Note [memory history] in core/memory/history.h), and the
// snapshot - segments, blocks and that history - as JSON text.
void record_memory_history(bool enabled, size_t max_entries = 100000, int device = -1);
std::string memory_snapshot_json(int device = -1);

// A copy of a CPU tensor in page-locked (pinned) host memory, from a caching pinned allocator:
// copies from it to a GPU run asynchronously. DataLoader(pin_memory=true) uses it.
Tensor pin_memory(const Tensor& tensor);
bool is_pinned(const Tensor& tensor);
// Within its scope, this thread's copies from pinned host memory to a GPU return without waiting
// (PyTorch's non_blocking=True); outside, they wait for the copy, so the pinned tensor may be
// written right after. Note [host-device copies] in cuda/copy.cpp.
class NonBlockingCopies {
 public:
  explicit NonBlockingCopies(bool enable = true);
  ~NonBlockingCopies();
  NonBlockingCopies(const NonBlockingCopies&) = delete;
  NonBlockingCopies& operator=(const NonBlockingCopies&) = delete;
  static bool active();

 private:
  bool previous_;
};

// ---- math modes --------------------------------------------------------------------------------

// TF32 tensor-core math for float32 matmuls (torch.backends.cuda.matmul.allow_tf32; off by
// default, as in PyTorch): about 8x faster on Ampere and later, with 10-bit mantissas.
void set_allow_tf32(bool allow);
bool allow_tf32();
// TF32 for float32 convolutions (torch.backends.cudnn.allow_tf32; on by default, as in PyTorch).
void set_cudnn_allow_tf32(bool allow);
bool cudnn_allow_tf32();
// Benchmark mode (torch.backends.cudnn.benchmark): time the candidate algorithms of each new
// convolution shape and keep the fastest, instead of taking cuDNN's heuristic choice.
void set_cudnn_benchmark(bool benchmark);
bool cudnn_benchmark();
// cuDNN for softmax, average pooling and batch norm (torch.backends.cudnn.enabled; on by
// default): off, the hand-written kernels run (Note [cuDNN or hand-written] in cudnn_nn.cpp).
// Convolutions always use cuDNN: wick has no other GPU convolution.
void set_cudnn_enabled(bool enabled);
bool cudnn_enabled();

}  // namespace wick::cuda
