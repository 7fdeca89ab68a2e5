// wick._C._env_facts() and _env_checks(): the environment report (envreport/; the C++ wick_env
// tool prints the same) for python -m wick.utils.collect_env. Facts travel as flat strings;
// `assume` takes the same KEY=VALUE overrides as wick_env --assume.
#include <pybind11/stl.h>

#include <stdexcept>

#include "envreport/report.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

env::Facts facts_with(const std::vector<std::string>& assumptions) {
  env::Facts facts = env::gather();
  for (const std::string& a : assumptions) {
    try {
      env::assume(facts, a);
    } catch (const std::invalid_argument& e) {
      throw py::value_error(std::string("[collect_env] ") + e.what());
    }
  }
  return facts;
}

}  // namespace

void init_env(py::module_& m) {
  m.def(
      "_env_facts",
      [](const std::vector<std::string>& assume) { return env::to_map(facts_with(assume)); },
      py::arg("assume") = std::vector<std::string>{});
  m.def(
      "_env_checks",
      [](const std::vector<std::string>& assume) {
        py::list out;
        for (const env::Check& c : env::check_environment(facts_with(assume)))
          out.append(py::make_tuple(c.name, env::verdict_name(c.verdict), c.detail, c.hint));
        return out;
      },
      py::arg("assume") = std::vector<std::string>{});
}

}  // namespace wick::python
