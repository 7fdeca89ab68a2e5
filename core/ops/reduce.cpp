#include "core/ops/reduce.h"

#include <cmath>
#include <limits>

#include "autograd/functions/reduction.h"
#include "core/autocast.h"
#include "core/grad_mode.h"
#include "core/host_read.h"
#include "core/ops.h"
#include "core/ops/op_utils.h"

namespace wick {

namespace {

// The reduced dims of `x`; an empty list means every dim.
DimVec dims_to_reduce(const char* op, const Tensor& x, const DimList& dims) {
  detail::check_defined(op, x);
  if (x.dim() == 0) {  // a scalar: dim 0 / -1 are accepted and there is nothing to reduce
    for (int64_t d : dims) wrap_dim(op, d, 0);
    return DimVec();
  }
  if (dims.empty()) {
    DimVec all;
    for (int64_t d = 0; d < x.dim(); ++d) all.push_back(d);
    return all;
  }
  return reduction_dims(op, dims, x.dim());
}

Shape result_shape(const Shape& input, const DimVec& dims, bool keepdim) {
  Shape kept = keepdim_shape(input, dims);
  if (keepdim) return kept;
  Shape out;
  for (int64_t d = 0, next = 0; d < input.size(); ++d) {
    if (next < dims.size() && dims[next] == d) {
      ++next;
    } else {
      out.push_back(input[d]);
    }
  }
  return out;
}

// Sum without autograd, result in `dtype` and the keepdim/squeezed shape.
Tensor sum_forward(const Tensor& x, const DimVec& dims, bool keepdim, DType dtype) {
  Tensor out = empty(keepdim_shape(x.shape(), dims), options_of(x).with_dtype(dtype));
  dispatch<ReduceKernel>(OpKey::sum, x.device(), detail::cast(x, dtype), out, dims);
  return keepdim ? out : out.reshape(result_shape(x.shape(), dims, false));
}

ValuesIndices extremum(OpKey op, const char* name, const Tensor& x, int64_t dim, bool keepdim) {
  detail::check_defined(name, x);
  dim = wrap_dim(name, dim, x.dim());
  int64_t length = x.dim() == 0 ? 1 : x.size(dim);
  check_index(length > 0, name, "cannot reduce over dimension ", dim, " of size 0 (shape ",
              x.shape(), ")");
  DimVec dims;
  if (x.dim() > 0) dims.push_back(dim);
  Shape kept = keepdim_shape(x.shape(), dims);
  Tensor values = empty(kept, options_of(x));
  Tensor indices = empty(kept, options_of(x).with_dtype(kInt64));
  dispatch<ArgReduceKernel>(op, x.device(), x, values, indices, dim);
  Shape final_shape = result_shape(x.shape(), dims, keepdim);
  ValuesIndices result{values.reshape(final_shape), indices.reshape(final_shape)};
  if (needs_grad(x)) {
    auto node = make_node<MaxDimBackward>({&x});
    node->op = op;
    node->indices = SavedTensor(indices);
    node->dim = dim;
    node->keepdim = keepdim || x.dim() == 0;
    set_history(result.values, node);
  }
  return result;
}

Tensor extremum_all(OpKey op, const char* name, const Tensor& x) {
  detail::check_defined(name, x);
  check_index(x.numel() > 0, name, "cannot reduce an empty tensor (shape ", x.shape(),
              ") without a dim; there is no identity for max/min");
  Tensor flat = x.reshape(Shape{x.numel()}).detach();
  Tensor values = empty(Shape{1}, options_of(x));
  Tensor indices = empty(Shape{1}, options_of(x).with_dtype(kInt64));
  dispatch<ArgReduceKernel>(op, x.device(), flat, values, indices, int64_t{0});
  Tensor result = values.reshape(Shape{});
  if (needs_grad(x)) {
    auto node = make_node<MaxAllBackward>({&x});
    node->input = SavedTensor(x);
    node->result = SavedTensor(result, /*is_output=*/true);
    set_history(result, node);
  }
  return result;
}

Tensor arg_all(OpKey op, const char* name, const Tensor& x) {
  NoGradGuard no_grad;
  return extremum(op, name, x.reshape(Shape{x.numel()}), 0, false).indices.reshape(Shape{});
}

}  // namespace

Tensor sum(const Tensor& x_in, const DimList& dims, bool keepdim) {
  DimVec reduce = dims_to_reduce("sum", x_in, dims);
  Tensor x = autocast::cast(AutocastPolicy::Float32, x_in);
  DType dtype = is_floating(x.dtype()) ? x.dtype() : kInt64;
  Tensor out = sum_forward(x, reduce, keepdim, dtype);
  if (needs_grad(x)) {
    auto node = make_node<SumBackward>({&x});
    node->dims = reduce;
    node->keepdim = keepdim;
    set_history(out, node);
  }
  return out;
}

Tensor mean(const Tensor& x_in, const DimList& dims, bool keepdim) {
  DimVec reduce = dims_to_reduce("mean", x_in, dims);
  Tensor x = autocast::cast(AutocastPolicy::Float32, x_in);
  check_type(is_floating(x.dtype()), "mean", "expected a floating-point tensor; got ", x.dtype(),
             " (convert it with .to(wick::kFloat32) first)");
  int64_t count = 1;
  for (int64_t d : reduce) count *= x.size(d);
  Tensor out = sum_forward(x, reduce, keepdim, x.dtype());
  double scale = 1.0 / static_cast<double>(count);  // count 0 gives nan, like PyTorch
  {
    NoGradGuard no_grad;
    out.mul_(scale);
  }
  if (needs_grad(x)) {
    auto node = make_node<SumBackward>({&x});
    node->dims = reduce;
    node->keepdim = keepdim;
    node->scale = scale;
    set_history(out, node);
  }
  return out;
}

Tensor max(const Tensor& x) { return extremum_all(OpKey::max_dim, "max", x); }
Tensor min(const Tensor& x) { return extremum_all(OpKey::min_dim, "min", x); }

ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim) {
  return extremum(OpKey::max_dim, "max", x, dim, keepdim);
}

ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim) {
  return extremum(OpKey::min_dim, "min", x, dim, keepdim);
}

