// CPU kernels for binary elementwise ops, comparisons, where(), and the fused backward of the
// activations (one pass over grad and the saved tensor instead of three or four ops). Each row of
// WICK_BINARY_OPS (core/ops/op_list.h) instantiates its dtype rule's kernel with its functor from
// core/ops/scalar_math.h, the same functor the CUDA kernels use.
#include <atomic>

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

// Note [integer division by zero]
// PyTorch raises ZeroDivisionError (a RuntimeError) when an integer divisor has a zero, and so do
// the rows whose check column is IntDivisor (remainder, fmod, div_floor, div_trunc). The check
// lives in the CPU kernel, not only in the front function, because a compiled graph replays
// kernels without their front functions (Note [replay] in jit/executor.cpp). It scans the whole
// divisor before the loop writes anything: the output may be the dividend itself (an in-place
// kernel call), and PyTorch, which raises from inside its loop, leaves `a //= b` half-divided,
// which wick does not; and a kernel must not throw inside a parallel region (Note [no exceptions
// in parallel regions]). The scan reads each divisor element once, next to an integer division
// per output element. Nothing is scanned when the output is empty, as PyTorch raises nowhere.
bool has_zero(const Tensor& t) {
  return visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::atomic<bool> zero{false};
    ElementwiseLoop<1>({&t}).run([&](char** p, const int64_t* s, int64_t n) {
      bool found = false;
      for (int64_t i = 0; i < n; ++i) found |= *reinterpret_cast<const T*>(p[0] + i * s[0]) == T(0);
      if (found) zero.store(true, std::memory_order_relaxed);
    });
    return zero.load();
  });
}

template <class Op, OpKey key>
void integer_division_kernel(const Tensor& a, const Tensor& b, Tensor& out) {
  if (is_integral(b.dtype()) && out.numel() > 0) {
    check_state(!has_zero(b), op_name(key), "ZeroDivisionError: integer division by zero");
  }
  arithmetic_kernel<Op>(a, b, out);
}

// The kernel family of each dtype rule in WICK_BINARY_OPS.
template <class Fn, DTypeRule rule, BinaryCheck check, OpKey key>
constexpr BinaryKernel binary_kernel() {
  if constexpr (check == BinaryCheck::IntDivisor) {
    return integer_division_kernel<Fn, key>;
  } else if constexpr (rule == DTypeRule::Compare) {
    return predicate_kernel<Fn>;
  } else if constexpr (rule == DTypeRule::Promote) {
    return arithmetic_kernel<Fn>;
  } else {
    return floating_kernel<Fn>;
  }
}

}  // namespace

void register_binary_kernels(KernelRegistry& r) {
#define WICK_REGISTER(name, api, rule, policy, check, ...) \
  r.add<BinaryKernel>(                                     \
      OpKey::name, kCPU,                                   \
      binary_kernel<scalar::name##_fn, DTypeRule::rule, BinaryCheck::check, OpKey::name>());
  WICK_BINARY_OPS(WICK_REGISTER)
#undef WICK_REGISTER
  r.add<WhereKernel>(OpKey::where, kCPU, where_kernel);
}

}  // namespace wick::cpu
