// CUDA kernels for pooling (max, average, adaptive average) and batch normalization.
//
// Note [pooling and batch norm kernels]
// Convolution goes to cuDNN (cudnn_conv.cpp), where its algorithms (implicit GEMM, Winograd, FFT,
// tensor cores) are worth the API. Pooling and batch norm are memory-bound one-pass kernels,
// written here mirroring core/cpu/pool_kernels.cpp and norm_kernels.cpp formula for formula; the
// backward passes gather (each input element sums the outputs that used it) instead of
// scattering with atomics, so they are deterministic. With wick.backends.cudnn.enabled (the
// default) average pooling and batch norm run cuDNN's instead where it can take the case (Note
// [cuDNN or hand-written] in cudnn_nn.cpp); max pooling always runs here: its kernel must return
// the argmax indices, which cuDNN does not produce, and PyTorch also runs its own.
#include "core/pool_planes.h"
#include "cuda/allocator.h"
#include "cuda/kernels.h"
#include "cuda/loops.cuh"

namespace wick::cuda {

namespace {

template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// ---- max pooling ----

template <class T>
__global__ void max_pool_kernel(const T* x, T* y, int64_t* idx, Planes s, Pool2dParams p) {
  using C = compute_t<T>;
  for (int64_t o = thread_index(); o < s.count * s.oh * s.ow; o += grid_stride()) {
    int64_t ox = o % s.ow, oy = (o / s.ow) % s.oh, plane = o / (s.oh * s.ow);
    const T* in = x + plane * s.h * s.w;
    C best = -INFINITY;
    int64_t best_at = -1;
    for (int64_t i = 0; i < p.kernel[0]; ++i) {
      int64_t iy = oy * p.stride[0] - p.padding[0] + i * p.dilation[0];
      if (iy < 0 || iy >= s.h) continue;
      for (int64_t j = 0; j < p.kernel[1]; ++j) {
        int64_t ix = ox * p.stride[1] - p.padding[1] + j * p.dilation[1];
        if (ix < 0 || ix >= s.w) continue;
        C v = C(in[iy * s.w + ix]);
        if (v > best || d_isnan(v) || best_at < 0) {  // NaN propagates, as on the CPU
          best = v;
          best_at = iy * s.w + ix;
          if (d_isnan(v)) break;
        }
      }
    }
    y[o] = T(best);
    if (idx != nullptr) idx[o] = best_at;  // null: values only
  }
}

// Each input element sums the gradients of the outputs whose recorded maximum it is.
template <class T>
__global__ void max_pool_backward_kernel(const T* dy, const int64_t* idx, T* dx, Planes s,
                                         Pool2dParams p) {
  for (int64_t e = thread_index(); e < s.count * s.h * s.w; e += grid_stride()) {
    int64_t ix = e % s.w, iy = (e / s.w) % s.h, plane = e / (s.h * s.w);
    int64_t span_y = (p.kernel[0] - 1) * p.dilation[0], span_x = (p.kernel[1] - 1) * p.dilation[1];
    int64_t y0 = max(int64_t(0), (iy + p.padding[0] - span_y + p.stride[0] - 1) / p.stride[0]);
    int64_t x0 = max(int64_t(0), (ix + p.padding[1] - span_x + p.stride[1] - 1) / p.stride[1]);
    int64_t y1 = min(s.oh, (iy + p.padding[0]) / p.stride[0] + 1);
    int64_t x1 = min(s.ow, (ix + p.padding[1]) / p.stride[1] + 1);
    acc_t<T> sum = 0;
    int64_t target = iy * s.w + ix, base = plane * s.oh * s.ow;
    for (int64_t oy = y0; oy < y1; ++oy) {
      for (int64_t ox = x0; ox < x1; ++ox) {
        int64_t o = base + oy * s.ow + ox;
        if (idx[o] == target) sum += acc_t<T>(compute_t<T>(dy[o]));
      }
    }
    dx[e] = T(static_cast<compute_t<T>>(sum));
  }
}

void max_pool2d(const Tensor& input, Tensor& out, Tensor& indices, const Pool2dParams& p) {
  Planes s = planes(input, out);
  int64_t n = s.count * s.oh * s.ow;
  if (n == 0) return;
  LaunchContext ctx(out);
  visit_floating("max_pool2d", input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_pool_kernel<T><<<ctx.blocks_for(n), kThreads, 0, ctx.stream()>>>(
        static_cast<const T*>(input.data_ptr()), static_cast<T*>(out.data_ptr()),
        indices.defined() ? indices.data<int64_t>() : nullptr, s, p);
  });
  WICK_KERNEL_CHECK();
}

void max_pool2d_backward(const Tensor& grad_out, const Tensor& indices, Tensor& grad_input,
                         const Pool2dParams& p) {
  Planes s = planes(grad_input, grad_out);
  int64_t n = s.count * s.h * s.w;
  if (n == 0) return;
  LaunchContext ctx(grad_input);
  Tensor dy = grad_out.is_contiguous() ? grad_out : grad_out.contiguous();
  Tensor idx = indices.is_contiguous() ? indices : indices.contiguous();
  visit_floating("max_pool2d_backward", grad_out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_pool_backward_kernel<T><<<ctx.blocks_for(n), kThreads, 0, ctx.stream()>>>(
        static_cast<const T*>(dy.data_ptr()), idx.data<int64_t>(),
        static_cast<T*>(grad_input.data_ptr()), s, p);
  });
  WICK_KERNEL_CHECK();
}

