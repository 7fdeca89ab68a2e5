// Shape ops (views, reshape, permute, split, cat, ...), reductions, matrix products and the index
// ops, as Tensor methods and wick.* functions with PyTorch's argument names.
#include <pybind11/stl.h>

#include "python/bind_common.h"

namespace wick::python {

namespace {

py::tuple to_tuple(const std::vector<Tensor>& tensors) {
  py::tuple out(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) out[i] = py::cast(tensors[i]);
  return out;
}

// PyTorch's (values, indices) named tuple; wick/__init__.py installs a namedtuple class.
PyObject* g_values_indices = nullptr;  // never released (see bind_types.cpp)
py::object values_indices(const ValuesIndices& r) {
  if (g_values_indices == nullptr) return py::make_tuple(r.values, r.indices);
  return py::reinterpret_borrow<py::object>(g_values_indices)(r.values, r.indices);
}

// Bessel's correction from PyTorch's spellings: unbiased=True/False or correction=n.
int64_t correction_of(py::handle unbiased, py::handle correction) {
  if (!correction.is_none()) return correction.cast<int64_t>();
  if (!unbiased.is_none()) return unbiased.cast<bool>() ? 1 : 0;
  return 1;
}

// max()/min(): over everything, along a dim (values and indices), or elementwise with a tensor.
template <bool IsMax>
py::object extremum(const Tensor& x, py::handle dim, bool keepdim) {
  if (dim.is_none()) return py::cast(IsMax ? max(x) : min(x));
  if (const Tensor* other = try_tensor(dim)) {
    return py::cast(IsMax ? maximum(x, *other) : minimum(x, *other));
  }
  int64_t d = dim.cast<int64_t>();
  return values_indices(IsMax ? max(x, d, keepdim) : min(x, d, keepdim));
}

// sum/mean with an optional dtype to compute in.
Tensor cast_for(const Tensor& x, py::handle dtype) {
  return dtype.is_none() ? x : x.to(to_dtype(dtype));
}

std::vector<Tensor> split_any(const Tensor& x, py::handle size_or_sections, int64_t dim) {
  if (PyLong_Check(size_or_sections.ptr())) return split(x, size_or_sections.cast<int64_t>(), dim);
  auto sections = size_or_sections.cast<std::vector<int64_t>>();
  std::vector<Tensor> out;
  int64_t start = 0, d = wrap_dim("split", dim, x.dim());
  for (int64_t n : sections) {
    out.push_back(x.narrow(d, start, n));
    start += n;
  }
  check_value(start == x.size(d), "split", "split sizes add up to ", start,
              " but the dimension has size ", x.size(d));
  return out;
}

Tensor repeat(const Tensor& x, const Shape& repeats) {
  check_value(repeats.size() >= x.dim(), "repeat",
              "number of repeat dims can not be smaller than the number of tensor dims");
  Shape padded = Shape::filled(repeats.size() - x.dim(), 1);
  for (int64_t s : x.shape()) padded.push_back(s);
  // [s0, s1] -> [1, s0, 1, s1] -> expand to [r0, s0, r1, s1] -> [r0 s0, r1 s1]: tiles of x.
  std::vector<int64_t> interleaved, expanded, result;
  for (int64_t i = 0; i < repeats.size(); ++i) {
    interleaved.insert(interleaved.end(), {1, padded[i]});
    expanded.insert(expanded.end(), {repeats[i], padded[i]});
    result.push_back(checked_mul("repeat", repeats[i], padded[i]));  // Note [checked sizes]
  }
  check_value(2 * repeats.size() <= kMaxDims, "repeat", "too many dims");
  return x.reshape(Shape(interleaved)).expand(Shape(expanded)).reshape(Shape(result));
}

std::vector<Tensor> tensor_list(const py::handle& seq, const char* op) {
  std::vector<Tensor> out;
  for (py::handle item : seq) out.push_back(to_tensor(item, op));
  return out;
}

}  // namespace

void set_values_indices_class(py::object cls) { g_values_indices = cls.release().ptr(); }

void init_shape_ops(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  m.def("_set_values_indices_class", &set_values_indices_class);

  // ---- views and shape ----
  cls.def("view", [](const Tensor& x,
                     py::args shape) { return x.view(shape_from_args(shape, "view", true)); })
      .def("reshape",
           [](const Tensor& x, py::args shape) {
             return x.reshape(shape_from_args(shape, "reshape", true));
           })
      .def("expand",
           [](const Tensor& x, py::args shape) {
             return x.expand(shape_from_args(shape, "expand", true));
           })
      .def("repeat", [](const Tensor& x,
                        py::args shape) { return repeat(x, shape_from_args(shape, "repeat")); })
      .def("permute",
           [](const Tensor& x, py::args dims) {
             if (dims.size() == 1 && !PyLong_Check(dims[0].ptr())) {
               return x.permute(dims[0].cast<std::vector<int64_t>>());
             }
             return x.permute(dims.cast<std::vector<int64_t>>());
           })
      .def("view_as", [](const Tensor& x, const Tensor& o) { return x.view(o.shape()); })
      .def("reshape_as", [](const Tensor& x, const Tensor& o) { return x.reshape(o.shape()); })
      .def("expand_as", &Tensor::expand_as)
      .def("t", &Tensor::t)
      .def_property_readonly("T",
                             [](const Tensor& x) {
                               DimList dims;
                               for (int64_t d = x.dim() - 1; d >= 0; --d) dims.push_back(d);
                               return x.permute(dims);
                             })
      .def_property_readonly("mT", [](const Tensor& x) { return x.transpose(-2, -1); });
  m.def(
      "reshape",
      [](const Tensor& x, py::handle shape) { return x.reshape(to_shape(shape, "reshape", true)); },
      py::arg("input"), py::arg("shape"));
  m.def(
      "permute", [](const Tensor& x, const std::vector<int64_t>& dims) { return x.permute(dims); },
      py::arg("input"), py::arg("dims"));
  m.def(
      "t", [](const Tensor& x) { return x.t(); }, py::arg("input"));
  bind_both(
      cls, m, "flatten", [](const Tensor& x, int64_t s, int64_t e) { return x.flatten(s, e); },
      py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  bind_both(
      cls, m, "transpose", [](const Tensor& x, int64_t a, int64_t b) { return x.transpose(a, b); },
      py::arg("dim0"), py::arg("dim1"));
  bind_both(
      cls, m, "swapaxes", [](const Tensor& x, int64_t a, int64_t b) { return x.transpose(a, b); },
      py::arg("axis0"), py::arg("axis1"));
  bind_both(
      cls, m, "squeeze",
      [](const Tensor& x, py::handle dim) {
        return dim.is_none() ? x.squeeze() : x.squeeze(dim.cast<int64_t>());
      },
      py::arg("dim") = py::none());
  bind_both(
      cls, m, "unsqueeze", [](const Tensor& x, int64_t d) { return x.unsqueeze(d); },
      py::arg("dim"));
  bind_both(
      cls, m, "narrow",
      [](const Tensor& x, int64_t d, int64_t s, int64_t n) { return x.narrow(d, s, n); },
      py::arg("dim"), py::arg("start"), py::arg("length"));
  bind_both(
      cls, m, "select", [](const Tensor& x, int64_t d, int64_t i) { return x.select(d, i); },
      py::arg("dim"), py::arg("index"));
  bind_both(
      cls, m, "as_strided",
      [](const Tensor& x, py::handle size, py::handle stride, py::handle offset) {
        Shape strides;
        for (int64_t s : stride.cast<std::vector<int64_t>>()) strides.push_back(s);
        return x.as_strided(to_shape(size, "as_strided"), strides,
                            offset.is_none() ? x.offset() : offset.cast<int64_t>());
      },
      py::arg("size"), py::arg("stride"), py::arg("storage_offset") = py::none());
  bind_both(
      cls, m, "split",
      [](const Tensor& x, py::handle s, int64_t dim) { return to_tuple(split_any(x, s, dim)); },
      py::arg("split_size_or_sections"), py::arg("dim") = 0);
  bind_both(
      cls, m, "chunk",
      [](const Tensor& x, int64_t chunks, int64_t dim) { return to_tuple(x.chunk(chunks, dim)); },
      py::arg("chunks"), py::arg("dim") = 0);
  bind_both(
      cls, m, "unbind",
      [](const Tensor& x, int64_t dim) {
        int64_t d = wrap_dim("unbind", dim, x.dim());
        std::vector<Tensor> parts;
        for (int64_t i = 0; i < x.size(d); ++i) parts.push_back(x.select(d, i));
        return to_tuple(parts);
      },
      py::arg("dim") = 0);
  m.def(
      "cat",
      [](py::sequence tensors, int64_t dim) { return cat(tensor_list(tensors, "cat"), dim); },
      py::arg("tensors"), py::arg("dim") = 0);
  m.def(
      "concat",
      [](py::sequence tensors, int64_t dim) { return cat(tensor_list(tensors, "cat"), dim); },
      py::arg("tensors"), py::arg("dim") = 0);
  m.def(
      "stack",
      [](py::sequence tensors, int64_t dim) { return stack(tensor_list(tensors, "stack"), dim); },
      py::arg("tensors"), py::arg("dim") = 0);

  // ---- reductions ----
  bind_both(
      cls, m, "sum",
      [](const Tensor& x, py::handle dim, bool keepdim, py::handle dtype) {
        return sum(cast_for(x, dtype), to_dims(dim), keepdim);
      },
      py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
      py::arg("dtype") = py::none());
  bind_both(
      cls, m, "mean",
      [](const Tensor& x, py::handle dim, bool keepdim, py::handle dtype) {
        return mean(cast_for(x, dtype), to_dims(dim), keepdim);
      },
      py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
      py::arg("dtype") = py::none());
  bind_both(cls, m, "max", &extremum<true>, py::arg("dim") = py::none(),
            py::arg("keepdim") = false);
  bind_both(cls, m, "min", &extremum<false>, py::arg("dim") = py::none(),
            py::arg("keepdim") = false);
  bind_both(
      cls, m, "amax",
      [](const Tensor& x, py::handle dim, bool keepdim) { return amax(x, to_dims(dim), keepdim); },
      py::arg("dim") = py::tuple(), py::arg("keepdim") = false);
  bind_both(
      cls, m, "amin",
      [](const Tensor& x, py::handle dim, bool keepdim) { return amin(x, to_dims(dim), keepdim); },
      py::arg("dim") = py::tuple(), py::arg("keepdim") = false);
  bind_both(
      cls, m, "argmax",
      [](const Tensor& x, py::handle dim, bool keepdim) {
        return dim.is_none() ? argmax(x) : argmax(x, dim.cast<int64_t>(), keepdim);
      },
      py::arg("dim") = py::none(), py::arg("keepdim") = false);
  bind_both(
      cls, m, "argmin",
      [](const Tensor& x, py::handle dim, bool keepdim) {
        return dim.is_none() ? argmin(x) : argmin(x, dim.cast<int64_t>(), keepdim);
      },
      py::arg("dim") = py::none(), py::arg("keepdim") = false);
  bind_both(
      cls, m, "var",
      [](const Tensor& x, py::handle dim, py::handle unbiased, bool keepdim, py::handle corr) {
        return var(x, to_dims(dim), correction_of(unbiased, corr), keepdim);
      },
      py::arg("dim") = py::none(), py::arg("unbiased") = py::none(), py::arg("keepdim") = false,
      py::kw_only(), py::arg("correction") = py::none());
  bind_both(
      cls, m, "std",
      [](const Tensor& x, py::handle dim, py::handle unbiased, bool keepdim, py::handle corr) {
        return wick::std(x, to_dims(dim), correction_of(unbiased, corr), keepdim);
      },
      py::arg("dim") = py::none(), py::arg("unbiased") = py::none(), py::arg("keepdim") = false,
      py::kw_only(), py::arg("correction") = py::none());
  // ---- along one dim: scans, products, sorting (core/ops/scan.h) ----
  bind_both(
      cls, m, "cumsum",
      [](const Tensor& x, int64_t dim, py::handle dtype) {
        return cumsum(x, dim, to_optional_dtype(dtype));
      },
      py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none());
  bind_both(
      cls, m, "cumprod",
      [](const Tensor& x, int64_t dim, py::handle dtype) {
        return cumprod(x, dim, to_optional_dtype(dtype));
      },
      py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none());
  bind_both(
      cls, m, "prod",
      [](const Tensor& x, py::handle dim, bool keepdim, py::handle dtype) {
        if (dim.is_none()) return prod(x, to_optional_dtype(dtype));
        return prod(x, dim.cast<int64_t>(), keepdim, to_optional_dtype(dtype));
      },
      py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
      py::arg("dtype") = py::none());
  bind_both(
      cls, m, "sort",
      [](const Tensor& x, int64_t dim, bool descending, py::handle stable) {
        (void)stable;  // the sort is always stable
        return values_indices(sort(x, dim, descending));
      },
      py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(),
      py::arg("stable") = py::none());
  bind_both(
      cls, m, "argsort",
      [](const Tensor& x, int64_t dim, bool descending, bool stable) {
        (void)stable;
        return argsort(x, dim, descending);
      },
      py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(), py::arg("stable") = false);
  bind_both(
      cls, m, "topk",
      [](const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
        return values_indices(topk(x, k, dim, largest, sorted));
      },
      py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true, py::arg("sorted") = true);
  bind_both(
      cls, m, "median",
      [](const Tensor& x, py::handle dim, bool keepdim) -> py::object {
        if (dim.is_none()) return py::cast(median(x));
        return values_indices(median(x, dim.cast<int64_t>(), keepdim));
      },
      py::arg("dim") = py::none(), py::arg("keepdim") = false);
  bind_both(
      cls, m, "logsumexp",
      [](const Tensor& x, py::handle dim, bool keepdim) {
        return logsumexp(x, to_dims(dim), keepdim);
      },
      py::arg("dim"), py::arg("keepdim") = false);
  bind_both(
      cls, m, "any",
      [](const Tensor& x, py::handle dim, bool keepdim) { return any(x, to_dims(dim), keepdim); },
      py::arg("dim") = py::none(), py::arg("keepdim") = false);
  bind_both(
      cls, m, "all",
      [](const Tensor& x, py::handle dim, bool keepdim) { return all(x, to_dims(dim), keepdim); },
      py::arg("dim") = py::none(), py::arg("keepdim") = false);
  bind_both(
      cls, m, "norm",
      [](const Tensor& x, py::handle p, py::handle dim, bool keepdim) {
        return norm(x, p.is_none() ? 2.0 : p.cast<double>(), to_dims(dim), keepdim);
      },
      py::arg("p") = py::none(), py::arg("dim") = py::none(), py::arg("keepdim") = false);

  // ---- matrix products, softmax, index ops ----
  bind_both(
      cls, m, "matmul", [](const Tensor& a, const Tensor& b) { return matmul(a, b); },
      py::arg("other"));
  bind_both(
      cls, m, "mm", [](const Tensor& a, const Tensor& b) { return mm(a, b); }, py::arg("mat2"));
  bind_both(
      cls, m, "bmm", [](const Tensor& a, const Tensor& b) { return bmm(a, b); }, py::arg("mat2"));
  bind_both(
      cls, m, "softmax",
      [](const Tensor& x, int64_t dim, py::handle dtype) {
        return softmax(cast_for(x, dtype), dim);
      },
      py::arg("dim"), py::arg("dtype") = py::none());
  bind_both(
      cls, m, "log_softmax",
      [](const Tensor& x, int64_t dim, py::handle dtype) {
        return log_softmax(cast_for(x, dtype), dim);
      },
      py::arg("dim"), py::arg("dtype") = py::none());
  bind_both(
      cls, m, "index_select",
      [](const Tensor& x, int64_t d, const Tensor& i) { return index_select(x, d, i); },
      py::arg("dim"), py::arg("index"));
  bind_both(
      cls, m, "gather", [](const Tensor& x, int64_t d, const Tensor& i) { return gather(x, d, i); },
      py::arg("dim"), py::arg("index"));
  bind_both(
      cls, m, "scatter_add",
      [](const Tensor& x, int64_t d, const Tensor& i, const Tensor& s) {
        return scatter_add(x, d, i, s);
      },
      py::arg("dim"), py::arg("index"), py::arg("src"));
  bind_both(
      cls, m, "masked_select",
      [](const Tensor& x, const Tensor& mask) { return masked_select(x, mask); }, py::arg("mask"));
  bind_both(
      cls, m, "nonzero",
      [](const Tensor& x, bool as_tuple) -> py::object {
        Tensor nz = nonzero(x);
        if (!as_tuple) return py::cast(nz);
        std::vector<Tensor> cols;
        for (int64_t d = 0; d < nz.size(1); ++d) cols.push_back(nz.select(1, d));
        return to_tuple(cols);
      },
      py::kw_only(), py::arg("as_tuple") = false);
  bind_both(
      cls, m, "index_put",
      [](const Tensor& x, py::sequence indices, const Tensor& values, bool accumulate) {
        std::vector<Tensor> idx;
        for (py::handle h : indices) idx.push_back(optional_tensor(h, "indices"));
        return index_put(x, idx, values, accumulate);
      },
      py::arg("indices"), py::arg("values"), py::arg("accumulate") = false);
  cls.def(
      "index_put_",
      [](py::object self, py::sequence indices, const Tensor& values, bool accumulate) {
        std::vector<Tensor> idx;
        for (py::handle h : indices) idx.push_back(optional_tensor(h, "indices"));
        index_put_(self.cast<Tensor&>(), idx, values, accumulate);
        return self;
      },
      py::arg("indices"), py::arg("values"), py::arg("accumulate") = false);
}

}  // namespace wick::python
