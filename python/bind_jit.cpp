// wick._C._jit: static graphs (jit/) for wick.jit and wick.compile (python/wick/jit/).
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <map>

#include "core/allocator.h"
#include "jit/compile.h"
#include "jit/executor.h"
#include "jit/fused_cuda.h"
#include "jit/passes/passes.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

using jit::Graph;
using jit::NamedTensors;

py::dict plan_dict(const jit::MemoryPlan& p) {
  py::dict d, offsets, lifetimes;
  for (size_t id = 0; id < p.offset.size(); ++id) {
    if (p.offset[id] < 0) continue;
    offsets[py::int_(id)] = p.offset[id];
    lifetimes[py::int_(id)] = py::make_tuple(p.first[id], p.last[id]);
  }
  d["offsets"] = offsets;      // planned base value id -> byte offset in the arena
  d["lifetimes"] = lifetimes;  // planned base value id -> (first node, last node)
  d["arena_bytes"] = p.arena_bytes;
  d["total_bytes"] = p.total_bytes;
  d["live_peak_bytes"] = p.live_peak_bytes;
  d["output_bytes"] = p.output_bytes;
  d["num_buffers"] = p.num_buffers;
  return d;
}

jit::CompileOptions options_from(const py::dict& d) {
  jit::CompileOptions o;
  for (auto item : d) {
    std::string key = item.first.cast<std::string>();
    if (key == "warmup") {
      o.warmup = item.second.cast<int>();
      check_value(o.warmup >= 0, "wick.compile", "warmup must be >= 0; got ", o.warmup);
      continue;
    }
    if (key == "cache_size_limit") {
      o.cache_size_limit = item.second.cast<int>();
      check_value(o.cache_size_limit >= 1, "wick.compile", "cache_size_limit must be >= 1; got ",
                  o.cache_size_limit);
      continue;
    }
    bool value = item.second.cast<bool>();
    if (key == "dead_code")
      o.dead_code = value;
    else if (key == "common_subexpressions")
      o.common_subexpressions = value;
    else if (key == "constant_folding")
      o.constant_folding = value;
    else if (key == "freeze")
      o.freeze = value;
    else if (key == "fold_conv_bn")
      o.fold_conv_bn = value;
    else if (key == "fuse")
      o.fuse = value;
    else if (key == "conv_epilogue")
      o.conv_epilogue = value;
    else if (key == "plan_memory")
      o.plan_memory = value;
    else if (key == "prepack_weights")
      o.prepack_weights = value;
    else if (key == "winograd")
      o.winograd = value;
    else if (key == "cuda_graph")
      o.cuda_graph = value;
    else if (key == "fullgraph")
      o.fullgraph = value;
    else
      check_value(false, "wick.compile", "unknown option '", key, "'");
  }
  return o;
}

py::dict attrs_dict(const std::vector<DispatchAttr>& attrs) {
  py::dict d;
  for (const DispatchAttr& a : attrs) {
    switch (a.kind) {
      case DispatchAttr::Kind::Int:
        d[a.name.c_str()] = a.i;
        break;
      case DispatchAttr::Kind::Float:
        d[a.name.c_str()] = a.f;
        break;
      case DispatchAttr::Kind::Bool:
        d[a.name.c_str()] = a.i != 0;
        break;
      case DispatchAttr::Kind::Ints:
        d[a.name.c_str()] = a.ints;
        break;
      case DispatchAttr::Kind::Scalar:
        if (a.scalar.is_floating())
          d[a.name.c_str()] = a.scalar.to_double();
        else
          d[a.name.c_str()] = a.scalar.to_int();
        break;
    }
  }
  return d;
}

// Counts dispatcher calls between __enter__ and __exit__ (on this thread).
struct DispatchCounting {
  std::unique_ptr<jit::DispatchCounter> counter;
  int64_t count = 0;
  std::map<std::string, int64_t> by_op;
  void stop() {
    if (!counter) return;
    count = counter->count();
    by_op.clear();
    for (int k = 0; k < kNumOps; ++k) {
      int64_t n = counter->by_op()[static_cast<size_t>(k)];
      if (n > 0) by_op[op_name(static_cast<OpKey>(k))] = n;
    }
    counter.reset();
  }
};

}  // namespace