// ---- average pooling ----

struct Window {
  int64_t y0, y1, x0, x1, divisor;
};

// The CPU's avg_window and adaptive_window (core/cpu/pool_kernels.cpp).
template <bool kAdaptive>
__device__ Window window(const Planes& s, const Pool2dParams& p, int64_t oy, int64_t ox) {
  if constexpr (kAdaptive) {
    int64_t y0 = oy * s.h / s.oh, y1 = ((oy + 1) * s.h + s.oh - 1) / s.oh;
    int64_t x0 = ox * s.w / s.ow, x1 = ((ox + 1) * s.w + s.ow - 1) / s.ow;
    return {y0, y1, x0, x1, (y1 - y0) * (x1 - x0)};
  } else {
    int64_t y0 = oy * p.stride[0] - p.padding[0], x0 = ox * p.stride[1] - p.padding[1];
    int64_t y1 = min(y0 + p.kernel[0], s.h + p.padding[0]);
    int64_t x1 = min(x0 + p.kernel[1], s.w + p.padding[1]);
    int64_t padded = (y1 - y0) * (x1 - x0);
    y0 = max(y0, int64_t(0)), x0 = max(x0, int64_t(0));
    y1 = min(y1, s.h), x1 = min(x1, s.w);
    int64_t divisor = p.count_include_pad ? padded : (y1 - y0) * (x1 - x0);
    return {y0, y1, x0, x1, max(divisor, int64_t(1))};
  }
}

template <class T, bool kAdaptive>
__global__ void avg_pool_kernel(const T* x, T* y, Planes s, Pool2dParams p) {
  for (int64_t o = thread_index(); o < s.count * s.oh * s.ow; o += grid_stride()) {
    int64_t ox = o % s.ow, oy = (o / s.ow) % s.oh, plane = o / (s.oh * s.ow);
    const T* in = x + plane * s.h * s.w;
    Window win = window<kAdaptive>(s, p, oy, ox);
    acc_t<T> sum = 0;
    for (int64_t iy = win.y0; iy < win.y1; ++iy) {
      for (int64_t ix = win.x0; ix < win.x1; ++ix) sum += acc_t<T>(compute_t<T>(in[iy * s.w + ix]));
    }
    y[o] = T(static_cast<compute_t<T>>(sum / acc_t<T>(win.divisor)));
  }
}

