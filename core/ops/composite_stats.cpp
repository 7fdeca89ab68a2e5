// Statistics, searching, counting, scattering and sampling as compositions (composite_stats.h).
#include "core/ops/composite_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/grad_mode.h"
#include "core/host_read.h"
#include "core/ops.h"
#include "core/ops/composite_linalg.h"
#include "core/ops/composite_shape.h"
#include "core/ops/op_utils.h"

namespace wick {

namespace {

TensorOptions int64_on(const Tensor& x) { return TensorOptions(kInt64).with_device(x.device()); }

void check_lerp(const Tensor& start, const Tensor& end) {
  detail::check_defined("lerp", start);
  detail::check_defined("lerp", end);
  check_state(start.dtype() == end.dtype(), "lerp", "expected dtype ", start.dtype(),
              " for `end` but got dtype ", end.dtype());
  check_type(is_floating(start.dtype()), "lerp", "expected floating-point tensors; got ",
             start.dtype());
}

// The count of `sequence` entries (innermost dim) below each value, or at most it when `right`:
// the insertion points, by one broadcast comparison rather than a binary search per element.
Tensor count_below(const Tensor& sequence, const Tensor& values, bool right, bool out_int32) {
  Tensor below = right ? le(sequence, values) : lt(sequence, values);
  Tensor result = sum(below, {-1});
  return out_int32 ? result.to(kInt32) : result;
}

// Indices of `keys` sorted by key, stable; NaNs last (each its own group).
template <class T>
std::vector<int64_t> argsort_host(const std::vector<T>& keys) {
  std::vector<int64_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    bool na = keys[a] != keys[a], nb = keys[b] != keys[b];
    if (na || nb) return !na && nb;
    return keys[a] < keys[b];
  });
  return order;
}

// unique's host part: the first index of each distinct value (ascending), the group of each
// element and the size of each group.
template <class T>
void group_host(const std::vector<T>& keys, std::vector<int64_t>& firsts,
                std::vector<int64_t>& inverse, std::vector<int64_t>& counts) {
  std::vector<int64_t> order = argsort_host(keys);
  inverse.assign(keys.size(), 0);
  for (size_t i = 0; i < order.size(); ++i) {
    const T& k = keys[order[i]];
    bool same = i > 0 && keys[order[i - 1]] == k;  // NaN == NaN is false: NaNs stay apart
    if (!same) {
      firsts.push_back(order[i]);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[order[i]] = static_cast<int64_t>(firsts.size()) - 1;
  }
}

void check_probabilities(const Tensor& probs, const std::vector<double>& p, int64_t rows,
                         int64_t k) {
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    for (int64_t j = 0; j < k; ++j) {
      double v = p[r * k + j];
      check_state(std::isfinite(v) && v >= 0, "multinomial",
                  "probability tensor contains either `inf`, `nan` or element < 0; got ", v,
                  " at row ", r, ", column ", j);
      total += v;
    }
    check_state(total > 0, "multinomial",
                "invalid multinomial distribution (sum of probabilities <= 0) in row ", r,
                " of probabilities of shape ", probs.shape());
  }
}

