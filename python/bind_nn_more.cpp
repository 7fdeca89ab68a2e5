// wick._C._nn, part two: the convolution, pooling, normalization and resampling functions of
// nn/conv_more.h, nn/norm_more.h and nn/resample.h. Arguments arrive already normalized by
// wick/nn/_functional_more.py (ints or pairs, lists for pad and interpolate), which gives them
// PyTorch's full signatures.
#include <pybind11/stl.h>

#include "nn/conv_more.h"
#include "nn/norm_more.h"
#include "nn/resample.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

namespace F = nn::functional;

py::object values_and_indices(const ValuesIndices& r, bool return_indices) {
  if (return_indices) return py::make_tuple(r.values, r.indices);
  return py::cast(r.values);
}

void bind_conv_and_pool(py::module_& m) {
  m.def(
      "conv1d",
      [](const Tensor& x, const Tensor& w, py::handle b, int64_t stride, int64_t padding,
         int64_t dilation, int64_t groups) {
        return F::conv1d(x, w, optional_tensor(b, "bias"), stride, padding, dilation, groups);
      },
      py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
      py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1);
  m.def(
      "conv_transpose2d",
      [](const Tensor& x, const Tensor& w, py::handle b, py::handle stride, py::handle padding,
         py::handle output_padding, int64_t groups, py::handle dilation) {
        return F::conv_transpose2d(x, w, optional_tensor(b, "bias"), to_pair(stride, "stride"),
                                   to_pair(padding, "padding"),
                                   to_pair(output_padding, "output_padding"), groups,
                                   to_pair(dilation, "dilation"));
      },
      py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
      py::arg("padding") = 0, py::arg("output_padding") = 0, py::arg("groups") = 1,
      py::arg("dilation") = 1);
  m.def(
      "max_pool1d",
      [](const Tensor& x, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
         bool ceil_mode, bool return_indices) {
        return values_and_indices(
            F::max_pool1d_with_indices(x, kernel, stride, padding, dilation, ceil_mode),
            return_indices);
      },
      py::arg("input"), py::arg("kernel_size"), py::arg("stride"), py::arg("padding"),
      py::arg("dilation"), py::arg("ceil_mode"), py::arg("return_indices"));
  m.def("avg_pool1d", &F::avg_pool1d, py::arg("input"), py::arg("kernel_size"), py::arg("stride"),
        py::arg("padding"), py::arg("ceil_mode"), py::arg("count_include_pad"));
  m.def("adaptive_avg_pool1d", &F::adaptive_avg_pool1d, py::arg("input"), py::arg("output_size"));
  m.def(
      "adaptive_max_pool2d",
      [](const Tensor& x, py::handle size, bool return_indices) {
        return values_and_indices(
            F::adaptive_max_pool2d_with_indices(x, to_pair(size, "output_size")), return_indices);
      },
      py::arg("input"), py::arg("output_size"), py::arg("return_indices"));
  m.def(
      "unfold",
      [](const Tensor& x, py::handle kernel, py::handle dilation, py::handle padding,
         py::handle stride) {
        return F::unfold(x, to_pair(kernel, "kernel_size"), to_pair(dilation, "dilation"),
                         to_pair(padding, "padding"), to_pair(stride, "stride"));
      },
      py::arg("input"), py::arg("kernel_size"), py::arg("dilation") = 1, py::arg("padding") = 0,
      py::arg("stride") = 1);
  m.def(
      "fold",
      [](const Tensor& x, py::handle output_size, py::handle kernel, py::handle dilation,
         py::handle padding, py::handle stride) {
        return F::fold(x, to_pair(output_size, "output_size"), to_pair(kernel, "kernel_size"),
                       to_pair(dilation, "dilation"), to_pair(padding, "padding"),
                       to_pair(stride, "stride"));
      },
      py::arg("input"), py::arg("output_size"), py::arg("kernel_size"), py::arg("dilation") = 1,
      py::arg("padding") = 0, py::arg("stride") = 1);
}

void bind_norm_and_distance(py::module_& m) {
  m.def(
      "group_norm",
      [](const Tensor& x, int64_t groups, py::handle w, py::handle b, double eps) {
        return F::group_norm(x, groups, optional_tensor(w, "weight"), optional_tensor(b, "bias"),
                             eps);
      },
      py::arg("input"), py::arg("num_groups"), py::arg("weight") = py::none(),
      py::arg("bias") = py::none(), py::arg("eps") = 1e-5);
  m.def(
      "instance_norm",
      [](const Tensor& x, py::handle mean, py::handle var, py::handle w, py::handle b,
         bool use_input_stats, double momentum, double eps) {
        return F::instance_norm(x, optional_tensor(mean, "running_mean"),
                                optional_tensor(var, "running_var"), optional_tensor(w, "weight"),
                                optional_tensor(b, "bias"), use_input_stats, momentum, eps);
      },
      py::arg("input"), py::arg("running_mean") = py::none(), py::arg("running_var") = py::none(),
      py::arg("weight") = py::none(), py::arg("bias") = py::none(),
      py::arg("use_input_stats") = true, py::arg("momentum") = 0.1, py::arg("eps") = 1e-5);
  m.def("dropout2d", &F::dropout2d, py::arg("input"), py::arg("p"), py::arg("training"));
  m.def("normalize", &F::normalize, py::arg("input"), py::arg("p") = 2.0, py::arg("dim") = 1,
        py::arg("eps") = 1e-12);
  m.def("cosine_similarity", &F::cosine_similarity, py::arg("x1"), py::arg("x2"),
        py::arg("dim") = 1, py::arg("eps") = 1e-8);
  m.def("pairwise_distance", &F::pairwise_distance, py::arg("x1"), py::arg("x2"),
        py::arg("p") = 2.0, py::arg("eps") = 1e-6, py::arg("keepdim") = false);
  m.def(
      "embedding_bag",
      [](const Tensor& input, const Tensor& weight, py::handle offsets, const std::string& mode,
         py::handle per_sample_weights, bool include_last_offset, int64_t padding_idx) {
        return F::embedding_bag(input, weight, optional_tensor(offsets, "offsets"), mode,
                                optional_tensor(per_sample_weights, "per_sample_weights"),
                                include_last_offset, padding_idx);
      },
      py::arg("input"), py::arg("weight"), py::arg("offsets"), py::arg("mode"),
      py::arg("per_sample_weights"), py::arg("include_last_offset"), py::arg("padding_idx"));
}

void bind_resample(py::module_& m) {
  m.def("pad", &F::pad, py::arg("input"), py::arg("pad"), py::arg("mode") = "constant",
        py::arg("value") = 0.0);
  m.def("interpolate", &F::interpolate, py::arg("input"), py::arg("size"), py::arg("scale_factor"),
        py::arg("mode"), py::arg("align_corners"), py::arg("recompute_scale_factor"));
  m.def("pixel_shuffle", &F::pixel_shuffle, py::arg("input"), py::arg("upscale_factor"));
  m.def("pixel_unshuffle", &F::pixel_unshuffle, py::arg("input"), py::arg("downscale_factor"));
}

}  // namespace

void init_nn_more(py::module_& root) {
  py::module_ m = root.attr("_nn").cast<py::module_>();
  bind_conv_and_pool(m);
  bind_norm_and_distance(m);
  bind_resample(m);
}

}  // namespace wick::python
