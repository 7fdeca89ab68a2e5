// Advanced indexing as composites of index_select and scatter_add.
//
// Note [advanced index as a composite]
// x[i0, i1] with index tensors on dims A = {a0, a1} is computed as:
//   1. permute x so the indexed dims come first and flatten them into one dim of size
//      P = size(a0) * size(a1): xp has shape [P, rest...];
//   2. turn the (broadcast) index tensors into positions along that dim, the row-major
//      linear index lin = i0 * size(a1) + i1, with shape B (the broadcast index shape);
//   3. index_select(xp, 0, lin) gives [numel(B), rest...]; reshape to B + rest, and move B to
//      where the indexed dims were if they were adjacent (NumPy's rule).
// Assignment runs the same steps backwards with scatter_add. Every step is an op that already
// has a backward (permute, reshape, index_select, where, scatter_add), so these ops need no
// backward node of their own and run on every device. Bounds checks, the nonzero() of a bool
// mask and the de-duplication of repeated positions in a non-accumulating put need the index
// values themselves, so those read the (small) index tensors on the host - the price of a
// composite, paid by PyTorch too for boolean masks.
#include "core/ops/advanced_index.h"

#include <algorithm>

#include "core/grad_mode.h"
#include "core/host_read.h"
#include "core/ops.h"
#include "core/ops/op_utils.h"

