// Dispatch: from an op to the kernel that runs it on the inputs' device.
//
// Each op's front function (core/ops/) validates its arguments, promotes dtypes, computes the
// output shape, allocates the output, and then calls
//     dispatch<UnaryKernel>(OpKey::exp, device, x, out, params);
// which looks the kernel up in one explicit table indexed by (op, device type). The ops are the
// rows of the op table (core/op_table.h); the CPU column is filled by register_cpu_kernels() when
// the table is first used, and every other backend fills its own column when it registers
// (core/backend.h), so the table can be listed: which ops does each device implement?
//
// Note [operator fallback]
// When a device has no kernel for an op, real frameworks either fail or copy the inputs to the
// host, run the CPU kernel, and copy the results back. wick does the latter, counts each fallback
// per op, and warns once per op, so the cost is visible; FallbackMode::Error refuses instead.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "core/autocast.h"
#include "core/device.h"
#include "core/dispatch_observer.h"
#include "core/error.h"
#include "core/kernels.h"
#include "core/tensor.h"

namespace wick {

class KernelRegistry {
 public:
  // Registers `fn` for `op` on `device`; its signature must be the op's (op_kernel_signature).
  template <class Fn>
  void add(OpKey op, DeviceType device, Fn fn) {
    check_signature(op, typeid(Fn));
    table_[index(op)][static_cast<int>(device)] = {reinterpret_cast<void (*)()>(fn), &typeid(Fn)};
  }

  // The kernel, or nullptr when `device` has none for `op`.
  template <class Fn>
  Fn find(OpKey op, DeviceType device) const {
    const Entry& e = table_[index(op)][static_cast<int>(device)];
    if (e.fn == nullptr) return nullptr;
    check_state(*e.signature == typeid(Fn), "dispatch", "internal error: kernel for ", op_name(op),
                " was registered with another signature");
    return reinterpret_cast<Fn>(e.fn);
  }

  // Makes the CPU's kernel for `op` serve `device` as well: for a backend whose memory the CPU
  // addresses directly (sim/), where a CPU kernel runs on the device's tensors in place.
  void add_cpu_kernel_for(OpKey op, DeviceType device) {
    table_[index(op)][static_cast<int>(device)] = table_[index(op)][static_cast<int>(kCPU)];
  }

  // Forgets `device`'s kernel for `op` (the op falls back again there), or all its kernels (a
  // backend registered again starts from an empty column).
  void remove(OpKey op, DeviceType device) { table_[index(op)][static_cast<int>(device)] = {}; }
  void remove_all(DeviceType device) {
    for (auto& row : table_) row[static_cast<int>(device)] = {};
  }

  bool has(OpKey op, DeviceType device) const {
    return table_[index(op)][static_cast<int>(device)].fn != nullptr;
  }