void init_jit(py::module_& root) {
  py::module_ m = root.def_submodule("_jit", "static graphs: trace, passes, executor (jit/)");

  py::class_<Graph, std::shared_ptr<Graph>>(m, "Graph")
      .def("__str__", &Graph::str)
      .def("dot", &Graph::dot, py::arg("title") = "graph")
      .def("copy", [](const Graph& g) { return std::make_shared<Graph>(g); })
      .def_readonly("host_reads", &Graph::host_reads)  // Note [host reads]
      // The CUDA C++ NVRTC compiles for each fused node on a GPU, whatever the graph's device
      // (Note [fused chains compiled at run time]).
      .def("cuda_sources",
           [](const Graph& g) {
             std::vector<std::string> out;
             for (const jit::Node& n : g.nodes) {
               if (n.kind == jit::NodeKind::Fused) out.push_back(jit::fused_cuda_source(n, g));
             }
             return out;
           })
      .def("check", &Graph::check)
      .def_property_readonly("num_kernels", &Graph::num_kernels)
      .def_property_readonly("inputs", [](const Graph& g) { return g.inputs; })
      .def_property_readonly("outputs", [](const Graph& g) { return g.outputs; })
      // The structure, read-only, for tools and for lab 18's planner in Python.
      .def_property_readonly(
          "values",
          [](const Graph& g) {
            static const char* kinds[] = {"input", "param", "constant", "internal"};
            py::list out;
            for (const jit::Value& v : g.values) {
              py::dict d;
              d["id"] = v.id;
              d["kind"] = kinds[static_cast<int>(v.kind)];
              d["name"] = v.name;
              d["shape"] = v.shape.vec();
              d["dtype"] = dtype_name(v.dtype);
              d["nbytes"] = v.nbytes();
              d["base"] = v.base;
              d["strides"] = v.strides.vec();
              d["offset"] = v.offset;
              d["storage_numel"] = v.storage_numel;
              d["producer"] = v.producer;
              d["input_index"] = v.input_index;
              d["constant"] =
                  v.kind == jit::ValueKind::Constant ? py::cast(v.constant) : py::none();
              out.append(d);
            }
            return out;
          })
      .def_property_readonly("node_info",
                             [](const Graph& g) {
                               static const char* kinds[] = {"kernel", "view", "fused"};
                               static const char* roles[] = {"read", "write", "update"};
                               py::list out;
                               for (const jit::Node& n : g.nodes) {
                                 py::dict d;
                                 d["name"] = n.name();
                                 d["kind"] = kinds[static_cast<int>(n.kind)];
                                 d["params"] = n.params;
                                 py::list r;
                                 for (size_t k = 0; k < n.params.size(); ++k) {
                                   r.append(n.kind == jit::NodeKind::View
                                                ? "read"
                                                : roles[static_cast<int>(n.roles[k])]);
                                 }
                                 d["roles"] = r;
                                 d["outputs"] = n.outputs;
                                 // For exporters: the op-table row, its typed attributes and a
                                 // view's layout (offset relative to its source's).
                                 d["op"] = n.kind == jit::NodeKind::View ? "view" : op_name(n.op);
                                 d["attrs"] = attrs_dict(n.attrs);
                                 d["view_shape"] = n.view_shape.vec();
                                 d["view_strides"] = n.view_strides.vec();
                                 d["view_offset"] = n.view_offset;
                                 out.append(d);
                               }
                               return out;
                             })
      .def_property_readonly("nodes", [](const Graph& g) {
        std::vector<std::string> names;
        for (const jit::Node& n : g.nodes) names.push_back(n.name());
        return names;
      });

  m.def(
      "trace",
      [](const py::function& fn, const std::vector<Tensor>& inputs, const NamedTensors& params) {
        jit::TracedFunction call = [&fn](const std::vector<Tensor>& xs) {
          return fn(xs).cast<std::vector<Tensor>>();
        };
        return jit::trace(call, inputs, params);
      },
      py::arg("fn"), py::arg("example_inputs"), py::arg("params"));
  m.def("eliminate_dead_code", &jit::eliminate_dead_code, py::arg("graph"));
  m.def("cuda_fusion_available", &jit::cuda_fusion_available);
  m.def(
      "nvrtc_compile",
      [](const std::string& source, const std::string& arch) {
        return py::bytes(jit::nvrtc_compile(source, arch));
      },
      py::arg("source"), py::arg("arch") = "compute_90");
  m.def("functionalize", &jit::functionalize, py::arg("graph"));
  m.def("eliminate_common_subexpressions", &jit::eliminate_common_subexpressions, py::arg("graph"));
  m.def("freeze_parameters", &jit::freeze_parameters, py::arg("graph"), py::arg("params"));
  m.def("fold_constants", &jit::fold_constants, py::arg("graph"));
  m.def("fold_conv_batchnorm", &jit::fold_conv_batchnorm, py::arg("graph"));
  m.def("fuse_elementwise", &jit::fuse_elementwise, py::arg("graph"));
  m.def("fuse_conv_epilogue", &jit::fuse_conv_epilogue, py::arg("graph"));
  m.def(
      "plan_memory", [](const Graph& g) { return plan_dict(jit::plan_memory(g)); },
      py::arg("graph"));
  m.def(
      "optimize",
      [](Graph& g, const NamedTensors& params, const py::dict& options) {
        std::string log;
        jit::optimize(g, params, options_from(options), &log);
        return log;
      },
      py::arg("graph"), py::arg("params"), py::arg("options"));

  py::class_<jit::Executor>(m, "Executor")
      .def(py::init([](std::shared_ptr<Graph> g, const NamedTensors& params, bool plan) {
             return std::make_unique<jit::Executor>(g, params, jit::ExecutorOptions{plan});
           }),
           py::arg("graph"), py::arg("params"), py::arg("plan_memory") = true)
      .def("run", &jit::Executor::run, py::arg("inputs"))
      .def_property_readonly("kernels_per_run", &jit::Executor::kernels_per_run)
      .def_property_readonly("graph_launches", &jit::Executor::graph_launches)
      .def_property_readonly("cuda_graph", &jit::Executor::cuda_graph_status)
      .def_property_readonly("memory_plan",
                             [](const jit::Executor& e) { return plan_dict(e.memory_plan()); });

  py::class_<jit::CompiledFunction>(m, "CompiledFunction")
      .def(py::init([](const py::function& fn, const py::function& params, const py::dict& opts,
                       const py::object& state) {
             // The Python callables are held by the C++ object and called with the GIL held
             // (params and state on every call, fn while tracing or running eagerly).
             jit::TracedFunction call = [fn](const std::vector<Tensor>& xs) {
               return fn(xs).cast<std::vector<Tensor>>();
             };
             std::function<NamedTensors()> get = [params] { return params().cast<NamedTensors>(); };
             std::function<std::string()> guard;
             if (!state.is_none()) guard = [state] { return state().cast<std::string>(); };
             return std::make_unique<jit::CompiledFunction>(call, get, options_from(opts), guard);
           }),
           py::arg("fn"), py::arg("params"), py::arg("options"), py::arg("state") = py::none())
      .def("__call__", &jit::CompiledFunction::operator(), py::arg("inputs"))
      .def_property_readonly("traces", &jit::CompiledFunction::traces)
      .def_property_readonly("retraces", &jit::CompiledFunction::retraces)
      .def_property_readonly("graph_breaks", &jit::CompiledFunction::graph_breaks)
      .def_property_readonly("eager_calls", &jit::CompiledFunction::eager_calls)
      .def_property_readonly("log", &jit::CompiledFunction::log)
      .def_property_readonly(
          "graph",
          [](jit::CompiledFunction& f) { return std::make_shared<Graph>(f.executor().graph()); })
      .def_property_readonly(
          "kernels_per_run",
          [](jit::CompiledFunction& f) { return f.executor().kernels_per_run(); })
      .def_property_readonly(
          "memory_plan",
          [](jit::CompiledFunction& f) { return plan_dict(f.executor().memory_plan()); })
      .def_property_readonly("cuda_graph",  // Note [a replay as one CUDA Graph]
                             [](jit::CompiledFunction& f) {
                               const jit::Executor& e = f.executor();
                               py::dict d;
                               d["status"] = e.cuda_graph_status();
                               d["captured"] = e.cuda_graph_captured();
                               d["launches"] = e.graph_launches();
                               return d;
                             })
      .def_property_readonly("convolutions", [](jit::CompiledFunction& f) {
        py::dict d;  // how the convolutions run (Note [weights packed ahead of time])
        const jit::Executor& e = f.executor();
        d["prepacked"] = e.prepacked_weights();
        d["winograd"] = e.winograd_convolutions();
        d["direct"] = e.direct_convolutions();
        return d;
      });

  py::class_<DispatchCounting>(m, "DispatchCounter")
      .def(py::init<>())
      .def("__enter__",
           [](DispatchCounting& c) -> DispatchCounting& {
             c.counter = std::make_unique<jit::DispatchCounter>();
             return c;
           })
      .def("__exit__", [](DispatchCounting& c, const py::args&) { c.stop(); })
      .def_property_readonly("by_op", [](const DispatchCounting& c) { return c.by_op; })
      .def_property_readonly("count", [](const DispatchCounting& c) {
        return c.counter ? c.counter->count() : c.count;
      });

  // The host allocator's counters, for eager's dynamic peak against the planned one.
  m.def("host_memory", [] {
    AllocatorStats s = cpu_allocator()->stats();
    return py::make_tuple(s.allocated_bytes, s.peak_allocated_bytes);
  });
  m.def("reset_host_peak", [] { cpu_allocator()->reset_peak(); });
}

}  // namespace wick::python
