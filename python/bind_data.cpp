// wick._C._data: the C++ datasets (MNIST, CIFAR-10, TensorDataset, TFRecord images), transforms and
// DataLoader (data/), for wick.utils.data and wick.datasets. wick.utils.data.DataLoader runs this
// loader when the dataset is one of these and no Python collate function or sampler is involved;
// any Python dataset goes through the Python loader instead.
//
// The C++ workers never touch Python objects, so the loader waits for batches with the GIL
// released (Note [GIL rules]).
#include <pybind11/stl.h>

#include <mutex>

#include "data/data.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

using data::Dataset;

// A C++ transform as a Python object (wick.transforms builds these when all its steps are C++
// ones, so MNIST can run them on the loader's worker threads).
struct PyTransform {
  data::Transform fn;
};

py::tuple example_tuple(const data::Example& e) { return py::make_tuple(e.input, e.target); }

// One epoch of a C++ DataLoader as a Python iterator. Each iter() is an epoch of its own (Note
// [independent epochs]); one iterator shared by Python threads hands each batch to one of them:
// mutex_ serialises next() (taken with the GIL released, so no lock-order inversion with it).
class LoaderIterator {
 public:
  explicit LoaderIterator(data::DataLoader& loader) {
    py::gil_scoped_release release;
    it_ = loader.begin();
  }
  py::tuple next() {
    data::Batch batch;
    bool finished = true;  // this call's answer: done_ may change once mutex_ is released
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      if (!done_) {
        if (started_) ++it_;  // may rethrow a worker's exception; the next call goes on
        started_ = true;
        done_ = it_ == end_;
        if (!done_) batch = *it_, finished = false;
      }
    }
    if (finished) throw py::stop_iteration();
    return py::make_tuple(batch.input, batch.target);
  }

 private:
  std::mutex mutex_;
  data::DataLoader::Iterator it_, end_;
  bool started_ = false;
  bool done_ = false;
};

py::dict counters_dict(const data::LoaderCounters& c) {
  py::dict d;
  d["wait_seconds"] = c.wait_seconds;
  d["work_seconds"] = c.work_seconds;
  d["batches_produced"] = c.batches_produced;
  d["batches_delivered"] = c.batches_delivered;
  d["samples_produced"] = c.samples_produced;
  d["peak_queue_depth"] = c.peak_queue_depth;
  return d;
}

data::Transform transform_of(py::handle h) {
  if (h.is_none()) return {};
  return h.cast<const PyTransform&>().fn;
}

}  // namespace

void init_records(py::module_& data);  // bind_records.cpp