 private:
  static void check_signature(OpKey op, const std::type_info& signature);
  struct Entry {
    void (*fn)() = nullptr;
    const std::type_info* signature = nullptr;
  };
  static int index(OpKey op) { return static_cast<int>(op); }
  Entry table_[kNumOps][kNumDeviceTypes];
};

// The table, filled on first use.
KernelRegistry& kernel_registry();

// Implemented by core/cpu/register.cpp; other backends register through core/backend.h.
void register_cpu_kernels(KernelRegistry& registry);

// Ops `device` has no kernel for (they run through the CPU fallback there).
std::vector<std::string> missing_kernels(DeviceType device);

enum class FallbackMode { Warn, Silent, Error };
void set_fallback_mode(FallbackMode mode);
FallbackMode fallback_mode();
// How many times each op fell back to the CPU, by op name (ops that never fell back are omitted).
std::vector<std::pair<std::string, int64_t>> fallback_counts();
void reset_fallback_counts();
// Records one fallback of `op` from `device`; warns the first time, or throws in Error mode.
void note_fallback(OpKey op, Device device);
// Where the fallbacks' time went, per op: copying to and from the host, and the CPU kernel.
struct FallbackStats {
  std::string op;
  int64_t count = 0;
  double copy_seconds = 0, kernel_seconds = 0;
};
std::vector<FallbackStats> fallback_stats();
void note_fallback_time(OpKey op, int64_t copy_ns, int64_t kernel_ns);

namespace detail {

// Runs a kernel on the host for a device that lacks it. The kernel's signature says what each
// argument is: `const Tensor&` parameters are inputs (copied to the host), `Tensor&` parameters
// are outputs (copied to the host, and written back after the kernel ran), anything else passes
// through unchanged.
class HostFrame {
 public:
  template <class Param, class Arg>
  decltype(auto) arg(Arg&& value) {
    if constexpr (std::is_same_v<Param, Tensor&>) {
      // An undefined output means "not needed" and stays undefined.
      host_outputs_.push_back(value.defined() ? value.to(Device(kCPU)) : Tensor());
      device_outputs_.push_back(&value);
      return static_cast<Tensor&>(host_outputs_.back());
    } else if constexpr (std::is_same_v<Param, const Tensor&>) {
      const Tensor& input = value;
      return input.defined() ? input.to(Device(kCPU)) : input;
    } else {
      return std::forward<Arg>(value);
    }
  }
  void write_back() {
    for (size_t i = 0; i < device_outputs_.size(); ++i) {
      if (device_outputs_[i]->defined()) device_outputs_[i]->copy_(host_outputs_[i]);
    }
  }

 private:
  std::deque<Tensor> host_outputs_;  // a deque keeps references stable as it grows
  std::vector<Tensor*> device_outputs_;
};

template <class Fn>
struct KernelSignature;

template <class... Params>
struct KernelSignature<void (*)(Params...)> {
  template <class... Args>
  static void call_on_host(OpKey op, void (*host)(Params...), Args&&... args) {
    using Clock = std::chrono::steady_clock;
    HostFrame frame;
    Clock::time_point start = Clock::now();
    // Every argument reaches the host before the kernel starts, so the copies are timed apart
    // from the kernel (a braced list evaluates left to right).
    std::tuple<decltype(frame.arg<Params>(std::forward<Args>(args)))...> on_host{
        frame.arg<Params>(std::forward<Args>(args))...};
    Clock::time_point copied_in = Clock::now();
    std::apply(host, on_host);
    Clock::time_point computed = Clock::now();
    frame.write_back();
    auto ns = [](Clock::duration d) {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
    };
    note_fallback_time(op, ns(copied_in - start) + ns(Clock::now() - computed),
                       ns(computed - copied_in));
  }
};

}  // namespace detail

template <class Fn, class... Args>
void dispatch(OpKey op, Device device, Args&&... args);

namespace detail {

// Shows a call to the thread's observer and replays recorded ones (Note [dispatch observer] in
// core/dispatch_observer.h): one instantiation per kernel signature.
template <class Fn>
struct ObservedCall;

template <class... Params>
struct ObservedCall<void (*)(Params...)> {
  using Fn = void (*)(Params...);
  using Args = std::tuple<std::decay_t<Params>...>;  // tensor slots stay undefined
  template <class P>
  static constexpr bool is_tensor = std::is_same_v<std::decay_t<P>, Tensor>;
  static constexpr bool kIsTensor[sizeof...(Params) + 1] = {is_tensor<Params>..., false};
  static constexpr int tensor_index(size_t i) {
    int n = 0;
    for (size_t k = 0; k < i; ++k) n += kIsTensor[k];
    return n;
  }
  static constexpr int kNumTensors = tensor_index(sizeof...(Params));

