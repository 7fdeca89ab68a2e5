#include "nn/optim/lbfgs.h"

#include <algorithm>
#include <cmath>

#include "core/grad_mode.h"
#include "core/host_read.h"
#include "core/ops.h"

namespace wick::optim {

namespace {

// LBFGS steers its line search on the host (Note [host reads]).
double dot_value(const Tensor& a, const Tensor& b) {
  note_host_read("LBFGS");
  return (a * b).sum().item<double>();
}
double max_abs(const Tensor& a) {
  note_host_read("LBFGS");
  return a.abs().max().item<double>();
}

// The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to the bounds
// (by default the interval between the points); their midpoint when the cubic has none.
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2,
                         double lo, double hi) {
  double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  double d2_square = d1 * d1 - g1 * g2;
  if (d2_square < 0) return (lo + hi) / 2;
  double d2 = std::sqrt(d2_square);
  double min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                            : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
  return std::min(std::max(min_pos, lo), hi);
}

double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2) {
  return cubic_interpolate(x1, f1, g1, x2, f2, g2, std::min(x1, x2), std::max(x1, x2));
}

void check_lbfgs_options(const char* name, const std::string& where, const Options& o) {
  check_non_negative(name, where, o, "lr", "learning rate");
  check_non_negative(name, where, o, "tolerance_grad", "tolerance_grad");
  check_non_negative(name, where, o, "tolerance_change", "tolerance_change");
  for (const char* key : {"max_iter", "max_eval", "history_size"}) {
    double v = o.at(key);
    check_value(v >= 1 && v == std::floor(v) && v < 9.2e18, name, where, key,
                " must be an integer >= 1; got ", v);
  }
  check_flag(name, where, o, "strong_wolfe");
}

}  // namespace

LBFGS::LBFGS(std::vector<Tensor> params, LBFGSOptions o)
    : Optimizer(
          "LBFGS", std::vector<ParamGroup>{{std::move(params), {}}},
          {{"lr", o.lr},
           {"max_iter", static_cast<double>(o.max_iter)},
           {"max_eval", static_cast<double>(o.max_eval < 0 ? o.max_iter * 5 / 4 : o.max_eval)},
           {"tolerance_grad", o.tolerance_grad},
           {"tolerance_change", o.tolerance_change},
           {"history_size", static_cast<double>(o.history_size)},
           {"strong_wolfe", o.strong_wolfe ? 1.0 : 0.0}},
          check_lbfgs_options, {}, WeightDecay::kInUpdate) {}  // it has no weight_decay

void LBFGS::step() {
  check_value(false, "LBFGS", "step() needs a closure that re-evaluates the loss: step(closure)");
}

void LBFGS::update(const ParamGroup&, ParamStep&) { step(); }

Tensor LBFGS::flat_grad() const {
  std::vector<Tensor> views;
  for (const Tensor& p : param_groups()[0].params) {
    Tensor g = p.grad();
    views.push_back(g.defined() ? g.reshape({-1}) : zeros_like(p).reshape({-1}));
  }
  return cat(views, 0);
}

void LBFGS::add_to_params(double step_size, const Tensor& direction) {
  int64_t offset = 0;
  for (Tensor& p : param_groups()[0].params) {
    int64_t n = p.numel();
    p.add_(direction.slice(0, offset, offset + n).reshape(p.shape()) * step_size);
    offset += n;
  }
}

void LBFGS::set_params(const std::vector<Tensor>& values) {
  auto& params = param_groups()[0].params;
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_(values[i]);
}

std::pair<double, Tensor> LBFGS::evaluate_at(const Closure& closure, const std::vector<Tensor>& x,
                                             double t, const Tensor& d) {
  add_to_params(t, d);
  double loss = closure();
  Tensor grad = flat_grad();
  set_params(x);
  return {loss, grad};
}

