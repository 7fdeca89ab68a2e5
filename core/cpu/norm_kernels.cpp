// CPU batch normalization: forward (training and evaluation) and the training-mode backward.
// The input is contiguous [N, C, S] (S = the product of the spatial dims, 1 for BatchNorm1d on
// [N, C]); each channel's statistics are independent, so threads take channels.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "core/cpu/loops.h"
#include "core/cpu/register.h"

namespace wick::cpu {

namespace {

struct Layout {
  int64_t n, c, s;
  int64_t count() const { return n * s; }  // elements per channel
};

Layout layout(const Tensor& input) {
  int64_t s = 1;
  for (int64_t d = 2; d < input.dim(); ++d) s *= input.size(d);
  return {input.size(0), input.size(1), s};
}

template <class T>
T value_or(const Tensor& t, int64_t i, T fallback) {
  return t.defined() ? static_cast<const T*>(t.data_ptr())[i] : fallback;
}

// The sum of term(i) over channel c's elements, i the flat index. Channel c's statistics are
// sums over its N rows of S contiguous values each.
// Written as `omp simd` reductions: a plain loop adding into one accumulator is a chain of
// dependent adds (one per 4 cycles), which the compiler may not reorder; the pragma lets it keep a
// vector of partial sums - the same partial sums, in the same order, on every run. ResNet-20's
// 16-channel batch norms at batch 64 sum 65,536 values per channel; forward
// + backward of that layer on 2 threads went from 2.5 to 0.8 ms, and a ResNet-20 training step
// (batch 64) from 257-303 to 244-279 ms on one thread, 138-148 to 127-144 ms on two.
// Each sum runs in T over runs of at most kSumRun contiguous values, and the runs' sums add up in
// float64: float lanes hold twice the values of double ones and need no conversions, and a float
// lane sums at most 64 values of a run. ResNet-20's training step (batch 64, 2 threads) spent
// 11% of its time in these sums when every value was converted to double.
constexpr int64_t kSumRun = 1024;

// f(begin, end) for the runs of channel c's elements, flat indices.
template <class F>
void for_each_run(const Layout& l, int64_t c, const F& f) {
  for (int64_t n = 0; n < l.n; ++n) {
    const int64_t base = (n * l.c + c) * l.s, end = base + l.s;
    for (int64_t begin = base; begin < end; begin += kSumRun)
      f(begin, std::min(end, begin + kSumRun));
  }
}

template <class T, class F>
double channel_sum(const Layout& l, int64_t c, const F& term) {
  double total = 0;
  for_each_run(l, c, [&](int64_t begin, int64_t end) {
    T sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t i = begin; i < end; ++i) sum += term(i);
    total += double(sum);
  });
  return total;
}

// Both sums of batch norm's backward, sum(dy) and sum(dy * (x - mean)), in one pass over dy;
// dy(i) is the gradient at flat index i, masked by a fused relu. dy_out, when not null, gets
// dy: the gradient of a fused residual.
template <class T, class Dy>
std::pair<double, double> grad_sums(const Layout& l, int64_t c, const Dy& dy_at, const T* x, T mean,
                                    T* __restrict dy_out) {
  const Dy dy = dy_at;  // a local copy: dy_out's stores cannot alias its pointers
  double total_dy = 0, total_dy_xc = 0;
  for_each_run(l, c, [&](int64_t begin, int64_t end) {
    T sum_dy = 0, sum_dy_xc = 0;
    if (dy_out != nullptr) {
#pragma omp simd reduction(+ : sum_dy, sum_dy_xc)
      for (int64_t i = begin; i < end; ++i) {
        const T g = dy(i);
        dy_out[i] = g;
        sum_dy += g;
        sum_dy_xc += g * (x[i] - mean);
      }
    } else {
#pragma omp simd reduction(+ : sum_dy, sum_dy_xc)
      for (int64_t i = begin; i < end; ++i) {
        const T g = dy(i);
        sum_dy += g;
        sum_dy_xc += g * (x[i] - mean);
      }
    }
    total_dy += double(sum_dy);
    total_dy_xc += double(sum_dy_xc);
  });
  return {total_dy, total_dy_xc};
}

// out[i] = f(i) over channel c's elements, i the flat index.
template <class T, class F>
void channel_map(const Layout& l, int64_t c, T* out, const F& f) {
  for (int64_t n = 0; n < l.n; ++n) {
    const int64_t base = (n * l.c + c) * l.s;
#pragma omp simd
    for (int64_t i = base; i < base + l.s; ++i) out[i] = f(i);
  }
}

// The per-channel affine map y = x * scale + shift, from the saved (rounded) statistics, so that
// the backward's recomputed relu mask is the forward's to the bit. The per-element work runs in T,
// as PyTorch does it: in float64 it ran at half the lanes.
template <class T>
struct Affine {
  T scale, shift;
  Affine(T mean, T invstd, T weight, T bias)
      : scale(T(double(invstd) * double(weight))),
        shift(T(double(bias) - double(mean) * double(scale))) {}
  // bn(x) + residual before the relu; the same expression (and so the same rounding, with or
  // without a contracted multiply-add) in the forward and in the backward's mask.
  template <bool Residual>
  T pre(T x, const T* __restrict residual, int64_t i) const {
    const T y = x * scale + shift;
    if constexpr (Residual) return y + residual[i];
    return y;
  }
};

// g where v > 0, else +0 (also for an infinite or NaN g, as PyTorch's threshold_backward): the
// relu's backward as a bitwise and, which GCC vectorises; as a ?: it left the loop scalar.
template <class T>
T keep_if_positive(T v, T g) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const Bits keep = Bits(0) - Bits(v > T(0));
  return __builtin_bit_cast(T, __builtin_bit_cast(Bits, g) & keep);
}

