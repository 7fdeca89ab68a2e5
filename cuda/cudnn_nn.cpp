// cuDNN for softmax, average pooling and batch normalization: the other half of the switch
// wick.backends.cudnn.enabled (torch.backends.cudnn.enabled). The kernels registered for these
// ops (reduce.cu, nn.cu) call the functions here first; each returns false when cuDNN is off or
// cannot take the case, and the hand-written kernel runs instead.
//
// Note [cuDNN or hand-written]
// The hand-written kernels stay: they are what a student reads and compares against, and they
// cover what cuDNN does not. cuDNN takes, when enabled:
// - softmax and log_softmax over any dim of a contiguous float32/float64/float16 tensor, as a
//   [outer, size, inner, 1] tensor with CUDNN_SOFTMAX_MODE_CHANNEL (bfloat16: hand-written);
// - average pooling forward and backward, without ceil_mode or dilation (cuDNN has neither),
//   float32/float64/float16. cuDNN's pooling backward also takes the forward input and output;
//   average pooling never reads their values, so grad_out stands in for the output and an
//   uninitialized scratch tensor for the input (the backward kernel does not receive them);
// - batch normalization, training and evaluation forward and the training backward, over
//   [N, C, S] seen as [N, C, S, 1] in CUDNN_BATCHNORM_SPATIAL mode (float32/float64, eps at
//   least CUDNN_BN_MIN_EPSILON). cuDNN normalizes with the same biased batch variance, keeps the
//   same saved mean and 1/sqrt(var + eps), and updates the running variance with the unbiased
//   one, as wick's kernels do.
// Max pooling stays hand-written: MaxPool2dKernel must return the argmax indices, which cuDNN
// does not produce, and its backward receives only grad_out and the indices (PyTorch also runs
// its own max pooling kernels). Adaptive average pooling has no cuDNN counterpart.
// These are cuDNN's fixed-function calls, deprecated in cuDNN 9 in favour of the graph API
// (cudnn_conv.cpp) but present in every cuDNN 9 release; their plain calls keep this file short.
#include <atomic>
#include <climits>

#include "core/error.h"
#include "core/ops.h"
#include "cuda/cudnn_util.h"
#include "cuda/kernels.h"
#include "cuda/runtime.h"

namespace wick::cuda {

namespace {

std::atomic<bool> g_enabled{true};

// An owned legacy descriptor: Create/Destroy pairs for the three kinds used here.
template <class D, cudnnStatus_t (*Create)(D*), cudnnStatus_t (*Destroy)(D)>
class Owned {
 public:
  Owned() { WICK_CUDNN_CHECK(Create(&d_)); }
  ~Owned() { Destroy(d_); }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  D get() const { return d_; }

 private:
  D d_ = nullptr;
};
using TensorDesc =
    Owned<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using PoolingDesc =
    Owned<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor, cudnnDestroyPoolingDescriptor>;

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

// cuDNN's type for `dtype`, or false when this file leaves it to the hand-written kernels.
bool data_type(DType dtype, bool allow_half, cudnnDataType_t* out) {
  switch (dtype) {
    case kFloat32:
      *out = CUDNN_DATA_FLOAT;
      return true;
    case kFloat64:
      *out = CUDNN_DATA_DOUBLE;
      return true;
    case kFloat16:
      *out = CUDNN_DATA_HALF;
      return allow_half;
    default:
      return false;
  }
}

// A dense NCHW descriptor; false when a dimension does not fit cuDNN's int.
bool set_4d(const TensorDesc& desc, cudnnDataType_t type, int64_t n, int64_t c, int64_t h,
            int64_t w) {
  if (!fits_int(n) || !fits_int(c) || !fits_int(h) || !fits_int(w) || !fits_int(n * c * h * w)) {
    return false;
  }
  WICK_CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc.get(), CUDNN_TENSOR_NCHW, type, int(n), int(c),
                                              int(h), int(w)));
  return true;
}

// alpha = 1 and beta = 0 in the scaling type cuDNN expects: double for double data, else float.
struct Scaling {
  explicit Scaling(cudnnDataType_t type) : is_double(type == CUDNN_DATA_DOUBLE) {}
  const void* one() const { return is_double ? static_cast<const void*>(&d1) : &f1; }
  const void* zero() const { return is_double ? static_cast<const void*>(&d0) : &f0; }
  bool is_double;
  double d1 = 1, d0 = 0;
  float f1 = 1, f0 = 0;
};

