#include "autograd/gradcheck.h"

#include <cmath>
#include <random>
#include <sstream>
#include <vector>

#include "autograd/engine.h"
#include "core/grad_mode.h"
#include "core/ops.h"

namespace wick {

namespace {

// Address of the j-th element (row-major) of t, honouring its strides.
double* element(const Tensor& t, int64_t j) {
  int64_t offset = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    offset += (j % t.size(d)) * t.stride(d);
    j /= t.size(d);
  }
  return static_cast<double*>(t.data_ptr()) + offset;
}

std::vector<double> evaluate(const std::function<Tensor(const TensorList&)>& fn,
                             const TensorList& inputs) {
  NoGradGuard no_grad;
  return fn(inputs).to(kFloat64).to_vector<double>();
}

}  // namespace

bool gradcheck(const std::function<Tensor(const TensorList&)>& fn, const TensorList& inputs,
               const GradcheckOptions& options) {
  TensorList checked;
  std::vector<size_t> positions;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].requires_grad()) continue;
    check_type(inputs[i].dtype() == kFloat64, "gradcheck", "input ", i,
               " must be float64 (finite differences in float32 are too coarse); got ",
               inputs[i].dtype());
    check_value(inputs[i].device().is_cpu(), "gradcheck", "input ", i, " must be on the CPU");
    for (int64_t d = 0; d < inputs[i].dim(); ++d) {
      check_value(inputs[i].stride(d) != 0 || inputs[i].size(d) <= 1, "gradcheck", "input ", i,
                  " is expanded (stride 0); pass a contiguous or strided tensor instead");
    }
    checked.push_back(inputs[i]);
    positions.push_back(i);
  }
  check_value(!checked.empty(), "gradcheck", "no input requires grad");

  Tensor output = fn(inputs);
  int64_t out_numel = output.numel();
  check_value(output.requires_grad(), "gradcheck", "the output does not require grad");

  for (size_t c = 0; c < checked.size(); ++c) {
    const Tensor& x = checked[c];
    // Analytical Jacobian, one row per output element: J[k][j] = d out_k / d x_j.
    std::vector<std::vector<double>> analytical(out_numel);
    for (int64_t k = 0; k < out_numel; ++k) {
      Tensor seed = zeros(output.shape(), TensorOptions(kFloat64));
      *element(seed, k) = 1.0;
      TensorList grads = autograd::grad({output}, {x}, {seed}, /*retain_graph=*/true,
                                        /*allow_unused=*/true);
      analytical[k] = grads[0].defined() ? grads[0].to(kFloat64).to_vector<double>()
                                         : std::vector<double>(x.numel(), 0.0);
    }
    // Numerical Jacobian, one column per input element.
    for (int64_t j = 0; j < x.numel(); ++j) {
      double* p = element(x, j);
      double original = *p;
      *p = original + options.eps;
      std::vector<double> plus = evaluate(fn, inputs);
      *p = original - options.eps;
      std::vector<double> minus = evaluate(fn, inputs);
      *p = original;
      for (int64_t k = 0; k < out_numel; ++k) {
        double numerical = (plus[k] - minus[k]) / (2 * options.eps);
        double a = analytical[k][j];
        if (std::fabs(a - numerical) > options.atol + options.rtol * std::fabs(numerical) ||
            std::isnan(a) != std::isnan(numerical)) {
          std::ostringstream os;
          os << "[gradcheck] Jacobian mismatch for input " << positions[c] << " (shape "
             << x.shape() << "), element " << j << ", output element " << k << ": numerical "
             << numerical << ", analytical " << a << " (grad_fn "
             << (output.grad_fn() ? output.grad_fn()->name() : "none") << ")";
          throw GradcheckError(os.str());
        }
      }
    }
  }
  return true;
}

bool gradgradcheck(const std::function<Tensor(const TensorList&)>& fn, const TensorList& inputs,
                   const Tensor& grad_output, const GradcheckOptions& options) {
  Tensor seed = grad_output;
  if (!seed.defined()) {
    Tensor output = fn(inputs);
    std::mt19937_64 rng(0);
    std::normal_distribution<double> normal;
    std::vector<double> values(output.numel());
    for (double& v : values) v = normal(rng);
    seed = tensor(values, output.shape(), TensorOptions(kFloat64));
  }
  check_type(seed.dtype() == kFloat64, "gradgradcheck", "grad_output must be float64; got ",
             seed.dtype());
  if (!seed.requires_grad()) seed = seed.detach().requires_grad_(true);
  const size_t n = inputs.size();
  // The first derivatives, flattened into one tensor; gradcheck differentiates them again.
  auto first_derivatives = [&](const TensorList& args) {
    EnableGradGuard grad_mode;  // gradcheck evaluates its function under no_grad
    TensorList ins(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(n));
    Tensor output = fn(ins);
    TensorList wrt;
    for (const Tensor& t : ins) {
      if (t.defined() && t.requires_grad()) wrt.push_back(t);
    }
    TensorList grads = autograd::grad({output}, wrt, {args[n]}, /*retain_graph=*/true,
                                      /*allow_unused=*/true, /*create_graph=*/true);
    TensorList parts;
    for (size_t i = 0; i < grads.size(); ++i) {
      Tensor g = grads[i].defined() ? grads[i] : zeros_like(wrt[i]);
      parts.push_back(g.reshape(Shape{-1}));
    }
    return cat(parts, 0);
  };
  TensorList all = inputs;
  all.push_back(seed);
  return gradcheck(first_derivatives, all, options);
}

}  // namespace wick