// Each input element gathers dy / divisor from every output window that contains it. The
// candidate outputs are a superset computed from the window geometry; membership is checked with
// the forward's own window, so the two can never disagree.
template <class T, bool kAdaptive>
__global__ void avg_pool_backward_kernel(const T* dy, T* dx, Planes s, Pool2dParams p) {
  for (int64_t e = thread_index(); e < s.count * s.h * s.w; e += grid_stride()) {
    int64_t ix = e % s.w, iy = (e / s.w) % s.h, plane = e / (s.h * s.w);
    int64_t y0, y1, x0, x1;
    if constexpr (kAdaptive) {
      y0 = max(int64_t(0), iy * s.oh / s.h - 1), y1 = min(s.oh, (iy + 1) * s.oh / s.h + 2);
      x0 = max(int64_t(0), ix * s.ow / s.w - 1), x1 = min(s.ow, (ix + 1) * s.ow / s.w + 2);
    } else {
      y0 = max(int64_t(0), (iy + p.padding[0] - p.kernel[0]) / p.stride[0]);
      x0 = max(int64_t(0), (ix + p.padding[1] - p.kernel[1]) / p.stride[1]);
      y1 = min(s.oh, (iy + p.padding[0]) / p.stride[0] + 1);
      x1 = min(s.ow, (ix + p.padding[1]) / p.stride[1] + 1);
    }
    acc_t<T> sum = 0;
    for (int64_t oy = y0; oy < y1; ++oy) {
      for (int64_t ox = x0; ox < x1; ++ox) {
        Window win = window<kAdaptive>(s, p, oy, ox);
        if (iy < win.y0 || iy >= win.y1 || ix < win.x0 || ix >= win.x1) continue;
        sum += acc_t<T>(compute_t<T>(dy[(plane * s.oh + oy) * s.ow + ox])) / acc_t<T>(win.divisor);
      }
    }
    dx[e] = T(static_cast<compute_t<T>>(sum));
  }
}

template <bool kAdaptive>
void avg_pool2d(const Tensor& input, Tensor& out, const Pool2dParams& p) {
  Planes s = planes(input, out);
  int64_t n = s.count * s.oh * s.ow;
  if (n == 0) return;
  if (!kAdaptive && cudnn_avg_pool2d(input, out, p)) return;  // Note [cuDNN or hand-written]
  LaunchContext ctx(out);
  visit_floating("avg_pool2d", input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    avg_pool_kernel<T, kAdaptive><<<ctx.blocks_for(n), kThreads, 0, ctx.stream()>>>(
        static_cast<const T*>(input.data_ptr()), static_cast<T*>(out.data_ptr()), s, p);
  });
  WICK_KERNEL_CHECK();
}

template <bool kAdaptive>
void avg_pool2d_backward(const Tensor& grad_out, Tensor& grad_input, const Pool2dParams& p) {
  Planes s = planes(grad_input, grad_out);
  int64_t n = s.count * s.h * s.w;
  if (n == 0) return;
  if (!kAdaptive && cudnn_avg_pool2d_backward(grad_out, grad_input, p)) return;
  LaunchContext ctx(grad_input);
  Tensor dy = grad_out.is_contiguous() ? grad_out : grad_out.contiguous();
  visit_floating("avg_pool2d_backward", grad_out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    avg_pool_backward_kernel<T, kAdaptive><<<ctx.blocks_for(n), kThreads, 0, ctx.stream()>>>(
        static_cast<const T*>(dy.data_ptr()), static_cast<T*>(grad_input.data_ptr()), s, p);
  });
  WICK_KERNEL_CHECK();
}

// ---- batch norm ----

