// wick._C._data's record-file pieces (data/records/): TFRecord writing, sequential and indexed
// reading, and tf.train.Example encoding, for wick.records. Reads and writes release the GIL: a
// loader thread reading a shard does not stall the training loop's Python.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>

#include "data/data.h"
#include "data/records/crc32c.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

using data::Feature;

py::bytes to_bytes(const std::string& s) { return py::bytes(s.data(), s.size()); }

// Feature kinds travel as the oneof's field numbers: 1 bytes, 2 float, 3 int64 (0: unset).
py::dict features_to_python(const data::Features& features) {
  py::dict out;
  for (const auto& [name, f] : features) {
    py::object values;
    switch (f.kind) {
      case Feature::Kind::kNone:
        values = py::none();
        break;
      case Feature::Kind::kBytes: {
        py::list list;
        for (const std::string& v : f.bytes_list) list.append(to_bytes(v));
        values = list;
        break;
      }
      case Feature::Kind::kFloat:
        values =
            py::array_t<float>(static_cast<py::ssize_t>(f.float_list.size()), f.float_list.data());
        break;
      case Feature::Kind::kInt64:
        values = py::array_t<int64_t>(static_cast<py::ssize_t>(f.int64_list.size()),
                                      f.int64_list.data());
        break;
    }
    out[py::str(name)] = py::make_tuple(static_cast<int>(f.kind), values);
  }
  return out;
}

// A list or array of numbers as a vector (through numpy, which converts and range-checks).
template <class T>
std::vector<T> as_vector(const py::object& values) {
  auto array = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(values);
  // ensure() clears NumPy's error when the conversion fails, so the message is made here.
  if (!array) {
    throw py::type_error("[encode_example] a feature's values must be numbers convertible to " +
                         std::string(py::str(py::dtype::of<T>())) + "; got " +
                         std::string(py::str(py::repr(values))).substr(0, 80));
  }
  check_value(array.ndim() == 1, "encode_example", "a feature's values must be 1-D; got ",
              array.ndim(), " dimensions");
  return std::vector<T>(array.data(), array.data() + array.size());
}

data::Features features_from_python(const py::dict& features) {
  data::Features out;
  for (auto [key, item] : features) {
    auto [kind, values] = item.cast<std::pair<int, py::object>>();
    Feature f;
    switch (kind) {
      case 1:
        f = Feature::bytes(values.cast<std::vector<std::string>>());
        break;
      case 2:
        f = Feature::floats(as_vector<float>(values));
        break;
      case 3:
        f = Feature::int64s(as_vector<int64_t>(values));
        break;
      default:
        check_value(kind == 0, "encode_example", "feature kind must be 0 (unset), 1 (bytes), ",
                    "2 (float) or 3 (int64); got ", kind);
    }
    out[key.cast<std::string>()] = std::move(f);
  }
  return out;
}

}  // namespace

// `with LoaderSpan("train step"):` in a training loop: recorded into the timeline of the C++
// loader this thread last took a batch from (Note in data/loader_timeline.h), else nothing.
struct PyLoaderSpan {
  std::string stage;
  std::unique_ptr<data::LoaderSpan> span;
};