double LBFGS::step(const Closure& closure) {
  NoGradGuard no_grad;
  check_value(param_groups().size() == 1, "LBFGS",
              "LBFGS doesn't support per-parameter options (parameter groups)");
  const ParamGroup& group = param_groups()[0];
  double lr = option(group, "lr"), tolerance_grad = option(group, "tolerance_grad");
  double tolerance_change = option(group, "tolerance_change");
  auto max_iter = static_cast<int64_t>(option(group, "max_iter"));
  auto max_eval = static_cast<int64_t>(option(group, "max_eval"));
  auto history_size = static_cast<size_t>(option(group, "history_size"));
  bool wolfe = option(group, "strong_wolfe") != 0;
  // The closure runs backward, so it runs with grad mode on.
  auto evaluate = [&closure] {
    GradModeGuard grad_on(true);
    return closure();
  };

  double orig_loss = evaluate(), loss = orig_loss;
  int64_t current_evals = 1;
  ++func_evals_;
  Tensor grad = flat_grad();
  if (max_abs(grad) <= tolerance_grad) return orig_loss;  // already optimal

  for (int64_t n_iter = 1; n_iter <= max_iter; ++n_iter) {
    ++n_iter_;
    // The direction: steepest descent first, then the two-loop recursion over the history.
    if (n_iter_ == 1) {
      d_ = -grad;
      old_dirs_.clear();
      old_stps_.clear();
      ro_.clear();
      h_diag_ = 1;
    } else {
      Tensor y = grad - prev_flat_grad_;
      Tensor s = d_ * t_;
      double ys = dot_value(y, s);
      if (ys > 1e-10) {  // only curvature pairs that keep the approximation positive definite
        if (old_dirs_.size() == history_size) {
          old_dirs_.pop_front();
          old_stps_.pop_front();
          ro_.pop_front();
        }
        old_dirs_.push_back(y);
        old_stps_.push_back(s);
        ro_.push_back(1.0 / ys);
        h_diag_ = ys / dot_value(y, y);
      }
      size_t num_old = old_dirs_.size();
      std::vector<double> al(num_old);
      Tensor q = -grad;
      for (size_t k = num_old; k-- > 0;) {
        al[k] = dot_value(old_stps_[k], q) * ro_[k];
        q.add_(old_dirs_[k] * -al[k]);
      }
      Tensor r = q * h_diag_;
      for (size_t k = 0; k < num_old; ++k) {
        double be = dot_value(old_dirs_[k], r) * ro_[k];
        r.add_(old_stps_[k] * (al[k] - be));
      }
      d_ = r;
    }
    prev_flat_grad_ = grad.clone();
    prev_loss_ = loss;
    // The first step is scaled down to at most 1 / |g|_1: the history has no curvature yet.
    t_ = n_iter_ == 1 ? std::min(1.0, 1.0 / grad.abs().sum().item<double>()) * lr : lr;
    double gtd = dot_value(grad, d_);
    if (gtd > -tolerance_change) break;  // not a descent direction any more

    int64_t ls_evals = 0;
    bool optimal = false;
    if (wolfe) {
      LineSearch ls = strong_wolfe(evaluate, t_, d_, loss, grad, gtd, tolerance_change);
      loss = ls.loss;
      grad = ls.flat_grad;
      t_ = ls.t;
      ls_evals = ls.evals;
      add_to_params(t_, d_);
      optimal = max_abs(grad) <= tolerance_grad;
    } else {
      add_to_params(t_, d_);
      if (n_iter != max_iter) {
        loss = evaluate();
        grad = flat_grad();
        optimal = max_abs(grad) <= tolerance_grad;
        ls_evals = 1;
      }
    }
    current_evals += ls_evals;
    func_evals_ += ls_evals;
    if (n_iter == max_iter || current_evals >= max_eval || optimal) break;
    if (max_abs(d_ * t_) <= tolerance_change) break;
    if (std::fabs(loss - prev_loss_) < tolerance_change) break;
  }
  return orig_loss;
}

