// Autocast: mixed precision as a policy the ops apply, not something models are rewritten for.
//
// Note [autocast]
// Inside an AutocastGuard for a device, ops whose speed comes from matrix units and which
// tolerate 16-bit inputs (matmul, bmm, linear, conv2d) cast their floating inputs to the
// lower-precision dtype (bfloat16 on the CPU, float16 on CUDA, by default), while ops that lose
// accuracy in 16 bits (softmax, log_softmax, the losses, layer_norm, exp, log, pow, rsqrt, sum,
// mean) cast them to float32. Every other op follows its inputs' dtypes through the usual
// promotion. Only "eligible" tensors are cast: floating, not float64, on the autocast device.
// Parameters stay float32 (they are the master weights): what a lower-precision op sees is a
// cast copy, made once per outermost autocast scope and reused (the cast cache), and its
// gradient flows back through the cast, so .grad arrives in float32. This is PyTorch's design
// (design-facts §5), implemented as explicit calls in the front functions of those ops.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace wick {

enum class AutocastPolicy {
  LowerPrecision,  // run in the autocast dtype
  Float32,         // run in float32
  Keep,            // run in the inputs' dtype: autocast leaves the op alone
};
const char* autocast_policy_name(AutocastPolicy policy);

// Turns autocast on (or, with enabled=false, off) for `device` until destroyed; scopes nest and
// each restores the state it found. dtype must be float16 or bfloat16.
class AutocastGuard {
 public:
  explicit AutocastGuard(DeviceType device, DType dtype, bool enabled = true);
  explicit AutocastGuard(DeviceType device, bool enabled = true);  // the device's default dtype
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DeviceType device_;
  bool previous_enabled_;
  DType previous_dtype_;
};

namespace autocast {

bool is_enabled(DeviceType device);
DType lower_dtype(DeviceType device);          // the dtype LowerPrecision ops use now
DType default_lower_dtype(DeviceType device);  // bfloat16 on the CPU, float16 on CUDA

// `t` as `op` must see it under the current autocast state (unchanged when autocast is off for
// t's device or t is not eligible).
Tensor cast(AutocastPolicy policy, const Tensor& t);

// Debug mode: while recording, every kernel dispatch inside an autocast scope notes the op and
// the dtype it ran in (its first tensor argument's), so a student can see what autocast did.
void set_recording(bool on);
bool is_recording();
std::vector<std::pair<std::string, DType>> recorded();
void clear_recorded();
void record(const char* op, DType dtype);  // called by dispatch()

}  // namespace autocast

}  // namespace wick
