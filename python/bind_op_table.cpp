// wick._C._ops(): the op table (core/op_table.h) as a list of dicts, so the docs, the tests and
// tools in Python read the same description of every op that the C++ core runs by; and the
// backends with the ops each one has no kernel for.
#include <pybind11/stl.h>

#include "core/backend.h"
#include "core/dispatch.h"
#include "core/op_table.h"
#include "python/bind_common.h"
#include "sim/sim.h"

namespace wick::python {

namespace {

py::dict describe(const OpInfo& op) {
  py::dict d;
  d["name"] = op.name;
  d["family"] = op.family;
  d["inputs"] = op.inputs;
  py::list attrs;
  for (const OpAttr& a : op.attrs) attrs.append(py::make_tuple(a.name, a.type));
  d["attrs"] = attrs;
  d["dtype_rule"] = dtype_rule_name(op.dtype);
  d["autocast"] = autocast_policy_name(op.autocast);
  d["differentiable"] = op.differentiable;
  d["backward"] = op.backward;
  d["saves"] = saves_name(op.saves);
  d["generated_api"] = op.generated_api;
  d["export_name"] = op.export_name;
  py::list devices;
  devices.append("cpu");
  for (const Backend& b : registered_backends()) {
    if (kernel_registry().has(op.key, b.type)) devices.append(b.name);
  }
  d["kernels"] = devices;
  return d;
}

}  // namespace

void init_op_table(py::module_& m) {
  m.def(
      "_ops",
      [] {
        py::list ops;
        for (const OpInfo& op : op_table()) ops.append(describe(op));
        return ops;
      },
      "Every op with a kernel: name, family, inputs, typed attributes, dtype rule, autocast "
      "policy, backward, export name and the devices that have a kernel for it");
  m.def(
      "_backends",
      [] {
        std::vector<std::string> names{"cpu"};
        for (const Backend& b : registered_backends()) names.push_back(b.name);
        return names;
      },
      "The registered backends, by device name");
  m.def(
      "_missing_kernels",
      [](const std::string& device) { return missing_kernels(Device(device).type); },
      py::arg("device"), "The ops `device` has no kernel for (they fall back to the CPU there)");

  // The CPU fallback (Note [operator fallback] in core/dispatch.h) and the sim device.
  m.def("_fallback_stats", [] {
    py::dict out;
    for (const FallbackStats& s : fallback_stats())
      out[py::str(s.op)] = py::make_tuple(s.count, s.copy_seconds, s.kernel_seconds);
    return out;
  });
  m.def("_reset_fallback_stats", [] { reset_fallback_counts(); });
  m.def("_fallback_mode", [] {
    switch (fallback_mode()) {
      case FallbackMode::Warn:
        return "warn";
      case FallbackMode::Silent:
        return "silent";
      case FallbackMode::Error:
        return "error";
    }
    return "warn";
  });
  m.def(
      "_set_fallback_mode",
      [](const std::string& mode) {
        check_value(mode == "warn" || mode == "silent" || mode == "error", "set_fallback_mode",
                    "expected 'warn', 'silent' or 'error'; got '", mode, "'");
        set_fallback_mode(mode == "warn"     ? FallbackMode::Warn
                          : mode == "silent" ? FallbackMode::Silent
                                             : FallbackMode::Error);
      },
      py::arg("mode"));
  m.def("_sim_ops", &sim::ops_with_kernels);
  m.def("_sim_set_kernel", &sim::set_kernel, py::arg("op"), py::arg("enabled"));
  m.def("_sim_memory_stats", &sim::memory_stats);
}

}  // namespace wick::python