// A sample that carries zero gradients to mean and std, as PyTorch's normal does: where() with
// an all-false condition passes the sample through and sends mean and std a gradient of 0.
Tensor attach_zero_grad(const Tensor& sample, const Tensor& mean, const Tensor& std) {
  Tensor out = sample;
  Tensor never = zeros(sample.shape(), TensorOptions(kBool).with_device(sample.device()));
  if (mean.defined() && mean.requires_grad()) out = where(never, mean.to(out.dtype()), out);
  if (std.defined() && std.requires_grad()) out = where(never, std.to(out.dtype()), out);
  return out;
}

}  // namespace

Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight) {
  check_lerp(start, end);
  return start + (end - start) * weight;
}

Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  check_lerp(start, end);
  detail::check_defined("lerp", weight);
  check_state(weight.dtype() == start.dtype(), "lerp", "expected dtype ", start.dtype(),
              " for `weight` but got dtype ", weight.dtype());
  return start + weight * (end - start);
}

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  const char* op = "isclose";
  detail::check_defined(op, a);
  detail::check_defined(op, b);
  check_state(a.dtype() == b.dtype(), op, "expected both tensors to have same dtype, got ",
              a.dtype(), " and ", b.dtype());
  check_state(rtol >= 0, op, "rtol must be greater than or equal to zero, but got ", rtol);
  check_state(atol >= 0, op, "atol must be greater than or equal to zero, but got ", atol);
  NoGradGuard no_grad;
  if (a.dtype() == kBool) return eq(a, b);
  Tensor x = a.to(kFloat64), y = b.to(kFloat64);
  // As PyTorch: equal values (infinities included) are close; otherwise the error must be finite
  // and within the tolerance, so a finite value is never close to an infinity.
  Tensor error = abs(x - y);
  Tensor finite = logical_and(eq(error, error), ne(error, std::numeric_limits<double>::infinity()));
  Tensor close = logical_or(eq(x, y), logical_and(finite, le(error, abs(y) * rtol + atol)));
  if (equal_nan) close = logical_or(close, logical_and(ne(x, x), ne(y, y)));
  return close;
}

std::tuple<Tensor, Tensor> var_mean(const Tensor& x, const DimList& dims, int64_t correction,
                                    bool keepdim) {
  return {var(x, dims, correction, keepdim), mean(x, dims, keepdim)};
}

Tensor count_nonzero(const Tensor& x, const DimList& dims) {
  detail::check_defined("count_nonzero", x);
  NoGradGuard no_grad;
  return sum(ne(x, 0), dims);
}

Tensor bucketize(const Tensor& values, const Tensor& boundaries, bool out_int32, bool right) {
  detail::check_defined("bucketize", values);
  detail::check_defined("bucketize", boundaries);
  check_state(boundaries.dim() == 1, "bucketize",
              "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  NoGradGuard no_grad;
  return count_below(boundaries, values.unsqueeze(-1), right, out_int32);
}

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32, bool right,
                    const Tensor& sorter) {
  const char* op = "searchsorted";
  detail::check_defined(op, sorted_sequence);
  detail::check_defined(op, values);
  const Tensor& seq_in = sorted_sequence;
  bool leading_match = seq_in.dim() == values.dim() && seq_in.dim() > 0;
  for (int64_t d = 0; leading_match && d + 1 < seq_in.dim(); ++d) {
    leading_match = seq_in.size(d) == values.size(d);
  }
  check_state(seq_in.dim() == 1 || leading_match, op,
              "boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
              "tensor and input value tensor must match, but we got boundaries tensor ",
              seq_in.shape(), " and input value tensor ", values.shape());
  NoGradGuard no_grad;
  Tensor seq = seq_in;
  if (sorter.defined()) {
    check_state(sorter.shape() == seq.shape(), op,
                "boundary and sorter must have the same size, but got boundary tensor ",
                seq.shape(), " and got sorter tensor ", sorter.shape());
    check_type(sorter.dtype() == kInt64, op, "sorter must be a tensor of long dtype but got ",
               sorter.dtype());
    seq = gather(seq, -1, sorter);
  }
  // [..., 1, m] against [..., k, 1]: each value against its row of the sequence.
  if (seq.dim() == 1) return count_below(seq, values.unsqueeze(-1), right, out_int32);
  return count_below(seq.unsqueeze(-2), values.unsqueeze(-1), right, out_int32);
}

