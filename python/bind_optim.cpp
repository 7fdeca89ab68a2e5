// wick._C._optim: the C++ optimizers (nn/optim/) for wick.optim, built by name from a PyTorch
// defaults dict (make), and, through bind_lr_scheduler.cpp, the learning-rate schedules.
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

#include <map>

#include "nn/optim.h"
#include "python/bind_common.h"

namespace wick::python {

// bind_lr_scheduler.cpp adds the schedules to the same module.
void init_lr_scheduler(py::module_& m);

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

// How make() builds each optimizer: the C++ options it reads from the PyTorch dicts, and its
// constructor over the groups and the defaults.
struct Maker {
  const std::vector<std::string>* keys;
  std::unique_ptr<Optimizer> (*make)(std::vector<ParamGroup> groups, const optim::Options& o);
};

template <class T, class Opts>
std::unique_ptr<Optimizer> build(std::vector<ParamGroup> groups, Opts options) {
  return std::make_unique<T>(std::move(groups), options);
}

const std::map<std::string, Maker> kOptimizers = {
    {"SGD",
     {&kSgdKeys,
      [](std::vector<ParamGroup> g, const optim::Options& o) {
        return build<optim::SGD>(std::move(g),
                                 optim::SGDOptions{o.at("lr"), o.at("momentum"), o.at("dampening"),
                                                   o.at("weight_decay"), o.at("nesterov") != 0});
      }}},
    {"Adam",
     {&kAdamKeys,
      [](std::vector<ParamGroup> g, const optim::Options& o) {
        return build<optim::Adam>(
            std::move(g), optim::AdamOptions{o.at("lr"), o.at("beta1"), o.at("beta2"), o.at("eps"),
                                             o.at("weight_decay")});
      }}},
    {"AdamW",
     {&kAdamKeys,
      [](std::vector<ParamGroup> g, const optim::Options& o) {
        return build<optim::AdamW>(
            std::move(g), optim::AdamOptions{o.at("lr"), o.at("beta1"), o.at("beta2"), o.at("eps"),
                                             o.at("weight_decay")});
      }}},
    {"Adamax",
     {&kAdamKeys,
      [](std::vector<ParamGroup> g, const optim::Options& o) {
        return build<optim::Adamax>(std::move(g),
                                    optim::AdamaxOptions{o.at("lr"), o.at("beta1"), o.at("beta2"),
                                                         o.at("eps"), o.at("weight_decay")});
      }}},
    {"NAdam",
     {&kNAdamKeys,
      [](std::vector<ParamGroup> g, const optim::Options& o) {
        return build<optim::NAdam>(
            std::move(g), optim::NAdamOptions{o.at("lr"), o.at("beta1"), o.at("beta2"), o.at("eps"),
                                              o.at("weight_decay"), o.at("momentum_decay")});
      }}},
    {"RAdam",
     {&kAdamKeys,
      [](std::vector<ParamGroup> g, const optim::Options& o) {
        return build<optim::RAdam>(
            std::move(g), optim::RAdamOptions{o.at("lr"), o.at("beta1"), o.at("beta2"), o.at("eps"),
                                              o.at("weight_decay")});
      }}},
    {"RMSprop",
     {&kRmspropKeys,
      [](std::vector<ParamGroup> g, const optim::Options& o) {
        return build<optim::RMSprop>(
            std::move(g),
            optim::RMSpropOptions{o.at("lr"), o.at("alpha"), o.at("eps"), o.at("weight_decay"),
                                  o.at("momentum"), o.at("centered") != 0});
      }}},
    {"Adagrad",
     {&kAdagradKeys,
      [](std::vector<ParamGroup> g, const optim::Options& o) {
        return build<optim::Adagrad>(
            std::move(g), optim::AdagradOptions{o.at("lr"), o.at("lr_decay"), o.at("weight_decay"),
                                                o.at("initial_accumulator_value"), o.at("eps")});
      }}},
    {"Adadelta",
     {&kAdadeltaKeys,
      [](std::vector<ParamGroup> g, const optim::Options& o) {
        return build<optim::Adadelta>(
            std::move(g),
            optim::AdadeltaOptions{o.at("lr"), o.at("rho"), o.at("eps"), o.at("weight_decay")});
      }}},
    // One group only, as in PyTorch; the group's own options then replace the defaults.
    {"LBFGS",
     {&kLbfgsKeys,
      [](std::vector<ParamGroup> g, const optim::Options& o) {
        check_value(g.size() == 1, "LBFGS",
                    "LBFGS doesn't support per-parameter options (parameter groups)");
        auto integer = [&](const char* key) { return static_cast<int64_t>(o.at(key)); };
        optim::LBFGSOptions lbfgs{o.at("lr"),
                                  integer("max_iter"),
                                  integer("max_eval"),
                                  o.at("tolerance_grad"),
                                  o.at("tolerance_change"),
                                  integer("history_size"),
                                  o.at("strong_wolfe") != 0};
        auto opt = std::make_unique<optim::LBFGS>(std::move(g[0].params), lbfgs);
        for (const auto& [key, value] : g[0].options) opt->param_groups()[0].options[key] = value;
        return std::unique_ptr<Optimizer>(std::move(opt));
      }}},
};

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
      "make",
      [](const std::string& name, py::list groups, py::dict defaults) {
        auto it = kOptimizers.find(name);
        check_value(it != kOptimizers.end(), "optimizer", "no optimizer '", name, "'");
        optim::Options options;
        read_options(defaults, *it->second.keys, options);
        return it->second.make(groups_of(groups, *it->second.keys), options);
      },
      py::arg("name"), py::arg("groups"), py::arg("defaults"));

  // L-BFGS calls back into Python for the loss (the closure), so its step keeps the GIL. make
  // returns it as this class (pybind11 finds the most derived registered type).
  py::class_<optim::LBFGS, Optimizer>(m, "LBFGS")
      .def(
          "step_closure",
          [](optim::LBFGS& o, const std::function<double()>& closure) { return o.step(closure); },
          py::arg("closure"))
      .def_property_readonly("n_iter", &optim::LBFGS::n_iter)
      .def_property_readonly("func_evals", &optim::LBFGS::func_evals);

  init_lr_scheduler(m);
}

}  // namespace wick::python
