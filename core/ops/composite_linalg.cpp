// Linear algebra as compositions of matmul, bmm, views and elementwise ops (composite_linalg.h;
// einsum is in composite_einsum.cpp).
#include "core/ops/composite_linalg.h"

#include <algorithm>
#include <cmath>

#include "autograd/node.h"
#include "core/ops.h"
#include "core/ops/composite_shape.h"
#include "core/ops/op_utils.h"

namespace wick {

namespace {

// beta * input + alpha * product, with input broadcast to the product's shape. beta == 0 drops
// the input entirely (PyTorch: "nan and inf in input are ignored"); alpha == 1 skips a multiply.
Tensor scaled_sum(const char* op, const Tensor& input, const Tensor& product, const Scalar& beta,
                  const Scalar& alpha) {
  detail::check_defined(op, input);
  check_state(broadcast_shapes(op, input.shape(), product.shape()) == product.shape(), op,
              "the input of shape ", input.shape(), " does not broadcast to the product's shape ",
              product.shape());
  Tensor scaled = alpha.to<double>() == 1.0 ? product : product * alpha;
  if (beta.to<double>() == 0.0) {
    if (!needs_grad(input)) return scaled;
    // PyTorch still gives the input a (zero) gradient; where() with an all-false condition does
    // that without reading its values into the result.
    Tensor never = zeros(product.shape(), TensorOptions(kBool).with_device(product.device()));
    return where(never, input.to(scaled.dtype()), scaled);
  }
  Tensor base = beta.to<double>() == 1.0 ? input : input * beta;
  return base + scaled;
}

}  // namespace

Tensor dot(const Tensor& a, const Tensor& b) {
  detail::check_defined("dot", a);
  detail::check_defined("dot", b);
  check_state(a.dim() == 1 && b.dim() == 1, "dot", "1D tensors expected, but got ", a.dim(),
              "D and ", b.dim(), "D tensors");
  check_state(a.size(0) == b.size(0), "dot", "inconsistent tensor size, expected tensor [",
              a.size(0), "] and src [", b.size(0),
              "] to have the same number of elements, but got ", a.size(0), " and ", b.size(0),
              " elements respectively");
  check_state(a.dtype() == b.dtype(), "dot", "expected both vectors to have same dtype, but found ",
              a.dtype(), " and ", b.dtype());
  return sum(a * b);
}

Tensor outer(const Tensor& a, const Tensor& b) {
  detail::check_defined("outer", a);
  detail::check_defined("outer", b);
  check_state(a.dim() == 1 && b.dim() == 1, "outer", "expected 1-D tensors; got shapes ", a.shape(),
              " and ", b.shape());
  return a.unsqueeze(1) * b.unsqueeze(0);
}

Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, const Scalar& beta,
             const Scalar& alpha) {
  detail::check_defined("addmm", m1);
  detail::check_defined("addmm", m2);
  check_state(m1.dim() == 2 && m2.dim() == 2, "addmm",
              "mat1 and mat2 must be matrices; got shapes ", m1.shape(), " and ", m2.shape());
  check_state(m1.size(1) == m2.size(0), "addmm", "mat1 and mat2 shapes cannot be multiplied (",
              m1.size(0), "x", m1.size(1), " and ", m2.size(0), "x", m2.size(1), ")");
  return scaled_sum("addmm", input, mm(m1, m2), beta, alpha);
}

Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta,
               const Scalar& alpha) {
  detail::check_defined("baddbmm", b1);
  detail::check_defined("baddbmm", b2);
  check_state(b1.dim() == 3 && b2.dim() == 3, "baddbmm",
              "batch1 and batch2 must be 3-D tensors; got shapes ", b1.shape(), " and ",
              b2.shape());
  return scaled_sum("baddbmm", input, bmm(b1, b2), beta, alpha);
}

Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims) {
  detail::check_defined("tensordot", a);
  detail::check_defined("tensordot", b);
  check_state(dims >= 0, "tensordot", "tensordot expects dims >= 0, but got dims=", dims);
  check_state(dims <= a.dim() && dims <= b.dim(), "tensordot", "dims=", dims,
              " is larger than the number of dims of the operands (", a.dim(), " and ", b.dim(),
              ")");
  DimList da, db;
  for (int64_t i = 0; i < dims; ++i) {
    da.push_back(a.dim() - dims + i);
    db.push_back(i);
  }
  return tensordot(a, b, da, db);
}

