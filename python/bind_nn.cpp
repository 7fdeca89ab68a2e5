// wick._C._nn: the C++ layers' math for wick.nn - the functional ops (nn/functional.h,
// core/ops/nn.h), parameter initialisation (nn/init.h), gradient clipping and safetensors files.
// wick/nn/functional.py gives them PyTorch's full signatures; the hot ones (linear, relu) are
// bound here with those signatures already, so functional.py can export them as they are.
#include <pybind11/stl.h>

#include <cmath>

#include "nn/clip_grad.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "nn/serialization.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

namespace F = nn::functional;

F::Reduction reduction_of(const std::string& name) { return F::reduction_from_string(name); }

// In-place activations: relu(x, inplace=True) writes the result back into x.
py::object maybe_inplace(py::object input, const Tensor& result, bool inplace) {
  if (!inplace) return py::cast(result);
  input.cast<Tensor&>().copy_(result);
  return input;
}

Pair2 stride_or_kernel(py::handle stride, Pair2 kernel) {
  if (stride.is_none()) return kernel;
  if (py::isinstance<py::sequence>(stride) && py::len(stride) == 0) return kernel;
  return to_pair(stride, "stride");
}

nn::init::FanMode fan_mode(const std::string& mode) {
  if (mode == "fan_in") return nn::init::FanMode::FanIn;
  if (mode == "fan_out") return nn::init::FanMode::FanOut;
  throw py::value_error("[kaiming_init] mode must be 'fan_in' or 'fan_out'; got '" + mode + "'");
}

}  // namespace

