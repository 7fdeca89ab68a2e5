// wick._C._optim: the C++ optimizers (nn/optim.h) and learning-rate schedules
// (nn/lr_scheduler.h) for wick.optim.
//
// Note [param_groups sync]
// PyTorch code changes hyperparameters by writing into plain dicts -
// `optimizer.param_groups[0]["lr"] = 0.01` - so wick.optim keeps the dicts in Python as the
// source of truth and copies their numbers into the C++ groups right before every step()
// (set_group_options, a few map writes per group). Schedules run in C++ on those options and
// wick.optim copies the new rates back into the dicts after each scheduler step, so the dicts
// always show what the next step will use. PyTorch's tuple option "betas" maps to the C++ options
// "beta1" and "beta2"; booleans (nesterov) become 0 or 1.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "nn/lbfgs.h"
#include "nn/lr_scheduler.h"
#include "nn/optim.h"
#include "nn/optim_adaptive.h"
#include "python/bind_common.h"

namespace wick::python {

// optim2: bind_lr_scheduler.cpp adds the further schedules to the same module.
void init_lr_scheduler_more(py::module_& m);

namespace {

using optim::Optimizer;
using optim::ParamGroup;

// The options each C++ optimizer knows; other keys of a PyTorch group dict (amsgrad, foreach,
// initial_lr, ...) stay in Python.
const std::vector<std::string> kSgdKeys = {"lr", "momentum", "dampening", "weight_decay",
                                           "nesterov"};
const std::vector<std::string> kAdamKeys = {"lr", "beta1", "beta2", "eps", "weight_decay"};
const std::vector<std::string> kRmspropKeys = {"lr",           "alpha",    "eps",
                                               "weight_decay", "momentum", "centered"};
const std::vector<std::string> kAdagradKeys = {"lr", "lr_decay", "weight_decay",
                                               "initial_accumulator_value", "eps"};
const std::vector<std::string> kLbfgsKeys = {
    "lr",           "max_iter",    "max_eval", "tolerance_grad", "tolerance_change",
    "history_size", "strong_wolfe"};
const std::vector<std::string> kAdadeltaKeys = {"lr", "rho", "eps", "weight_decay"};
const std::vector<std::string> kNAdamKeys = {"lr",  "beta1",        "beta2",
                                             "eps", "weight_decay", "momentum_decay"};

// Numbers from a Python param-group dict into C++ options (Note [param_groups sync]).
void read_options(py::dict group, const std::vector<std::string>& keys, optim::Options& options) {
  for (const std::string& key : keys) {
    if (key == "beta1" || key == "beta2") {
      if (!group.contains("betas")) continue;
      py::object betas = group["betas"];
      Scalar s;
      if (!py::isinstance<py::sequence>(betas) || py::len(betas) != 2 ||
          !try_scalar(betas[py::int_(key == "beta1" ? 0 : 1)], s)) {
        throw py::type_error(
            "[optimizer] parameter group option 'betas' must be a pair of "
            "numbers; got " +
            py::repr(betas).cast<std::string>());
      }
      options[key] = s.to_double();
      continue;
    }
    if (!group.contains(key.c_str())) continue;
    Scalar s;
    if (!try_scalar(group[key.c_str()], s)) {
      throw py::type_error("[optimizer] parameter group option '" + key +
                           "' must be a number; got " +
                           py::repr(group[key.c_str()]).cast<std::string>());
    }
    options[key] = s.to_double();
  }
}

std::vector<std::string> keys_of(const Optimizer& o) {
  std::vector<std::string> keys;
  for (const auto& entry : o.defaults()) keys.push_back(entry.first);
  return keys;
}

std::vector<Tensor> params_of(py::dict group) {
  std::vector<Tensor> params;
  for (py::handle p : group["params"]) params.push_back(to_tensor(p, "params"));
  return params;
}

std::vector<ParamGroup> groups_of(py::list groups, const std::vector<std::string>& keys) {
  std::vector<ParamGroup> out;
  for (py::handle g : groups) {
    py::dict group = py::reinterpret_borrow<py::dict>(g);
    ParamGroup pg{params_of(group), {}};
    read_options(group, keys, pg.options);
    out.push_back(std::move(pg));
  }
  return out;
}

// PyTorch's "momentum" or "betas" from C++ options, for copying back into the dicts.
py::dict options_dict(const optim::Options& options) {
  py::dict d;
  for (const auto& [key, value] : options) d[py::str(key)] = value;
  return d;
}

}  // namespace

void init_optim(py::module_& root) {
  py::module_ m = root.def_submodule("_optim", "C++ optimizers and LR schedules for wick.optim");

  py::class_<Optimizer>(m, "Optimizer")
      .def("step",
           [](Optimizer& o) {
             py::gil_scoped_release release;  // big models: let data-loading threads run
             o.step();
           })
      .def("zero_grad", &Optimizer::zero_grad, py::arg("set_to_none") = true)
      .def("num_groups", [](const Optimizer& o) { return o.param_groups().size(); })
      .def(
          "set_group_options",
          [](Optimizer& o, size_t index, py::dict group) {
            check_index(index < o.param_groups().size(), "optimizer", "no parameter group ", index);
            read_options(group, keys_of(o), o.param_groups()[index].options);
          },
          py::arg("index"), py::arg("group"))
      .def(
          "group_options",
          [](const Optimizer& o, size_t index) {
            check_index(index < o.param_groups().size(), "optimizer", "no parameter group ", index);
            return options_dict(o.param_groups()[index].options);
          },
          py::arg("index"))
      .def(
          "add_param_group",
          [](Optimizer& o, py::dict group) {
            ParamGroup pg{params_of(group), {}};
            read_options(group, keys_of(o), pg.options);
            o.add_param_group(std::move(pg));
          },
          py::arg("group"))
      .def("state_dict", &Optimizer::state_dict)
      .def(
          "load_state_dict",
          [](Optimizer& o, StateDict state, py::handle groups) {
            // The saved groups' options join the flat state dict, so that the C++ optimizer
            // checks them with everything else before anything changes (all or nothing).
            if (!groups.is_none()) {
              size_t g = 0;
              for (py::handle group : groups) {
                optim::Options options;
                read_options(py::reinterpret_borrow<py::dict>(group), keys_of(o), options);
                std::string prefix = "param_groups." + std::to_string(g++) + ".";
                for (const auto& [key, value] : options) {
                  state[prefix + key] = scalar_tensor(value, kFloat64);
                }
              }
            }
            o.load_state_dict(state);
          },
          py::arg("state_dict"), py::arg("groups") = py::none());

  m.def(
      "SGD",
      [](py::list groups, double lr, double momentum, double dampening, double weight_decay,
         bool nesterov) -> std::unique_ptr<Optimizer> {
        optim::SGDOptions o{lr, momentum, dampening, weight_decay, nesterov};
        return std::make_unique<optim::SGD>(groups_of(groups, kSgdKeys), o);
      },
      py::arg("groups"), py::arg("lr"), py::arg("momentum"), py::arg("dampening"),
      py::arg("weight_decay"), py::arg("nesterov"));
  m.def(
      "Adam",
      [](py::list groups, double lr, double beta1, double beta2, double eps, double weight_decay,
         bool decoupled) -> std::unique_ptr<Optimizer> {
        optim::AdamOptions o{lr, beta1, beta2, eps, weight_decay};
        if (decoupled) return std::make_unique<optim::AdamW>(groups_of(groups, kAdamKeys), o);
        return std::make_unique<optim::Adam>(groups_of(groups, kAdamKeys), o);
      },
      py::arg("groups"), py::arg("lr"), py::arg("beta1"), py::arg("beta2"), py::arg("eps"),
      py::arg("weight_decay"), py::arg("decoupled"));

  // optim2: the adaptive optimizers of nn/optim_adaptive.h
  m.def(
      "RMSprop",
      [](py::list groups, double lr, double alpha, double eps, double weight_decay, double momentum,
         bool centered) -> std::unique_ptr<Optimizer> {
        optim::RMSpropOptions o{lr, alpha, eps, weight_decay, momentum, centered};
        return std::make_unique<optim::RMSprop>(groups_of(groups, kRmspropKeys), o);
      },
      py::arg("groups"), py::arg("lr"), py::arg("alpha"), py::arg("eps"), py::arg("weight_decay"),
      py::arg("momentum"), py::arg("centered"));
  m.def(
      "Adagrad",
      [](py::list groups, double lr, double lr_decay, double weight_decay,
         double initial_accumulator_value, double eps) -> std::unique_ptr<Optimizer> {
        optim::AdagradOptions o{lr, lr_decay, weight_decay, initial_accumulator_value, eps};
        return std::make_unique<optim::Adagrad>(groups_of(groups, kAdagradKeys), o);
      },
      py::arg("groups"), py::arg("lr"), py::arg("lr_decay"), py::arg("weight_decay"),
      py::arg("initial_accumulator_value"), py::arg("eps"));
  m.def(
      "Adadelta",
      [](py::list groups, double lr, double rho, double eps,
         double weight_decay) -> std::unique_ptr<Optimizer> {
        optim::AdadeltaOptions o{lr, rho, eps, weight_decay};
        return std::make_unique<optim::Adadelta>(groups_of(groups, kAdadeltaKeys), o);
      },
      py::arg("groups"), py::arg("lr"), py::arg("rho"), py::arg("eps"), py::arg("weight_decay"));
  // Adamax, NAdam and RAdam take Adam's betas; momentum_decay is NAdam's alone.
  m.def(
      "AdamFamily",
      [](const std::string& kind, py::list groups, double lr, double beta1, double beta2,
         double eps, double weight_decay, double momentum_decay) -> std::unique_ptr<Optimizer> {
        if (kind == "Adamax") {
          optim::AdamaxOptions o{lr, beta1, beta2, eps, weight_decay};
          return std::make_unique<optim::Adamax>(groups_of(groups, kAdamKeys), o);
        }
        if (kind == "NAdam") {
          optim::NAdamOptions o{lr, beta1, beta2, eps, weight_decay, momentum_decay};
          return std::make_unique<optim::NAdam>(groups_of(groups, kNAdamKeys), o);
        }
        check_value(kind == "RAdam", "optimizer", "no optimizer '", kind, "'");
        optim::RAdamOptions o{lr, beta1, beta2, eps, weight_decay};
        return std::make_unique<optim::RAdam>(groups_of(groups, kAdamKeys), o);
      },
      py::arg("kind"), py::arg("groups"), py::arg("lr"), py::arg("beta1"), py::arg("beta2"),
      py::arg("eps"), py::arg("weight_decay"), py::arg("momentum_decay") = 0.0);

  // L-BFGS calls back into Python for the loss (the closure), so its step keeps the GIL.
  py::class_<optim::LBFGS, Optimizer>(m, "LBFGS")
      .def(py::init([](py::list groups, double lr, int64_t max_iter, int64_t max_eval,
                       double tolerance_grad, double tolerance_change, int64_t history_size,
                       bool strong_wolfe) {
             std::vector<ParamGroup> g = groups_of(groups, kLbfgsKeys);
             check_value(g.size() == 1, "LBFGS",
                         "LBFGS doesn't support per-parameter options (parameter groups)");
             optim::LBFGSOptions o{
                 lr,           max_iter,    max_eval, tolerance_grad, tolerance_change,
                 history_size, strong_wolfe};
             auto opt = std::make_unique<optim::LBFGS>(std::move(g[0].params), o);
             read_options(py::reinterpret_borrow<py::dict>(groups[0]), kLbfgsKeys,
                          opt->param_groups()[0].options);
             return opt;
           }),
           py::arg("groups"), py::arg("lr"), py::arg("max_iter"), py::arg("max_eval"),
           py::arg("tolerance_grad"), py::arg("tolerance_change"), py::arg("history_size"),
           py::arg("strong_wolfe"))
      .def(
          "step_closure",
          [](optim::LBFGS& o, const std::function<double()>& closure) { return o.step(closure); },
          py::arg("closure"))
      .def_property_readonly("n_iter", &optim::LBFGS::n_iter)
      .def_property_readonly("func_evals", &optim::LBFGS::func_evals);

  using optim::LRScheduler;
  py::class_<LRScheduler>(m, "LRScheduler")
      .def("step", &LRScheduler::step)
      .def("get_last_lr", &LRScheduler::get_last_lr)
      .def_property_readonly("last_epoch", &LRScheduler::last_epoch)
      .def("state_dict", &LRScheduler::state_dict)
      .def("load_state_dict", &LRScheduler::load_state_dict, py::arg("state_dict"));
  // Each schedule keeps a reference to its optimizer (keep_alive), like the C++ one does.
  m.def(
      "StepLR",
      [](Optimizer& o, int64_t step_size, double gamma) -> std::unique_ptr<LRScheduler> {
        return std::make_unique<optim::StepLR>(o, step_size, gamma);
      },
      py::keep_alive<0, 1>(), py::arg("optimizer"), py::arg("step_size"), py::arg("gamma"));
  m.def(
      "MultiStepLR",
      [](Optimizer& o, std::vector<int64_t> milestones,
         double gamma) -> std::unique_ptr<LRScheduler> {
        return std::make_unique<optim::MultiStepLR>(o, std::move(milestones), gamma);
      },
      py::keep_alive<0, 1>(), py::arg("optimizer"), py::arg("milestones"), py::arg("gamma"));
  m.def(
      "CosineAnnealingLR",
      [](Optimizer& o, int64_t t_max, double eta_min) -> std::unique_ptr<LRScheduler> {
        return std::make_unique<optim::CosineAnnealingLR>(o, t_max, eta_min);
      },
      py::keep_alive<0, 1>(), py::arg("optimizer"), py::arg("T_max"), py::arg("eta_min"));
  m.def(
      "LinearLR",
      [](Optimizer& o, double start, double end, int64_t total) -> std::unique_ptr<LRScheduler> {
        return std::make_unique<optim::LinearLR>(o, start, end, total);
      },
      py::keep_alive<0, 1>(), py::arg("optimizer"), py::arg("start_factor"), py::arg("end_factor"),
      py::arg("total_iters"));
  m.def(
      "OneCycleLR",
      [](Optimizer& o, double max_lr, int64_t total_steps, double pct_start, bool cos_anneal,
         bool cycle_momentum, double base_momentum, double max_momentum, double div_factor,
         double final_div_factor, bool three_phase) -> std::unique_ptr<LRScheduler> {
        optim::OneCycleOptions opts{pct_start,    cos_anneal, cycle_momentum,   base_momentum,
                                    max_momentum, div_factor, final_div_factor, three_phase};
        return std::make_unique<optim::OneCycleLR>(o, max_lr, total_steps, opts);
      },
      py::keep_alive<0, 1>(), py::arg("optimizer"), py::arg("max_lr"), py::arg("total_steps"),
      py::arg("pct_start"), py::arg("cos_anneal"), py::arg("cycle_momentum"),
      py::arg("base_momentum"), py::arg("max_momentum"), py::arg("div_factor"),
      py::arg("final_div_factor"), py::arg("three_phase"));
  init_lr_scheduler_more(m);
}

}  // namespace wick::python
