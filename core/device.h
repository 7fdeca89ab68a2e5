// Where a tensor's memory lives: the host (CPU), a CUDA device with an index, or a device of a
// backend added without editing core (PyTorch's "PrivateUse1" slot: the backend names it when it
// registers, see core/backend.h and docs/adding_a_backend.md).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace wick {

enum class DeviceType : uint8_t { CPU, CUDA, PrivateUse1 };
constexpr int kNumDeviceTypes = 3;

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;

  Device() = default;
  Device(DeviceType t, int i = 0) : type(t), index(i) {}  // NOLINT: Device(kCPU) reads naturally
  // "cpu", "cuda", "cuda:1", or a registered backend's name ("name:N"); throws
  // std::invalid_argument for anything else.
  explicit Device(const std::string& spec);

  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;  // "cpu", "cuda:0"
};

constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
constexpr DeviceType kPrivateUse1 = DeviceType::PrivateUse1;

const char* device_type_name(DeviceType type);
std::ostream& operator<<(std::ostream& os, const Device& device);

}  // namespace wick