Tensor histc(const Tensor& x, int64_t bins, double min_value, double max_value) {
  const char* op = "histc";
  detail::check_defined(op, x);
  check_type(is_floating(x.dtype()), op, "torch.histc: input tensor must be floating point; got ",
             x.dtype());
  check_state(bins > 0, op, "torch.histc(): bins must be > 0, but got ", bins);
  check_state(!(min_value > max_value), op, "max must be larger than min; got min=", min_value,
              ", max=", max_value);
  NoGradGuard no_grad;
  if (min_value == max_value && x.numel() > 0) {
    note_host_read("histc's range from the data");  // Note [host reads]
    min_value = min(x).item<double>();
    max_value = max(x).item<double>();
  }
  if (min_value == max_value) {
    min_value -= 1;
    max_value += 1;
  }
  check_state(std::isfinite(min_value) && std::isfinite(max_value), op, "range of [", min_value,
              ", ", max_value, "] is not finite");
  Tensor v = x.reshape(Shape{-1}).to(kFloat64);
  Tensor inside = logical_and(ge(v, min_value), le(v, max_value));
  // The value at max falls into the last bin, not one past it.
  Tensor bin = ((v - min_value) * (static_cast<double>(bins) / (max_value - min_value))).to(kInt64);
  bin = clamp(where(inside, bin, Scalar(0)), 0, bins - 1);
  return scatter_add(zeros(Shape{bins}, options_of(x)), 0, bin, inside.to(x.dtype()));
}

Tensor bincount(const Tensor& x, const Tensor& weights, int64_t minlength) {
  const char* op = "bincount";
  detail::check_defined(op, x);
  check_state(x.dim() == 1 && !is_floating(x.dtype()) && x.dtype() != kBool, op,
              "bincount only supports 1-d non-negative integral inputs; got shape ", x.shape(),
              " and dtype ", x.dtype());
  check_state(minlength >= 0, op, "minlength should be >= 0; got ", minlength);
  if (weights.defined()) {
    check_state(weights.dim() == 1 && weights.size(0) == x.size(0), op,
                "weights should be 1-d and have the same length as input; got weights of shape ",
                weights.shape(), " for input of shape ", x.shape());
  }
  NoGradGuard no_grad;  // not differentiable in PyTorch either
  int64_t size = minlength;
  if (x.numel() > 0) {
    note_host_read("bincount's size");
    int64_t low = min(x).item<int64_t>();
    check_state(low >= 0, op, "bincount only supports 1-d non-negative integral inputs; got the ",
                "value ", low);
    size = std::max(size, max(x).item<int64_t>() + 1);
  }
  Tensor index = x.to(kInt64);
  if (!weights.defined()) {
    return scatter_add(zeros(Shape{size}, int64_on(x)), 0, index, ones_like(index));
  }
  // As PyTorch: floating weights keep their dtype, other weights count in float64.
  DType dtype = is_floating(weights.dtype()) ? weights.dtype() : kFloat64;
  Tensor counts = zeros(Shape{size}, TensorOptions(dtype).with_device(x.device()));
  return scatter_add(counts, 0, index, weights.to(dtype));
}

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& x, bool sorted, bool return_inverse,
                                          bool return_counts) {
  detail::check_defined("unique", x);
  (void)sorted;  // the result is always sorted: PyTorch leaves the order of sorted=False open
  NoGradGuard no_grad;
  // The number of distinct values decides the output's size: grouped on the host.
  Tensor flat = x.reshape(Shape{-1});
  std::vector<int64_t> firsts, inverse, counts;
  note_host_read("unique");
  if (is_floating(x.dtype())) {
    group_host(flat.cpu().to_vector<double>(), firsts, inverse, counts);
  } else {
    group_host(flat.cpu().to_vector<int64_t>(), firsts, inverse, counts);
  }
  TensorOptions where_x = int64_on(x);
  Tensor values = index_select(flat, 0, tensor(firsts, TensorOptions(kInt64)).to(x.device()));
  Tensor inv, cnt;
  if (return_inverse) inv = tensor(inverse, x.shape(), TensorOptions(kInt64)).to(x.device());
  if (return_counts) cnt = tensor(counts, TensorOptions(kInt64)).to(where_x.device);
  return {values, inv, cnt};
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  const char* op = "scatter";
  detail::check_defined(op, x);
  detail::check_defined(op, index);
  detail::check_defined(op, src);
  int64_t d = wrap_dim(op, dim, std::max<int64_t>(x.dim(), 1));
  check_type(index.dtype() == kInt64, op, "Expected dtype int64 for index; got ", index.dtype());
  check_state(src.dtype() == x.dtype(), op, "Expected self.dtype to be equal to src.dtype; got ",
              x.dtype(), " and ", src.dtype());
  check_state(index.dim() == x.dim() && index.dim() == src.dim(), op,
              "Index tensor must have the same number of dimensions as self and src tensors; got "
              "index ",
              index.shape(), ", self ", x.shape(), " and src ", src.shape());
  for (int64_t k = 0; k < index.dim(); ++k) {
    check_state(index.size(k) <= src.size(k) && (k == d || index.size(k) <= x.size(k)), op,
                "Expected index ", index.shape(), " to be smaller than self ", x.shape(),
                " apart from dimension ", d, " and to be smaller size than src ", src.shape());
  }
  if (index.numel() == 0) return x.clone();
  int64_t size = x.dim() == 0 ? 1 : x.size(d);
  {
    NoGradGuard no_grad;
    int64_t low = min(index).item<int64_t>(), high = max(index).item<int64_t>();
    check_state(low >= 0 && high < size, op, "index ", low < 0 ? low : high,
                " is out of bounds for dimension ", d, " with size ", size);
  }
  if (x.dim() == 0) {  // as the 1-element 1-D case
    Shape one{1};
    return scatter(x.reshape(one), 0, index.reshape(one), src.reshape(one)).reshape(Shape{});
  }
  // Position index[i][j] along dim and i, j along the others: one advanced-index put, whose
  // "last write wins" matches a loop of assignments (Note [advanced index as a composite]).
  std::vector<Tensor> positions;
  Tensor values = src;
  for (int64_t k = 0; k < x.dim(); ++k) {
    values = values.narrow(k, 0, index.size(k));
    if (k == d) {
      positions.push_back(index);
      continue;
    }
    Shape along = Shape::filled(x.dim(), 1);
    along[k] = index.size(k);
    positions.push_back(arange(index.size(k), int64_on(x)).reshape(along));
  }
  return index_put(x, positions, values);
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value) {
  detail::check_defined("scatter", x);
  detail::check_defined("scatter", index);
  return scatter(x, dim, index, full(index.shape(), value, options_of(x)));
}

