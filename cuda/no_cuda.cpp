// The CUDA entry points of a build without CUDA: a backend with no kernels and an allocator that
// explains, is_available() == false, device_count() == 0, and everything else throws
// "[cuda] wick was built without CUDA".
#include <stdexcept>

#include "core/backend.h"
#include "core/dispatch.h"
#include "cuda/api.h"
#include "cuda/build_info.h"

namespace wick {

namespace {

[[noreturn]] void no_cuda(const char* what) {
  throw std::runtime_error(std::string("[cuda] wick was built without CUDA (") + what +
                           "); rebuild with the CUDA toolkit installed and -DWICK_CUDA=ON");
}

class NoCudaAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    no_cuda("cannot allocate a CUDA tensor");
  }
  void deallocate(void*, size_t) override {}
  Device device() const override { return Device(kCUDA, 0); }
  const char* name() const override { return "no cuda"; }
  AllocatorStats stats() const override { return {}; }
  void reset_peak() override {}
};

// A "cuda" backend with no kernels whose allocator explains, so that making a CUDA tensor says
// how to get one. It has none of the hooks for static graphs either (capture, run-time
// compilation), which jit/ reports as "wick was built without CUDA".
Backend no_cuda_backend() {
  Backend b;
  b.type = kCUDA;
  b.name = "cuda";
  b.register_kernels = [](KernelRegistry&) {};
  b.allocator = []() -> Allocator* {
    static NoCudaAllocator allocator;
    return &allocator;
  };
  b.device_count = [] { return 0; };
  return b;
}

const bool registered = register_backend(no_cuda_backend());

}  // namespace

namespace cuda {

bool is_built() { return false; }
bool is_available() { return false; }
int device_count() { return 0; }
int current_device() { no_cuda("current_device"); }
void set_device(int) { no_cuda("set_device"); }
std::string get_device_name(int) { no_cuda("get_device_name"); }
DeviceProperties get_device_properties(int) { no_cuda("get_device_properties"); }
void synchronize(int) { no_cuda("synchronize"); }
DeviceGuard::DeviceGuard(int) : previous_(-1) { no_cuda("DeviceGuard"); }
DeviceGuard::~DeviceGuard() = default;
int runtime_version() { return 0; }
int driver_version() { return 0; }
int cudnn_version() { return 0; }
BuildInfo build_info() { return {}; }
int cudnn_cudart_version() { return 0; }

Stream Stream::create(int) { no_cuda("Stream::create"); }
Stream Stream::default_stream(int) { no_cuda("Stream::default_stream"); }
Stream Stream::current(int) { no_cuda("Stream::current"); }
bool Stream::query() const { no_cuda("Stream::query"); }
void Stream::synchronize() const { no_cuda("Stream::synchronize"); }
void spin(int64_t) { no_cuda("spin"); }
void set_current_stream(const Stream&) { no_cuda("set_current_stream"); }
StreamGuard::StreamGuard(const Stream&) { no_cuda("StreamGuard"); }
StreamGuard::~StreamGuard() = default;

struct CUDAGraph::Impl {};
CUDAGraph::CUDAGraph() = default;
CUDAGraph::~CUDAGraph() = default;
void CUDAGraph::capture_begin() { no_cuda("CUDAGraph.capture_begin"); }
void CUDAGraph::capture_end() { no_cuda("CUDAGraph.capture_end"); }
void CUDAGraph::replay() { no_cuda("CUDAGraph.replay"); }
void CUDAGraph::reset() {}
bool CUDAGraph::captured() const { return false; }
int64_t CUDAGraph::num_nodes() const { return 0; }
int64_t CUDAGraph::pool_bytes() const { return 0; }

struct Event::Impl {};
Event::Event(bool) { no_cuda("Event"); }
void Event::record(const Stream&) { no_cuda("Event::record"); }
void Event::record() { no_cuda("Event::record"); }
void Event::wait(const Stream&) const { no_cuda("Event::wait"); }
bool Event::query() const { no_cuda("Event::query"); }
void Event::synchronize() const { no_cuda("Event::synchronize"); }
float Event::elapsed_ms(const Event&) const { no_cuda("Event::elapsed_ms"); }

int64_t memory_allocated(int) { no_cuda("memory_allocated"); }
int64_t memory_reserved(int) { no_cuda("memory_reserved"); }
int64_t max_memory_allocated(int) { no_cuda("max_memory_allocated"); }
int64_t max_memory_reserved(int) { no_cuda("max_memory_reserved"); }
std::map<std::string, int64_t> memory_stats(int) { no_cuda("memory_stats"); }
std::string memory_summary(int, bool) { no_cuda("memory_summary"); }
void reset_peak_memory_stats(int) { no_cuda("reset_peak_memory_stats"); }
void reset_accumulated_memory_stats(int) { no_cuda("reset_accumulated_memory_stats"); }
void empty_cache() { no_cuda("empty_cache"); }
void set_per_process_memory_fraction(double, int) { no_cuda("set_per_process_memory_fraction"); }
void record_stream(const Tensor&, const Stream&) { no_cuda("record_stream"); }
void start_memory_trace(const std::string&) { no_cuda("start_memory_trace"); }
void stop_memory_trace() {}
void record_memory_history(bool, size_t, int) { no_cuda("_record_memory_history"); }
std::string memory_snapshot_json(int) { no_cuda("_snapshot"); }

Tensor pin_memory(const Tensor&) { no_cuda("pin_memory"); }
bool is_pinned(const Tensor&) { return false; }
// Kept (a no-op) so that code asking for non-blocking copies builds without CUDA.
NonBlockingCopies::NonBlockingCopies(bool) : previous_(false) {}
NonBlockingCopies::~NonBlockingCopies() = default;
bool NonBlockingCopies::active() { return false; }

// The math-mode switches are plain flags with PyTorch's defaults, so code that sets them runs
// unchanged on a build without CUDA (they affect nothing there).
namespace {
bool g_allow_tf32 = false, g_cudnn_allow_tf32 = true, g_cudnn_benchmark = false;
bool g_cudnn_enabled = true;
}  // namespace
void set_allow_tf32(bool allow) { g_allow_tf32 = allow; }
bool allow_tf32() { return g_allow_tf32; }
void set_cudnn_allow_tf32(bool allow) { g_cudnn_allow_tf32 = allow; }
bool cudnn_allow_tf32() { return g_cudnn_allow_tf32; }
void set_cudnn_benchmark(bool benchmark) { g_cudnn_benchmark = benchmark; }
bool cudnn_benchmark() { return g_cudnn_benchmark; }
void set_cudnn_enabled(bool enabled) { g_cudnn_enabled = enabled; }
bool cudnn_enabled() { return g_cudnn_enabled; }

}  // namespace cuda

}  // namespace wick
