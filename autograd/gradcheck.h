// gradcheck: compares every backward formula with central finite differences, in float64.
//
// For each input x that requires grad and each of its elements x_j, the numerical Jacobian column
// is (f(x + eps e_j) - f(x - eps e_j)) / (2 eps); the analytical Jacobian row for each output
// element k is the gradient autograd computes for a one-hot output gradient e_k. They must agree
// elementwise within atol + rtol * |numerical| (PyTorch's defaults below). Inputs may be
// non-contiguous (permuted, sliced) but not expanded: perturbing one memory location of an
// expanded tensor changes several elements at once.
#pragma once

#include <functional>
#include <stdexcept>

#include "autograd/node.h"

namespace wick {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
};

class GradcheckError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Returns true, or throws GradcheckError naming the input, element and both values that differ.
bool gradcheck(const std::function<Tensor(const TensorList&)>& fn, const TensorList& inputs,
               const GradcheckOptions& options = {});

// gradgradcheck: gradcheck of the gradient. The function checked is
//   (inputs..., grad_output) -> autograd::grad(fn(inputs), inputs, grad_output, create_graph)
// so every second derivative (and the gradient's dependence on grad_output) is compared with
// finite differences of the first derivatives. grad_output defaults to fixed pseudo-random
// float64 values of the output's shape, as PyTorch's gen_non_contig_grad_outputs=False does.
bool gradgradcheck(const std::function<Tensor(const TensorList&)>& fn, const TensorList& inputs,
                   const Tensor& grad_output = Tensor(), const GradcheckOptions& options = {});

}  // namespace wick
