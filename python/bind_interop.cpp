// Sharing memory with NumPy and with any DLPack producer or consumer (PyTorch, NumPy, JAX, ...):
// wick.from_numpy, Tensor.numpy(), wick.from_dlpack, Tensor.__dlpack__ / __dlpack_device__. None
// of these copy: the tensor and the array view the same bytes.
//
// Note [borrowed memory lifetime]
// A tensor made from a NumPy array or a DLPack capsule has a Storage that borrows the memory
// (core/storage.h) and holds the owner alive: a reference to the array, or the DLManagedTensor
// whose deleter the producer gave us. The Storage's release function runs when the last tensor
// viewing it goes away - possibly inside C++ with the GIL released (a DataLoader worker, the
// autograd engine) - so it takes the GIL before dropping the Python reference or calling the
// deleter (Note [GIL rules]). In the other direction, numpy() makes an array whose base object is
// a capsule owning a wick::Tensor handle, and __dlpack__ hands out a DLManagedTensor owning one:
// the storage lives until NumPy or the consumer lets go.
#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>

#include <memory>

#include "python/bind_common.h"
#include "python/host_read.h"

namespace wick::python {

namespace {

// DLPack 0.8 added kDLBool (code 6); Debian's dlpack.h is 0.6, so it is spelled out here
// (https://dmlc.github.io/dlpack/latest/c_api.html). Everything else is the 0.6 ABI.
constexpr uint8_t kDLBoolCode = 6;

std::shared_ptr<Storage> borrowed_storage(void* data, size_t nbytes, Device device,
                                          std::function<void()> release) {
  return std::make_shared<Storage>(data, nbytes, device, std::move(release));
}

// Bytes spanned by a strided layout (0 for an empty tensor).
size_t extent_bytes(const Shape& shape, const Strides& strides, size_t item) {
  size_t last = 0;
  for (int64_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return 0;
    last += static_cast<size_t>((shape[d] - 1) * strides[d]);
  }
  return (last + 1) * item;
}

DType numpy_dtype(const py::dtype& dt) {
  char kind = dt.kind();
  size_t size = dt.itemsize();
  if (kind == 'f' && size == 4) return kFloat32;
  if (kind == 'f' && size == 8) return kFloat64;
  if (kind == 'f' && size == 2) return kFloat16;
  if (kind == 'i' && size == 8) return kInt64;
  if (kind == 'i' && size == 4) return kInt32;
  if (kind == 'u' && size == 1) return kUInt8;
  if (kind == 'i' && size == 1) return kInt8;
  if (kind == 'b' && size == 1) return kBool;
  throw TypeError("[from_numpy] can't convert a NumPy array of type " +
                  std::string(py::str(py::handle(dt))) +
                  "; the supported types are float64, float32, float16, int64, int32, uint8, "
                  "int8 and bool");
}

py::dtype numpy_dtype_of(DType d) {
  switch (d) {
    case kFloat32:
      return py::dtype("float32");
    case kFloat64:
      return py::dtype("float64");
    case kFloat16:
      return py::dtype("float16");
    case kInt64:
      return py::dtype("int64");
    case kInt32:
      return py::dtype("int32");
    case kUInt8:
      return py::dtype("uint8");
    case kInt8:
      return py::dtype("int8");
    case kBool:
      return py::dtype("bool");
    default:
      break;
  }
  throw TypeError(std::string("[numpy] NumPy has no ") + dtype_name(d) +
                  " type; convert with .float() first");
}

DLDataType dl_dtype(DType d) {
  switch (d) {
    case kFloat32:
      return {kDLFloat, 32, 1};
    case kFloat64:
      return {kDLFloat, 64, 1};
    case kFloat16:
      return {kDLFloat, 16, 1};
    case kBFloat16:
      return {kDLBfloat, 16, 1};
    case kInt64:
      return {kDLInt, 64, 1};
    case kInt32:
      return {kDLInt, 32, 1};
    case kUInt8:
      return {kDLUInt, 8, 1};
    case kInt8:
      return {kDLInt, 8, 1};
    case kBool:
      return {kDLBoolCode, 8, 1};
  }
  throw TypeError("[__dlpack__] unknown dtype");
}

DType from_dl_dtype(DLDataType t) {
  check_type(t.lanes == 1, "from_dlpack", "vector types (lanes > 1) are not supported");
  if (t.code == kDLFloat && t.bits == 32) return kFloat32;
  if (t.code == kDLFloat && t.bits == 64) return kFloat64;
  if (t.code == kDLFloat && t.bits == 16) return kFloat16;
  if (t.code == kDLBfloat && t.bits == 16) return kBFloat16;
  if (t.code == kDLInt && t.bits == 64) return kInt64;
  if (t.code == kDLInt && t.bits == 32) return kInt32;
  if (t.code == kDLUInt && t.bits == 8) return kUInt8;
  if (t.code == kDLInt && t.bits == 8) return kInt8;
  if (t.code == kDLBoolCode && t.bits == 8) return kBool;
  throw TypeError("[from_dlpack] unsupported DLPack dtype (code " + std::to_string(t.code) +
                  ", bits " + std::to_string(t.bits) + ")");
}

// Owns the tensor a DLManagedTensor describes (Note [borrowed memory lifetime]).
struct DLHolder {
  Tensor tensor;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed{};
};

void dl_holder_deleter(DLManagedTensor* self) { delete static_cast<DLHolder*>(self->manager_ctx); }

// The capsule's destructor: frees the tensor unless a consumer took it (and renamed the capsule).
void dl_capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

py::capsule to_dlpack(const Tensor& t) {
  check_state(!t.requires_grad(), "__dlpack__",
              "can't export a tensor that requires grad; use tensor.detach()");
  auto* holder = new DLHolder{t, t.shape().vec(), t.strides().vec(), {}};
  DLTensor& dl = holder->managed.dl_tensor;
  dl.data = t.data_ptr();
  dl.device = {t.device().is_cpu() ? kDLCPU : kDLCUDA, t.device().is_cpu() ? 0 : t.device().index};
  dl.ndim = static_cast<int>(t.dim());
  dl.dtype = dl_dtype(t.dtype());
  dl.shape = holder->shape.data();
  dl.strides = holder->strides.data();
  dl.byte_offset = 0;
  holder->managed.manager_ctx = holder;
  holder->managed.deleter = dl_holder_deleter;
  PyObject* capsule = PyCapsule_New(&holder->managed, "dltensor", dl_capsule_destructor);
  if (capsule == nullptr) {
    delete holder;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(capsule);
}

Tensor from_dlpack(py::object obj) {
  py::object capsule = obj;
  if (!PyCapsule_CheckExact(obj.ptr())) {
    if (!py::hasattr(obj, "__dlpack__")) {
      throw py::type_error("[from_dlpack] expects an object with __dlpack__ or a DLPack capsule");
    }
    capsule = obj.attr("__dlpack__")();
  }
  if (!PyCapsule_IsValid(capsule.ptr(), "dltensor")) {
    throw py::value_error(
        "[from_dlpack] the capsule was already consumed or is not a DLPack "
        "tensor");
  }
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  // From here on we own `managed`: rename the capsule so its destructor leaves it alone.
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  std::function<void()> release = [managed]() {
    if (managed->deleter == nullptr) return;
    if (Py_IsInitialized()) {
      py::gil_scoped_acquire gil;  // NumPy's deleter drops a Python reference
      managed->deleter(managed);
    } else {
      managed->deleter(managed);
    }
  };
  const DLTensor& dl = managed->dl_tensor;
  try {
    DType dtype = from_dl_dtype(dl.dtype);
    check_value(dl.ndim >= 0 && dl.ndim <= kMaxDims, "from_dlpack", "at most ", kMaxDims,
                " dimensions are supported; got ", dl.ndim);
    Device device;
    if (dl.device.device_type == kDLCPU || dl.device.device_type == kDLCUDAHost) {
      device = Device(kCPU);
    } else if (dl.device.device_type == kDLCUDA) {
      device = Device(kCUDA, dl.device.device_id);
    } else {
      throw std::invalid_argument("[from_dlpack] unsupported device type " +
                                  std::to_string(dl.device.device_type));
    }
    Shape shape(dl.shape, dl.ndim);
    Strides strides = dl.strides ? Strides(dl.strides, dl.ndim) : contiguous_strides(shape);
    for (int64_t s : strides) {
      check_value(s >= 0, "from_dlpack", "negative strides are not supported");
    }
    size_t item = element_size(dtype);
    char* data = static_cast<char*>(dl.data) + dl.byte_offset;
    auto storage = borrowed_storage(data, extent_bytes(shape, strides, item), device, release);
    return Tensor(std::make_shared<TensorImpl>(storage, 0, shape, strides, dtype));
  } catch (...) {
    release();
    throw;
  }
}

}  // namespace

Tensor tensor_from_numpy(py::array array) {
  DType dtype = numpy_dtype(array.dtype());
  if (array.dtype().attr("byteorder").cast<std::string>() == ">") {
    throw TypeError("[from_numpy] big-endian arrays are not supported");
  }
  int64_t ndim = array.ndim();
  check_value(ndim <= kMaxDims, "from_numpy", "at most ", kMaxDims,
              " dimensions are supported; got ", ndim);
  size_t item = array.itemsize();
  Shape shape;
  Strides strides;
  for (int64_t d = 0; d < ndim; ++d) {
    shape.push_back(array.shape(d));
    py::ssize_t s = array.strides(d);
    check_value(s >= 0, "from_numpy",
                "at least one stride of the array is negative; copy it first "
                "(array.copy())");
    check_value(s % static_cast<py::ssize_t>(item) == 0, "from_numpy",
                "strides that are not a multiple of the element size are not supported");
    strides.push_back(s / static_cast<py::ssize_t>(item));
  }
  PyObject* owner = array.ptr();
  Py_INCREF(owner);
  auto release = [owner]() {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    Py_DECREF(owner);
  };
  auto storage = borrowed_storage(const_cast<void*>(array.data()),
                                  extent_bytes(shape, strides, item), Device(kCPU), release);
  return Tensor(std::make_shared<TensorImpl>(storage, 0, shape, strides, dtype));
}

py::array tensor_to_numpy(const Tensor& t, bool force) {
  note_host_read_from_python("numpy()");
  Tensor source = t;
  if (force) source = t.detach().cpu();
  if (t.requires_grad() && !force) {
    throw std::runtime_error(
        "[numpy] Can't call numpy() on a tensor that requires grad. Use tensor.detach().numpy() "
        "instead.");
  }
  if (!source.device().is_cpu()) {
    throw TypeError("can't convert a " + source.device().str() +
                    " tensor to numpy; use Tensor.cpu() to copy it to host memory first");
  }
  py::dtype dt = numpy_dtype_of(source.dtype());
  std::vector<py::ssize_t> shape, strides;
  for (int64_t d = 0; d < source.dim(); ++d) {
    shape.push_back(source.size(d));
    strides.push_back(source.stride(d) * static_cast<py::ssize_t>(source.element_size()));
  }
  auto* owner = new Tensor(source);
  py::capsule base(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dt, shape, strides, source.data_ptr(), base);
}

void init_interop(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  m.def(
      "from_numpy", [](py::array array) { return tensor_from_numpy(array); }, py::arg("ndarray"));
  // NumPy defers to an operand of higher priority, so np.float64(2) * tensor calls the
  // tensor's __rmul__ and stays a tensor (PyTorch's Tensor sets 1000 too).
  cls.attr("__array_priority__") = 1000;
  cls.def("numpy", &tensor_to_numpy, py::kw_only(), py::arg("force") = false)
      .def(
          "__array__",
          [](const Tensor& t, py::handle dtype) -> py::object {
            py::array a = tensor_to_numpy(t, false);
            if (dtype.is_none()) return std::move(a);
            return a.attr("astype")(dtype);
          },
          py::arg("dtype") = py::none())
      .def(
          "__dlpack__",
          [](const Tensor& t, py::handle /*stream: copies here are synchronous*/) {
            return to_dlpack(t);
          },
          py::arg("stream") = py::none())
      .def("__dlpack_device__", [](const Tensor& t) {
        return py::make_tuple(static_cast<int>(t.device().is_cpu() ? kDLCPU : kDLCUDA),
                              t.device().is_cpu() ? 0 : t.device().index);
      });
  m.def("from_dlpack", &from_dlpack, py::arg("ext_tensor"));
  m.def("to_dlpack", &to_dlpack, py::arg("tensor"));
}

}  // namespace wick::python
