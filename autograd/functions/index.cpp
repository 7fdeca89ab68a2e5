#include "autograd/functions/index.h"

#include "autograd/functions/view.h"
#include "core/grad_mode.h"
#include "core/ops.h"

namespace wick {

TensorList IndexSelectBackward::apply(const Tensor& grad) {
  // Scatter each selected slice back to the row it came from, adding where an index repeats.
  Tensor idx = index.unpack(*this).reshape(Shape{-1});
  Shape view = Shape::filled(grad.dim(), 1);
  view[dim] = idx.numel();
  Tensor expanded = idx.reshape(view).expand(grad.shape()).contiguous();
  return {zeros(input_meta[0].shape, options_of(grad)).scatter_add(dim, expanded, grad)};
}

TensorList GatherBackward::apply(const Tensor& grad) {
  return {zeros(input_meta[0].shape, options_of(grad)).scatter_add(dim, index.unpack(*this), grad)};
}

TensorList ScatterAddBackward::apply(const Tensor& grad) {
  Tensor idx = index.unpack(*this);
  Tensor src_grad;
  if (next[1]) {
    src_grad = grad.gather(dim, idx);
    const Shape& src_shape = input_meta[1].shape;
    if (src_grad.shape() != src_shape) {  // src may be larger than index; the rest got no use
      auto region_of = [&](Tensor t) {
        for (int64_t d = 0; d < idx.dim(); ++d) t = t.narrow(d, 0, idx.size(d));
        return t;
      };
      if (GradMode::is_enabled()) {  // copy_ into a view is not recorded; scatter instead
        src_grad = scatter_into_zeros(src_grad, src_shape, region_of);
      } else {
        Tensor padded = zeros(src_shape, options_of(grad));
        region_of(padded).copy_(src_grad);
        src_grad = padded;
      }
    }
  }
  return {grad, src_grad};
}

}  // namespace wick
