// Devices, streams and events: the thin layer over the CUDA runtime behind cuda/api.h.
#include <cudnn.h>

#include <mutex>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "cuda/build_info.h"
#include "cuda/runtime.h"

namespace wick::cuda {

void throw_cuda_error(cudaError_t error, const char* call, const char* file, int line) {
  std::ostringstream os;
  os << "[cuda] " << call << " failed at " << file << ":" << line << ": " << cudaGetErrorName(error)
     << ": " << cudaGetErrorString(error);
  throw std::runtime_error(os.str());
}

namespace {

struct DeviceInfo {
  int count = 0;
  std::string error;  // why there is none
};

const DeviceInfo& device_info() {
  static const DeviceInfo info = [] {
    DeviceInfo i;
    cudaError_t e = cudaGetDeviceCount(&i.count);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();  // not sticky: a CPU-only run must go on
      i.count = 0;
      i.error = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
      if (e == cudaErrorInsufficientDriver) {
        i.error += "; is an NVIDIA driver installed? (wick was built with CUDA " +
                   std::to_string(CUDART_VERSION / 1000) + "." +
                   std::to_string(CUDART_VERSION % 1000 / 10) + ")";
      }
    } else if (i.count == 0) {
      i.error = "the CUDA runtime found no devices";
    }
    return i;
  }();
  return info;
}

// The current stream of each device, per thread; nullptr is the legacy default stream.
thread_local std::vector<cudaStream_t> t_current_streams;

int resolve(int device) {
  int count = device_info().count;
  if (count == 0) throw_no_device("cuda");
  if (device < 0) WICK_CUDA_CHECK(cudaGetDevice(&device));
  check_index(device < count, "cuda", "device ", device, " is out of range: there are ", count,
              " CUDA devices");
  return device;
}

}  // namespace

void throw_no_device(const char* op) {
  throw std::runtime_error(
      error_message(op, "no CUDA device is available (", device_info().error, ")"));
}

int device_count_or_zero(std::string* error) {
  if (error != nullptr) *error = device_info().error;
  return device_info().count;
}

void check_cuda_tensor(const char* op, const Tensor& t) {
  check_value(t.device().is_cuda(), op, "expected a CUDA tensor; got one on ", t.device().str());
}

int multiprocessor_count(int device) {
  static std::vector<int> counts = [] {
    std::vector<int> c(device_info().count, 0);
    for (int d = 0; d < static_cast<int>(c.size()); ++d) {
      WICK_CUDA_CHECK(cudaDeviceGetAttribute(&c[d], cudaDevAttrMultiProcessorCount, d));
    }
    return c;
  }();
  return counts.at(device);
}

cudaStream_t current_raw_stream(int device) {
  if (device < static_cast<int>(t_current_streams.size())) return t_current_streams[device];
  return nullptr;
}

// ---- devices ----

bool is_available() { return device_info().count > 0; }
int device_count() { return device_info().count; }

int current_device() {
  resolve(0);
  int d;
  WICK_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

void set_device(int device) { WICK_CUDA_CHECK(cudaSetDevice(resolve(device))); }

DeviceProperties get_device_properties(int device) {
  device = resolve(device);
  cudaDeviceProp prop;
  WICK_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceProperties p;
  p.name = prop.name;
  p.major = prop.major;
  p.minor = prop.minor;
  p.total_memory = static_cast<int64_t>(prop.totalGlobalMem);
  p.multiprocessor_count = prop.multiProcessorCount;
  return p;
}

std::string get_device_name(int device) { return get_device_properties(device).name; }

void synchronize(int device) {
  DeviceGuard guard(resolve(device));
  WICK_CUDA_CHECK(cudaDeviceSynchronize());
}

DeviceGuard::DeviceGuard(int device) : previous_(-1) {
  if (device < 0) return;
  WICK_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ == device) {
    previous_ = -1;  // nothing to restore
  } else {
    WICK_CUDA_CHECK(cudaSetDevice(device));
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) (void)cudaSetDevice(previous_);  // a destructor must not throw
}

bool is_built() { return true; }

int runtime_version() {
  int v = 0;
  WICK_CUDA_CHECK(cudaRuntimeGetVersion(&v));
  return v;
}

int driver_version() {
  int v = 0;
  WICK_CUDA_CHECK(cudaDriverGetVersion(&v));
  return v;
}

int cudnn_version() { return static_cast<int>(cudnnGetVersion()); }

