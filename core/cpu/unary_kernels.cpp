// CPU kernels for the unary elementwise ops: each row of WICK_UNARY_OPS (core/ops/op_list.h)
// instantiates unary_kernel with its functor from core/ops/scalar_math.h, the same functor the
// CUDA kernels use; unary_loop applies it over any strides.
#include "core/cpu/loops.h"
#include "core/cpu/register.h"
#include "core/op_table.h"
#include "core/ops/scalar_math.h"

namespace wick::cpu {

namespace {

// Floating rows run only on floating-point inputs (the front function converts integers);
// Numeric rows on every dtype (the front function rejects bool); Bool rows write bool.
template <class Fn, DTypeRule rule>
void unary_kernel(const Tensor& in, Tensor& out, const UnaryAttrs& attrs) {
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    using Out = std::conditional_t<rule == DTypeRule::Bool, bool, T>;
    const UnaryAttrs a = attrs;  // a copy the loop's lambda holds by value
    unary_loop<Out, T>(in, out, [a](T x) { return Out(Fn()(C(x), a)); });
  };
  if constexpr (rule == DTypeRule::Floating) {
    visit_floating("unary kernel", in.dtype(), run);
  } else {
    visit_dtype(in.dtype(), run);
  }
}

}  // namespace

void register_unary_kernels(KernelRegistry& r) {
#define WICK_REGISTER(name, api, rule, ...) \
  r.add<UnaryKernel>(OpKey::name, kCPU, unary_kernel<scalar::name##_fn, DTypeRule::rule>);
  WICK_UNARY_OPS(WICK_REGISTER)
#undef WICK_REGISTER
}

}  // namespace wick::cpu
