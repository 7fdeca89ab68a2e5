// wick._C._optim's learning-rate schedules (nn/optim/lr_scheduler.h, nn/optim/plateau.h), added
// to the module init_optim makes; wick.optim.lr_scheduler wraps them. Python callables (LambdaLR's
// lr_lambda, CyclicLR's scale_fn) are called from C++ through pybind11/functional.h, with the GIL
// held: a schedule steps once per epoch or batch, never on a hot path.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "nn/optim.h"
#include "python/bind_common.h"

namespace wick::python {

void init_lr_scheduler(py::module_& m) {
  using optim::LRScheduler;
  using optim::Optimizer;
  // Each schedule keeps a reference to its optimizer (keep_alive), like the C++ one does.
  py::class_<LRScheduler>(m, "LRScheduler")
      .def("step", &LRScheduler::step)
      .def("get_last_lr", &LRScheduler::get_last_lr)
      .def_property_readonly("last_epoch", &LRScheduler::last_epoch)
      .def("state_dict", &LRScheduler::state_dict)
      .def("load_state_dict", &LRScheduler::load_state_dict, py::arg("state_dict"));
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
  m.def(
      "ExponentialLR",
      [](Optimizer& o, double gamma) -> std::unique_ptr<LRScheduler> {
        return std::make_unique<optim::ExponentialLR>(o, gamma);
      },
      py::keep_alive<0, 1>(), py::arg("optimizer"), py::arg("gamma"));
  m.def(
      "LambdaLR",
      [](Optimizer& o,
         std::vector<optim::LambdaLR::Lambda> lambdas) -> std::unique_ptr<LRScheduler> {
        return std::make_unique<optim::LambdaLR>(o, std::move(lambdas));
      },
      py::keep_alive<0, 1>(), py::keep_alive<0, 2>(), py::arg("optimizer"), py::arg("lr_lambdas"));
  m.def(
      "CosineAnnealingWarmRestarts",
      [](Optimizer& o, int64_t t_0, int64_t t_mult,
         double eta_min) -> std::unique_ptr<LRScheduler> {
        return std::make_unique<optim::CosineAnnealingWarmRestarts>(o, t_0, t_mult, eta_min);
      },
      py::keep_alive<0, 1>(), py::arg("optimizer"), py::arg("T_0"), py::arg("T_mult"),
      py::arg("eta_min"));
  m.def(
      "CyclicLR",
      [](Optimizer& o, std::vector<double> base_lr, std::vector<double> max_lr, double up,
         double down, std::string mode, double gamma, std::function<double(double)> scale_fn,
         bool scale_by_cycle, bool cycle_momentum, std::vector<double> base_momentum,
         std::vector<double> max_momentum) -> std::unique_ptr<LRScheduler> {
        optim::CyclicOptions opts{up,
                                  down,
                                  std::move(mode),
                                  gamma,
                                  std::move(scale_fn),
                                  scale_by_cycle,
                                  cycle_momentum,
                                  std::move(base_momentum),
                                  std::move(max_momentum)};
        return std::make_unique<optim::CyclicLR>(o, std::move(base_lr), std::move(max_lr),
                                                 std::move(opts));
      },
      py::keep_alive<0, 1>(), py::keep_alive<0, 9>(), py::arg("optimizer"), py::arg("base_lr"),
      py::arg("max_lr"), py::arg("step_size_up"), py::arg("step_size_down"), py::arg("mode"),
      py::arg("gamma"), py::arg("scale_fn"), py::arg("scale_by_cycle"), py::arg("cycle_momentum"),
      py::arg("base_momentum"), py::arg("max_momentum"));
  m.def(
      "SequentialLR",
      [](Optimizer& o, std::vector<LRScheduler*> schedulers,
         std::vector<int64_t> milestones) -> std::unique_ptr<LRScheduler> {
        return std::make_unique<optim::SequentialLR>(o, std::move(schedulers),
                                                     std::move(milestones));
      },
      // the list holds the schedules, which must outlive the sequence
      py::keep_alive<0, 1>(), py::keep_alive<0, 2>(), py::arg("optimizer"), py::arg("schedulers"),
      py::arg("milestones"));

  using optim::ReduceLROnPlateau;
  py::class_<ReduceLROnPlateau>(m, "ReduceLROnPlateau")
      .def(py::init([](Optimizer& o, std::string mode, double factor, int64_t patience,
                       double threshold, std::string threshold_mode, int64_t cooldown,
                       std::vector<double> min_lr, double eps) {
             optim::PlateauOptions opts{
                 std::move(mode),           factor,   patience,          threshold,
                 std::move(threshold_mode), cooldown, std::move(min_lr), eps};
             return std::make_unique<ReduceLROnPlateau>(o, std::move(opts));
           }),
           py::keep_alive<1, 2>(), py::arg("optimizer"), py::arg("mode"), py::arg("factor"),
           py::arg("patience"), py::arg("threshold"), py::arg("threshold_mode"),
           py::arg("cooldown"), py::arg("min_lr"), py::arg("eps"))
      .def("step", &ReduceLROnPlateau::step, py::arg("metric"))
      .def("get_last_lr", &ReduceLROnPlateau::get_last_lr)
      .def_property_readonly("last_epoch", &ReduceLROnPlateau::last_epoch)
      .def_property_readonly("best", &ReduceLROnPlateau::best)
      .def_property_readonly("num_bad_epochs", &ReduceLROnPlateau::num_bad_epochs)
      .def_property_readonly("cooldown_counter", &ReduceLROnPlateau::cooldown_counter)
      .def("state_dict", &ReduceLROnPlateau::state_dict)
      .def("load_state_dict", &ReduceLROnPlateau::load_state_dict, py::arg("state_dict"));
}

}  // namespace wick::python
