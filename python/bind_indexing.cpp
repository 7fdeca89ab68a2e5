// Tensor.__getitem__ and __setitem__: NumPy/PyTorch indexing.
//
// A key is split into basic items, applied one by one as views - an int selects (removing the
// dim), a slice slices, None inserts a dim of size 1, Ellipsis skips the dims no other item
// claims - and advanced items (integer or bool tensors, lists of ints or bools), which are
// collected with the dims they apply to and handed to wick::index / index_put_
// (core/ops/advanced_index.h) once the basic items have been applied. So x[1:, idx] is
// index(x.slice(0, 1, n), {undefined, idx}). As in PyTorch, slices with a negative step are
// refused (ValueError), since a tensor's strides cannot be negative.
#include <pybind11/stl.h>

#include "python/bind_common.h"

namespace wick::python {

namespace {

struct Indexed {
  Tensor view;                  // self after the basic items
  std::vector<Tensor> entries;  // for index(): one per dim of view, a bool mask covering several
  bool advanced = false;
};

// A list or tuple of ints or bools used as an index, as a tensor.
Tensor sequence_index(py::handle seq) {
  std::vector<int64_t> values;
  bool all_bool = true;
  for (py::handle item : seq) {
    Scalar s;
    if (!try_scalar(item, s) || s.is_floating()) {
      throw py::type_error(
          "[index] only integers, slices, None, Ellipsis, and integer or boolean "
          "tensors or lists are valid indices; got a list containing " +
          std::string(py::str(py::repr(item))));
    }
    all_bool = all_bool && s.kind() == ScalarKind::Bool;
    values.push_back(s.to_int());
  }
  Tensor t = tensor(values, TensorOptions(kInt64));
  return all_bool && !values.empty() ? t.to(kBool) : t;
}

bool is_advanced(py::handle item) {
  return try_tensor(item) != nullptr || (py::isinstance<py::list>(item)) ||
         (py::isinstance<py::tuple>(item));
}

// How many dims of self an item uses up (None and Ellipsis use none).
int64_t dims_used(py::handle item) {
  if (item.is_none() || item.ptr() == Py_Ellipsis) return 0;
  if (const Tensor* t = try_tensor(item)) return t->dtype() == kBool ? t->dim() : 1;
  return 1;
}

Indexed apply_key(const Tensor& self, py::handle key) {
  py::tuple items =
      py::isinstance<py::tuple>(key) ? py::reinterpret_borrow<py::tuple>(key) : py::make_tuple(key);
  int64_t used = 0, ellipses = 0;
  for (py::handle item : items) {
    used += dims_used(item);
    ellipses += item.ptr() == Py_Ellipsis;
  }
  if (ellipses > 1)
    throw py::index_error("[index] an index can only have a single ellipsis ('...')");
  if (used > self.dim()) {
    throw py::index_error("[index] too many indices for tensor of dimension " +
                          std::to_string(self.dim()));
  }
  Indexed r;
  r.view = self;
  int64_t dim = 0;  // the dim of r.view the next item applies to
  auto pad_entries = [&](int64_t upto) {
    int64_t covered = 0;
    for (const Tensor& e : r.entries) covered += e.defined() && e.dtype() == kBool ? e.dim() : 1;
    for (; covered < upto; ++covered) r.entries.push_back(Tensor());
  };
  for (py::handle item : items) {
    if (item.is_none()) {
      r.view = r.view.unsqueeze(dim);
      if (r.advanced) {  // an inserted dim shifts the entries after it
        pad_entries(dim);
        r.entries.push_back(Tensor());
      }
      ++dim;
    } else if (item.ptr() == Py_Ellipsis) {
      dim += self.dim() - used;
    } else if (PySlice_Check(item.ptr())) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(item.ptr(), &start, &stop, &step) < 0) {
        // Python's own message ("slice step cannot be zero") names neither the op nor the slice.
        py::error_already_set python_error;
        throw py::value_error("[index] " + std::string(py::str(python_error.value())) + ": got " +
                              std::string(py::str(py::repr(item))));
      }
      if (step <= 0) {
        throw py::value_error("[index] slice step must be greater than zero; got " +
                              std::string(py::str(py::repr(item))));
      }
      int64_t size = r.view.size(dim);
      PySlice_AdjustIndices(size, &start, &stop, step);
      if (start != 0 || stop != size || step != 1) {
        r.view = r.view.slice(dim, start, std::max<int64_t>(start, stop), step);
      }
      ++dim;
    } else if (is_advanced(item)) {
      Tensor idx = try_tensor(item) ? *try_tensor(item) : sequence_index(item);
      pad_entries(dim);
      r.entries.push_back(idx);
      r.advanced = true;
      dim += idx.dtype() == kBool ? std::max<int64_t>(idx.dim(), 1) : 1;
    } else {
      Scalar s;
      if (!try_scalar(item, s) || s.kind() != ScalarKind::Integer) {
        if (s.kind() == ScalarKind::Bool && PyBool_Check(item.ptr())) {
          throw py::type_error(
              "[index] indexing with a Python bool is not supported; use a bool tensor");
        }
        throw py::type_error(
            "[index] only integers, slices (`:`), ellipsis (`...`), None and integer "
            "or boolean tensors are valid indices; got " +
            std::string(py::str(py::type::of(item).attr("__name__"))));
      }
      r.view = r.view.select(dim, s.to_int());
    }
  }
  return r;
}

