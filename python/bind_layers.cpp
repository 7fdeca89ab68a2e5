// wick._C._nn, the layers' functions (nn/layers/<kind>.h), one binder per kind in nn/layers/'s
// order. wick/nn/functional.py gives them PyTorch's full signatures; the hot ones (linear, relu)
// are bound with those signatures already, so functional.py can export them as they are. The
// others' arguments arrive normalized (ints or pairs, lists for pad and interpolate).
#include <pybind11/stl.h>

#include "nn/layers.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

namespace F = nn::functional;

// In-place forms: relu(x, inplace=True) writes the result back into x.
py::object maybe_inplace(py::object input, const Tensor& result, bool inplace) {
  if (!inplace) return py::cast(result);
  input.cast<Tensor&>().copy_(result);
  return input;
}

py::object values_and_indices(const ValuesIndices& r, bool return_indices) {
  if (return_indices) return py::make_tuple(r.values, r.indices);
  return py::cast(r.values);
}

Pair2 stride_or_kernel(py::handle stride, Pair2 kernel) {
  if (stride.is_none()) return kernel;
  if (py::isinstance<py::sequence>(stride) && py::len(stride) == 0) return kernel;
  return to_pair(stride, "stride");
}

// padding='valid' or 'same' (Note [same padding] in nn/layers/conv.cpp).
F::PaddingMode padding_mode(py::handle padding, const char* op) {
  return F::padding_mode_from_string(op, padding.cast<std::string>());
}

// The activations, the ones with attributes too (core/ops/elementwise_math.h).
void bind_activation(py::module_& m) {
  m.def(
      "relu",
      [](py::object x, bool inplace) {
        return maybe_inplace(x, relu(to_tensor(x, "input")), inplace);
      },
      py::arg("input"), py::arg("inplace") = false);
  m.def(
      "silu",
      [](py::object x, bool inplace) {
        return maybe_inplace(x, silu(to_tensor(x, "input")), inplace);
      },
      py::arg("input"), py::arg("inplace") = false);
  m.def(
      "leaky_relu",
      [](py::object x, double slope, bool inplace) {
        return maybe_inplace(x, leaky_relu(to_tensor(x, "input"), slope), inplace);
      },
      py::arg("input"), py::arg("negative_slope") = 0.01, py::arg("inplace") = false);
  // The activations with attributes (core/ops/elementwise_math.h).
  m.def(
      "elu",
      [](py::object x, double alpha, bool inplace) {
        return maybe_inplace(x, elu(to_tensor(x, "input"), alpha), inplace);
      },
      py::arg("input"), py::arg("alpha") = 1.0, py::arg("inplace") = false);
  m.def(
      "selu",
      [](py::object x, bool inplace) {
        return maybe_inplace(x, selu(to_tensor(x, "input")), inplace);
      },
      py::arg("input"), py::arg("inplace") = false);
  m.def(
      "softplus",
      [](const Tensor& x, double beta, double threshold) { return softplus(x, beta, threshold); },
      py::arg("input"), py::arg("beta") = 1.0, py::arg("threshold") = 20.0);
  m.def(
      "mish",
      [](py::object x, bool inplace) {
        return maybe_inplace(x, mish(to_tensor(x, "input")), inplace);
      },
      py::arg("input"), py::arg("inplace") = false);
  m.def(
      "hardtanh",
      [](py::object x, double min_val, double max_val, bool inplace) {
        return maybe_inplace(x, hardtanh(to_tensor(x, "input"), min_val, max_val), inplace);
      },
      py::arg("input"), py::arg("min_val") = -1.0, py::arg("max_val") = 1.0,
      py::arg("inplace") = false);
  m.def(
      "relu6",
      [](py::object x, bool inplace) {
        return maybe_inplace(x, relu6(to_tensor(x, "input")), inplace);
      },
      py::arg("input"), py::arg("inplace") = false);
  m.def(
      "hardswish",
      [](py::object x, bool inplace) {
        return maybe_inplace(x, hardswish(to_tensor(x, "input")), inplace);
      },
      py::arg("input"), py::arg("inplace") = false);
  m.def(
      "hardsigmoid",
      [](py::object x, bool inplace) {
        return maybe_inplace(x, hardsigmoid(to_tensor(x, "input")), inplace);
      },
      py::arg("input"), py::arg("inplace") = false);
  m.def(
      "gelu", [](const Tensor& x, const std::string& approximate) { return gelu(x, approximate); },
      py::arg("input"), py::arg("approximate") = "none");
}