Tensor& scatter_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  // Out of place, then copied in: copy_ bumps the version and records or refuses the in-place
  // write under autograd (Note [in-place and autograd]), as index_put_ does.
  x.copy_(scatter(x, dim, index, src));
  return x;
}

Tensor& scatter_(Tensor& x, int64_t dim, const Tensor& index, const Scalar& value) {
  x.copy_(scatter(x, dim, index, value));
  return x;
}

Tensor randperm(int64_t n, const TensorOptions& options, Generator& generator) {
  check_state(n >= 0, "randperm", "n must be non-negative, got ", n);
  // The order of n uniform keys is a uniform permutation; the sort runs on the host, where the
  // keys are drawn so that a seed gives the same permutation on every device.
  note_host_read("randperm");
  std::vector<double> keys = rand(Shape{n}, TensorOptions(kFloat64), generator).to_vector<double>();
  std::vector<int64_t> order = argsort_host(keys);
  TensorOptions o = options;
  DType dtype = o.dtype.value_or(kInt64);
  return tensor(order, TensorOptions(kInt64)).to(o.device, dtype);
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement,
                   Generator& generator) {
  const char* op = "multinomial";
  detail::check_defined(op, probs);
  check_state(probs.dim() == 1 || probs.dim() == 2, op, "prob_dist must be 1 or 2 dim; got shape ",
              probs.shape());
  check_state(is_floating(probs.dtype()), op,
              "multinomial only supports floating-point dtypes for input, got: ", probs.dtype());
  check_state(num_samples > 0, op, "cannot sample n_sample <= 0 samples; got ", num_samples);
  int64_t k = probs.size(-1), rows = probs.dim() == 2 ? probs.size(0) : 1;
  check_state(replacement || num_samples <= k, op,
              "cannot sample n_sample > prob_dist.size(-1) samples without replacement; got ",
              num_samples, " samples from ", k, " categories");
  NoGradGuard no_grad;
  Tensor p = probs.reshape(Shape{rows, k}).to(kFloat64);
  note_host_read("multinomial");
  std::vector<double> host = p.cpu().to_vector<double>();
  check_probabilities(probs, host, rows, k);
  Shape out_shape = probs.dim() == 2 ? Shape{rows, num_samples} : Shape{num_samples};
  if (replacement) {
    // Inverse-CDF sampling: the sample is the number of cumulative sums at or below u * total.
    // The cumulative sums are one matmul with an upper-triangular matrix of ones.
    Tensor cdf = matmul(p, triu(ones(Shape{k, k}, options_of(p))));
    Tensor total = cdf.narrow(1, k - 1, 1);  // [rows, 1]
    Tensor u = rand(Shape{rows, num_samples}, options_of(p), generator) * total;
    Tensor counts = sum(le(cdf.unsqueeze(1), u.unsqueeze(2)), {-1});
    return clamp(counts, 0, k - 1).reshape(out_shape);  // int bounds keep int64
  }
  // Without replacement: the exponential race. Category j finishes at E_j / p_j with E_j ~ Exp(1);
  // the first num_samples to finish are a sample without replacement (Efraimidis-Spirakis).
  Tensor u = rand(Shape{rows, k}, options_of(p), generator);
  std::vector<double> finish = (-log1p(-u) / p).cpu().to_vector<double>();
  std::vector<int64_t> out;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> row(finish.begin() + r * k, finish.begin() + (r + 1) * k);
    std::vector<int64_t> order = argsort_host(row);
    check_state(std::isfinite(row[order[num_samples - 1]]), op,
                "invalid multinomial distribution (with replacement=False, not enough non-negative "
                "category to sample): row ",
                r, " has fewer than ", num_samples, " non-zero probabilities");
    out.insert(out.end(), order.begin(), order.begin() + num_samples);
  }
  return tensor(out, out_shape, TensorOptions(kInt64)).to(probs.device());
}

