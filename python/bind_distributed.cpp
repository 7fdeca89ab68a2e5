// wick._C._distributed: process groups, collectives and the DDP Reducer (distributed/) for
// wick.distributed and wick.nn.parallel.DistributedDataParallel. The Python side keeps
// PyTorch's names and argument conventions; this file exposes the C++ pieces as they are.
//
// Waits (Work.wait, the blocking collectives, barrier) release the GIL: they may take as long as
// the slowest rank, and nothing in them calls back into Python (Note [GIL rules]). The Reducer's
// hooks run inside backward, which the autograd binding already runs without the GIL; they are
// C++ only.
#include <pybind11/stl.h>

#include "distributed/backends.h"
#include "distributed/distributed.h"
#include "distributed/ring_all_reduce.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

namespace dist = wick::distributed;

std::shared_ptr<dist::Work> maybe_wait(std::shared_ptr<dist::Work> work, bool async_op) {
  if (!async_op) {
    py::gil_scoped_release release;
    work->wait();
  }
  return work;
}

std::vector<Tensor> tensors_of(const py::handle& list, const char* what) {
  std::vector<Tensor> out;
  for (py::handle h : list) out.push_back(to_tensor(h, what));
  return out;
}

}  // namespace

void init_distributed(py::module_& m) {
  py::module_ d = m.def_submodule("_distributed", "process groups, collectives and DDP's Reducer");

  static auto* timeout_error =
      new py::exception<dist::CommTimeoutError>(d, "DistBackendError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const dist::CommTimeoutError& e) {
      PyErr_SetString(timeout_error->ptr(), e.what());
    }
  });

  py::enum_<dist::ReduceOp>(d, "ReduceOp")
      .value("SUM", dist::ReduceOp::Sum)
      .value("AVG", dist::ReduceOp::Avg)
      .value("MAX", dist::ReduceOp::Max)
      .value("MIN", dist::ReduceOp::Min);

  py::class_<dist::Work, std::shared_ptr<dist::Work>>(d, "Work")
      .def(
          "wait",
          [](dist::Work& w, std::optional<double> timeout) {
            py::gil_scoped_release release;
            if (timeout) {
              w.wait(dist::Seconds(*timeout));
            } else {
              w.wait();
            }
            return true;
          },
          py::arg("timeout") = py::none())
      .def("is_completed", &dist::Work::is_completed)
      .def_property_readonly("op", &dist::Work::op);

  py::class_<dist::ProcessGroup, std::shared_ptr<dist::ProcessGroup>>(d, "ProcessGroup")
      .def("rank", &dist::ProcessGroup::rank)
      .def("size", &dist::ProcessGroup::size)
      .def("local_rank", &dist::ProcessGroup::local_rank)
      .def("backend", &dist::ProcessGroup::backend)
      .def_property_readonly("device", &dist::ProcessGroup::device)
      .def_property(
          "all_reduce_algorithm",
          [](const dist::ProcessGroup& g) {
            return dist::all_reduce_algorithm_name(g.all_reduce_algorithm());
          },
          [](dist::ProcessGroup& g, const std::string& name) {
            g.set_all_reduce_algorithm(
                dist::parse_all_reduce_algorithm(name, "all_reduce_algorithm"));
          });

  d.def(
      "init_process_group",
      [](const std::string& backend, double timeout, int world_size, int device,
         const std::string& algorithm) {
        dist::InitOptions options;
        options.timeout = dist::Seconds(timeout);
        options.world_size = world_size;
        options.device = device;
        options.all_reduce_algorithm =
            dist::parse_all_reduce_algorithm(algorithm, "init_process_group");
        dist::init_process_group(backend, options);
      },
      py::arg("backend"), py::arg("timeout") = 30.0, py::arg("world_size") = -1,
      py::arg("device") = -1, py::arg("all_reduce_algorithm") = "native");
  d.def("destroy_process_group", &dist::destroy_process_group);
  d.def("is_initialized", &dist::is_initialized);
  d.def("is_launched_by_mpi", &dist::is_launched_by_mpi);
  d.def("mpi_built", &dist::detail::mpi_built);
  d.def("nccl_built", &dist::detail::nccl_built);
  d.def("get_rank", &dist::get_rank);
  d.def("get_world_size", &dist::get_world_size);
  d.def("default_group", &dist::default_group_ptr);

  d.def(
      "all_reduce",
      [](const py::handle& t, dist::ReduceOp op, bool async_op) {
        return maybe_wait(dist::default_group().all_reduce(to_tensor(t, "tensor"), op), async_op);
      },
      py::arg("tensor"), py::arg("op") = dist::ReduceOp::Sum, py::arg("async_op") = false);
  d.def(
      "ring_all_reduce",
      [](const py::handle& t, dist::ReduceOp op, bool async_op) {
        return maybe_wait(dist::ring_all_reduce(dist::default_group(), to_tensor(t, "tensor"), op),
                          async_op);
      },
      py::arg("tensor"), py::arg("op") = dist::ReduceOp::Sum, py::arg("async_op") = false);
  d.def(
      "send_recv",
      [](const py::handle& send, int dst, const py::handle& recv, int src, int tag, bool async_op) {
        return maybe_wait(dist::default_group().send_recv(to_tensor(send, "send"), dst,
                                                          to_tensor(recv, "recv"), src, tag),
                          async_op);
      },
      py::arg("send"), py::arg("dst"), py::arg("recv"), py::arg("src"), py::arg("tag") = 0,
      py::arg("async_op") = false);
  d.def(
      "broadcast",
      [](const py::handle& t, int src, bool async_op) {
        return maybe_wait(dist::default_group().broadcast(to_tensor(t, "tensor"), src), async_op);
      },
      py::arg("tensor"), py::arg("src") = 0, py::arg("async_op") = false);
  d.def(
      "all_gather_into_tensor",
      [](const py::handle& out, const py::handle& in, bool async_op) {
        return maybe_wait(
            dist::default_group().all_gather(to_tensor(out, "output"), to_tensor(in, "input")),
            async_op);
      },
      py::arg("output_tensor"), py::arg("input_tensor"), py::arg("async_op") = false);
  d.def(
      "reduce_scatter_tensor",
      [](const py::handle& out, const py::handle& in, dist::ReduceOp op, bool async_op) {
        return maybe_wait(dist::default_group().reduce_scatter(to_tensor(out, "output"),
                                                               to_tensor(in, "input"), op),
                          async_op);
      },
      py::arg("output"), py::arg("input"), py::arg("op") = dist::ReduceOp::Sum,
      py::arg("async_op") = false);
  d.def(
      "barrier",
      [](bool async_op) { return maybe_wait(dist::default_group().barrier(), async_op); },
      py::arg("async_op") = false);
  d.def(
      "broadcast_coalesced",
      [](const py::list& tensors, int src) {
        std::vector<Tensor> ts = tensors_of(tensors, "tensors");
        py::gil_scoped_release release;
        dist::broadcast_coalesced(dist::default_group(), ts, src);
      },
      py::arg("tensors"), py::arg("src") = 0);
  d.def(
      "verify_same_shapes",
      [](const py::list& tensors, const std::string& what) {
        std::vector<Tensor> ts = tensors_of(tensors, "tensors");
        py::gil_scoped_release release;
        dist::verify_same_shapes(dist::default_group(), ts, what);
      },
      py::arg("tensors"), py::arg("what") = "parameters and buffers");

  // The C++ sampler (data/distributed_sampler.h), for a Python
  // wick.utils.data.distributed.DistributedSampler: iterating yields the current epoch's shard.
  py::class_<data::DistributedSampler>(d, "DistributedSampler")
      .def(py::init<int64_t, int64_t, int64_t, bool, uint64_t, bool>(), py::arg("dataset_size"),
           py::arg("num_replicas"), py::arg("rank"), py::arg("shuffle") = true, py::arg("seed") = 0,
           py::arg("drop_last") = false)
      .def("__len__", &data::DistributedSampler::size)
      .def("indices", &data::DistributedSampler::indices, py::arg("epoch"))
      .def("set_epoch", &data::DistributedSampler::set_epoch, py::arg("epoch"))
      .def("__iter__",
           [](const data::DistributedSampler& s) {
             return py::iter(py::cast(s.indices(0)));  // set_epoch's epoch (Note [set_epoch])
           })
      .def_property_readonly("total_size", &data::DistributedSampler::total_size);

  py::class_<dist::ReducerStats>(d, "ReducerStats")
      .def_readonly("iterations", &dist::ReducerStats::iterations)
      .def_readonly("buckets_launched", &dist::ReducerStats::buckets_launched)
      .def_readonly("bytes_reduced", &dist::ReducerStats::bytes_reduced)
      .def_readonly("comm_wait_seconds", &dist::ReducerStats::comm_wait_seconds)
      .def_readonly("local_backwards", &dist::ReducerStats::local_backwards)
      .def("__repr__", &dist::ReducerStats::str);

  py::class_<dist::Reducer, std::shared_ptr<dist::Reducer>>(d, "Reducer")
      .def(
          py::init([](const py::list& params, std::vector<std::string> names, double bucket_cap_mb,
                      double first_bucket_cap_mb, bool find_unused_parameters, bool single_bucket) {
            dist::ReducerOptions options;
            options.bucket_cap_mb = bucket_cap_mb;
            options.first_bucket_cap_mb = first_bucket_cap_mb;
            options.find_unused_parameters = find_unused_parameters;
            options.single_bucket = single_bucket;
            return dist::Reducer::create(tensors_of(params, "params"), std::move(names),
                                         dist::default_group_ptr(), options);
          }),
          py::arg("params"), py::arg("names") = std::vector<std::string>{},
          py::arg("bucket_cap_mb") = 25.0, py::arg("first_bucket_cap_mb") = 1.0,
          py::arg("find_unused_parameters") = false, py::arg("single_bucket") = false)
      .def(
          "prepare_for_backward",
          [](dist::Reducer& r, const py::list& outputs, bool sync) {
            std::vector<Tensor> ts = tensors_of(outputs, "outputs");
            py::gil_scoped_release release;  // may wait for the previous iteration's buckets
            r.prepare_for_backward(ts, sync);
          },
          py::arg("outputs"), py::arg("sync") = true)
      .def("bucket_indices", &dist::Reducer::bucket_indices)
      .def("bucket_bytes", &dist::Reducer::bucket_bytes)
      .def("launch_order", &dist::Reducer::launch_order)
      .def("ready_order", &dist::Reducer::ready_order)
      .def("explain", &dist::Reducer::explain)
      .def_property_readonly("stats", &dist::Reducer::stats)
      .def("reset_stats", &dist::Reducer::reset_stats);
}

}  // namespace wick::python