Tensor argmax(const Tensor& x) { return arg_all(OpKey::max_dim, "argmax", x); }
Tensor argmin(const Tensor& x) { return arg_all(OpKey::min_dim, "argmin", x); }

Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) {
  NoGradGuard no_grad;
  return extremum(OpKey::max_dim, "argmax", x, dim, keepdim).indices;
}

Tensor argmin(const Tensor& x, int64_t dim, bool keepdim) {
  NoGradGuard no_grad;
  return extremum(OpKey::min_dim, "argmin", x, dim, keepdim).indices;
}

// amax / amin: a kernel reduces over all `dims` at once; the gradient is shared evenly among the
// elements equal to the result, as in PyTorch.
static Tensor extreme(OpKey op, const Tensor& x, const DimList& dims, bool keepdim) {
  const char* name = op_name(op);
  DimVec reduce = dims_to_reduce(name, x, dims);
  for (int64_t d : reduce) {
    check_index(x.size(d) > 0, name, "cannot reduce over dimension ", d, " of size 0 (shape ",
                x.shape(), "); there is no identity for max/min");
  }
  Tensor out = empty(keepdim_shape(x.shape(), reduce), options_of(x));
  dispatch<ReduceKernel>(op, x.device(), x, out, reduce);
  Tensor result = keepdim ? out : out.reshape(result_shape(x.shape(), reduce, false));
  if (needs_grad(x)) {
    auto node = make_node<AmaxBackward>({&x});
    node->input = SavedTensor(x);
    node->result = SavedTensor(out, /*is_output=*/keepdim);  // keepdim form
    node->dims = reduce;
    node->is_max = op == OpKey::amax;
    set_history(result, node);
  }
  return result;
}

Tensor amax(const Tensor& x, const DimList& dims, bool keepdim) {
  return extreme(OpKey::amax, x, dims, keepdim);
}

Tensor amin(const Tensor& x, const DimList& dims, bool keepdim) {
  return extreme(OpKey::amin, x, dims, keepdim);
}

// any / all: amax / amin of "is not zero"; over nothing, any is false and all is true.
static Tensor any_all(const char* name, const Tensor& x, const DimList& dims, bool keepdim,
                      bool is_any) {
  DimVec reduce = dims_to_reduce(name, x, dims);
  if (x.numel() == 0) {
    return full(result_shape(x.shape(), reduce, keepdim), !is_any, options_of(x).with_dtype(kBool));
  }
  NoGradGuard no_grad;
  Tensor nonzero = x.dtype() == kBool ? x : ne(x, 0);
  return extreme(is_any ? OpKey::amax : OpKey::amin, nonzero, reduce.vec(), keepdim);
}