Tensor normal(const Tensor& mean, const Tensor& std, Generator& generator) {
  detail::check_defined("normal", mean);
  detail::check_defined("normal", std);
  Shape shape = broadcast_shapes("normal", mean.shape(), std.shape());
  DType dtype = promote_types(mean.dtype(), std.dtype());
  check_type(is_floating(dtype), "normal", "expected floating-point mean and std; got ",
             mean.dtype(), " and ", std.dtype());
  Tensor sample;
  {
    NoGradGuard no_grad;
    double lowest = std.numel() == 0 ? 0.0 : min(std).item<double>();
    check_state(lowest >= 0, "normal", "normal expects all elements of std >= 0.0; got ", lowest);
    sample = randn(shape, TensorOptions(dtype).with_device(mean.device()), generator) * std + mean;
  }
  return attach_zero_grad(sample, mean, std);
}

Tensor normal(const Tensor& mean, double std, Generator& generator) {
  detail::check_defined("normal", mean);
  check_state(std >= 0, "normal", "normal expects std >= 0.0, but found std ", std);
  check_type(is_floating(mean.dtype()), "normal", "expected a floating-point mean; got ",
             mean.dtype());
  Tensor sample;
  {
    NoGradGuard no_grad;
    sample = randn(mean.shape(), options_of(mean), generator) * std + mean;
  }
  return attach_zero_grad(sample, mean, Tensor());
}

Tensor normal(double mean, const Tensor& std, Generator& generator) {
  detail::check_defined("normal", std);
  check_type(is_floating(std.dtype()), "normal", "expected a floating-point std; got ",
             std.dtype());
  Tensor sample;
  {
    NoGradGuard no_grad;
    double lowest = std.numel() == 0 ? 0.0 : min(std).item<double>();
    check_state(lowest >= 0, "normal", "normal expects all elements of std >= 0.0; got ", lowest);
    sample = randn(std.shape(), options_of(std), generator) * std + mean;
  }
  return attach_zero_grad(sample, Tensor(), std);
}

Tensor normal(double mean, double std, const Shape& shape, const TensorOptions& options,
              Generator& generator) {
  check_state(std >= 0, "normal", "normal expects std >= 0.0, but found std ", std);
  TensorOptions o = options;
  o.requires_grad = false;
  Tensor sample = randn(shape, o, generator) * std + mean;
  if (options.requires_grad) sample.requires_grad_();
  return sample;
}

}  // namespace wick
