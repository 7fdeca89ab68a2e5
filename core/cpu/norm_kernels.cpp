// CPU batch normalization: forward (training and evaluation) and the training-mode backward.
// The input is contiguous [N, C, S] (S = the product of the spatial dims, 1 for BatchNorm1d on
// [N, C]); each channel's statistics are independent, so threads take channels.
#include <cmath>

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

// Visits channel c's elements: f(index into the flat input).
template <class F>
void for_each_in_channel(const Layout& l, int64_t c, const F& f) {
  for (int64_t n = 0; n < l.n; ++n) {
    int64_t base = (n * l.c + c) * l.s;
    for (int64_t i = 0; i < l.s; ++i) f(base + i);
  }
}

template <class T>
void batch_norm_impl(const Tensor& input, const Tensor& weight, const Tensor& bias,
                     Tensor& running_mean, Tensor& running_var, Tensor& out, Tensor& save_mean,
                     Tensor& save_invstd, const BatchNormParams& p) {
  Layout l = layout(input);
  const T* x = static_cast<const T*>(input.data_ptr());
  T* y = static_cast<T*>(out.data_ptr());
  T* rm = running_mean.defined() ? static_cast<T*>(running_mean.data_ptr()) : nullptr;
  T* rv = running_var.defined() ? static_cast<T*>(running_var.data_ptr()) : nullptr;
  parallel_for(l.c, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      double mean, invstd;
      if (p.training) {
        double sum = 0, squares = 0;
        for_each_in_channel(l, c, [&](int64_t i) { sum += x[i]; });
        mean = sum / static_cast<double>(l.count());
        for_each_in_channel(l, c, [&](int64_t i) { squares += (x[i] - mean) * (x[i] - mean); });
        double var = squares / static_cast<double>(l.count());  // biased, for normalizing
        invstd = 1.0 / std::sqrt(var + p.eps);
        static_cast<T*>(save_mean.data_ptr())[c] = T(mean);
        static_cast<T*>(save_invstd.data_ptr())[c] = T(invstd);
        if (rm != nullptr) rm[c] = T((1 - p.momentum) * rm[c] + p.momentum * mean);
        if (rv != nullptr) {
          double unbiased = l.count() > 1 ? squares / static_cast<double>(l.count() - 1) : var;
          rv[c] = T((1 - p.momentum) * rv[c] + p.momentum * unbiased);
        }
      } else {
        mean = rm[c];
        invstd = 1.0 / std::sqrt(double(rv[c]) + p.eps);
      }
      double scale = invstd * value_or<T>(weight, c, T(1));
      double shift = value_or<T>(bias, c, T(0)) - mean * scale;
      for_each_in_channel(l, c, [&](int64_t i) { y[i] = T(x[i] * scale + shift); });
    }
  });
}

template <class T>
void batch_norm_backward_impl(const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                              const Tensor& save_mean, const Tensor& save_invstd,
                              Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias) {
  Layout l = layout(input);
  const T* x = static_cast<const T*>(input.data_ptr());
  const T* dy = static_cast<const T*>(grad_out.data_ptr());
  const T* mean = static_cast<const T*>(save_mean.data_ptr());
  const T* invstd = static_cast<const T*>(save_invstd.data_ptr());
  parallel_for(l.c, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      // x_hat = (x - mean) * invstd; y = w * x_hat + b.
      // dx = w * invstd * (dy - mean(dy) - x_hat * mean(dy * x_hat))
      double sum_dy = 0, sum_dy_xhat = 0;
      double m = mean[c], s = invstd[c];
      for_each_in_channel(l, c, [&](int64_t i) {
        sum_dy += dy[i];
        sum_dy_xhat += dy[i] * (x[i] - m) * s;
      });
      if (grad_weight.defined()) static_cast<T*>(grad_weight.data_ptr())[c] = T(sum_dy_xhat);
      if (grad_bias.defined()) static_cast<T*>(grad_bias.data_ptr())[c] = T(sum_dy);
      if (!grad_input.defined()) continue;
      T* dx = static_cast<T*>(grad_input.data_ptr());
      double k = s * value_or<T>(weight, c, T(1));
      double count = static_cast<double>(l.count());
      for_each_in_channel(l, c, [&](int64_t i) {
        double x_hat = (x[i] - m) * s;
        dx[i] = T(k * (dy[i] - sum_dy / count - x_hat * sum_dy_xhat / count));
      });
    }
  });
}

void batch_norm_kernel(const Tensor& input, const Tensor& weight, const Tensor& bias,
                       Tensor& running_mean, Tensor& running_var, Tensor& out, Tensor& save_mean,
                       Tensor& save_invstd, const BatchNormParams& p) {
  if (input.dtype() == kFloat64) {
    batch_norm_impl<double>(input, weight, bias, running_mean, running_var, out, save_mean,
                            save_invstd, p);
  } else {
    batch_norm_impl<float>(input, weight, bias, running_mean, running_var, out, save_mean,
                           save_invstd, p);
  }
}

void batch_norm_backward_kernel(const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                                const Tensor& save_mean, const Tensor& save_invstd,
                                Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias) {
  if (input.dtype() == kFloat64) {
    batch_norm_backward_impl<double>(grad_out, input, weight, save_mean, save_invstd, grad_input,
                                     grad_weight, grad_bias);
  } else {
    batch_norm_backward_impl<float>(grad_out, input, weight, save_mean, save_invstd, grad_input,
                                    grad_weight, grad_bias);
  }
}

}  // namespace

void register_norm_kernels(KernelRegistry& r) {
  r.add<BatchNormKernel>(OpKey::batch_norm, kCPU, batch_norm_kernel);
  r.add<BatchNormBackwardKernel>(OpKey::batch_norm_backward, kCPU, batch_norm_backward_kernel);
}

}  // namespace wick::cpu