// The input is contiguous [N, C, S]. A block per channel computes its statistics in double, as
// the CPU does: the mean first, then the mean squared deviation (two passes, no cancellation).
template <class T>
__global__ void batch_norm_stats_kernel(const T* x, int64_t n, int64_t c, int64_t s, T* save_mean,
                                        T* save_invstd, T* running_mean, T* running_var,
                                        BatchNormParams p) {
  __shared__ double shared[256];
  int64_t channel = blockIdx.x, count = n * s;
  auto at = [&](int64_t k) { return double(x[((k / s) * c + channel) * s + k % s]); };
  double sum = 0;
  for (int64_t k = threadIdx.x; k < count; k += blockDim.x) sum += at(k);
  shared[threadIdx.x] = sum;
  __syncthreads();
  for (int step = blockDim.x / 2; step > 0; step >>= 1) {
    if (threadIdx.x < step) shared[threadIdx.x] += shared[threadIdx.x + step];
    __syncthreads();
  }
  double mean = shared[0] / double(count);
  __syncthreads();
  double squares = 0;
  for (int64_t k = threadIdx.x; k < count; k += blockDim.x)
    squares += (at(k) - mean) * (at(k) - mean);
  shared[threadIdx.x] = squares;
  __syncthreads();
  for (int step = blockDim.x / 2; step > 0; step >>= 1) {
    if (threadIdx.x < step) shared[threadIdx.x] += shared[threadIdx.x + step];
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  squares = shared[0];
  double var = squares / double(count);
  save_mean[channel] = T(mean);
  save_invstd[channel] = T(1.0 / sqrt(var + p.eps));
  if (running_mean != nullptr) {
    running_mean[channel] = T((1 - p.momentum) * double(running_mean[channel]) + p.momentum * mean);
  }
  if (running_var != nullptr) {
    double unbiased = count > 1 ? squares / double(count - 1) : var;
    running_var[channel] =
        T((1 - p.momentum) * double(running_var[channel]) + p.momentum * unbiased);
  }
}

// bn(x) + residual at flat index e, before the fused relu (Note [batch norm's fused epilogue]):
// one function, so that the backward's mask is the forward's to the bit.
template <class T>
__device__ T batch_norm_pre(const T* x, int64_t e, int64_t channel, const T* mean, const T* invstd,
                            const T* running_var, const T* weight, const T* bias, const T* residual,
                            double eps) {
  double m = double(mean[channel]);
  double inv =
      invstd != nullptr ? double(invstd[channel]) : 1.0 / sqrt(double(running_var[channel]) + eps);
  double scale = inv * (weight != nullptr ? double(weight[channel]) : 1.0);
  double shift = (bias != nullptr ? double(bias[channel]) : 0.0) - m * scale;
  T y = T(double(x[e]) * scale + shift);
  return residual != nullptr ? T(y + residual[e]) : y;
}

// y = relu?(x * scale + shift + residual) per channel, from the batch statistics (training) or
// the running ones.
template <class T>
__global__ void batch_norm_apply_kernel(const T* x, T* y, int64_t total, int64_t c, int64_t s,
                                        const T* mean, const T* invstd, const T* running_var,
                                        const T* weight, const T* bias, const T* residual,
                                        double eps, bool relu) {
  for (int64_t e = thread_index(); e < total; e += grid_stride()) {
    int64_t channel = (e / s) % c;
    T v = batch_norm_pre(x, e, channel, mean, invstd, running_var, weight, bias, residual, eps);
    y[e] = relu && !(v > T(0)) ? T(0) : v;
  }
}

template <class T>
const T* ptr_or_null(const Tensor& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}
template <class T>
T* mutable_ptr_or_null(Tensor& t) {
  return t.defined() ? static_cast<T*>(t.data_ptr()) : nullptr;
}

void batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, Tensor& running_mean,
                Tensor& running_var, const Tensor& residual, Tensor& out, Tensor& save_mean,
                Tensor& save_invstd, const BatchNormParams& p) {
  int64_t n = input.size(0), c = input.size(1), s = input.numel() / std::max<int64_t>(1, n * c);
  if (input.numel() == 0) return;
  const bool fused = p.relu || residual.defined();  // cuDNN's fused form wants NHWC
  if (!fused && cudnn_batch_norm(input, weight, bias, running_mean, running_var, out, save_mean,
                                 save_invstd, p)) {
    return;  // Note [cuDNN or hand-written] in cudnn_nn.cpp
  }
  LaunchContext ctx(out);
  visit_floating("batch_norm", input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* x = static_cast<const T*>(input.data_ptr());
      const T *mean, *invstd = nullptr, *var = nullptr;
      if (p.training) {
        batch_norm_stats_kernel<T><<<static_cast<unsigned>(c), 256, 0, ctx.stream()>>>(
            x, n, c, s, static_cast<T*>(save_mean.data_ptr()),
            static_cast<T*>(save_invstd.data_ptr()), mutable_ptr_or_null<T>(running_mean),
            mutable_ptr_or_null<T>(running_var), p);
        WICK_KERNEL_CHECK();
        mean = static_cast<const T*>(save_mean.data_ptr());
        invstd = static_cast<const T*>(save_invstd.data_ptr());
      } else {
        mean = static_cast<const T*>(running_mean.data_ptr());
        var = static_cast<const T*>(running_var.data_ptr());
      }
      batch_norm_apply_kernel<T><<<ctx.blocks_for(input.numel()), kThreads, 0, ctx.stream()>>>(
          x, static_cast<T*>(out.data_ptr()), input.numel(), c, s, mean, invstd, var,
          ptr_or_null<T>(weight), ptr_or_null<T>(bias), ptr_or_null<T>(residual), p.eps, p.relu);
      WICK_KERNEL_CHECK();
    } else {
      throw TypeError(error_message("batch_norm", "expected float32 or float64 statistics"));
    }
  });
}