// Calls f(relu, residual) with the two epilogue switches as compile-time constants, so that each
// combination's loop is vectorised without branches.
template <class F>
void with_epilogue(bool relu, bool residual, const F& f) {
  if (relu) {
    residual ? f(std::true_type{}, std::true_type{}) : f(std::true_type{}, std::false_type{});
  } else {
    residual ? f(std::false_type{}, std::true_type{}) : f(std::false_type{}, std::false_type{});
  }
}

template <class T>
void batch_norm_impl(const Tensor& input, const Tensor& weight, const Tensor& bias,
                     Tensor& running_mean, Tensor& running_var, const Tensor& residual, Tensor& out,
                     Tensor& save_mean, Tensor& save_invstd, const BatchNormParams& p) {
  Layout l = layout(input);
  const T* x = static_cast<const T*>(input.data_ptr());
  const T* r = residual.defined() ? static_cast<const T*>(residual.data_ptr()) : nullptr;
  T* y = static_cast<T*>(out.data_ptr());
  T* rm = running_mean.defined() ? static_cast<T*>(running_mean.data_ptr()) : nullptr;
  T* rv = running_var.defined() ? static_cast<T*>(running_var.data_ptr()) : nullptr;
  parallel_for(l.c, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      T mean, invstd;
      if (p.training) {
        const double sum = channel_sum<T>(l, c, [x](int64_t i) { return x[i]; });
        const double m = sum / static_cast<double>(l.count());
        // Two passes, not sum and sum of squares in one: E[x^2] - mean^2 cancels catastrophically
        // when a channel's mean is large against its spread.
        const double squares = channel_sum<T>(l, c, [x, mt = T(m)](int64_t i) {
          const T d = x[i] - mt;
          return d * d;
        });
        double var = squares / static_cast<double>(l.count());  // biased, for normalizing
        mean = T(m);
        invstd = T(1.0 / std::sqrt(var + p.eps));
        static_cast<T*>(save_mean.data_ptr())[c] = mean;
        static_cast<T*>(save_invstd.data_ptr())[c] = invstd;
        if (rm != nullptr) rm[c] = T((1 - p.momentum) * rm[c] + p.momentum * m);
        if (rv != nullptr) {
          double unbiased = l.count() > 1 ? squares / static_cast<double>(l.count() - 1) : var;
          rv[c] = T((1 - p.momentum) * rv[c] + p.momentum * unbiased);
        }
      } else {
        mean = rm[c];
        invstd = T(1.0 / std::sqrt(double(rv[c]) + p.eps));
      }
      const Affine<T> a(mean, invstd, value_or<T>(weight, c, T(1)), value_or<T>(bias, c, T(0)));
      with_epilogue(p.relu, r != nullptr, [&](auto relu, auto add) {
        const Affine<T> map = a;  // a local copy, which the vectoriser keeps in registers
        channel_map(l, c, y, [=](int64_t i) {
          const T v = map.template pre<add>(x[i], r, i);
          if constexpr (relu) return v > T(0) ? v : T(0);
          return v;
        });
      });
    }
  });
}

