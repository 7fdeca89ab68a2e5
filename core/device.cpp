#include "core/device.h"

#include "core/backend.h"
#include "core/error.h"

namespace wick {

Device::Device(const std::string& spec) {
  std::string kind = spec.substr(0, spec.find(':'));
  if (kind == "cpu") {
    type = kCPU;
  } else if (kind == "cuda") {
    type = kCUDA;
  } else if (const Backend* backend = find_backend(kind)) {
    type = backend->type;
  } else {
    throw_value_error("device", "expected 'cpu', 'cuda' or 'cuda:N'; got '", spec, "'");
  }
  if (kind.size() == spec.size()) return;
  std::string number = spec.substr(kind.size() + 1);
  bool digits = !number.empty() && number.size() < 6 &&
                number.find_first_not_of("0123456789") == std::string::npos;
  check_value(digits, "device", "bad device index in '", spec, "'");
  index = std::stoi(number);
  check_value(type != kCPU || index == 0, "device", "the CPU has only index 0; got '", spec, "'");
}

const char* device_type_name(DeviceType type) {
  switch (type) {
    case kCPU:
      return "cpu";
    case kCUDA:
      return "cuda";
    case kPrivateUse1:
      break;
  }
  const Backend* backend = find_backend(type);
  return backend != nullptr ? backend->name : "privateuseone";
}

std::string Device::str() const {
  if (type == kCPU) return "cpu";
  return std::string(device_type_name(type)) + ":" + std::to_string(index);
}

std::ostream& operator<<(std::ostream& os, const Device& device) { return os << device.str(); }

}  // namespace wick
