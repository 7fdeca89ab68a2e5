#include "core/ops/index.h"

#include "autograd/functions/index.h"
#include "autograd/functions/linalg.h"
#include "core/autocast.h"
#include "core/grad_mode.h"
#include "core/ops.h"
#include "core/ops/op_utils.h"

namespace wick {

namespace {

Tensor as_index(const char* op, const Tensor& index) {
  detail::check_defined(op, index);
  check_type(index.dtype() == kInt64 || index.dtype() == kInt32 || index.dtype() == kUInt8, op,
             "index must be an integer tensor; got ", index.dtype());
  return detail::cast(index, kInt64).contiguous();
}

void check_index_shape(const char* op, const Tensor& index, const Tensor& other, int64_t dim,
                       bool include_dim, const char* other_name) {
  check_value(index.dim() == other.dim(), op, "index has ", index.dim(), " dimensions but ",
              other_name, " has ", other.dim());
  for (int64_t d = 0; d < index.dim(); ++d) {
    if (d == dim && !include_dim) continue;
    check_value(index.size(d) <= other.size(d), op, "index of shape ", index.shape(),
                " is larger than ", other_name, " of shape ", other.shape(), " in dimension ", d);
  }
}

}  // namespace

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  detail::check_defined("index_select", x);
  Tensor idx = as_index("index_select", index);
  check_value(idx.dim() <= 1, "index_select", "index must be 0-D or 1-D; got shape ", idx.shape());
  detail::check_same_device("index_select", x, idx);
  Tensor input = x.dim() == 0 ? x.reshape(Shape{1}) : x;
  int64_t d = wrap_dim("index_select", dim, input.dim());
  Shape shape = input.shape();
  shape[d] = idx.numel();
  Tensor out = empty(shape, options_of(x));
  Tensor source = input.contiguous().detach();
  dispatch<IndexKernel>(OpKey::index_select, x.device(), source, d, idx, out);
  if (x.dim() == 0) out = out.reshape(idx.dim() == 0 ? Shape{} : Shape{idx.numel()});
  if (needs_grad(x)) {
    auto node = make_node<IndexSelectBackward>({&x});
    node->index = SavedTensor(idx);
    node->dim = x.dim() == 0 ? 0 : d;
    set_history(out, node);
  }
  return out;
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  detail::check_defined("gather", x);
  Tensor idx = as_index("gather", index);
  int64_t d = wrap_dim("gather", dim, x.dim());
  check_index_shape("gather", idx, x, d, false, "input");
  detail::check_same_device("gather", x, idx);
  Tensor out = empty(idx.shape(), options_of(x));
  dispatch<IndexKernel>(OpKey::gather, x.device(), x, d, idx, out);
  if (needs_grad(x)) {
    auto node = make_node<GatherBackward>({&x});
    node->index = SavedTensor(idx);
    node->dim = d;
    set_history(out, node);
  }
  return out;
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  detail::check_defined("scatter_add", x);
  detail::check_defined("scatter_add", src);
  Tensor idx = as_index("scatter_add", index);
  int64_t d = wrap_dim("scatter_add", dim, x.dim());
  check_index_shape("scatter_add", idx, x, d, false, "self");
  check_index_shape("scatter_add", idx, src, d, true, "src");
  check_type(x.dtype() == src.dtype(), "scatter_add", "self and src must have one dtype; got ",
             x.dtype(), " and ", src.dtype());
  detail::check_same_device("scatter_add", x, src);
  detail::check_same_device("scatter_add", x, idx);
  Tensor out = clone(x).detach();
  dispatch<ScatterAddKernel>(OpKey::scatter_add, x.device(), out, d, idx, src);
  if (needs_grad(x, src)) {
    auto node = make_node<ScatterAddBackward>({&x, &src});
    node->index = SavedTensor(idx);
    node->dim = d;
    set_history(out, node);
  }
  return out;
}

Tensor one_hot(const Tensor& index, int64_t num_classes) {
  Tensor idx = as_index("one_hot", index);
  NoGradGuard no_grad;
  if (idx.numel() > 0) {
    int64_t low = min(idx).item<int64_t>(), high = max(idx).item<int64_t>();
    check_index(low >= 0, "one_hot", "class values must be non-negative; got ", low);
    if (num_classes < 0) num_classes = high + 1;
    check_index(high < num_classes, "one_hot", "class value ", high,
                " is out of range for num_classes=", num_classes);
  }
  check_value(num_classes >= 0, "one_hot",
              "cannot infer num_classes from an empty tensor; pass it explicitly");
  Shape shape = idx.shape();
  shape.push_back(num_classes);
  checked_nbytes("one_hot", shape, element_size(kInt64));  // Note [checked sizes]
  Tensor classes = arange(num_classes, TensorOptions(kInt64).with_device(idx.device()));
  return eq(idx.unsqueeze(-1), classes).to(kInt64);
}

static Tensor softmax_impl(const Tensor& x_in, int64_t dim, bool is_log) {
  const char* op = is_log ? "log_softmax" : "softmax";
  detail::check_defined(op, x_in);
  Tensor x = autocast::cast(AutocastPolicy::Float32, x_in);
  int64_t d = wrap_dim(op, dim, x.dim());
  DType dtype = is_floating(x.dtype()) ? x.dtype() : kFloat32;
  Tensor input = detail::cast(x, dtype).contiguous().detach();
  Tensor out = empty(x.shape(), options_of(input));
  if (x.numel() > 0) {
    dispatch<SoftmaxKernel>(is_log ? OpKey::log_softmax : OpKey::softmax, x.device(), input, out,
                            d);
  }
  if (needs_grad(x)) {
    auto node = make_node<SoftmaxBackward>({&x});
    node->result = SavedTensor(out, /*is_output=*/true);
    node->dim = d;
    node->is_log = is_log;
    set_history(out, node);
  }
  return out;
}

Tensor softmax(const Tensor& x, int64_t dim) { return softmax_impl(x, dim, false); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return softmax_impl(x, dim, true); }

}  // namespace wick
