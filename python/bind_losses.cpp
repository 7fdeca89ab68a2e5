// wick._C._nn, the losses (nn/losses.h): the class-index forms; wick/nn/functional.py adds
// weights and soft targets.
#include "nn/losses.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

namespace F = nn::functional;

F::Reduction reduction_of(const std::string& name) { return F::reduction_from_string(name); }

}  // namespace

void init_losses(py::module_& root) {
  py::module_ m = root.attr("_nn").cast<py::module_>();
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
}

}  // namespace wick::python