void bind_linear(py::module_& m) {
  m.def(
      "linear",
      [](const Tensor& x, const Tensor& w, py::handle b) {
        return linear(x, w, optional_tensor(b, "bias"));
      },
      py::arg("input"), py::arg("weight"), py::arg("bias") = py::none());
}

void bind_conv(py::module_& m) {
  m.def(
      "conv1d",
      [](const Tensor& x, const Tensor& w, py::handle b, int64_t stride, py::handle padding,
         int64_t dilation, int64_t groups) {
        Tensor bias = optional_tensor(b, "bias");
        if (py::isinstance<py::str>(padding)) {
          return F::conv1d(x, w, bias, stride, padding_mode(padding, "conv1d"), dilation, groups);
        }
        return F::conv1d(x, w, bias, stride, padding.cast<int64_t>(), dilation, groups);
      },
      py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
      py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1);
  m.def(
      "conv2d",
      [](const Tensor& x, const Tensor& w, py::handle b, py::handle stride, py::handle padding,
         py::handle dilation, int64_t groups) {
        Tensor bias = optional_tensor(b, "bias");
        Pair2 s = to_pair(stride, "stride"), d = to_pair(dilation, "dilation");
        if (py::isinstance<py::str>(padding)) {
          return F::conv2d(x, w, bias, s, padding_mode(padding, "conv2d"), d, groups);
        }
        return F::conv2d(x, w, bias, s, to_pair(padding, "padding"), d, groups);
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

void bind_pooling(py::module_& m) {
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
      "max_pool2d",
      [](const Tensor& x, py::handle kernel, py::handle stride, py::handle padding,
         py::handle dilation, bool ceil_mode, bool return_indices) -> py::object {
        Pair2 k = to_pair(kernel, "kernel_size");
        Pair2 s = stride_or_kernel(stride, k), pad = to_pair(padding, "padding");
        Pair2 d = to_pair(dilation, "dilation");
        if (!return_indices) return py::cast(max_pool2d(x, k, s, pad, d, ceil_mode));
        auto r = max_pool2d_with_indices(x, k, s, pad, d, ceil_mode);
        return py::make_tuple(r.values, r.indices);
      },
      py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(),
      py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("ceil_mode") = false,
      py::arg("return_indices") = false);
  m.def(
      "avg_pool2d",
      [](const Tensor& x, py::handle kernel, py::handle stride, py::handle padding, bool ceil_mode,
         bool count_include_pad, py::handle divisor_override) {
        if (!divisor_override.is_none()) {
          throw py::value_error("[avg_pool2d] divisor_override is not supported");
        }
        Pair2 k = to_pair(kernel, "kernel_size");
        return avg_pool2d(x, k, stride_or_kernel(stride, k), to_pair(padding, "padding"), ceil_mode,
                          count_include_pad);
      },
      py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(),
      py::arg("padding") = 0, py::arg("ceil_mode") = false, py::arg("count_include_pad") = true,
      py::arg("divisor_override") = py::none());
  m.def(
      "adaptive_avg_pool2d",
      [](const Tensor& x, py::handle size) {
        // None in output_size keeps that input size, as in PyTorch.
        int64_t h = x.dim() >= 2 ? x.size(-2) : 0, w = x.dim() >= 2 ? x.size(-1) : 0;
        if (py::isinstance<py::sequence>(size)) {
          py::sequence s = py::reinterpret_borrow<py::sequence>(size);
          check_value(s.size() == 2, "adaptive_avg_pool2d", "output_size must have 2 entries");
          if (!s[0].is_none()) h = s[0].cast<int64_t>();
          if (!s[1].is_none()) w = s[1].cast<int64_t>();
          return adaptive_avg_pool2d(x, Pair2(h, w));
        }
        return adaptive_avg_pool2d(x, to_pair(size, "output_size"));
      },
      py::arg("input"), py::arg("output_size"));
}

void bind_normalization(py::module_& m) {
  m.def(
      "batch_norm",
      [](const Tensor& x, py::handle mean, py::handle var, py::handle w, py::handle b,
         bool training, double momentum, double eps) {
        return batch_norm(x, optional_tensor(mean, "running_mean"),
                          optional_tensor(var, "running_var"), optional_tensor(w, "weight"),
                          optional_tensor(b, "bias"), training, momentum, eps);
      },
      py::arg("input"), py::arg("running_mean"), py::arg("running_var"),
      py::arg("weight") = py::none(), py::arg("bias") = py::none(), py::arg("training") = false,
      py::arg("momentum") = 0.1, py::arg("eps") = 1e-5);
  m.def(
      "batch_norm_relu",
      [](const Tensor& x, py::handle mean, py::handle var, py::handle w, py::handle b,
         bool training, double momentum, double eps, py::handle residual) {
        return batch_norm_relu(x, optional_tensor(mean, "running_mean"),
                               optional_tensor(var, "running_var"), optional_tensor(w, "weight"),
                               optional_tensor(b, "bias"), training, momentum, eps,
                               optional_tensor(residual, "residual"));
      },
      py::arg("input"), py::arg("running_mean"), py::arg("running_var"),
      py::arg("weight") = py::none(), py::arg("bias") = py::none(), py::arg("training") = false,
      py::arg("momentum") = 0.1, py::arg("eps") = 1e-5, py::arg("residual") = py::none());
  m.def(
      "layer_norm",
      [](const Tensor& x, py::handle shape, py::handle w, py::handle b, double eps) {
        Shape s = PyLong_Check(shape.ptr()) ? Shape{shape.cast<int64_t>()}
                                            : to_shape(shape, "layer_norm");
        return F::layer_norm(x, s, optional_tensor(w, "weight"), optional_tensor(b, "bias"), eps);
      },
      py::arg("input"), py::arg("normalized_shape"), py::arg("weight") = py::none(),
      py::arg("bias") = py::none(), py::arg("eps") = 1e-5);
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
  m.def("normalize", &F::normalize, py::arg("input"), py::arg("p") = 2.0, py::arg("dim") = 1,
        py::arg("eps") = 1e-12);
}

void bind_dropout(py::module_& m) {
  m.def(
      "dropout",
      [](py::object x, double p, bool training, bool inplace) {
        return maybe_inplace(x, F::dropout(to_tensor(x, "input"), p, training), inplace);
      },
      py::arg("input"), py::arg("p") = 0.5, py::arg("training") = true, py::arg("inplace") = false);
  m.def("dropout2d", &F::dropout2d, py::arg("input"), py::arg("p"), py::arg("training"));
}

void bind_embedding(py::module_& m) {
  m.def(
      "embedding",
      [](const Tensor& idx, const Tensor& w, py::handle padding_idx) {
        int64_t pad = padding_idx.is_none() ? -1 : padding_idx.cast<int64_t>();
        if (pad < 0 && !padding_idx.is_none()) pad += w.size(0);
        return F::embedding(idx, w, pad);
      },
      py::arg("input"), py::arg("weight"), py::arg("padding_idx") = py::none());
  m.def(
      "one_hot", [](const Tensor& t, int64_t n) { return one_hot(t, n); }, py::arg("tensor"),
      py::arg("num_classes") = -1);
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

void bind_distance(py::module_& m) {
  m.def("cosine_similarity", &F::cosine_similarity, py::arg("x1"), py::arg("x2"),
        py::arg("dim") = 1, py::arg("eps") = 1e-8);
  m.def("pairwise_distance", &F::pairwise_distance, py::arg("x1"), py::arg("x2"),
        py::arg("p") = 2.0, py::arg("eps") = 1e-6, py::arg("keepdim") = false);
}

}  // namespace

void init_layers(py::module_& root) {
  py::module_ m = root.attr("_nn").cast<py::module_>();
  bind_activation(m);
  bind_linear(m);
  bind_conv(m);
  bind_pooling(m);
  bind_normalization(m);
  bind_dropout(m);
  bind_embedding(m);
  bind_resample(m);
  bind_distance(m);
}

}  // namespace wick::python
