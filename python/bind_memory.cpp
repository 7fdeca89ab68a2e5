// wick._C._memory: the allocator policies of core/memory/ on a simulated device, traces and
// their replay, and memory history and snapshots of a device's allocator (sim, cuda), for
// wick.memory. A lab studies PyTorch's caching allocator, TensorFlow's BFC and the baseline
// without a GPU: addresses are plain ints, and a Virtual device hands out addresses only.
#include <pybind11/stl.h>

#include <memory>

#include "core/allocator.h"
#include "core/memory/caching_allocator.h"
#include "core/memory/device_allocator.h"
#include "core/memory/history.h"
#include "core/memory/host_cache.h"
#include "core/memory/simulated_device.h"
#include "core/memory/trace.h"
#include "cuda/api.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

using namespace wick::memory;

// Sizes arrive as Python ints: a negative one is refused by name rather than wrapped to 2**64.
size_t checked_size(const char* op, const char* what, int64_t value) {
  check_value(value >= 0, op, what, " must be non-negative; got ", value);
  return static_cast<size_t>(value);
}

// A policy and the device it runs on, which must outlive it.
struct PolicyHandle {
  std::shared_ptr<SimulatedDevice> device;
  std::unique_ptr<AllocatorPolicy> policy;
};

// The DeviceAllocator behind a device's tensors ("sim"), for history and traces.
DeviceAllocator& device_allocator(const std::string& device, const char* op) {
  Device d = to_device(py::str(device));
  auto* allocator = dynamic_cast<DeviceAllocator*>(get_allocator(d.type));
  check_value(allocator != nullptr, op, "device '", device,
              "' has no device allocator (\"sim\" has one; \"cuda\" is handled by wick.cuda)");
  return *allocator;
}

py::dict result_dict(const ReplayResult& r) {
  py::dict d;
  d["policy"] = r.policy;
  d["device_mallocs"] = r.device_mallocs;
  d["device_frees"] = r.device_frees;
  d["peak_reserved"] = r.peak_reserved;
  d["peak_allocated"] = r.peak_allocated;
  d["peak_requested"] = r.peak_requested;
  d["fragmentation"] = r.fragmentation;
  d["seconds"] = r.seconds;
  d["out_of_memory"] = r.out_of_memory;
  d["error"] = r.error;
  return d;
}

ReplayResult result_from(const py::dict& d) {
  ReplayResult r;
  r.policy = d["policy"].cast<std::string>();
  r.device_mallocs = d["device_mallocs"].cast<int64_t>();
  r.device_frees = d["device_frees"].cast<int64_t>();
  r.peak_reserved = d["peak_reserved"].cast<int64_t>();
  r.peak_allocated = d["peak_allocated"].cast<int64_t>();
  r.peak_requested = d["peak_requested"].cast<int64_t>();
  r.fragmentation = d["fragmentation"].cast<double>();
  r.seconds = d["seconds"].cast<double>();
  r.out_of_memory = d["out_of_memory"].cast<bool>();
  return r;
}

// Events as tuples (kind, ptr, size, stream, t_us): Python builds and reads them cheaply.
using EventTuple = std::tuple<std::string, uint64_t, int64_t, uint64_t, double>;

std::vector<TraceEvent> events_from(const std::vector<EventTuple>& tuples) {
  std::vector<TraceEvent> events;
  events.reserve(tuples.size());
  for (size_t i = 0; i < tuples.size(); ++i) {
    const auto& [kind, ptr, size, stream, t] = tuples[i];
    check_value(kind == "alloc" || kind == "free", "replay", "event ", i,
                ": kind must be 'alloc' or 'free'; got '", kind, "'");
    check_value(size >= 0, "replay", "event ", i, ": size must be non-negative; got ", size);
    events.push_back({kind == "alloc" ? TraceEvent::Alloc : TraceEvent::Free, ptr,
                      static_cast<uint64_t>(size), stream, t});
  }
  return events;
}