// The gradient at flat index e before batch norm: dz, masked by the fused relu.
template <class T>
struct MaskedGrad {
  const T *dz, *x, *mean, *invstd, *weight, *bias, *residual;
  bool relu;
  __device__ T operator()(int64_t e, int64_t channel) const {
    if (!relu) return dz[e];
    T v = batch_norm_pre(x, e, channel, mean, invstd, static_cast<const T*>(nullptr), weight, bias,
                         residual, 0.0);
    return v > T(0) ? dz[e] : T(0);
  }
};

// Per channel: sum(dy) and sum(dy * x_hat), in double, into sums[2c] and sums[2c + 1]; dy into
// grad_residual when it is wanted.
template <class T>
__global__ void batch_norm_backward_reduce_kernel(MaskedGrad<T> dy, int64_t n, int64_t c, int64_t s,
                                                  double* sums, T* grad_weight, T* grad_bias,
                                                  T* grad_residual) {
  __shared__ double shared_dy[256], shared_dyx[256];
  int64_t channel = blockIdx.x, count = n * s;
  double m = double(dy.mean[channel]), inv = double(dy.invstd[channel]);
  double sum_dy = 0, sum_dyx = 0;
  for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
    int64_t e = ((k / s) * c + channel) * s + k % s;
    T gt = dy(e, channel);
    if (grad_residual != nullptr) grad_residual[e] = gt;
    double g = double(gt);
    sum_dy += g;
    sum_dyx += g * (double(dy.x[e]) - m) * inv;
  }
  shared_dy[threadIdx.x] = sum_dy;
  shared_dyx[threadIdx.x] = sum_dyx;
  __syncthreads();
  for (int step = blockDim.x / 2; step > 0; step >>= 1) {
    if (threadIdx.x < step) {
      shared_dy[threadIdx.x] += shared_dy[threadIdx.x + step];
      shared_dyx[threadIdx.x] += shared_dyx[threadIdx.x + step];
    }
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  sums[2 * channel] = shared_dy[0];
  sums[2 * channel + 1] = shared_dyx[0];
  if (grad_weight != nullptr) grad_weight[channel] = T(shared_dyx[0]);
  if (grad_bias != nullptr) grad_bias[channel] = T(shared_dy[0]);
}