BuildInfo build_info() { return {CUDART_VERSION, WICK_CUDA_ARCHS_STRING, CUDNN_VERSION}; }

int cudnn_cudart_version() { return static_cast<int>(cudnnGetCudartVersion()); }

// ---- launch context ----

LaunchContext::LaunchContext(const Tensor& t) : LaunchContext(t.device().index) {}

LaunchContext::LaunchContext(int device)
    : guard_(device), device_(device), stream_(current_raw_stream(device)) {}

unsigned LaunchContext::blocks_for(int64_t n, int threads) const {
  int64_t blocks = (n + threads - 1) / threads;
  // Enough blocks to fill every SM many times over; grid-stride loops do the rest.
  int64_t cap = static_cast<int64_t>(multiprocessor_count(device_)) * 32;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, cap)));
}

// ---- streams ----

Stream Stream::create(int device) {
  device = resolve(device);
  DeviceGuard guard(device);
  cudaStream_t s;
  // Non-blocking: it does not wait for the legacy default stream (PyTorch's streams don't).
  WICK_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return Stream(device, s);
}

Stream Stream::default_stream(int device) { return Stream(resolve(device), nullptr); }

Stream Stream::current(int device) {
  device = resolve(device);
  return Stream(device, current_raw_stream(device));
}

bool Stream::query() const {
  DeviceGuard guard(device_);
  cudaError_t e = cudaStreamQuery(static_cast<cudaStream_t>(handle_));
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  WICK_CUDA_CHECK(e);
  return true;
}

void Stream::synchronize() const {
  DeviceGuard guard(device_);
  WICK_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(handle_)));
}

void set_current_stream(const Stream& stream) {
  int device = resolve(stream.device());
  if (static_cast<int>(t_current_streams.size()) <= device) {
    t_current_streams.resize(device_info().count, nullptr);
  }
  t_current_streams[device] = static_cast<cudaStream_t>(stream.handle());
}

StreamGuard::StreamGuard(const Stream& stream) : previous_(Stream::current(stream.device())) {
  set_current_stream(stream);
}

StreamGuard::~StreamGuard() {
  if (previous_.device() < static_cast<int>(t_current_streams.size())) {
    t_current_streams[previous_.device()] = static_cast<cudaStream_t>(previous_.handle());
  }
}

// ---- events ----

struct Event::Impl {
  cudaEvent_t event = nullptr;
  int device = -1;
  bool timing = false;
  bool recorded = false;
  ~Impl() {
    if (event != nullptr) (void)cudaEventDestroy(event);
  }
};

Event::Event(bool enable_timing) : impl_(std::make_shared<Impl>()) {
  impl_->timing = enable_timing;
  resolve(-1);  // fail early, and clearly, without a device
}

void Event::record(const Stream& stream) {
  DeviceGuard guard(stream.device());
  if (impl_->event == nullptr) {
    WICK_CUDA_CHECK(cudaEventCreateWithFlags(
        &impl_->event, impl_->timing ? cudaEventDefault : cudaEventDisableTiming));
    impl_->device = stream.device();
  }
  check_value(impl_->device == stream.device(), "Event.record",
              "the event belongs to cuda:", impl_->device,
              " but the stream to cuda:", stream.device());
  WICK_CUDA_CHECK(cudaEventRecord(impl_->event, static_cast<cudaStream_t>(stream.handle())));
  impl_->recorded = true;
}

void Event::record() { record(Stream::current()); }

void Event::wait(const Stream& stream) const {
  if (!impl_->recorded) return;  // waiting for nothing
  DeviceGuard guard(stream.device());
  WICK_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream.handle()), impl_->event, 0));
}

bool Event::query() const {
  if (!impl_->recorded) return true;
  cudaError_t e = cudaEventQuery(impl_->event);
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  WICK_CUDA_CHECK(e);
  return true;
}

void Event::synchronize() const {
  if (impl_->recorded) WICK_CUDA_CHECK(cudaEventSynchronize(impl_->event));
}

float Event::elapsed_ms(const Event& end) const {
  check_state(impl_->recorded && end.impl_->recorded, "Event.elapsed_ms",
              "both events must be recorded first");
  check_state(impl_->timing && end.impl_->timing, "Event.elapsed_ms",
              "both events must be created with enable_timing=true");
  float ms = 0;
  WICK_CUDA_CHECK(cudaEventElapsedTime(&ms, impl_->event, end.impl_->event));
  return ms;
}

}  // namespace wick::cuda
