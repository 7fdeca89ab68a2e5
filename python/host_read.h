// The Python face of Note [host reads] (core/host_read.h): a conversion of a tensor to a Python
// value tells a listening tracer which line of Python asked for it.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "core/host_read.h"

namespace wick::python {

inline void note_host_read_from_python(const char* what) {
  if (!host_reads_observed()) return;
  namespace py = pybind11;
  // Called from a binding, so frame 0 is the Python code that made the conversion.
  py::object frame = py::module_::import("sys").attr("_getframe")(0);
  std::string where = py::str(frame.attr("f_code").attr("co_filename")).cast<std::string>() + ":" +
                      std::to_string(frame.attr("f_lineno").cast<int>());
  note_host_read(what, where);
}

}  // namespace wick::python