  template <class P, class A>
  static std::decay_t<P> capture(const A& arg) {
    if constexpr (is_tensor<P>) {
      return Tensor();
    } else {
      return std::decay_t<P>(arg);
    }
  }
  template <size_t I>
  static decltype(auto) arg(Args& args, Tensor* const* tensors) {
    if constexpr (kIsTensor[I]) {
      return static_cast<Tensor&>(*tensors[tensor_index(I)]);
    } else {
      return static_cast<std::tuple_element_t<I, Args>&>(std::get<I>(args));
    }
  }
  template <size_t... I>
  static void call_with(Fn fn, Args& args, Tensor* const* tensors, std::index_sequence<I...>) {
    fn(arg<I>(args, tensors)...);
  }
  static void call(KernelThunk::RawFn fn, const void* args, Tensor* const* tensors) {
    Args copy = *static_cast<const Args*>(args);
    call_with(reinterpret_cast<Fn>(fn), copy, tensors, std::index_sequence_for<Params...>{});
  }
  template <size_t... I>
  static void dispatch_with(OpKey op, Device device, Args& args, Tensor* const* tensors,
                            std::index_sequence<I...>) {
    wick::dispatch<Fn>(op, device, arg<I>(args, tensors)...);
  }
  static void redispatch(OpKey op, Device device, const void* args, Tensor* const* tensors) {
    Args copy = *static_cast<const Args*>(args);
    dispatch_with(op, device, copy, tensors, std::index_sequence_for<Params...>{});
  }
  static KernelThunk::RawFn find(OpKey op, DeviceType device);
  static constexpr KernelThunk kThunk = {&call, &redispatch, &find, kNumTensors};

  template <class P, class A>
  static void note(DispatchCall& call, AttrNamer& namer, const A& arg) {
    if constexpr (is_tensor<P>) {
      call.tensors.push_back(&static_cast<const Tensor&>(arg));
      call.writable.push_back(std::is_same_v<P, Tensor&>);
    } else {
      describe_arg(namer, call.attrs, std::decay_t<P>(arg));
    }
  }
  template <class... A>
  static void observe(OpKey op, Device device, const A&... args) {
    DispatchCall call{op, device, {}, {}, {}, nullptr, &kThunk};
    AttrNamer namer{op};
    (note<Params>(call, namer, args), ...);
    call.args = std::make_shared<const Args>(capture<Params>(args)...);
    current_dispatch_observer()->on_dispatch(call);
  }
};

// Runs the kernel for `op` on `device`, or the CPU fallback (Note [operator fallback]).
inline void first_dtype(DType& dtype, bool& found, const Tensor& t) {
  if (!found && t.defined()) dtype = t.dtype(), found = true;
}
template <class T>
void first_dtype(DType&, bool&, const T&) {}
}  // namespace detail

namespace detail {
template <class Fn, class... Args>
void run_dispatch(OpKey op, Device device, Args&&... args) {
  if (autocast::is_recording()) {  // Note [autocast]: the debug record of what ran in which dtype
    DType dtype = kFloat32;
    bool found = false;
    (detail::first_dtype(dtype, found, args), ...);
    autocast::record(op_name(op), dtype);
  }
  const KernelRegistry& registry = kernel_registry();
  if (Fn fn = registry.find<Fn>(op, device.type)) {
    fn(std::forward<Args>(args)...);
    return;
  }
  Fn host = registry.find<Fn>(op, kCPU);
  check_state(host != nullptr, op_name(op), "no kernel for this op on ", device.str(),
              " or on the CPU");
  note_fallback(op, device);
  detail::KernelSignature<Fn>::call_on_host(op, host, std::forward<Args>(args)...);
}
}  // namespace detail

template <class Fn, class... Args>
void dispatch(OpKey op, Device device, Args&&... args) {
  if (detail::dispatch_observed()) {
    detail::ObservedCall<Fn>::observe(op, device, args...);
    // What runs inside the call - the fallback's copies to the host and back, a kernel that
    // dispatches ops of its own - is part of this op, and an observer sees only the op.
    DispatchObserverGuard inside(nullptr);
    detail::run_dispatch<Fn>(op, device, std::forward<Args>(args)...);
    return;
  }
  detail::run_dispatch<Fn>(op, device, std::forward<Args>(args)...);
}

namespace detail {
template <class... Params>
KernelThunk::RawFn ObservedCall<void (*)(Params...)>::find(OpKey op, DeviceType device) {
  return reinterpret_cast<KernelThunk::RawFn>(kernel_registry().find<Fn>(op, device));
}
}  // namespace detail

}  // namespace wick