Tensor any(const Tensor& x, const DimList& dims, bool keepdim) {
  return any_all("any", x, dims, keepdim, true);
}

Tensor all(const Tensor& x, const DimList& dims, bool keepdim) {
  return any_all("all", x, dims, keepdim, false);
}

Tensor norm(const Tensor& x, double p, const DimList& dims, bool keepdim) {
  detail::check_defined("norm", x);
  check_type(is_floating(x.dtype()), "norm", "expected a floating-point tensor; got ", x.dtype());
  if (std::isinf(p)) return p > 0 ? amax(abs(x), dims, keepdim) : amin(abs(x), dims, keepdim);
  if (p == 1.0) return sum(abs(x), dims, keepdim);
  if (p == 0.0) return sum(ne(x, 0).to(x.dtype()), dims, keepdim);
  if (p != 2.0) return pow(sum(pow(abs(x), p), dims, keepdim), 1.0 / p);
  // The 2-norm has its own backward: x / norm, and 0 where the norm is 0 (not 0/0).
  Tensor out;
  {
    NoGradGuard no_grad;
    out = sqrt(sum(x * x, dims, /*keepdim=*/true));
  }
  DimVec reduce = dims_to_reduce("norm", x, dims);
  Tensor result = keepdim ? out : out.reshape(result_shape(x.shape(), reduce, false));
  if (needs_grad(x)) {
    auto node = make_node<Norm2Backward>({&x});
    node->input = SavedTensor(x);
    node->result = SavedTensor(out, /*is_output=*/keepdim);
    node->dims = reduce;
    set_history(result, node);
  }
  return result;
}

bool equal(const Tensor& a, const Tensor& b) {
  detail::check_defined("equal", a);
  detail::check_defined("equal", b);
  if (a.shape() != b.shape()) return false;
  NoGradGuard no_grad;
  note_host_read("equal");  // a bool for the caller's control flow (Note [host reads])
  return a.numel() == 0 || all(eq(a, b)).item<bool>();
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  detail::check_defined("allclose", a);
  detail::check_defined("allclose", b);
  check_value(rtol >= 0 && atol >= 0, "allclose",
              "rtol and atol must be non-negative; got rtol=", rtol, ", atol=", atol);
  NoGradGuard no_grad;
  Tensor x = a.to(kFloat64), y = b.to(kFloat64);
  Tensor close = le(abs(x - y), abs(y) * rtol + atol);
  close = logical_or(close, eq(x, y));  // equal infinities are close
  if (equal_nan) close = logical_or(close, logical_and(ne(x, x), ne(y, y)));
  note_host_read("allclose");
  return close.numel() == 0 || all(close).item<bool>();
}

Tensor var(const Tensor& x, const DimList& dims, int64_t correction, bool keepdim) {
  DimVec reduce = dims_to_reduce("var", x, dims);
  check_type(is_floating(x.dtype()), "var", "expected a floating-point tensor; got ", x.dtype());
  int64_t count = 1;
  for (int64_t d : reduce) count *= x.size(d);
  DimList reduce_list = reduce.vec();
  Tensor centered = x - mean(x, reduce_list, /*keepdim=*/true);
  Tensor squares = sum(centered * centered, reduce_list, keepdim);
  return squares / static_cast<double>(std::max<int64_t>(count - correction, 0));
}

Tensor std(const Tensor& x, const DimList& dims, int64_t correction, bool keepdim) {
  return sqrt(var(x, dims, correction, keepdim));
}

Tensor logsumexp(const Tensor& x, const DimList& dims, bool keepdim) {
  DimVec reduce = dims_to_reduce("logsumexp", x, dims);
  DimList reduce_list = reduce.vec();
  Tensor shift = amax(x, reduce_list, /*keepdim=*/true).detach();
  // An all -inf slice has max -inf; shifting by it would give nan, so shift by 0 there.
  shift = masked_fill(shift, eq(abs(shift), std::numeric_limits<double>::infinity()), 0.0);
  Tensor result = log(sum(exp(x - shift), reduce_list, /*keepdim=*/true)) + shift;
  return keepdim ? result : result.reshape(result_shape(x.shape(), reduce, false));
}

}  // namespace wick