void init_data(py::module_& root) {
  py::module_ m = root.def_submodule("_data", "C++ datasets, transforms and DataLoader");

  py::class_<PyTransform>(m, "Transform")
      .def(
          "__call__",
          [](const PyTransform& t, const Tensor& x) {
            // Outside a loader there is no example seed: draw one from the default generator.
            uint64_t seed =
                static_cast<uint64_t>(randint(0, int64_t{1} << 62, Shape{}).item<int64_t>());
            Generator g(seed);
            return t.fn ? t.fn(x, g) : x;
          },
          py::arg("input"));
  m.def("Normalize", [](std::vector<double> mean, std::vector<double> std) {
    return PyTransform{data::Normalize(std::move(mean), std::move(std))};
  });
  m.def("Pad", [](int64_t padding) { return PyTransform{data::Pad(padding)}; });
  m.def("RandomCrop",
        [](int64_t size, int64_t padding) { return PyTransform{data::RandomCrop(size, padding)}; });
  m.def("RandomHorizontalFlip",
        [](double p) { return PyTransform{data::RandomHorizontalFlip(p)}; });
  m.def("Compose", [](const std::vector<PyTransform>& steps) {
    std::vector<data::Transform> fns;
    for (const PyTransform& s : steps) {
      if (s.fn) fns.push_back(s.fn);
    }
    return PyTransform{data::Compose(std::move(fns))};
  });

  py::class_<Dataset, std::shared_ptr<Dataset>>(m, "Dataset")
      .def("__len__", &Dataset::size)
      .def("__getitem__", [](const Dataset& d, int64_t i) {
        if (i < 0) i += d.size();
        return example_tuple(d.get(i));
      });
  m.def(
      "MNIST",
      [](const std::string& root, bool train, py::handle transform) -> std::shared_ptr<Dataset> {
        return std::make_shared<data::MNIST>(root, train, transform_of(transform));
      },
      py::arg("root"), py::arg("train"), py::arg("transform") = py::none());
  m.def(
      "CIFAR10",
      [](const std::string& root, bool train, py::handle transform) -> std::shared_ptr<Dataset> {
        return std::make_shared<data::CIFAR10>(root, train, transform_of(transform));
      },
      py::arg("root"), py::arg("train"), py::arg("transform") = py::none());
  m.def(
      "TFRecordImageDataset",
      [](const std::vector<std::string>& shards, const std::vector<int64_t>& shape,
         const std::string& image_key, const std::string& label_key,
         py::handle transform) -> std::shared_ptr<Dataset> {
        data::TFRecordImageFormat format{Shape(shape), image_key, label_key};
        return std::make_shared<data::TFRecordDataset>(shards, format, transform_of(transform));
      },
      py::arg("shards"), py::arg("shape"), py::arg("image_key"), py::arg("label_key"),
      py::arg("transform") = py::none());
  m.def(
      "LMDBImageDataset",
      [](const std::string& path, const std::vector<int64_t>& shape, const std::string& image_key,
         const std::string& label_key, py::handle transform) -> std::shared_ptr<Dataset> {
        data::TFRecordImageFormat format{Shape(shape), image_key, label_key};
        return std::make_shared<data::LMDBDataset>(path, format, transform_of(transform));
      },
      py::arg("path"), py::arg("shape"), py::arg("image_key"), py::arg("label_key"),
      py::arg("transform") = py::none());
  m.def(
      "ImageFolder",
      [](const std::string& root, int64_t channels,
         py::handle transform) -> std::shared_ptr<Dataset> {
        check_value(channels == 1 || channels == 3, "ImageFolder", "channels must be 1 or 3; got ",
                    channels);
        return std::make_shared<data::ImageFolder>(root, static_cast<data::ImageMode>(channels),
                                                   transform_of(transform));
      },
      py::arg("root"), py::arg("channels"), py::arg("transform") = py::none());
  m.def("image_folder_samples", [](std::shared_ptr<Dataset> d) {
    auto* folder = dynamic_cast<data::ImageFolder*>(d.get());
    check_value(folder != nullptr, "image_folder_samples", "not an ImageFolder dataset");
    std::vector<std::pair<std::string, int64_t>> samples;
    for (int64_t i = 0; i < folder->size(); ++i)
      samples.emplace_back(folder->path(i), folder->label(i));
    return py::make_tuple(folder->classes(), samples);
  });
  m.def("index_tfrecord_shard", &data::index_tfrecord_shard, py::arg("shard"));
  m.def(
      "TensorDataset",
      [](const Tensor& inputs, const Tensor& targets,
         py::handle transform) -> std::shared_ptr<Dataset> {
        return std::make_shared<data::TensorDataset>(inputs, targets, transform_of(transform));
      },
      py::arg("inputs"), py::arg("targets"), py::arg("transform") = py::none());
  m.def("mnist_arrays", [](std::shared_ptr<Dataset> d) {
    auto* mnist = dynamic_cast<data::MNIST*>(d.get());
    check_value(mnist != nullptr, "mnist_arrays", "not an MNIST dataset");
    return py::make_tuple(mnist->images(), mnist->labels());
  });

  py::class_<LoaderIterator>(m, "LoaderIterator")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", &LoaderIterator::next);
  py::class_<data::DataLoader>(m, "DataLoader")
      .def(py::init([](std::shared_ptr<Dataset> dataset, int64_t batch_size, bool shuffle,
                       int64_t num_workers, int64_t prefetch_factor, bool drop_last, uint64_t seed,
                       bool pin_memory, double timeout,
                       std::shared_ptr<data::LoaderTimeline> timeline) {
             data::DataLoaderOptions o;
             o.batch_size = batch_size;
             o.shuffle = shuffle;
             o.num_workers = num_workers;
             o.prefetch_factor = prefetch_factor;
             o.drop_last = drop_last;
             o.seed = seed;
             o.pin_memory = pin_memory;
             o.timeout = timeout;
             o.timeline = std::move(timeline);
             return std::make_unique<data::DataLoader>(std::move(dataset), o);
           }),
           py::arg("dataset"), py::arg("batch_size"), py::arg("shuffle"), py::arg("num_workers"),
           py::arg("prefetch_factor"), py::arg("drop_last"), py::arg("seed"), py::arg("pin_memory"),
           py::arg("timeout") = 0.0, py::arg("timeline") = nullptr)
      .def("__len__", &data::DataLoader::size)
      .def(
          "__iter__", [](data::DataLoader& l) { return std::make_unique<LoaderIterator>(l); },
          py::keep_alive<0, 1>())
      .def("set_epoch", &data::DataLoader::set_epoch, py::arg("epoch"))
      .def("stats", [](const data::DataLoader& l) {
        data::LoaderStats s = l.stats();
        py::dict d;
        d["epoch"] = counters_dict(s.epoch);
        d["total"] = counters_dict(s.total);
        d["queue_depth"] = s.queue_depth;
        d["current_epoch"] = s.current_epoch;
        d["text"] = s.str();
        return d;
      });
  m.def("random_permutation", &data::random_permutation, py::arg("n"), py::arg("seed"),
        py::arg("epoch"));
  init_records(m);
}

}  // namespace wick::python
