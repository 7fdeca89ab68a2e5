// Shape ops as compositions of views, index_select, cat and where (composite_shape.h).
#include "core/ops/composite_shape.h"

#include <algorithm>

#include "core/grad_mode.h"
#include "core/host_read.h"
#include "core/ops.h"
#include "core/ops/op_utils.h"

namespace wick {

namespace {

TensorOptions int64_on(const Tensor& x) { return TensorOptions(kInt64).with_device(x.device()); }

// dims wrapped to [0, ndim); a dim named twice is refused, as PyTorch refuses it.
DimList unique_dims(const char* op, const DimList& dims, int64_t ndim) {
  DimList out;
  std::vector<bool> seen(std::max<int64_t>(ndim, 1), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(op, d, ndim);
    check_state(!seen[w], op, "dim ", d, " appears multiple times in the list of dims");
    seen[w] = true;
    out.push_back(w);
  }
  return out;
}

// x with each of its dims repeated reps[d] times, one dim at a time, so the intermediate has at
// most x.dim() + 1 dims (a repeat of all dims at once would need twice as many).
Tensor repeat_dims(const char* op, Tensor x, const DimList& reps) {
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (reps[d] == 1) continue;
    Shape expanded = x.shape(), merged = x.shape();
    expanded.insert(d, reps[d]);
    merged[d] = checked_mul(op, reps[d], x.size(d));  // Note [checked sizes]
    x = x.unsqueeze(d).expand(expanded).reshape(merged);
  }
  return x;
}

Tensor triangle(const char* op, const Tensor& x, int64_t diagonal, bool lower) {
  detail::check_defined(op, x);
  check_index(x.dim() >= 2, op, "input tensor must have at least 2 dimensions; got shape ",
              x.shape());
  Tensor rows = arange(x.size(-2), int64_on(x)).unsqueeze(1);
  Tensor cols = arange(x.size(-1), int64_on(x)).unsqueeze(0);
  Tensor keep = lower ? le(cols - rows, diagonal) : ge(cols - rows, diagonal);
  return where(keep, x, zeros_like(x));  // zeros of x's dtype: a bool input stays bool
}

}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) { return triangle("tril", x, diagonal, true); }
Tensor triu(const Tensor& x, int64_t diagonal) { return triangle("triu", x, diagonal, false); }

Tensor flip(const Tensor& x, const DimList& dims) {
  detail::check_defined("flip", x);
  Tensor out = x;
  for (int64_t d : unique_dims("flip", dims, x.dim())) {
    if (x.dim() == 0 || x.size(d) <= 1) continue;
    out = index_select(out, d, arange(x.size(d) - 1, -1, -1, int64_on(x)));
  }
  return out.is_same(x) ? x.clone() : out;  // always a copy, as PyTorch's flip
}

Tensor roll(const Tensor& x, const DimList& shifts, const DimList& dims) {
  detail::check_defined("roll", x);
  if (dims.empty()) {
    check_state(shifts.size() == 1, "roll", "without dims, expected one shift; got ",
                shifts.size());
    return roll(x.flatten(), shifts, {0}).reshape(x.shape());
  }
  check_state(shifts.size() == dims.size(), "roll",
              "shifts and dimensions must align. shifts: ", shifts.size(), ", dims: ", dims.size());
  Tensor out = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim("roll", dims[i], x.dim());
    int64_t n = x.dim() == 0 ? 1 : x.size(d);
    int64_t s = n == 0 ? 0 : ((shifts[i] % n) + n) % n;
    if (s == 0 || x.dim() == 0) continue;
    // The last s elements move to the front.
    out = cat({out.narrow(d, n - s, s), out.narrow(d, 0, n - s)}, d);
  }
  return out.is_same(x) ? x.clone() : out;
}

Tensor tile(const Tensor& x, const DimList& reps) {
  detail::check_defined("tile", x);
  for (int64_t r : reps) {
    check_state(r >= 0, "tile", "trying to create tensor with negative dimension ", r, ": reps ",
                Shape(reps));
  }
  int64_t ndim = std::max<int64_t>(x.dim(), static_cast<int64_t>(reps.size()));
  check_value(ndim <= kMaxDims, "tile", "too many dims: ", ndim);
  Shape padded_shape = Shape::filled(ndim - x.dim(), 1);
  for (int64_t s : x.shape()) padded_shape.push_back(s);
  DimList padded_reps(ndim - reps.size(), 1);
  padded_reps.insert(padded_reps.end(), reps.begin(), reps.end());
  return repeat_dims("tile", x.reshape(padded_shape), padded_reps).contiguous();
}

Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim) {
  detail::check_defined("repeat_interleave", x);
  check_state(repeats >= 0, "repeat_interleave", "repeats can not be negative; got ", repeats);
  Tensor input = dim ? x : x.flatten();
  int64_t d = dim ? wrap_dim("repeat_interleave", *dim, x.dim()) : 0;
  if (input.dim() == 0) input = input.reshape(Shape{1});
  Shape expanded = input.shape();
  expanded.insert(d + 1, repeats);
  return input.unsqueeze(d + 1).expand(expanded).flatten(d, d + 1);
}

