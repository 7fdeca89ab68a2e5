// Watching the dispatcher: every kernel call that goes through dispatch() (core/dispatch.h) can be
// shown to an observer installed on the calling thread. The graph compiler (jit/) records a
// model's ops this way, and the static-vs-dynamic example counts dispatcher calls with it.
//
// Note [dispatch observer]
// An observer sees the call before the kernel runs: the op, the device, every tensor argument in
// the kernel's parameter order (whether the kernel may write it: a `Tensor&` parameter), the
// non-tensor arguments as typed attributes named by the op table's row, and a KernelThunk that can
// call a kernel of this signature again later with other tensors and the same non-tensor
// arguments. The thunk is what lets a recorded graph be replayed without the front functions:
// dispatch<Fn>() is a template, so it instantiates one thunk per kernel signature, and nothing
// else needs to know the signatures. Calls made while a kernel runs (the CPU fallback's copies,
// a kernel that dispatches ops itself) are part of that kernel and are not shown. With no
// observer anywhere the cost is one relaxed atomic load per dispatch.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/kernels.h"
#include "core/scalar.h"

namespace wick {

class Tensor;

// One non-tensor kernel argument, or one field of a parameter struct, by name.
struct DispatchAttr {
  enum class Kind : uint8_t { Int, Float, Bool, Ints, Scalar };
  std::string name;
  Kind kind = Kind::Int;
  int64_t i = 0;
  double f = 0;
  std::vector<int64_t> ints;
  Scalar scalar;

  bool operator==(const DispatchAttr& o) const;
  std::string value_str() const;  // "3", "0.1", "True", "[1, 1]"
};

// Calls a kernel of one signature with recorded arguments (Note [dispatch observer]).
struct KernelThunk {
  using RawFn = void (*)();
  // Runs `fn` with tensors[k] as the k-th tensor parameter and `args` (from the record) for the
  // rest.
  void (*call)(RawFn fn, const void* args, Tensor* const* tensors);
  // Runs the op through dispatch() (for a device without the kernel: the CPU fallback).
  void (*dispatch)(OpKey op, Device device, const void* args, Tensor* const* tensors);
  // The kernel `device` registered for `op`, or nullptr.
  RawFn (*find)(OpKey op, DeviceType device);
  int num_tensors;
};

struct DispatchCall {
  OpKey op;
  Device device;
  std::vector<const Tensor*> tensors;  // every tensor parameter, in order; may be undefined
  std::vector<bool> writable;          // the parameter is `Tensor&`
  std::vector<DispatchAttr> attrs;
  std::shared_ptr<const void> args;  // the non-tensor arguments, for the thunk
  const KernelThunk* thunk = nullptr;
};

class DispatchObserver {
 public:
  virtual ~DispatchObserver() = default;
  virtual void on_dispatch(const DispatchCall& call) = 0;
};

// Installs `observer` on this thread for the guard's lifetime (nesting restores the outer one;
// nullptr hides the calls from the outer one).
class DispatchObserverGuard {
 public:
  explicit DispatchObserverGuard(DispatchObserver* observer);
  ~DispatchObserverGuard();
  DispatchObserverGuard(const DispatchObserverGuard&) = delete;
  DispatchObserverGuard& operator=(const DispatchObserverGuard&) = delete;

 private:
  DispatchObserver* previous_;
};

namespace detail {
extern std::atomic<int> g_observers_installed;
DispatchObserver* current_dispatch_observer();
inline bool dispatch_observed() {
  return g_observers_installed.load(std::memory_order_relaxed) != 0 &&
         current_dispatch_observer() != nullptr;
}

// Typed attributes of each kind of non-tensor kernel argument; `next` walks the op's attrs column
// for the names of plain values.
struct AttrNamer {
  OpKey op;
  size_t next = 0;
  std::string take();
};
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, int64_t v);
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, double v);
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, bool v);
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, const Scalar& v);
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, const DimVec& v);
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, const UnaryAttrs& v);
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, const PhiloxState& v);
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, const Conv2dParams& v);
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, const Pool2dParams& v);
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, const BatchNormParams& v);
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, const AdamStepParams& v);
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, const SgdStepParams& v);
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, const AttentionParams& v);
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, const QuantizeParams& v);
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, const QuantizedParams& v);
}  // namespace detail

}  // namespace wick