bool pooling_supported(const Tensor& input, const Pool2dParams& p, cudnnDataType_t* type) {
  if (!cudnn_usable() || !data_type(input.dtype(), true, type)) return false;
  if (p.ceil_mode || p.dilation[0] != 1 || p.dilation[1] != 1) return false;
  for (int d = 0; d < 2; ++d) {
    if (!fits_int(p.kernel[d]) || !fits_int(p.stride[d]) || !fits_int(p.padding[d])) return false;
  }
  return true;
}

void set_pooling(const PoolingDesc& desc, const Pool2dParams& p) {
  cudnnPoolingMode_t mode = p.count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  WICK_CUDNN_CHECK(cudnnSetPooling2dDescriptor(
      desc.get(), mode, CUDNN_PROPAGATE_NAN, int(p.kernel[0]), int(p.kernel[1]), int(p.padding[0]),
      int(p.padding[1]), int(p.stride[0]), int(p.stride[1])));
}

// Batch norm's [N, C, S] as [N, C, S, 1], and the per-channel parameter descriptor cuDNN derives.
bool batch_norm_descs(const Tensor& input, const TensorDesc& x, const TensorDesc& param,
                      cudnnDataType_t* type) {
  if (!cudnn_usable() || !data_type(input.dtype(), false, type) || input.dim() < 2) return false;
  int64_t n = input.size(0), c = input.size(1), s = input.numel() / std::max<int64_t>(1, n * c);
  if (!set_4d(x, *type, n, c, s, 1)) return false;
  WICK_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(param.get(), x.get(), CUDNN_BATCHNORM_SPATIAL));
  return true;
}

// `t` when defined, else a [C] tensor of `value` on the input's device (cuDNN requires scale,
// bias and the parameter gradients).
Tensor or_filled(const Tensor& t, const Tensor& input, double value) {
  if (t.defined()) return t;
  return full(Shape{input.size(1)}, value, TensorOptions(input.device()).with_dtype(input.dtype()));
}

}  // namespace

void set_cudnn_enabled(bool enabled) { g_enabled = enabled; }
bool cudnn_enabled() { return g_enabled; }
bool cudnn_usable() { return g_enabled && cudnn_version_problem().empty(); }

bool cudnn_softmax(const Tensor& in, Tensor& out, int64_t dim, bool log) {
  cudnnDataType_t type;
  if (!cudnn_usable() || !data_type(in.dtype(), true, &type)) return false;
  if (!in.is_contiguous() || !out.is_contiguous()) return false;
  int64_t size = in.dim() == 0 ? 1 : in.size(dim), outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= in.size(d);
  for (int64_t d = dim + 1; d < in.dim(); ++d) inner *= in.size(d);
  if (outer * inner * size == 0) return true;  // nothing to compute
  TensorDesc desc;
  if (!set_4d(desc, type, outer, size, inner, 1)) return false;
  LaunchContext ctx(out);
  Scaling s(type);
  WICK_CUDNN_CHECK(cudnnSoftmaxForward(cudnn_handle(ctx.device(), ctx.stream()),
                                       log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
                                       CUDNN_SOFTMAX_MODE_CHANNEL, s.one(), desc.get(),
                                       in.data_ptr(), s.zero(), desc.get(), out.data_ptr()));
  return true;
}

bool cudnn_avg_pool2d(const Tensor& input, Tensor& out, const Pool2dParams& p) {
  cudnnDataType_t type;
  if (!pooling_supported(input, p, &type)) return false;
  TensorDesc x, y;
  if (!set_4d(x, type, input.size(0), input.size(1), input.size(2), input.size(3)) ||
      !set_4d(y, type, out.size(0), out.size(1), out.size(2), out.size(3))) {
    return false;
  }
  if (out.numel() == 0) return true;
  PoolingDesc pool;
  set_pooling(pool, p);
  LaunchContext ctx(out);
  Scaling s(type);
  WICK_CUDNN_CHECK(cudnnPoolingForward(cudnn_handle(ctx.device(), ctx.stream()), pool.get(),
                                       s.one(), x.get(), input.data_ptr(), s.zero(), y.get(),
                                       out.data_ptr()));
  return true;
}