Tensor repeat_interleave(const Tensor& repeats) {
  const char* op = "repeat_interleave";
  detail::check_defined(op, repeats);
  check_state(repeats.dim() <= 1, op, "repeats must be 0-dim or 1-dim tensor; got shape ",
              repeats.shape());
  check_type(repeats.dtype() == kInt64 || repeats.dtype() == kInt32, op,
             "repeats has to be Long or Int tensor; got ", repeats.dtype());
  // The output's size is the sum of the repeats: data-dependent, so the positions are built on
  // the host from the (small) repeats tensor, as PyTorch does before a kernel launch.
  note_host_read("repeat_interleave's repeats");  // Note [host reads]
  std::vector<int64_t> counts = repeats.detach().cpu().to(kInt64).to_vector<int64_t>();
  std::vector<int64_t> positions;
  for (size_t i = 0; i < counts.size(); ++i) {
    check_state(counts[i] >= 0, op, "repeats can not be negative; got ", counts[i], " at index ",
                i);
    positions.insert(positions.end(), counts[i], static_cast<int64_t>(i));
  }
  return tensor(positions, TensorOptions(kInt64)).to(repeats.device());
}

Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim) {
  const char* op = "repeat_interleave";
  detail::check_defined(op, x);
  detail::check_defined(op, repeats);
  Tensor input = dim ? x : x.flatten();
  int64_t d = dim ? wrap_dim(op, *dim, x.dim()) : 0;
  if (input.dim() == 0) input = input.reshape(Shape{1});
  Tensor counts = repeats;
  if (repeats.numel() == 1) counts = repeats.reshape(Shape{1}).expand(Shape{input.size(d)});
  check_state(counts.dim() == 1 && counts.size(0) == input.size(d), op,
              "repeats must have the same size as input along dim, but got repeats.size(0) = ",
              counts.dim() == 1 ? counts.size(0) : counts.numel(), " and input.size(", d,
              ") = ", input.size(d));
  return index_select(input, d, repeat_interleave(counts.contiguous()));
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  detail::check_defined("broadcast_to", x);
  return x.expand(shape);
}

Tensor movedim(const Tensor& x, const DimList& source, const DimList& destination) {
  const char* op = "movedim";
  detail::check_defined(op, x);
  check_state(source.size() == destination.size(), op,
              "Invalid source or destination dims: source (", Shape(source),
              " dims) should contain the same number of dims as destination (", Shape(destination),
              " dims)");
  int64_t n = x.dim();
  DimList src = unique_dims(op, source, n), dst = unique_dims(op, destination, n);
  DimList perm(std::max<int64_t>(n, 0), -1);
  std::vector<bool> used(n, false);
  for (size_t i = 0; i < src.size(); ++i) {
    perm[dst[i]] = src[i];
    used[src[i]] = true;
  }
  // The remaining dims fill the remaining positions in their original order.
  int64_t next = 0;
  for (int64_t& p : perm) {
    if (p != -1) continue;
    while (used[next]) ++next;
    p = next++;
  }
  return n == 0 ? x : x.permute(perm);
}

Tensor unflatten(const Tensor& x, int64_t dim, const Shape& sizes) {
  const char* op = "unflatten";
  detail::check_defined(op, x);
  int64_t d = wrap_dim(op, dim, x.dim());
  check_state(sizes.size() > 0, op, "sizes must be non-empty");
  int64_t product = 1, inferred = -1;
  for (int64_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      check_state(inferred == -1, op, "only one dimension can be inferred; got sizes ", sizes);
      inferred = i;
    } else {
      product = checked_mul(op, product, sizes[i]);
    }
  }
  Shape filled = sizes;
  if (inferred >= 0 && product != 0) filled[inferred] = x.size(d) / product;
  check_state(numel(filled) == x.size(d) && (inferred < 0 || product != 0), op, "Provided sizes ",
              sizes, " don't multiply up to the size of dim ", dim, " (", x.size(d),
              ") in the input tensor");
  Shape shape;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i != d) {
      shape.push_back(x.size(i));
      continue;
    }
    for (int64_t s : filled) shape.push_back(s);
  }
  return x.reshape(shape);
}

Tensor take(const Tensor& x, const Tensor& index) {
  const char* op = "take";
  detail::check_defined(op, x);
  detail::check_defined(op, index);
  check_type(index.dtype() == kInt64, op, "Expected a long tensor for index, but got ",
             index.dtype());
  int64_t n = x.numel();
  Tensor positions = index.reshape(Shape{-1});
  if (positions.numel() > 0) {
    int64_t low = min(positions).item<int64_t>(), high = max(positions).item<int64_t>();
    int64_t bad = low < -n ? low : high;
    check_index(low >= -n && high < n, op, "out of range: tried to access index ", bad,
                " on a tensor of ", n, " elements");
    positions = where(lt(positions, 0), positions + n, positions);
  }
  return index_select(x.reshape(Shape{-1}), 0, positions).reshape(index.shape());
}

}  // namespace wick