template <class T>
void batch_norm_backward_impl(const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                              const Tensor& save_mean, const Tensor& save_invstd,
                              const Tensor& bias, const Tensor& residual, Tensor& grad_input,
                              Tensor& grad_weight, Tensor& grad_bias, Tensor& grad_residual,
                              const BatchNormParams& p) {
  Layout l = layout(input);
  const T* x = static_cast<const T*>(input.data_ptr());
  const T* dz = static_cast<const T*>(grad_out.data_ptr());
  const T* r = residual.defined() ? static_cast<const T*>(residual.data_ptr()) : nullptr;
  T* dr = grad_residual.defined() ? static_cast<T*>(grad_residual.data_ptr()) : nullptr;
  const T* mean = static_cast<const T*>(save_mean.data_ptr());
  const T* invstd = static_cast<const T*>(save_invstd.data_ptr());
  parallel_for(l.c, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      // x_hat = (x - mean) * invstd; y = w * x_hat + b; z = relu(y + residual), dy = dz * (z > 0).
      // dx = w * invstd * (dy - mean(dy) - x_hat * mean(dy * x_hat))
      const T w = value_or<T>(weight, c, T(1));
      const Affine<T> a(mean[c], invstd[c], w, value_or<T>(bias, c, T(0)));
      const double m = mean[c], s = invstd[c];
      auto finish = [&](const auto& dy) {
        const auto [sum_dy, sum_dy_xc] = grad_sums(l, c, dy, x, mean[c], dr);
        const double sum_dy_xhat = s * sum_dy_xc;
        if (grad_weight.defined()) static_cast<T*>(grad_weight.data_ptr())[c] = T(sum_dy_xhat);
        if (grad_bias.defined()) static_cast<T*>(grad_bias.data_ptr())[c] = T(sum_dy);
        if (!grad_input.defined()) return;
        T* dx = static_cast<T*>(grad_input.data_ptr());
        const double k = s * double(w);
        const double count = static_cast<double>(l.count());
        const double mean_dy = sum_dy / count, mean_dy_xhat = sum_dy_xhat / count;
        const T k_t = T(k), mean_t = T(m), mean_dy_t = T(mean_dy), xc_t = T(s * mean_dy_xhat);
        channel_map(l, c, dx,
                    [&](int64_t i) { return k_t * (dy(i) - mean_dy_t - (x[i] - mean_t) * xc_t); });
      };
      if (!p.relu) {
        finish([dz](int64_t i) { return dz[i]; });
        continue;
      }
      with_epilogue(true, r != nullptr, [&](auto, auto add) {
        const Affine<T> map = a;
        finish(
            [=](int64_t i) { return keep_if_positive(map.template pre<add>(x[i], r, i), dz[i]); });
      });
    }
  });
}

void batch_norm_kernel(const Tensor& input, const Tensor& weight, const Tensor& bias,
                       Tensor& running_mean, Tensor& running_var, const Tensor& residual,
                       Tensor& out, Tensor& save_mean, Tensor& save_invstd,
                       const BatchNormParams& p) {
  if (input.dtype() == kFloat64) {
    batch_norm_impl<double>(input, weight, bias, running_mean, running_var, residual, out,
                            save_mean, save_invstd, p);
  } else {
    batch_norm_impl<float>(input, weight, bias, running_mean, running_var, residual, out, save_mean,
                           save_invstd, p);
  }
}

void batch_norm_backward_kernel(const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                                const Tensor& save_mean, const Tensor& save_invstd,
                                const Tensor& bias, const Tensor& residual, Tensor& grad_input,
                                Tensor& grad_weight, Tensor& grad_bias, Tensor& grad_residual,
                                const BatchNormParams& p) {
  if (input.dtype() == kFloat64) {
    batch_norm_backward_impl<double>(grad_out, input, weight, save_mean, save_invstd, bias,
                                     residual, grad_input, grad_weight, grad_bias, grad_residual,
                                     p);
  } else {
    batch_norm_backward_impl<float>(grad_out, input, weight, save_mean, save_invstd, bias, residual,
                                    grad_input, grad_weight, grad_bias, grad_residual, p);
  }
}

}  // namespace

void register_norm_kernels(KernelRegistry& r) {
  r.add<BatchNormKernel>(OpKey::batch_norm, kCPU, batch_norm_kernel);
  r.add<BatchNormBackwardKernel>(OpKey::batch_norm_backward, kCPU, batch_norm_backward_kernel);
}

}  // namespace wick::cpu
