// wick._C._amp: autocast scopes and the GradScaler (core/autocast.h, nn/grad_scaler.h) for
// wick.autocast and wick.amp.GradScaler.
//
// Note [autocast in Python]
// An AutocastGuard restores the state it found when destroyed, so a Python `with` block maps to
// one guard created in __enter__ and destroyed in __exit__. Scopes are entered and left in
// LIFO order on a thread, so a per-thread stack of guards is all the bookkeeping needed.
#include <pybind11/stl.h>

#include <memory>
#include <vector>

#include "core/autocast.h"
#include "nn/grad_scaler.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

std::vector<std::unique_ptr<AutocastGuard>>& guards() {
  thread_local std::vector<std::unique_ptr<AutocastGuard>> stack;
  return stack;
}

DeviceType device_type(const std::string& name) {
  if (name == "cpu") return kCPU;
  if (name == "cuda") return kCUDA;
  throw_value_error("autocast", "device_type must be 'cpu' or 'cuda'; got '", name, "'");
}

}  // namespace

void init_amp(py::module_& m) {
  py::module_ amp = m.def_submodule("_amp", "autocast scopes and dynamic loss scaling");
  amp.def(
      "enter_autocast",
      [](const std::string& device, py::object dtype, bool enabled) {
        DeviceType type = device_type(device);
        DType d = dtype.is_none() ? autocast::default_lower_dtype(type) : to_dtype(dtype);
        guards().push_back(std::make_unique<AutocastGuard>(type, d, enabled));
      },
      py::arg("device_type"), py::arg("dtype") = py::none(), py::arg("enabled") = true);
  amp.def("exit_autocast", [] {
    check_state(!guards().empty(), "autocast", "exit without a matching enter");
    guards().pop_back();
  });
  amp.def(
      "is_autocast_enabled",
      [](const std::string& device) { return autocast::is_enabled(device_type(device)); },
      py::arg("device_type") = "cpu");
  amp.def(
      "get_autocast_dtype",
      [](const std::string& device) {
        return dtype_object(autocast::lower_dtype(device_type(device)));
      },
      py::arg("device_type") = "cpu");
  amp.def("set_recording", &autocast::set_recording);
  amp.def("clear_recorded", &autocast::clear_recorded);
  amp.def("recorded", [] {
    py::list out;
    for (auto& [op, dtype] : autocast::recorded())
      out.append(py::make_tuple(op, dtype_object(dtype)));
    return out;
  });

  py::class_<amp::GradScaler>(amp, "GradScaler")
      .def(py::init([](double init_scale, double growth_factor, double backoff_factor,
                       int64_t growth_interval, bool enabled) {
             return amp::GradScaler(amp::GradScalerOptions{
                 init_scale, growth_factor, backoff_factor, growth_interval, enabled});
           }),
           py::arg("init_scale"), py::arg("growth_factor"), py::arg("backoff_factor"),
           py::arg("growth_interval"), py::arg("enabled"))
      .def("scale", &amp::GradScaler::scale)
      .def("unscale_", &amp::GradScaler::unscale_)
      .def("prepare_step", &amp::GradScaler::prepare_step)
      .def("update", &amp::GradScaler::update)
      .def("get_scale", &amp::GradScaler::get_scale)
      .def("is_enabled", &amp::GradScaler::is_enabled)
      .def("growth_tracker", &amp::GradScaler::growth_tracker)
      .def("skipped_steps", &amp::GradScaler::skipped_steps)
      .def("state_dict", &amp::GradScaler::state_dict)
      .def("load_state_dict", &amp::GradScaler::load_state_dict);
}

}  // namespace wick::python