// Note [strong Wolfe line search]
// PyTorch's port of minFunc's search (Nocedal & Wright, Algorithms 3.5 and 3.6): grow t until
// the step brackets a point with sufficient decrease (c1) and a small enough slope (c2), then
// shrink the bracket by cubic interpolation, at most 25 evaluations in all.
LBFGS::LineSearch LBFGS::strong_wolfe(const Closure& closure, double t, const Tensor& d, double f,
                                      const Tensor& g, double gtd, double tolerance_change) {
  const double c1 = 1e-4, c2 = 0.9;
  const int64_t max_ls = 25;
  std::vector<Tensor> x;
  for (const Tensor& p : param_groups()[0].params) x.push_back(p.clone());
  double d_norm = max_abs(d);
  auto [f_new, g_new] = evaluate_at(closure, x, t, d);
  int64_t evals = 1;
  double gtd_new = dot_value(g_new, d);
  double t_prev = 0, f_prev = f, gtd_prev = gtd;
  Tensor g_prev = g;
  bool done = false;
  int64_t ls_iter = 0;
  std::vector<double> bracket, bracket_f, bracket_gtd;
  std::vector<Tensor> bracket_g;
  while (ls_iter < max_ls) {
    if (f_new > f + c1 * t * gtd || (ls_iter > 1 && f_new >= f_prev)) {
      bracket = {t_prev, t}, bracket_f = {f_prev, f_new}, bracket_g = {g_prev, g_new};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    if (std::fabs(gtd_new) <= -c2 * gtd) {
      bracket = {t}, bracket_f = {f_new}, bracket_g = {g_new};
      done = true;
      break;
    }
    if (gtd_new >= 0) {
      bracket = {t_prev, t}, bracket_f = {f_prev, f_new}, bracket_g = {g_prev, g_new};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    double min_step = t + 0.01 * (t - t_prev), max_step = t * 10;
    double previous = t;
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, min_step, max_step);
    t_prev = previous;
    f_prev = f_new;
    g_prev = g_new;
    gtd_prev = gtd_new;
    std::tie(f_new, g_new) = evaluate_at(closure, x, t, d);
    ++evals;
    gtd_new = dot_value(g_new, d);
    ++ls_iter;
  }
  if (ls_iter == max_ls) {
    bracket = {0, t}, bracket_f = {f, f_new}, bracket_g = {g, g_new};
  }
  // Zoom: shrink the bracket around a point that satisfies both conditions.
  bool insufficient_progress = false;
  size_t low = bracket_f[0] <= bracket_f.back() ? 0 : 1, high = 1 - low;
  while (!done && ls_iter < max_ls) {
    if (std::fabs(bracket[1] - bracket[0]) * d_norm < tolerance_change) break;
    t = cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1],
                          bracket_gtd[1]);
    double hi = std::max(bracket[0], bracket[1]), lo = std::min(bracket[0], bracket[1]);
    double eps = 0.1 * (hi - lo);
    if (std::min(hi - t, t - lo) < eps) {
      // Too close to an end: move eps inside, unless the last step made progress.
      if (insufficient_progress || t >= hi || t <= lo) {
        t = std::fabs(t - hi) < std::fabs(t - lo) ? hi - eps : lo + eps;
        insufficient_progress = false;
      } else {
        insufficient_progress = true;
      }
    } else {
      insufficient_progress = false;
    }
    std::tie(f_new, g_new) = evaluate_at(closure, x, t, d);
    ++evals;
    gtd_new = dot_value(g_new, d);
    ++ls_iter;
    if (f_new > f + c1 * t * gtd || f_new >= bracket_f[low]) {
      bracket[high] = t, bracket_f[high] = f_new, bracket_g[high] = g_new;
      bracket_gtd[high] = gtd_new;
      low = bracket_f[0] <= bracket_f[1] ? 0 : 1;
      high = 1 - low;
    } else {
      if (std::fabs(gtd_new) <= -c2 * gtd) {
        done = true;
      } else if (gtd_new * (bracket[high] - bracket[low]) >= 0) {
        bracket[high] = bracket[low], bracket_f[high] = bracket_f[low];
        bracket_g[high] = bracket_g[low], bracket_gtd[high] = bracket_gtd[low];
      }
      bracket[low] = t, bracket_f[low] = f_new, bracket_g[low] = g_new;
      bracket_gtd[low] = gtd_new;
    }
  }
  return {bracket_f[low], bracket_g[low], bracket[low], evals};
}

}  // namespace wick::optim