void bind_device(py::module_& m) {
  py::class_<SimulatedDevice, std::shared_ptr<SimulatedDevice>>(
      m, "SimulatedDevice", "A device with a capacity, streams and events, in host memory")
      .def(py::init([](int64_t capacity, const std::string& backing) {
             size_t bytes = checked_size("SimulatedDevice", "capacity", capacity);
             check_value(backing == "virtual" || backing == "host", "SimulatedDevice",
                         "backing must be 'virtual' or 'host'; got '", backing, "'");
             return std::make_shared<SimulatedDevice>(
                 bytes, backing == "host" ? SimulatedDevice::Backing::Host
                                          : SimulatedDevice::Backing::Virtual);
           }),
           py::arg("capacity"), py::arg("backing") = "virtual")
      .def("create_stream", &SimulatedDevice::create_stream)
      .def("enqueue_work", &SimulatedDevice::enqueue_work, py::arg("stream"))
      .def("finish_work", &SimulatedDevice::finish_work, py::arg("stream"))
      .def("finish_all", &SimulatedDevice::finish_all)
      .def_property_readonly("total_memory", &SimulatedDevice::total_memory)
      .def("free_memory", &SimulatedDevice::free_memory)
      .def_property_readonly("num_mallocs", &SimulatedDevice::num_mallocs)
      .def_property_readonly("num_frees", &SimulatedDevice::num_frees)
      .def_property_readonly("bytes_in_use", &SimulatedDevice::bytes_in_use);
}

void bind_policy(py::module_& m) {
  py::class_<PolicyHandle>(m, "Allocator", "An allocator policy over a SimulatedDevice")
      .def(py::init([](const std::string& policy, std::shared_ptr<SimulatedDevice> device,
                       const std::string& conf) {
             check_value(device != nullptr, "Allocator", "expected a SimulatedDevice; got None");
             AllocatorConfig config = AllocatorConfig::parse(conf);
             auto handle = std::make_unique<PolicyHandle>();
             handle->policy = make_policy(policy, device.get(), config);
             handle->device = std::move(device);
             return handle;
           }),
           py::arg("policy"), py::arg("device"), py::arg("conf") = "")
      .def_property_readonly("policy", [](const PolicyHandle& h) { return h.policy->name(); })
      .def(
          "malloc",
          [](PolicyHandle& h, int64_t nbytes, StreamId stream) {
            size_t n = checked_size("Allocator.malloc", "size", nbytes);
            return reinterpret_cast<uintptr_t>(h.policy->malloc(n, stream));
          },
          py::arg("size"), py::arg("stream") = 0)
      .def(
          "free",
          [](PolicyHandle& h, uintptr_t address) {
            h.policy->free(reinterpret_cast<void*>(address));
          },
          py::arg("address"))
      .def(
          "record_stream",
          [](PolicyHandle& h, uintptr_t address, StreamId stream) {
            h.policy->record_stream(reinterpret_cast<void*>(address), stream);
          },
          py::arg("address"), py::arg("stream"))
      .def("empty_cache", [](PolicyHandle& h) { h.policy->empty_cache(); })
      .def("memory_stats", [](const PolicyHandle& h) { return stats_to_map(h.policy->stats()); })
      .def("memory_summary",
           [](const PolicyHandle& h) {
             return memory_summary(h.policy->stats(), std::string(h.policy->name()));
           })
      .def("reset_peak_stats", [](PolicyHandle& h) { h.policy->reset_peak_stats(); })
      .def("largest_free_block",
           [](const PolicyHandle& h) { return h.policy->largest_free_block(); })
      .def(
          "set_memory_fraction",
          [](PolicyHandle& h, double fraction) {
            auto* caching = dynamic_cast<CachingAllocator*>(h.policy.get());
            check_value(caching != nullptr, "Allocator.set_memory_fraction",
                        "needs the caching policy; this one is '", h.policy->name(), "'");
            caching->set_memory_fraction(fraction);
          },
          py::arg("fraction"))
      .def(
          "_record_memory_history",
          [](PolicyHandle& h, bool enabled, int64_t max_entries) {
            size_t n = checked_size("_record_memory_history", "max_entries", max_entries);
            h.policy->set_history(enabled ? std::make_shared<MemoryHistory>(n) : nullptr);
          },
          py::arg("enabled"), py::arg("max_entries") = MemoryHistory::kDefaultMaxEntries)
      .def("_snapshot_json",
           [](const PolicyHandle& h) { return snapshot_to_json(take_snapshot(*h.policy)); });
}

}  // namespace