namespace wick {

namespace {

// The indexed dims, the integer index tensors for them (wrapped, checked, broadcast) and the
// linear positions along the flattened indexed dims.
struct Plan {
  std::vector<int64_t> dims;  // indexed dims of x, ascending
  std::vector<int64_t> rest;  // the other dims, ascending
  Shape index_shape;          // B: the broadcast shape of the index tensors
  Tensor linear;              // int64 of shape B: positions in [0, P)
  int64_t flat = 1;           // P: the product of the indexed dims' sizes
  bool adjacent = true;       // indexed dims are consecutive: B goes where they were
};

// Replaces bool masks by the integer tensors of their nonzero positions; returns one entry per
// dim of x (undefined where a dim is not indexed).
std::vector<Tensor> expand_masks(const char* op, const Tensor& x,
                                 const std::vector<Tensor>& indices) {
  std::vector<Tensor> out;
  for (const Tensor& idx : indices) {
    if (!idx.defined() || idx.dtype() != kBool) {
      out.push_back(idx);
      continue;
    }
    int64_t first = static_cast<int64_t>(out.size());
    check_value(idx.dim() > 0, op, "a 0-d boolean index is not supported; use a 1-d mask");
    check_index(first + idx.dim() <= x.dim(), op, "too many indices for a tensor of dimension ",
                x.dim());
    for (int64_t d = 0; d < idx.dim(); ++d) {
      check_index(idx.size(d) == x.size(first + d), op, "the shape of the mask ", idx.shape(),
                  " at index ", d, " does not match the shape of the indexed tensor ", x.shape(),
                  " at dim ", first + d);
    }
    Tensor positions = nonzero(idx);  // [n, k]
    for (int64_t d = 0; d < idx.dim(); ++d) out.push_back(positions.select(1, d));
  }
  return out;
}

Plan make_plan(const char* op, const Tensor& x, const std::vector<Tensor>& raw) {
  detail::check_defined(op, x);
  check_index(static_cast<int64_t>(raw.size()) <= x.dim(), op, "too many indices (", raw.size(),
              ") for a tensor of dimension ", x.dim());
  std::vector<Tensor> indices = expand_masks(op, x, raw);
  check_index(static_cast<int64_t>(indices.size()) <= x.dim(), op, "too many indices for a ",
              "tensor of dimension ", x.dim());
  Plan plan;
  std::vector<Tensor> picked;
  bool have_shape = false;
  for (int64_t d = 0; d < x.dim(); ++d) {
    const Tensor* idx = d < static_cast<int64_t>(indices.size()) ? &indices[d] : nullptr;
    if (idx == nullptr || !idx->defined()) {
      plan.rest.push_back(d);
      continue;
    }
    check_type(idx->dtype() == kInt64 || idx->dtype() == kInt32 || idx->dtype() == kUInt8, op,
               "tensors used as indices must be integer or bool tensors; got ", idx->dtype());
    detail::check_same_device(op, x, *idx);
    plan.index_shape =
        have_shape ? broadcast_shapes(op, plan.index_shape, idx->shape()) : idx->shape();
    have_shape = true;
    plan.dims.push_back(d);
    picked.push_back(*idx);
  }
  check_value(!plan.dims.empty(), op, "expected at least one index tensor");
  for (size_t k = 1; k < plan.dims.size(); ++k) {
    plan.adjacent = plan.adjacent && plan.dims[k] == plan.dims[k - 1] + 1;
  }
  NoGradGuard no_grad;  // index arithmetic is not differentiable
  TensorOptions int64_options = TensorOptions(kInt64).with_device(x.device());
  plan.linear = zeros(plan.index_shape, int64_options);
  for (size_t k = 0; k < plan.dims.size(); ++k) {
    int64_t size = x.size(plan.dims[k]);
    Tensor idx = detail::cast(picked[k], kInt64);
    if (idx.numel() > 0) {
      int64_t low = min(idx).item<int64_t>(), high = max(idx).item<int64_t>();
      check_index(low >= -size && high < size, op, "index ", low < -size ? low : high,
                  " is out of bounds for dimension ", plan.dims[k], " with size ", size);
    }
    idx = where(idx < 0, idx + size, idx);
    plan.linear = plan.linear * size + idx;  // row-major over the indexed dims
    plan.flat *= size;
  }
  return plan;
}

// x permuted to [indexed dims..., rest...] with the indexed dims flattened into one: [P, rest...].
Tensor flatten_indexed(const Tensor& x, const Plan& plan) {
  DimList order(plan.dims);
  order.insert(order.end(), plan.rest.begin(), plan.rest.end());
  Tensor permuted = x.permute(order);
  Shape shape{plan.flat};
  for (int64_t d : plan.rest) shape.push_back(x.size(d));
  return permuted.reshape(shape);
}

// The shape of x[indices] in "B first" layout (B + rest), and the permutation that moves B to
// where the indexed dims were when they are adjacent (the identity otherwise).
DimList result_permutation(const Plan& plan) {
  int64_t nb = plan.index_shape.size(), nr = plan.rest.size();
  DimList perm;
  if (!plan.adjacent || plan.dims[0] == 0) {
    for (int64_t i = 0; i < nb + nr; ++i) perm.push_back(i);
    return perm;
  }
  int64_t before = plan.dims[0];  // rest dims that come before the indexed ones
  for (int64_t i = 0; i < before; ++i) perm.push_back(nb + i);
  for (int64_t i = 0; i < nb; ++i) perm.push_back(i);
  for (int64_t i = before; i < nr; ++i) perm.push_back(nb + i);
  return perm;
}

DimList inverse(const DimList& perm) {
  DimList inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  return inv;
}

Shape b_first_shape(const Tensor& x, const Plan& plan) {
  Shape shape = plan.index_shape;
  for (int64_t d : plan.rest) shape.push_back(x.size(d));
  return shape;
}

}  // namespace

Tensor nonzero(const Tensor& x) {
  detail::check_defined("nonzero", x);
  NoGradGuard no_grad;
  note_host_read("nonzero");  // its output's shape is the data's (Note [host reads])
  std::vector<uint8_t> flags = (x != 0).to(kUInt8).to_vector<uint8_t>();
  std::vector<int64_t> coords;
  Strides strides = contiguous_strides(x.shape());
  int64_t count = 0;
  for (size_t i = 0; i < flags.size(); ++i) {
    if (!flags[i]) continue;
    ++count;
    int64_t rem = static_cast<int64_t>(i);
    for (int64_t d = 0; d < x.dim(); ++d) {
      coords.push_back(rem / strides[d]);
      rem %= strides[d];
    }
  }
  return tensor(coords, Shape{count, x.dim()}, TensorOptions(kInt64)).to(x.device());
}

Tensor index(const Tensor& x, const std::vector<Tensor>& indices) {
  Plan plan = make_plan("index", x, indices);
  Tensor rows = index_select(flatten_indexed(x, plan), 0, plan.linear.reshape(Shape{-1}));
  return rows.reshape(b_first_shape(x, plan)).permute(result_permutation(plan));
}

Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate) {
  const char* op = "index_put";
  Plan plan = make_plan(op, x, indices);
  detail::check_defined(op, values);
  detail::check_same_device(op, x, values);
  check_type(!is_floating(values.dtype()) || is_floating(x.dtype()), op, "cannot put ",
             values.dtype(), " values into a tensor of dtype ", x.dtype());
  // values broadcast to the shape of x[indices], then laid out B first and flattened: [M, rest].
  DimList perm = result_permutation(plan);
  Shape b_first = b_first_shape(x, plan), target;
  for (int64_t p : perm) target.push_back(b_first[p]);
  check_value(broadcast_shapes(op, values.shape(), target) == target, op, "values of shape ",
              values.shape(), " cannot be broadcast to the indexed shape ", target);
  Shape rows_shape{numel(plan.index_shape)};
  for (int64_t d : plan.rest) rows_shape.push_back(x.size(d));
  Tensor rows = values.to(x.dtype()).expand(target).permute(inverse(perm)).reshape(rows_shape);
  Tensor lin = plan.linear.reshape(Shape{-1});
  Tensor xp = flatten_indexed(x, plan);
  Tensor base = xp;
  if (!accumulate) {
    // Keep the last write to each position (what a loop of assignments would leave), and clear
    // the written rows of x so that scatter_add puts the values there rather than adding them.
    note_host_read("index_put_ with repeated indices");
    std::vector<int64_t> positions = lin.cpu().to_vector<int64_t>();
    std::vector<int64_t> last(plan.flat, -1);
    for (size_t i = 0; i < positions.size(); ++i) last[positions[i]] = static_cast<int64_t>(i);
    std::vector<int64_t> keep;
    std::vector<uint8_t> hit(plan.flat, 0);
    for (size_t i = 0; i < positions.size(); ++i) {
      if (last[positions[i]] == static_cast<int64_t>(i)) keep.push_back(static_cast<int64_t>(i));
      hit[positions[i]] = 1;
    }
    if (keep.size() != positions.size()) {
      Tensor kept = tensor(keep, TensorOptions(kInt64)).to(x.device());
      rows = index_select(rows, 0, kept);
      lin = index_select(lin, 0, kept);
    }
    Shape mask_shape = Shape::filled(xp.dim(), 1);
    mask_shape[0] = plan.flat;
    Tensor written = tensor(hit, mask_shape, TensorOptions(kUInt8)).to(x.device()).to(kBool);
    base = where(written, Scalar(0), xp);
  }
  Shape lin_shape = Shape::filled(rows.dim(), 1);
  lin_shape[0] = lin.numel();
  Tensor positions = lin.reshape(lin_shape).expand(rows.shape()).contiguous();
  Tensor out = scatter_add(base, 0, positions, rows);
  // Back to x's layout: unflatten the indexed dims and undo the permutation.
  Shape unflat;
  for (int64_t d : plan.dims) unflat.push_back(x.size(d));
  for (int64_t d : plan.rest) unflat.push_back(x.size(d));
  DimList order(plan.dims);
  order.insert(order.end(), plan.rest.begin(), plan.rest.end());
  return out.reshape(unflat).permute(inverse(order));
}

Tensor& index_put_(Tensor& x, const std::vector<Tensor>& indices, const Tensor& values,
                   bool accumulate) {
  // Computed out of place, then copied in: copy_ bumps the version and, under autograd, refuses
  // leaves and views or rebases x's history onto the result (Note [in-place and autograd]).
  x.copy_(index_put(x, indices, values, accumulate));
  return x;
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  detail::check_defined("masked_select", x);
  detail::check_defined("masked_select", mask);
  check_type(mask.dtype() == kBool, "masked_select", "mask must be a bool tensor; got ",
             mask.dtype());
  Shape shape = broadcast_shapes("masked_select", x.shape(), mask.shape());
  Tensor full = x.expand(shape);
  if (full.dim() == 0) full = full.reshape(Shape{1});
  Tensor m = mask.expand(full.shape());
  return index(full, {m});
}

}  // namespace wick