void init_records(py::module_& m) {
  py::class_<PyLoaderSpan>(m, "LoaderSpan")
      .def(py::init([](std::string stage) {
             return PyLoaderSpan{std::move(stage), {}};
           }),
           py::arg("stage"))
      .def("__enter__",
           [](PyLoaderSpan& s) -> PyLoaderSpan& {
             s.span = std::make_unique<data::LoaderSpan>(s.stage);
             return s;
           })
      .def("__exit__", [](PyLoaderSpan& s, py::args) {
        s.span.reset();
        return false;
      });

  py::class_<data::LoaderTimeline, std::shared_ptr<data::LoaderTimeline>>(m, "LoaderTimeline")
      .def(py::init<size_t>(), py::arg("max_events") = 200000)
      .def("clear", &data::LoaderTimeline::clear)
      .def("set_recording", &data::LoaderTimeline::set_recording, py::arg("on"))
      .def("recording", &data::LoaderTimeline::recording)
      .def("events",
           [](const data::LoaderTimeline& t) {
             py::list out;
             for (const data::LoaderEvent& e : t.events())
               out.append(py::make_tuple(e.stage, e.batch, e.lane, e.start_us, e.end_us));
             return out;
           })
      .def_property_readonly("dropped", &data::LoaderTimeline::dropped)
      .def("summary", &data::LoaderTimeline::summary)
      .def("write_chrome_trace", &data::LoaderTimeline::write_chrome_trace, py::arg("path"))
      .def("write_svg", &data::LoaderTimeline::write_svg, py::arg("path"), py::arg("title"))
      // For the Python loader's workers and the training loop: a span with times measured in
      // Python (time.perf_counter() seconds are on the same steady clock as C++'s).
      .def(
          "record",
          [](data::LoaderTimeline& t, const std::string& stage, int64_t batch, int lane,
             double start_seconds, double end_seconds) {
            using Clock = data::LoaderTimeline::Clock;
            auto at = [](double s) {
              return Clock::time_point(
                  std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)));
            };
            t.record(stage, batch, lane, at(start_seconds), at(end_seconds));
          },
          py::arg("stage"), py::arg("batch"), py::arg("lane"), py::arg("start"), py::arg("end"));

  py::class_<data::TFRecordWriter>(m, "TFRecordWriter")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def(
          "write",
          [](data::TFRecordWriter& w, const py::bytes& record) {
            std::string_view view = record;
            py::gil_scoped_release release;
            w.write(view.data(), view.size());
          },
          py::arg("record"))
      .def("flush", &data::TFRecordWriter::flush, py::call_guard<py::gil_scoped_release>())
      .def("close", &data::TFRecordWriter::close, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("records_written", &data::TFRecordWriter::records_written)
      .def_property_readonly("path", &data::TFRecordWriter::path);

  py::class_<data::TFRecordFile>(m, "TFRecordFile")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def("next",
           [](data::TFRecordFile& f) -> py::object {
             std::string record;
             bool more;
             {
               py::gil_scoped_release release;
               more = f.next(record);
             }
             if (!more) return py::none();
             return to_bytes(record);
           })
      .def(
          "read",
          [](const data::TFRecordFile& f, uint64_t offset, uint64_t length, int64_t number) {
            std::string record;
            {
              py::gil_scoped_release release;
              record = f.read({offset, length}, number);
            }
            return to_bytes(record);
          },
          py::arg("offset"), py::arg("length"), py::arg("number"))
      .def("record_index",
           [](const data::TFRecordFile& f) {
             std::vector<data::RecordLocation> index;
             {
               py::gil_scoped_release release;
               index = f.record_index();
             }
             std::vector<std::pair<uint64_t, uint64_t>> out;
             for (const auto& r : index) out.emplace_back(r.offset, r.length);
             return out;
           })
      .def_property_readonly("size", &data::TFRecordFile::size)
      .def_property_readonly("path", &data::TFRecordFile::path);

  m.def(
      "write_record_index",
      [](const std::string& index_path, const std::vector<std::pair<uint64_t, uint64_t>>& index) {
        std::vector<data::RecordLocation> locations;
        for (const auto& [offset, length] : index) locations.push_back({offset, length});
        data::write_record_index(index_path, locations);
      },
      py::arg("index_path"), py::arg("index"));
  m.def(
      "read_record_index",
      [](const std::string& index_path, const data::TFRecordFile& shard) {
        std::vector<std::pair<uint64_t, uint64_t>> out;
        for (const auto& r : data::read_record_index(index_path, shard))
          out.emplace_back(r.offset, r.length);
        return out;
      },
      py::arg("index_path"), py::arg("shard"));
  m.def(
      "encode_example",
      [](const py::dict& features) {
        return to_bytes(data::encode_example(features_from_python(features)));
      },
      py::arg("features"));
  m.def(
      "decode_example",
      [](const py::bytes& record) {
        std::string_view view = record;
        return features_to_python(data::decode_example(view.data(), view.size()));
      },
      py::arg("record"));
  m.def("crc32c", [](const py::bytes& data) {
    std::string_view view = data;
    return data::crc32c(view.data(), view.size());
  });
  m.def("mask_crc", &data::mask_crc, py::arg("crc"));

  py::class_<data::LMDBWriter>(m, "LMDBWriter")
      .def(py::init<const std::string&, uint64_t>(), py::arg("path"),
           py::arg("map_bytes") = uint64_t{1} << 30)
      .def(
          "put",
          [](data::LMDBWriter& w, const std::string& key, const py::bytes& value) {
            w.put(key, value);
          },
          py::arg("key"), py::arg("value"))
      .def("commit", &data::LMDBWriter::commit, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("entries", &data::LMDBWriter::entries);
  m.def("lmdb_key", &data::LMDBDataset::key_of, py::arg("index"));
  m.def("has_formats", [] {
    py::dict d;
    d["png"] = data::has_png();
    d["jpeg"] = data::has_jpeg();
    d["lmdb"] = data::has_lmdb();
    return d;
  });
  m.def(
      "decode_image",
      [](const py::bytes& data, int64_t channels, const std::string& name) {
        check_value(channels == 1 || channels == 3, "decode_image", "channels must be 1 or 3; got ",
                    channels);
        std::string_view view = data;
        std::vector<uint8_t> bytes(view.begin(), view.end());
        py::gil_scoped_release release;
        return data::decode_image(bytes, static_cast<data::ImageMode>(channels), name);
      },
      py::arg("data"), py::arg("channels"), py::arg("name") = "<bytes>");
}

}  // namespace wick::python