void init_memory(py::module_& root) {
  py::module_ m = root.def_submodule("_memory", "allocator policies, traces, memory history");
  bind_device(m);
  bind_policy(m);
  m.def("policies", [] {
    return std::vector<std::string>{"caching", "no_caching", "bfc", "bfc_growth"};
  });
  m.def(
      "round_size",
      [](int64_t n) { return CachingAllocator::round_size(checked_size("round_size", "size", n)); },
      py::arg("size"));
  m.def(
      "segment_size",
      [](int64_t n) {
        return CachingAllocator::segment_size(
            CachingAllocator::round_size(checked_size("segment_size", "size", n)));
      },
      py::arg("size"));

  // ---- a device's allocator: history and traces ----
  m.def(
      "_record_memory_history",
      [](const std::string& device, bool enabled, int64_t max_entries) {
        size_t n = checked_size("_record_memory_history", "max_entries", max_entries);
        if (to_device(py::str(device)).type == kCUDA) {
          cuda::record_memory_history(enabled, n);
          return;
        }
        device_allocator(device, "_record_memory_history")
            .policy()
            .set_history(enabled ? std::make_shared<MemoryHistory>(n) : nullptr);
      },
      py::arg("device"), py::arg("enabled"), py::arg("max_entries"));
  m.def(
      "_snapshot_json",
      [](const std::string& device) {
        if (to_device(py::str(device)).type == kCUDA) return cuda::memory_snapshot_json();
        return snapshot_to_json(take_snapshot(device_allocator(device, "_snapshot").policy()));
      },
      py::arg("device"));
  m.def(
      "start_trace",
      [](const std::string& device, const std::string& path) {
        device_allocator(device, "start_trace").start_trace(path);
      },
      py::arg("device"), py::arg("path"));
  m.def(
      "stop_trace",
      [](const std::string& device) { device_allocator(device, "stop_trace").stop_trace(); },
      py::arg("device"));
  m.def("_set_module_path", &set_module_path, py::arg("path"));

  // ---- traces and replay ----
  m.def(
      "read_trace",
      [](const std::string& path) {
        std::vector<EventTuple> out;
        for (const TraceEvent& e : read_trace(path)) {
          out.emplace_back(e.kind == TraceEvent::Alloc ? "alloc" : "free", e.ptr,
                           static_cast<int64_t>(e.size), e.stream, e.time_us);
        }
        return out;
      },
      py::arg("path"));
  m.def(
      "replay",
      [](const std::vector<EventTuple>& events, const std::string& policy, int64_t capacity,
         const std::string& conf) {
        size_t bytes = checked_size("replay", "capacity", capacity);
        std::vector<TraceEvent> parsed = events_from(events);
        AllocatorConfig config = AllocatorConfig::parse(conf);
        SimulatedDevice probe(1 << 20, SimulatedDevice::Backing::Virtual);
        make_policy(policy, &probe, config);  // an unknown name fails before the replay
        ReplayResult result;
        {
          py::gil_scoped_release release;
          result = replay(parsed, policy, bytes, config);
        }
        return result_dict(result);
      },
      py::arg("events"), py::arg("policy"), py::arg("capacity"), py::arg("conf") = "");
  m.def(
      "format_replay_table",
      [](const std::vector<py::dict>& results) {
        std::vector<ReplayResult> rs;
        for (const py::dict& d : results) rs.push_back(result_from(d));
        return format_replay_table(rs);
      },
      py::arg("results"));
  // The CPU allocator's counters: what sharded training's memory accounting reads.
  m.def("cpu_stats", [] {
    AllocatorStats s = cpu_allocator()->stats();
    py::dict d;
    d["allocated_bytes"] = s.allocated_bytes;
    d["peak_allocated_bytes"] = s.peak_allocated_bytes;
    d["allocations"] = s.num_allocs;
    d["frees"] = s.num_frees;
    return d;
  });
  m.def("cpu_reset_peak", [] { cpu_allocator()->reset_peak(); });
  // Note [host block cache] in core/memory/host_cache.h.
  m.def("host_cache_stats", [] {
    memory::HostCacheStats s = memory::host_cache_stats();
    py::dict d;
    d["cached_bytes"] = s.cached_bytes;
    d["limit_bytes"] = s.limit_bytes;
    d["hits"] = s.hits;
    d["misses"] = s.misses;
    d["given_back"] = s.given_back;
    return d;
  });
  m.def("empty_host_cache", [] { memory::empty_host_cache(); });
  m.def(
      "set_host_cache_limit",
      [](int64_t bytes) {
        check_value(bytes >= 0, "set_host_cache_limit", "the limit must be >= 0 bytes; got ",
                    bytes);
        memory::set_host_cache_limit(static_cast<size_t>(bytes));
      },
      py::arg("bytes"));
}

}  // namespace wick::python
