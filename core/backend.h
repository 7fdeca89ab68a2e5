// Backends: a device type and everything core needs from it, described once and installed by one
// call. Core knows the CPU; every other backend (cuda/ in CUDA builds, or one a lab adds, see
// docs/adding_a_backend.md) calls register_backend() from its own files, and core never names a
// backend's symbols. Copies to and from a device are its `copy` kernel (OpKey::copy), registered
// with the rest of its kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/allocator.h"
#include "core/device.h"

namespace wick {

class KernelRegistry;

// Device work recorded once and replayed with one launch (a CUDA Graph): what a backend's
// capture_graph hook returns. Destroying it waits for the device, then frees what it recorded.
class CapturedGraph {
 public:
  virtual ~CapturedGraph() = default;
  virtual void launch() = 0;               // on the device's current stream
  virtual int64_t num_nodes() const = 0;   // the operations recorded
  virtual int64_t pool_bytes() const = 0;  // the memory kept for the replays
};

struct Backend {
  DeviceType type = kCPU;
  const char* name = "";  // the device string: "cuda" in "cuda:0"
  // Fills the backend's column of the kernel table; ops it leaves out fall back to the CPU
  // (Note [operator fallback] in core/dispatch.h).
  void (*register_kernels)(KernelRegistry& registry) = nullptr;
  // The allocator for the backend's tensors, called on first use (so a backend can wait until a
  // tensor is made before it touches its device).
  Allocator* (*allocator)() = nullptr;
  int (*device_count)() = nullptr;
  void (*synchronize)(int device) = nullptr;  // waits for the device's queued work
  // Makes `device` current and returns the device that was (PyTorch's exchangeDevice); backends
  // whose allocator serves "the current device" need it so a tensor for "name:N" lands on N.
  int (*exchange_device)(int device) = nullptr;

  // Note [backend hooks for static graphs]
  // jit/ replays a graph as one captured launch and compiles fused chains into kernels of their
  // own; both need the device's runtime, which jit/ may not name. So a backend that can do them
  // fills these optional hooks, and jit/ calls them through find_backend(): it knows graphs and
  // fused chains, the backend knows streams, graphs and compilers. Without them, a graph on the
  // device replays op by op and its elementwise chains stay unfused.
  //
  // Runs `work` once on `device` under capture: the work it queues is recorded, not run. Throws
  // std::runtime_error if the capture failed.
  std::unique_ptr<CapturedGraph> (*capture_graph)(int device,
                                                  const std::function<void()>& work) = nullptr;
  // Run-time compilation: `source` (CUDA C++ for cuda) translated for `arch` ("compute_90": PTX,
  // "sm_90": machine code); needs no device. Throws with the compiler's log.
  std::string (*compile_source)(const std::string& source, const std::string& arch) = nullptr;
  // The kernel `name` of `source` compiled for `device`, loaded and ready to launch (compiled once
  // per process and device architecture).
  const void* (*load_kernel)(const std::string& source, const char* name, int device) = nullptr;
  // Launches `kernel` on `device`'s current stream with a grid for `n` elements (the kernel's
  // grid-stride loop covers the rest); `args` points at each argument, as cudaLaunchKernel takes.
  void (*launch_kernel)(const void* kernel, int device, int64_t n, void** args) = nullptr;
};

// Makes `device` current on its backend for the guard's lifetime (nothing for the CPU, index 0,
// or a backend without exchange_device).
class BackendDeviceGuard {
 public:
  explicit BackendDeviceGuard(Device device);
  ~BackendDeviceGuard();
  BackendDeviceGuard(const BackendDeviceGuard&) = delete;
  BackendDeviceGuard& operator=(const BackendDeviceGuard&) = delete;

 private:
  const Backend* backend_ = nullptr;
  int previous_ = 0;
};

// Installs `backend`: its kernels go into the table (now, or when the table is first built) and
// its allocator serves its device type. Registering a type again replaces the description.
// Returns true, so a backend can register from a static initializer:
//   static const bool registered = register_backend(my_backend());
bool register_backend(const Backend& backend);
const Backend* find_backend(DeviceType type);
const Backend* find_backend(const std::string& name);
std::vector<Backend> registered_backends();

}  // namespace wick
