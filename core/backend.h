// Backends: a device type and everything core needs from it, described once and installed by one
// call. Core knows the CPU; every other backend (cuda/ in CUDA builds, or one a lab adds, see
// docs/adding_a_backend.md) calls register_backend() from its own files, and core never names a
// backend's symbols. Copies to and from a device are its `copy` kernel (OpKey::copy), registered
// with the rest of its kernels.
#pragma once

#include <string>
#include <vector>

#include "core/allocator.h"
#include "core/device.h"

namespace wick {

class KernelRegistry;

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
