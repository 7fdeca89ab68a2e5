// CPU kernels for binary elementwise ops, comparisons, where(), and the fused backward of the
// activations (one pass over grad and the saved tensor instead of three or four ops). Each row of
// WICK_BINARY_OPS (core/ops/op_list.h) instantiates its dtype rule's kernel with its functor from
// core/ops/scalar_math.h, the same functor the CUDA kernels use.
#include "core/cpu/loops.h"
#include "core/cpu/register.h"
#include "core/op_table.h"
#include "core/ops/scalar_math.h"

namespace wick::cpu {

namespace {

// Inputs and output share the dtype.
template <class Op>
void arithmetic_kernel(const Tensor& a, const Tensor& b, Tensor& out) {
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    binary_loop<T, T>(a, b, out, [](T x, T y) { return T(Op()(C(x), C(y))); });
  });
}

template <class Op>
void floating_kernel(const Tensor& a, const Tensor& b, Tensor& out) {
  visit_floating("binary kernel", a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    binary_loop<T, T>(a, b, out, [](T x, T y) { return T(Op()(C(x), C(y))); });
  });
}

// Inputs share a dtype; the output is bool.
template <class Op>
void predicate_kernel(const Tensor& a, const Tensor& b, Tensor& out) {
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    binary_loop<bool, T>(a, b, out, [](T x, T y) { return Op()(C(x), C(y)); });
  });
}

void where_kernel(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) {
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ElementwiseLoop<4> loop({&out, &cond, &a, &b});
    loop.run([](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        bool c = *reinterpret_cast<const bool*>(p[1] + i * s[1]);
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            *reinterpret_cast<const T*>(p[c ? 2 : 3] + i * s[c ? 2 : 3]);
      }
    });
  });
}

// The kernel family of each dtype rule in WICK_BINARY_OPS.
template <class Fn, DTypeRule rule>
constexpr BinaryKernel binary_kernel() {
  if constexpr (rule == DTypeRule::Compare) {
    return predicate_kernel<Fn>;
  } else if constexpr (rule == DTypeRule::Promote) {
    return arithmetic_kernel<Fn>;
  } else {
    return floating_kernel<Fn>;
  }
}

}  // namespace

void register_binary_kernels(KernelRegistry& r) {
#define WICK_REGISTER(name, api, rule, ...) \
  r.add<BinaryKernel>(OpKey::name, kCPU, binary_kernel<scalar::name##_fn, DTypeRule::rule>());
  WICK_BINARY_OPS(WICK_REGISTER)
#undef WICK_REGISTER
  r.add<WhereKernel>(OpKey::where, kCPU, where_kernel);
}

}  // namespace wick::cpu