Tensor getitem(const Tensor& self, py::handle key) {
  Indexed r = apply_key(self, key);
  if (r.advanced) return index(r.view, r.entries);
  if (r.view.is_same(self)) return self.view(self.shape());  // x[...]: a new alias
  return r.view;
}

// A value for assignment: a tensor, or a number with the target's dtype.
Tensor value_tensor(py::handle value, const Tensor& target) {
  if (const Tensor* t = try_tensor(value)) return *t;
  Scalar s;
  if (try_scalar(value, s)) {
    return scalar_tensor(s, TensorOptions(target.dtype()).with_device(target.device()));
  }
  throw py::type_error("[setitem] can only assign a tensor or a number to a tensor index; got " +
                       std::string(py::str(py::type::of(value).attr("__name__"))));
}

// Note [setitem under autograd]
// Autograd does not record in-place writes into views (Note [in-place and autograd]), but
// `y[0] = v` on a non-leaf y that requires grad is ordinary PyTorch code. So when autograd must
// record the write, the key is applied to a tensor of element positions instead of to y; the
// selected positions, unravelled into one coordinate tensor per dim, are advanced indices into
// y itself, and index_put_ records the write on y (not on a view).
void setitem_recorded(Tensor& self, py::handle key, const Tensor& value) {
  Tensor positions = arange(self.numel(), TensorOptions(kInt64)).reshape(self.shape());
  Indexed r = apply_key(positions, key);
  Tensor picked = (r.advanced ? index(r.view, r.entries) : r.view).contiguous();
  std::vector<int64_t> flat = picked.to_vector<int64_t>();
  Strides strides = contiguous_strides(self.shape());
  std::vector<Tensor> coords;
  for (int64_t d = 0; d < self.dim(); ++d) {
    std::vector<int64_t> c(flat.size());
    for (size_t i = 0; i < flat.size(); ++i) c[i] = flat[i] / strides[d] % self.size(d);
    coords.push_back(tensor(c, picked.shape(), TensorOptions(kInt64)).to(self.device()));
  }
  index_put_(self, coords, value);
}

void setitem(Tensor& self, py::handle key, py::handle value) {
  const Tensor* tv = try_tensor(value);
  if (GradMode::is_enabled() && self.dim() > 0 &&
      (self.requires_grad() || (tv != nullptr && tv->requires_grad()))) {
    setitem_recorded(self, key, value_tensor(value, self));  // Note [setitem under autograd]
    return;
  }
  Indexed r = apply_key(self, key);
  Tensor v = value_tensor(value, r.view);
  if (r.advanced) {
    index_put_(r.view, r.entries, v);
    return;
  }
  // Leading dims of size 1 beyond the target's are allowed (PyTorch does the same).
  while (v.dim() > r.view.dim() && v.size(0) == 1) v = v.squeeze(0);
  check_value(broadcast_shapes("setitem", v.shape(), r.view.shape()) == r.view.shape(), "setitem",
              "value of shape ", v.shape(), " cannot be assigned to a view of shape ",
              r.view.shape());
  r.view.copy_(v.expand(r.view.shape()));
}

}  // namespace

void init_indexing(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def("__getitem__", &getitem);
  cls.def("__setitem__", &setitem);
}

}  // namespace wick::python
