// L-BFGS (torch.optim.LBFGS): a quasi-Newton method that keeps the last `history_size` steps
// and gradient changes to approximate the inverse Hessian, with PyTorch 1.13's iteration,
// stopping rules and optional strong-Wolfe line search, so that it takes PyTorch's iterates.
//
// It needs the loss more than once per step, so step() takes a closure that clears the
// gradients, computes the loss, runs backward and returns the loss. All parameters form one
// flat vector: one parameter group only, as in PyTorch.
#pragma once

#include <deque>
#include <functional>

#include "nn/optim/optimizer.h"

namespace wick::optim {

struct LBFGSOptions {
  double lr = 1.0;
  int64_t max_iter = 20;  // iterations per step()
  int64_t max_eval = -1;  // closure calls per step(); < 0: max_iter * 5 / 4
  double tolerance_grad = 1e-7;
  double tolerance_change = 1e-9;
  int64_t history_size = 100;
  bool strong_wolfe = false;  // line_search_fn="strong_wolfe"; otherwise fixed steps of lr
};

class LBFGS : public Optimizer {
 public:
  using Closure = std::function<double()>;
  LBFGS(std::vector<Tensor> params, LBFGSOptions options = {});
  // Refused: L-BFGS re-evaluates the loss; use step(closure). As in PyTorch, L-BFGS does not
  // run on the step skeleton: its iteration treats all parameters as one flat vector.
  void step() override;
  // Returns the loss of the closure's first call (before this step's updates).
  double step(const Closure& closure);
  int64_t n_iter() const { return n_iter_; }
  int64_t func_evals() const { return func_evals_; }

 protected:
  void update(const ParamGroup& group, ParamStep& p) override;  // never reached: see step()

 private:
  struct LineSearch {
    double loss;
    Tensor flat_grad;
    double t;
    int64_t evals;
  };
  Tensor flat_grad() const;
  void add_to_params(double step_size, const Tensor& direction);
  void set_params(const std::vector<Tensor>& values);
  // The loss and flat gradient at params + t d; the parameters are put back to x after.
  std::pair<double, Tensor> evaluate_at(const Closure& closure, const std::vector<Tensor>& x,
                                        double t, const Tensor& d);
  LineSearch strong_wolfe(const Closure& closure, double t, const Tensor& d, double loss,
                          const Tensor& grad, double gtd, double tolerance_change);

  // The state PyTorch keeps between calls of step().
  int64_t n_iter_ = 0, func_evals_ = 0;
  Tensor d_, prev_flat_grad_;
  double t_ = 0, h_diag_ = 1, prev_loss_ = 0;
  std::deque<Tensor> old_dirs_, old_stps_;
  std::deque<double> ro_;
};

}  // namespace wick::optim