void init_nn(py::module_& root) {
  py::module_ m = root.def_submodule("_nn", "C++ layers, init and serialization for wick.nn");

  // ---- activations ----
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

  // ---- layers ----
  m.def(
      "linear",
      [](const Tensor& x, const Tensor& w, py::handle b) {
        return linear(x, w, optional_tensor(b, "bias"));
      },
      py::arg("input"), py::arg("weight"), py::arg("bias") = py::none());
  m.def(
      "conv2d",
      [](const Tensor& x, const Tensor& w, py::handle b, py::handle stride, py::handle padding,
         py::handle dilation, int64_t groups) {
        Pair2 pad(0);
        if (py::isinstance<py::str>(padding)) {
          std::string mode = padding.cast<std::string>();
          Pair2 dil = to_pair(dilation, "dilation");
          if (mode == "same") {
            check_value(to_pair(stride, "stride").h == 1 && to_pair(stride, "stride").w == 1,
                        "conv2d", "padding='same' needs stride 1");
            int64_t th = dil.h * (w.size(2) - 1), tw = dil.w * (w.size(3) - 1);
            check_value(th % 2 == 0 && tw % 2 == 0, "conv2d",
                        "padding='same' with an even kernel extent is not supported");
            pad = Pair2(th / 2, tw / 2);
          } else {
            check_value(mode == "valid", "conv2d", "padding must be 'valid', 'same' or ints; got '",
                        mode, "'");
          }
        } else {
          pad = to_pair(padding, "padding");
        }
        return conv2d(x, w, optional_tensor(b, "bias"), to_pair(stride, "stride"), pad,
                      to_pair(dilation, "dilation"), groups);
      },
      py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
      py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1);
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
      "dropout",
      [](py::object x, double p, bool training, bool inplace) {
        return maybe_inplace(x, F::dropout(to_tensor(x, "input"), p, training), inplace);
      },
      py::arg("input"), py::arg("p") = 0.5, py::arg("training") = true, py::arg("inplace") = false);
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

  // ---- losses (the class-index forms; functional.py adds weights and soft targets) ----
  m.def(
      "cross_entropy",
      [](const Tensor& input, const Tensor& target, int64_t ignore_index,
         const std::string& reduction, double label_smoothing) {
        F::CrossEntropyOptions o;
        o.ignore_index = ignore_index;
        o.reduction = reduction_of(reduction);
        o.label_smoothing = label_smoothing;
        return F::cross_entropy(input, target, o);
      },
      py::arg("input"), py::arg("target"), py::arg("ignore_index") = -100,
      py::arg("reduction") = "mean", py::arg("label_smoothing") = 0.0);
  m.def(
      "nll_loss",
      [](const Tensor& input, const Tensor& target, int64_t ignore_index,
         const std::string& reduction) {
        return F::nll_loss(input, target, ignore_index, reduction_of(reduction));
      },
      py::arg("input"), py::arg("target"), py::arg("ignore_index") = -100,
      py::arg("reduction") = "mean");
  m.def(
      "mse_loss",
      [](const Tensor& input, const Tensor& target, const std::string& reduction) {
        return F::mse_loss(input, target, reduction_of(reduction));
      },
      py::arg("input"), py::arg("target"), py::arg("reduction") = "mean");
  m.def(
      "l1_loss",
      [](const Tensor& input, const Tensor& target, const std::string& reduction) {
        return F::l1_loss(input, target, reduction_of(reduction));
      },
      py::arg("input"), py::arg("target"), py::arg("reduction") = "mean");
  m.def(
      "binary_cross_entropy_with_logits",
      [](const Tensor& input, const Tensor& target, const std::string& reduction,
         py::handle pos_weight) {
        return F::binary_cross_entropy_with_logits(input, target, reduction_of(reduction),
                                                   optional_tensor(pos_weight, "pos_weight"));
      },
      py::arg("input"), py::arg("target"), py::arg("reduction") = "mean",
      py::arg("pos_weight") = py::none());
  m.def(
      "binary_cross_entropy",
      [](const Tensor& input, const Tensor& target, py::handle weight,
         const std::string& reduction) {
        return F::binary_cross_entropy(input, target, optional_tensor(weight, "weight"),
                                       reduction_of(reduction));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
      py::arg("reduction") = "mean");
  m.def(
      "smooth_l1_loss",
      [](const Tensor& input, const Tensor& target, const std::string& reduction, double beta) {
        return F::smooth_l1_loss(input, target, reduction_of(reduction), beta);
      },
      py::arg("input"), py::arg("target"), py::arg("reduction") = "mean", py::arg("beta") = 1.0);
  m.def(
      "huber_loss",
      [](const Tensor& input, const Tensor& target, const std::string& reduction, double delta) {
        return F::huber_loss(input, target, reduction_of(reduction), delta);
      },
      py::arg("input"), py::arg("target"), py::arg("reduction") = "mean", py::arg("delta") = 1.0);
  m.def(
      "kl_div",
      [](const Tensor& input, const Tensor& target, const std::string& reduction, bool log_target) {
        bool batch_mean = reduction == "batchmean";
        return F::kl_div(input, target, reduction_of(batch_mean ? "sum" : reduction), log_target,
                         batch_mean);
      },
      py::arg("input"), py::arg("target"), py::arg("reduction") = "mean",
      py::arg("log_target") = false);

  // ---- init: each fills its tensor in place and returns the same Python object ----
  auto inplace = [](py::object t) -> Tensor& { return t.cast<Tensor&>(); };
  m.def(
      "uniform_",
      [inplace](py::object t, double a, double b) {
        nn::init::uniform_(inplace(t), a, b);
        return t;
      },
      py::arg("tensor"), py::arg("a") = 0.0, py::arg("b") = 1.0);
  m.def(
      "normal_",
      [inplace](py::object t, double mean, double std) {
        nn::init::normal_(inplace(t), mean, std);
        return t;
      },
      py::arg("tensor"), py::arg("mean") = 0.0, py::arg("std") = 1.0);
  m.def(
      "constant_",
      [inplace](py::object t, double value) {
        nn::init::constant_(inplace(t), value);
        return t;
      },
      py::arg("tensor"), py::arg("val"));
  m.def(
      "zeros_",
      [inplace](py::object t) {
        nn::init::zeros_(inplace(t));
        return t;
      },
      py::arg("tensor"));
  m.def(
      "ones_",
      [inplace](py::object t) {
        nn::init::ones_(inplace(t));
        return t;
      },
      py::arg("tensor"));
  m.def(
      "xavier_uniform_",
      [inplace](py::object t, double gain) {
        nn::init::xavier_uniform_(inplace(t), gain);
        return t;
      },
      py::arg("tensor"), py::arg("gain") = 1.0);
  m.def(
      "xavier_normal_",
      [inplace](py::object t, double gain) {
        nn::init::xavier_normal_(inplace(t), gain);
        return t;
      },
      py::arg("tensor"), py::arg("gain") = 1.0);
  m.def(
      "kaiming_uniform_",
      [inplace](py::object t, double a, const std::string& mode, const std::string& nl) {
        nn::init::kaiming_uniform_(inplace(t), a, fan_mode(mode), nl);
        return t;
      },
      py::arg("tensor"), py::arg("a") = 0.0, py::arg("mode") = "fan_in",
      py::arg("nonlinearity") = "leaky_relu");
  m.def(
      "kaiming_normal_",
      [inplace](py::object t, double a, const std::string& mode, const std::string& nl) {
        nn::init::kaiming_normal_(inplace(t), a, fan_mode(mode), nl);
        return t;
      },
      py::arg("tensor"), py::arg("a") = 0.0, py::arg("mode") = "fan_in",
      py::arg("nonlinearity") = "leaky_relu");
  m.def(
      "calculate_gain",
      [](const std::string& nonlinearity, py::handle param) {
        return nn::init::calculate_gain(nonlinearity,
                                        param.is_none() ? 0.01 : param.cast<double>());
      },
      py::arg("nonlinearity"), py::arg("param") = py::none());
  m.def("calculate_fan_in_and_fan_out", &nn::init::fan_in_and_fan_out, py::arg("tensor"));

  // ---- gradient clipping ----
  m.def(
      "clip_grad_norm_",
      [](py::handle parameters, double max_norm, double norm_type, bool error_if_nonfinite) {
        std::vector<Tensor> params;
        if (const Tensor* t = try_tensor(parameters)) {
          params.push_back(*t);
        } else {
          for (py::handle p : parameters) params.push_back(to_tensor(p, "parameters"));
        }
        return nn::utils::clip_grad_norm_(params, max_norm, norm_type, error_if_nonfinite);
      },
      py::arg("parameters"), py::arg("max_norm"), py::arg("norm_type") = 2.0,
      py::arg("error_if_nonfinite") = false);

  // ---- safetensors files ----
  // A file-system error becomes the OSError Python raises for the same errno - OSError's
  // constructor picks FileNotFoundError, IsADirectoryError, PermissionError, ... - with the
  // path as its filename, as open() and torch.load do.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const FileError& e) {
      // The path as Python's os functions decode it (surrogateescape keeps odd bytes).
      py::object path = py::reinterpret_steal<py::object>(PyUnicode_DecodeFSDefaultAndSize(
          e.path().data(), static_cast<Py_ssize_t>(e.path().size())));
      if (!path) path = py::none();
      PyErr_Clear();
      py::object error = py::reinterpret_steal<py::object>(
          PyObject_CallFunction(PyExc_OSError, "isO", e.error_number(), e.what(), path.ptr()));
      if (error) PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
    }
  });
  m.def(
      "save_safetensors",
      [](const std::string& path, const StateDict& tensors,
         const std::map<std::string, std::string>& metadata) {
        save_safetensors(path, tensors, metadata);
      },
      py::arg("path"), py::arg("tensors"),
      py::arg("metadata") = std::map<std::string, std::string>());
  m.def(
      "load_safetensors",
      [](const std::string& path) {
        SafetensorsFile f = load_safetensors(path);
        return py::make_tuple(f.tensors, f.metadata);
      },
      py::arg("path"));
}

}  // namespace wick::python
