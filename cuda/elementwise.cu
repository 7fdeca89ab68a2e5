// CUDA kernels for the unary and binary elementwise ops, comparisons, where(), and the fused
// backward of the activations. Each row of WICK_UNARY_OPS and WICK_BINARY_OPS
// (core/ops/op_list.h) instantiates its functor from core/ops/scalar_math.h - the same functor the
// CPU kernels use - and launch_elementwise (loops.cuh) applies it over any strides.
#include "core/op_table.h"
#include "core/ops/scalar_math.h"
#include "cuda/kernels.h"
#include "cuda/loops.cuh"

namespace wick::cuda {

namespace {

// ---- unary ----

// Out is T, or bool for logical_not.
template <class Fn, class T, class Out>
struct UnaryFn {
  UnaryAttrs attrs;
  __device__ void operator()(char** p) const {
    using C = compute_t<T>;
    *reinterpret_cast<Out*>(p[0]) = Out(Fn()(C(*reinterpret_cast<const T*>(p[1])), attrs));
  }
};

// Floating rows run only on floating-point inputs (the front function converts integers);
// Numeric rows on every dtype (the front function rejects bool); Bool rows write bool.
template <class Fn, DTypeRule rule>
void unary_kernel(const Tensor& in, Tensor& out, const UnaryAttrs& attrs) {
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Out = std::conditional_t<rule == DTypeRule::Bool, bool, T>;
    launch_elementwise<2>({&out, &in}, UnaryFn<Fn, T, Out>{attrs});
  };
  if constexpr (rule == DTypeRule::Floating) {
    visit_floating("unary kernel", in.dtype(), run);
  } else {
    visit_dtype(in.dtype(), run);
  }
}

// ---- binary ----

// Out is T for arithmetic ops and bool for predicates.
template <class Fn, class T, class Out>
struct BinaryFn {
  __device__ void operator()(char** p) const {
    using C = compute_t<T>;
    C a = C(*reinterpret_cast<const T*>(p[1]));
    C b = C(*reinterpret_cast<const T*>(p[2]));
    *reinterpret_cast<Out*>(p[0]) = Out(Fn()(a, b));
  }
};

// Promote rows run on every dtype, Compare rows write bool, and the others (true division, the
// activations' derivatives) run on floating point only. A kernel cannot raise, so the integer
// division rows (IntDivisor) have their divisor checked by binary_op before the launch; a graph
// replayed without it gets 0 where a divisor is 0 (Note [integer division] in
// core/ops/scalar_math.h), where PyTorch's CUDA result is undefined.
template <class Fn, DTypeRule rule>
void binary_kernel(const Tensor& a, const Tensor& b, Tensor& out) {
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Out = std::conditional_t<rule == DTypeRule::Compare, bool, T>;
    launch_elementwise<3>({&out, &a, &b}, BinaryFn<Fn, T, Out>{});
  };
  if constexpr (rule == DTypeRule::Promote || rule == DTypeRule::Compare) {
    visit_dtype(a.dtype(), run);
  } else {
    visit_floating("binary kernel", a.dtype(), run);
  }
}

// where only moves elements, so it is typed by element size.
template <class S>
struct WhereFn {
  __device__ void operator()(char** p) const {
    bool c = *reinterpret_cast<const bool*>(p[1]);
    *reinterpret_cast<S*>(p[0]) = *reinterpret_cast<const S*>(p[c ? 2 : 3]);
  }
};

void where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) {
  visit_size(a.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    launch_elementwise<4>({&out, &cond, &a, &b}, WhereFn<S>{});
  });
}

}  // namespace

void register_elementwise_kernels(KernelRegistry& r) {
#define WICK_REGISTER_UNARY(name, api, rule, ...) \
  r.add<UnaryKernel>(OpKey::name, kCUDA, unary_kernel<scalar::name##_fn, DTypeRule::rule>);
  WICK_UNARY_OPS(WICK_REGISTER_UNARY)
#undef WICK_REGISTER_UNARY
#define WICK_REGISTER_BINARY(name, api, rule, ...) \
  r.add<BinaryKernel>(OpKey::name, kCUDA, binary_kernel<scalar::name##_fn, DTypeRule::rule>);
  WICK_BINARY_OPS(WICK_REGISTER_BINARY)
#undef WICK_REGISTER_BINARY
  r.add<WhereKernel>(OpKey::where, kCUDA, where);
}

}  // namespace wick::cuda