Tensor tensordot(const Tensor& a, const Tensor& b, const DimList& dims_a, const DimList& dims_b) {
  const char* op = "tensordot";
  detail::check_defined(op, a);
  detail::check_defined(op, b);
  check_state(dims_a.size() == dims_b.size(), op, "both dimension lists should have same length; ",
              "got ", dims_a.size(), " and ", dims_b.size());
  std::vector<bool> contracted_a(a.dim(), false), contracted_b(b.dim(), false);
  DimList order_a, order_b;  // a: [free..., contracted...]; b: [contracted..., free...]
  int64_t k = 1;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    int64_t da = wrap_dim(op, dims_a[i], a.dim()), db = wrap_dim(op, dims_b[i], b.dim());
    check_state(!contracted_a[da] && !contracted_b[db], op, "dim ", contracted_a[da] ? da : db,
                " appears multiple times in the list of dims");
    check_state(a.size(da) == b.size(db), op,
                "contracted dimensions need to match, but first has size ", a.size(da), " in dim ",
                da, " and second has size ", b.size(db), " in dim ", db);
    contracted_a[da] = contracted_b[db] = true;
    order_b.push_back(db);
    k *= a.size(da);
  }
  Shape out_shape;
  int64_t free_a = 1, free_b = 1;
  DimList free_a_dims;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (contracted_a[d]) continue;
    free_a_dims.push_back(d);
    out_shape.push_back(a.size(d));
    free_a *= a.size(d);
  }
  for (int64_t d = 0; d < b.dim(); ++d) {
    if (contracted_b[d]) continue;
    order_b.push_back(d);
    out_shape.push_back(b.size(d));
    free_b *= b.size(d);
  }
  order_a = free_a_dims;
  for (size_t i = 0; i < dims_a.size(); ++i) order_a.push_back(wrap_dim(op, dims_a[i], a.dim()));
  DType dtype = promote_types(a.dtype(), b.dtype());
  Tensor lhs = a.to(dtype).permute(order_a).reshape(Shape{free_a, k});
  Tensor rhs = b.to(dtype).permute(order_b).reshape(Shape{k, free_b});
  return mm(lhs, rhs).reshape(out_shape);
}

Tensor kron(const Tensor& a, const Tensor& b) {
  detail::check_defined("kron", a);
  detail::check_defined("kron", b);
  int64_t n = std::max(a.dim(), b.dim());
  check_value(2 * n <= kMaxDims, "kron", "operands of ", n, " dims need ", 2 * n,
              " dims in between; at most ", kMaxDims, " are supported");
  // a -> [a0, 1, a1, 1, ...] and b -> [1, b0, 1, b1, ...]: their product is [a0, b0, a1, b1, ...],
  // and merging each pair gives the block matrix.
  Shape spread_a, spread_b, out;
  for (int64_t i = 0; i < n; ++i) {
    int64_t ai = i < n - a.dim() ? 1 : a.size(i - (n - a.dim()));
    int64_t bi = i < n - b.dim() ? 1 : b.size(i - (n - b.dim()));
    spread_a.push_back(ai);
    spread_a.push_back(1);
    spread_b.push_back(1);
    spread_b.push_back(bi);
    out.push_back(checked_mul("kron", ai, bi));
  }
  return (a.reshape(spread_a) * b.reshape(spread_b)).reshape(out);
}

