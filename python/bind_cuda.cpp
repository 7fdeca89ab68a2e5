// wick._C._cuda: devices, streams, events, the caching allocator's statistics, pinned memory and
// the math-mode switches of cuda/api.h, for wick.cuda and wick.backends (torch.cuda's names).
// Every build has them: without CUDA, or without a GPU, is_available() is False and the rest
// raise RuntimeError saying which of the two it is (cuda/api.h).
#include <pybind11/stl.h>

#include <memory>
#include <sstream>
#include <vector>

#include "cuda/api.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

// `with wick.cuda.stream(s):` - one StreamGuard per open block, as in Note [autocast in Python].
std::vector<std::unique_ptr<cuda::StreamGuard>>& stream_guards() {
  thread_local std::vector<std::unique_ptr<cuda::StreamGuard>> stack;
  return stack;
}

void bind_streams(py::module_& m) {
  py::class_<cuda::Stream>(m, "Stream", "A queue of work on one GPU (torch.cuda.Stream)")
      .def(py::init([](int device) { return cuda::Stream::create(device); }),
           py::arg("device") = -1)
      .def_property_readonly("device_index", &cuda::Stream::device)
      .def_property_readonly(
          "cuda_stream",
          [](const cuda::Stream& s) { return reinterpret_cast<uintptr_t>(s.handle()); })
      .def("query", &cuda::Stream::query)
      .def("synchronize", &cuda::Stream::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("__eq__", &cuda::Stream::operator==)
      .def("__hash__",
           [](const cuda::Stream& s) { return reinterpret_cast<uintptr_t>(s.handle()); })
      .def("__repr__", [](const cuda::Stream& s) {
        std::ostringstream text;
        text << "<wick.cuda.Stream device=cuda:" << s.device() << " cuda_stream=0x" << std::hex
             << reinterpret_cast<uintptr_t>(s.handle()) << ">";
        return text.str();
      });
  m.def("current_stream", &cuda::Stream::current, py::arg("device") = -1);
  m.def("default_stream", &cuda::Stream::default_stream, py::arg("device") = -1);
  m.def("enter_stream", [](const cuda::Stream& s) {
    stream_guards().push_back(std::make_unique<cuda::StreamGuard>(s));
  });
  m.def("exit_stream", []() {
    if (!stream_guards().empty()) stream_guards().pop_back();
  });

  py::class_<cuda::CUDAGraph>(m, "CUDAGraph",
                              "Work captured from a stream, replayed with one launch "
                              "(torch.cuda.CUDAGraph)")
      .def(py::init<>())
      .def("capture_begin", &cuda::CUDAGraph::capture_begin)
      .def("capture_end", &cuda::CUDAGraph::capture_end)
      .def("replay", &cuda::CUDAGraph::replay)
      .def("reset", &cuda::CUDAGraph::reset, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("captured", &cuda::CUDAGraph::captured)
      .def_property_readonly("num_nodes", &cuda::CUDAGraph::num_nodes)
      .def_property_readonly("pool_bytes", &cuda::CUDAGraph::pool_bytes);

  py::class_<cuda::Event>(m, "Event", "A marker in a stream's work (torch.cuda.Event)")
      .def(py::init<bool>(), py::arg("enable_timing") = false)
      .def(
          "record",
          [](cuda::Event& e, std::optional<cuda::Stream> stream) {
            stream ? e.record(*stream) : e.record();
          },
          py::arg("stream") = py::none())
      .def("wait", &cuda::Event::wait, py::arg("stream"))
      .def("query", &cuda::Event::query)
      .def("synchronize", &cuda::Event::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("elapsed_time", &cuda::Event::elapsed_ms, py::arg("end_event"),
           "milliseconds from this event to end_event");
}

void bind_memory(py::module_& m) {
  m.def("memory_allocated", &cuda::memory_allocated, py::arg("device") = -1);
  m.def("memory_reserved", &cuda::memory_reserved, py::arg("device") = -1);
  m.def("max_memory_allocated", &cuda::max_memory_allocated, py::arg("device") = -1);
  m.def("max_memory_reserved", &cuda::max_memory_reserved, py::arg("device") = -1);
  m.def("memory_stats", &cuda::memory_stats, py::arg("device") = -1);
  m.def("memory_summary", &cuda::memory_summary, py::arg("device") = -1,
        py::arg("abbreviated") = false);
  m.def("reset_peak_memory_stats", &cuda::reset_peak_memory_stats, py::arg("device") = -1);
  m.def("reset_accumulated_memory_stats", &cuda::reset_accumulated_memory_stats,
        py::arg("device") = -1);
  m.def("empty_cache", &cuda::empty_cache);
  m.def(
      "set_per_process_memory_fraction",
      [](double fraction, int device) {
        check_value(fraction > 0 && fraction <= 1, "set_per_process_memory_fraction",
                    "fraction must be in (0, 1]; got ", fraction);
        cuda::set_per_process_memory_fraction(fraction, device);
      },
      py::arg("fraction"), py::arg("device") = -1);
  m.def("record_stream", &cuda::record_stream, py::arg("tensor"), py::arg("stream"));
  m.def("start_memory_trace", &cuda::start_memory_trace, py::arg("path"));
  m.def("stop_memory_trace", &cuda::stop_memory_trace);
  m.def("pin_memory", &cuda::pin_memory, py::arg("tensor"));
  m.def("is_pinned", &cuda::is_pinned, py::arg("tensor"));
}

}  // namespace

void init_cuda(py::module_& m) {
  py::module_ c = m.def_submodule("_cuda", "the CUDA runtime, allocator and math modes");
  c.def("is_built", &cuda::is_built);
  c.def("is_available", &cuda::is_available);
  c.def("device_count", &cuda::device_count);
  c.def("current_device", &cuda::current_device);
  c.def("set_device", &cuda::set_device, py::arg("device"));
  c.def("get_device_name", &cuda::get_device_name, py::arg("device") = -1);
  c.def(
      "get_device_properties",
      [](int device) {
        cuda::DeviceProperties p = cuda::get_device_properties(device);
        py::dict d;
        d["name"] = p.name, d["major"] = p.major, d["minor"] = p.minor;
        d["total_memory"] = p.total_memory, d["multi_processor_count"] = p.multiprocessor_count;
        return d;
      },
      py::arg("device") = -1);
  c.def("synchronize", &cuda::synchronize, py::arg("device") = -1,
        py::call_guard<py::gil_scoped_release>());
  c.def("runtime_version", &cuda::runtime_version);
  c.def("driver_version", &cuda::driver_version);
  c.def("cudnn_version", &cuda::cudnn_version);
  c.def("set_allow_tf32", &cuda::set_allow_tf32, py::arg("allow"));
  c.def("allow_tf32", &cuda::allow_tf32);
  c.def("set_cudnn_allow_tf32", &cuda::set_cudnn_allow_tf32, py::arg("allow"));
  c.def("cudnn_allow_tf32", &cuda::cudnn_allow_tf32);
  c.def("set_cudnn_benchmark", &cuda::set_cudnn_benchmark, py::arg("benchmark"));
  c.def("cudnn_benchmark", &cuda::cudnn_benchmark);
  c.def("set_cudnn_enabled", &cuda::set_cudnn_enabled, py::arg("enabled"));
  c.def("cudnn_enabled", &cuda::cudnn_enabled);
  bind_streams(c);
  bind_memory(c);
}

}  // namespace wick::python