bool cudnn_avg_pool2d_backward(const Tensor& grad_out, Tensor& grad_input, const Pool2dParams& p) {
  cudnnDataType_t type;
  if (!pooling_supported(grad_input, p, &type) || !grad_input.is_contiguous()) return false;
  TensorDesc x, y;
  if (!set_4d(x, type, grad_input.size(0), grad_input.size(1), grad_input.size(2),
              grad_input.size(3)) ||
      !set_4d(y, type, grad_out.size(0), grad_out.size(1), grad_out.size(2), grad_out.size(3))) {
    return false;
  }
  if (grad_input.numel() == 0) return true;
  Tensor dy = grad_out.is_contiguous() ? grad_out : grad_out.contiguous();
  Tensor unread_input = empty_like(grad_input);  // Note [cuDNN or hand-written]
  PoolingDesc pool;
  set_pooling(pool, p);
  LaunchContext ctx(grad_input);
  Scaling s(type);
  WICK_CUDNN_CHECK(cudnnPoolingBackward(cudnn_handle(ctx.device(), ctx.stream()), pool.get(),
                                        s.one(), y.get(), dy.data_ptr(), y.get(), dy.data_ptr(),
                                        x.get(), unread_input.data_ptr(), s.zero(), x.get(),
                                        grad_input.data_ptr()));
  return true;
}

bool cudnn_batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                      Tensor& running_mean, Tensor& running_var, Tensor& out, Tensor& save_mean,
                      Tensor& save_invstd, const BatchNormParams& p) {
  if (p.eps < CUDNN_BN_MIN_EPSILON || !input.is_contiguous() || !out.is_contiguous()) return false;
  if (!p.training && (!running_mean.defined() || !running_var.defined())) return false;
  TensorDesc x, param;
  cudnnDataType_t type;
  if (!batch_norm_descs(input, x, param, &type)) return false;
  if (input.numel() == 0) return true;
  Tensor scale = or_filled(weight, input, 1.0), shift = or_filled(bias, input, 0.0);
  LaunchContext ctx(out);
  cudnnHandle_t h = cudnn_handle(ctx.device(), ctx.stream());
  Scaling s(type);
  if (p.training) {
    WICK_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
        h, CUDNN_BATCHNORM_SPATIAL, s.one(), s.zero(), x.get(), input.data_ptr(), x.get(),
        out.data_ptr(), param.get(), scale.data_ptr(), shift.data_ptr(), p.momentum,
        running_mean.defined() ? running_mean.data_ptr() : nullptr,
        running_var.defined() ? running_var.data_ptr() : nullptr, p.eps, save_mean.data_ptr(),
        save_invstd.data_ptr()));
  } else {
    WICK_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
        h, CUDNN_BATCHNORM_SPATIAL, s.one(), s.zero(), x.get(), input.data_ptr(), x.get(),
        out.data_ptr(), param.get(), scale.data_ptr(), shift.data_ptr(), running_mean.data_ptr(),
        running_var.data_ptr(), p.eps));
  }
  return true;
}

bool cudnn_batch_norm_backward(const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                               const Tensor& save_mean, const Tensor& save_invstd,
                               Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias) {
  if (!input.is_contiguous()) return false;
  if (grad_input.defined() && !grad_input.is_contiguous()) return false;
  TensorDesc x, param;
  cudnnDataType_t type;
  if (!batch_norm_descs(input, x, param, &type)) return false;
  if (input.numel() == 0) return true;
  Tensor dy = grad_out.is_contiguous() ? grad_out : grad_out.contiguous();
  Tensor scale = or_filled(weight, input, 1.0);
  Tensor dx = grad_input.defined() ? grad_input : empty_like(input);
  Tensor dw = grad_weight.defined() ? grad_weight : empty_like(save_mean);
  Tensor db = grad_bias.defined() ? grad_bias : empty_like(save_mean);
  LaunchContext ctx(input);
  Scaling s(type);
  // With the saved mean and inverse deviation given, cuDNN does not use epsilon (the backward
  // kernel does not receive it); any valid value is passed.
  WICK_CUDNN_CHECK(cudnnBatchNormalizationBackward(
      cudnn_handle(ctx.device(), ctx.stream()), CUDNN_BATCHNORM_SPATIAL, s.one(), s.zero(), s.one(),
      s.zero(), x.get(), input.data_ptr(), x.get(), dy.data_ptr(), x.get(), dx.data_ptr(),
      param.get(), scale.data_ptr(), dw.data_ptr(), db.data_ptr(), CUDNN_BN_MIN_EPSILON,
      save_mean.data_ptr(), save_invstd.data_ptr()));
  return true;
}

}  // namespace wick::cuda