Tensor cross(const Tensor& a_in, const Tensor& b_in, std::optional<int64_t> dim) {
  const char* op = "cross";
  detail::check_defined(op, a_in);
  detail::check_defined(op, b_in);
  check_state(a_in.dim() == b_in.dim(), op, "inputs must have the same number of dimensions; got ",
              a_in.shape(), " and ", b_in.shape());
  Shape shape = broadcast_shapes(op, a_in.shape(), b_in.shape());
  Tensor a = a_in.expand(shape), b = b_in.expand(shape);
  int64_t d = -1;
  if (dim) {
    d = wrap_dim(op, *dim, a.dim());
  } else {
    for (int64_t i = 0; i < a.dim() && d < 0; ++i) d = a.size(i) == 3 ? i : -1;
    check_state(d >= 0, op, "no dimension of size 3 in input; got shapes ", a_in.shape(), " and ",
                b_in.shape());
  }
  check_state(a.size(d) == 3, "linalg.cross", "inputs dimension ", d, " must have length 3. Got ",
              a_in.size(d), " and ", b_in.size(d));
  auto at = [d](const Tensor& t, int64_t i) { return t.narrow(d, i, 1); };
  return cat({at(a, 1) * at(b, 2) - at(a, 2) * at(b, 1), at(a, 2) * at(b, 0) - at(a, 0) * at(b, 2),
              at(a, 0) * at(b, 1) - at(a, 1) * at(b, 0)},
             d);
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p, const std::string& compute_mode) {
  const char* op = "cdist";
  detail::check_defined(op, x1);
  detail::check_defined(op, x2);
  check_state(x1.dim() >= 2, op, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(),
              "D");
  check_state(x2.dim() >= 2, op, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(),
              "D");
  check_state(x1.size(-1) == x2.size(-1), op,
              "X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
              " X2: ", x2.size(-1));
  check_type(is_floating(x1.dtype()) && is_floating(x2.dtype()), op,
             "cdist only supports floating-point dtypes, X1 got: ", x1.dtype(),
             ", X2 got: ", x2.dtype());
  check_state(p >= 0, op, "cdist only supports non-negative p values; got p=", p);
  bool if_necessary = compute_mode == "use_mm_for_euclid_dist_if_necessary";
  bool always = compute_mode == "use_mm_for_euclid_dist";
  check_value(if_necessary || always || compute_mode == "donot_use_mm_for_euclid_dist", op,
              "unknown compute_mode '", compute_mode, "'");
  bool use_mm = p == 2.0 && (always || (if_necessary && (x1.size(-2) > 25 || x2.size(-2) > 25)));
  if (!use_mm) return norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, {-1});
  // |a - b|^2 = |a|^2 - 2 a.b + |b|^2: one matmul instead of a [P, R, M] difference tensor.
  Tensor sq1 = sum(x1 * x1, {-1}, /*keepdim=*/true);
  Tensor sq2 = sum(x2 * x2, {-1}, /*keepdim=*/true).transpose(-2, -1);
  Tensor d2 = clamp_min(sq1 - 2.0 * matmul(x1, x2.transpose(-2, -1)) + sq2, 0.0);
  // sqrt's derivative is infinite at 0; PyTorch's gradient there is 0, so a zero distance takes
  // the sqrt of 1 (no infinity, no NaN) and is then replaced by 0.
  Tensor positive = gt(d2, 0.0);
  return where(positive, sqrt(where(positive, d2, Scalar(1.0))), Scalar(0.0));
}

Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  const char* op = "diagonal";
  detail::check_defined(op, x);
  int64_t d1 = wrap_dim(op, dim1, x.dim()), d2 = wrap_dim(op, dim2, x.dim());
  check_state(d1 != d2, op, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t n = x.size(d1), m = x.size(d2);
  int64_t length =
      std::max<int64_t>(0, offset >= 0 ? std::min(n, m - offset) : std::min(n + offset, m));
  int64_t start = length == 0 ? 0 : (offset >= 0 ? offset * x.stride(d2) : -offset * x.stride(d1));
  Shape shape;
  Strides strides;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d == d1 || d == d2) continue;
    shape.push_back(x.size(d));
    strides.push_back(x.stride(d));
  }
  shape.push_back(length);
  strides.push_back(x.stride(d1) + x.stride(d2));
  // A view through as_strided when autograd allows it (as_strided's backward needs a contiguous
  // input); otherwise the matrix is flattened and read with a step of m + 1, which is a view of a
  // contiguous copy and differentiable like any slice.
  if (!needs_grad(x) || x.is_contiguous()) {
    return x.as_strided(shape, strides, x.offset() + start);
  }
  Tensor flat = movedim(x, {d1, d2}, {-2, -1}).flatten(-2, -1);
  int64_t first = offset >= 0 ? offset : -offset * m;
  int64_t end = length == 0 ? first : first + (length - 1) * (m + 1) + 1;
  return flat.slice(-1, length == 0 ? 0 : first, length == 0 ? 0 : end, m + 1);
}

Tensor diag(const Tensor& x, int64_t k) {
  detail::check_defined("diag", x);
  check_state(x.dim() == 1 || x.dim() == 2, "diag", "matrix or a vector expected; got shape ",
              x.shape());
  if (x.dim() == 2) return diagonal(x, k, 0, 1).clone();
  int64_t length = x.size(0), n = length + (k >= 0 ? k : -k);
  int64_t first = k >= 0 ? k : -k * n;
  Tensor positions =
      arange(first, first + length * (n + 1), n + 1, TensorOptions(kInt64).with_device(x.device()));
  Tensor flat = zeros(Shape{checked_mul("diag", n, n)}, options_of(x));
  return scatter_add(flat, 0, positions.slice(0, 0, length), x).reshape(Shape{n, n});
}

Tensor trace(const Tensor& x) {
  detail::check_defined("trace", x);
  check_state(x.dim() == 2, "trace", "expected a matrix, but got tensor with dim ", x.dim());
  return sum(diagonal(x, 0, 0, 1));
}

}  // namespace wick