// dx = w * invstd * (dy - mean(dy) - x_hat * mean(dy * x_hat))
template <class T>
__global__ void batch_norm_backward_input_kernel(MaskedGrad<T> dy, T* dx, int64_t total,
                                                 int64_t count, int64_t c, int64_t s,
                                                 const double* sums) {
  for (int64_t e = thread_index(); e < total; e += grid_stride()) {
    int64_t channel = (e / s) % c;
    double m = double(dy.mean[channel]), inv = double(dy.invstd[channel]);
    double k = inv * (dy.weight != nullptr ? double(dy.weight[channel]) : 1.0);
    double x_hat = (double(dy.x[e]) - m) * inv;
    double mean_dy = sums[2 * channel] / double(count);
    double mean_dyx = sums[2 * channel + 1] / double(count);
    dx[e] = T(k * (double(dy(e, channel)) - mean_dy - x_hat * mean_dyx));
  }
}

void batch_norm_backward(const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                         const Tensor& save_mean, const Tensor& save_invstd, const Tensor& bias,
                         const Tensor& residual, Tensor& grad_input, Tensor& grad_weight,
                         Tensor& grad_bias, Tensor& grad_residual, const BatchNormParams& p) {
  int64_t n = input.size(0), c = input.size(1), s = input.numel() / std::max<int64_t>(1, n * c);
  if (input.numel() == 0) return;
  const bool fused = p.relu || grad_residual.defined();
  if (!fused && cudnn_batch_norm_backward(grad_out, input, weight, save_mean, save_invstd,
                                          grad_input, grad_weight, grad_bias)) {
    return;
  }
  LaunchContext ctx(input);
  Tensor dz = grad_out.is_contiguous() ? grad_out : grad_out.contiguous();
  DeviceBuffer sums(2 * c * sizeof(double));
  visit_floating("batch_norm_backward", input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      MaskedGrad<T> dy{static_cast<const T*>(dz.data_ptr()),
                       static_cast<const T*>(input.data_ptr()),
                       static_cast<const T*>(save_mean.data_ptr()),
                       static_cast<const T*>(save_invstd.data_ptr()),
                       ptr_or_null<T>(weight),
                       ptr_or_null<T>(bias),
                       ptr_or_null<T>(residual),
                       p.relu};
      auto* sum_ptr = static_cast<double*>(sums.data());
      batch_norm_backward_reduce_kernel<T><<<static_cast<unsigned>(c), 256, 0, ctx.stream()>>>(
          dy, n, c, s, sum_ptr, mutable_ptr_or_null<T>(grad_weight),
          mutable_ptr_or_null<T>(grad_bias), mutable_ptr_or_null<T>(grad_residual));
      WICK_KERNEL_CHECK();
      if (grad_input.defined()) {
        batch_norm_backward_input_kernel<T>
            <<<ctx.blocks_for(input.numel()), kThreads, 0, ctx.stream()>>>(
                dy, static_cast<T*>(grad_input.data_ptr()), input.numel(), n * s, c, s, sum_ptr);
        WICK_KERNEL_CHECK();
      }
    } else {
      throw TypeError(error_message("batch_norm_backward", "expected float32 or float64"));
    }
  });
}

}  // namespace

void register_nn_kernels(KernelRegistry& r) {
  r.add<MaxPool2dKernel>(OpKey::max_pool2d, kCUDA, max_pool2d);
  r.add<MaxPool2dBackwardKernel>(OpKey::max_pool2d_backward, kCUDA, max_pool2d_backward);
  r.add<AvgPool2dKernel>(OpKey::avg_pool2d, kCUDA, avg_pool2d<false>);
  r.add<AvgPool2dBackwardKernel>(OpKey::avg_pool2d_backward, kCUDA, avg_pool2d_backward<false>);
  r.add<AvgPool2dKernel>(OpKey::adaptive_avg_pool2d, kCUDA, avg_pool2d<true>);
  r.add<AvgPool2dBackwardKernel>(OpKey::adaptive_avg_pool2d_backward, kCUDA,
                                 avg_pool2d_backward<true>);
  r.add<BatchNormKernel>(OpKey::batch_norm, kCUDA, batch_norm);
  r.add<BatchNormBackwardKernel>(OpKey::batch_norm_backward, kCUDA, batch_norm_backward);
}

}  // namespace wick::cuda
