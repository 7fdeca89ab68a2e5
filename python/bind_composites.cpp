// The composite ops (core/ops/composite_*.h) as wick.* functions and Tensor methods, with
// PyTorch's argument names and defaults; and wick.Generator, for the random ones.
#include <pybind11/stl.h>

#include "python/bind_common.h"

namespace wick::python {

namespace {

// An int, or ints given as a tuple/list or as several positional arguments (x.flip(0, 1)).
DimList dims_from_args(const py::args& args) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return to_dims(args[0]);
  return args.cast<std::vector<int64_t>>();
}

Generator& generator_of(py::handle h) {
  if (h.is_none()) return default_generator();
  return h.cast<Generator&>();
}

std::optional<int64_t> optional_dim(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return h.cast<int64_t>();
}

// unique's result: a tensor alone, or a tuple with the inverse and/or the counts, as PyTorch.
py::object unique_result(const std::tuple<Tensor, Tensor, Tensor>& r, bool inverse, bool counts) {
  if (!inverse && !counts) return py::cast(std::get<0>(r));
  py::list out;
  out.append(std::get<0>(r));
  if (inverse) out.append(std::get<1>(r));
  if (counts) out.append(std::get<2>(r));
  return py::tuple(out);
}

py::object unique_py(const Tensor& x, bool sorted, bool return_inverse, bool return_counts,
                     py::handle dim) {
  check_value(dim.is_none(), "unique", "dim=", py::str(dim).cast<std::string>(),
              " is not supported; wick's unique works on the flattened tensor (dim=None)");
  return unique_result(unique(x, sorted, return_inverse, return_counts), return_inverse,
                       return_counts);
}

Tensor scatter_py(const Tensor& x, int64_t dim, const Tensor& index, py::handle src,
                  py::handle value, py::handle reduce) {
  check_value(reduce.is_none(), "scatter", "reduce=", py::str(reduce).cast<std::string>(),
              " is not supported; use scatter_add for 'add'");
  py::handle given = src.is_none() ? value : src;
  check_value(!given.is_none(), "scatter", "expected src (a tensor) or value (a number)");
  if (const Tensor* t = try_tensor(given)) return scatter(x, dim, index, *t);
  return scatter(x, dim, index, to_scalar(given, "value"));
}

Tensor repeat_interleave_py(const Tensor& x, py::handle repeats, py::handle dim) {
  if (repeats.is_none()) return repeat_interleave(x);  // repeat_interleave(repeats)
  if (const Tensor* r = try_tensor(repeats)) return repeat_interleave(x, *r, optional_dim(dim));
  return repeat_interleave(x, repeats.cast<int64_t>(), optional_dim(dim));
}

Tensor tensordot_py(const Tensor& a, const Tensor& b, py::handle dims) {
  if (PyLong_Check(dims.ptr())) return tensordot(a, b, dims.cast<int64_t>());
  if (const Tensor* t = try_tensor(dims)) {
    if (t->dim() == 0) return tensordot(a, b, t->item<int64_t>());
    return tensordot(a, b, t->select(0, 0).to_vector<int64_t>(),
                     t->select(0, 1).to_vector<int64_t>());
  }
  auto pair = dims.cast<std::vector<py::object>>();
  check_value(pair.size() == 2, "tensordot", "dims must be an int or a pair of dim lists; got ",
              pair.size(), " lists");
  return tensordot(a, b, to_dims(pair[0]), to_dims(pair[1]));
}

// einsum("ij,jk", a, b), einsum("ij,jk", [a, b]), or the sublist form
// einsum(a, [0, 1], b, [1, 2], [0, 2]) with ints for subscripts and Ellipsis for "...".
Tensor einsum_py(py::args args) {
  check_value(args.size() >= 1, "einsum",
              "einsum(): must specify the equation string and at least one operand, or at least "
              "one operand and its subscripts list");
  std::vector<Tensor> tensors;
  if (py::isinstance<py::str>(args[0])) {
    std::string equation = args[0].cast<std::string>();
    if (args.size() == 2 && !try_tensor(args[1])) {
      for (py::handle h : args[1]) tensors.push_back(to_tensor(h, "einsum"));
    } else {
      for (size_t i = 1; i < args.size(); ++i) tensors.push_back(to_tensor(args[i], "einsum"));
    }
    return einsum(equation, tensors);
  }
  auto subscripts = [](py::handle list) {
    std::string term;
    for (py::handle h : list) {
      if (h.is(py::ellipsis())) {
        term += "...";
        continue;
      }
      int64_t s = h.cast<int64_t>();
      check_state(s >= 0 && s < 52, "einsum",
                  "einsum(): subscript in subscript list is not within the valid range [0, 52); "
                  "got ",
                  s);
      term += static_cast<char>(s < 26 ? 'A' + s : 'a' + (s - 26));
    }
    return term;
  };
  std::string equation;
  size_t i = 0;
  for (; i + 1 < args.size(); i += 2) {
    tensors.push_back(to_tensor(args[i], "einsum"));
    equation += (tensors.size() > 1 ? "," : "") + subscripts(args[i + 1]);
  }
  if (i < args.size()) equation += "->" + subscripts(args[i]);  // the output's sublist
  return einsum(equation, tensors);
}

Tensor searchsorted_py(const Tensor& seq, py::handle values, bool out_int32, bool right,
                       py::handle side, py::handle sorter) {
  if (!side.is_none()) {
    std::string s = side.cast<std::string>();
    check_state(s == "left" || s == "right", "searchsorted",
                "side can only be 'left' or 'right' but got ", s);
    check_state(!(s == "left" && right), "searchsorted",
                "side and right can't be set to opposites, got side of left while right was True");
    right = s == "right";
  }
  Tensor v = try_tensor(values) ? *try_tensor(values)
                                : scalar_tensor(to_scalar(values, "values"), options_of(seq));
  return searchsorted(seq, v, out_int32, right, optional_tensor(sorter, "sorter"));
}

py::object var_mean_py(const Tensor& x, py::handle dim, py::handle unbiased, bool keepdim,
                       py::handle correction) {
  int64_t c = 1;
  if (!correction.is_none()) {
    c = correction.cast<int64_t>();
  } else if (!unbiased.is_none()) {
    c = unbiased.cast<bool>() ? 1 : 0;
  }
  auto [v, m] = var_mean(x, to_dims(dim), c, keepdim);
  return py::make_tuple(v, m);
}

Tensor normal_py(py::handle mean, py::handle std, py::handle size, py::handle generator,
                 py::handle dtype, py::handle device, bool requires_grad) {
  Generator& gen = generator_of(generator);
  const Tensor* m = try_tensor(mean);
  const Tensor* s = try_tensor(std);
  if (m && s) return normal(*m, *s, gen);
  if (m) return normal(*m, to_scalar(std, "std").to<double>(), gen);
  if (s) return normal(to_scalar(mean, "mean").to<double>(), *s, gen);
  check_value(!size.is_none(), "normal",
              "with a number for both mean and std, the size argument is required");
  TensorOptions options;
  options.dtype = to_optional_dtype(dtype);
  if (!device.is_none()) options.device = to_device(device);
  options.requires_grad = requires_grad;
  return normal(to_scalar(mean, "mean").to<double>(), to_scalar(std, "std").to<double>(),
                to_shape(size, "normal"), options, gen);
}

}  // namespace

void init_composites(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));

  // torch.Generator: a seed and a position in the random stream, for the ops taking generator=.
  py::class_<Generator>(m, "Generator")
      .def(py::init([](py::handle device) {
             if (!device.is_none()) {
               check_value(to_device(device).is_cpu(), "Generator",
                           "only CPU generators are supported; got device ",
                           py::str(device).cast<std::string>());
             }
             return std::make_unique<Generator>();
           }),
           py::arg("device") = py::none())
      .def(
          "manual_seed",
          [](py::object self, uint64_t seed) {
            self.cast<Generator&>().manual_seed(seed);
            return self;
          },
          py::arg("seed"))
      .def("initial_seed", &Generator::seed);

  // ---- shape ----
  bind_both(
      cls, m, "tril", [](const Tensor& x, int64_t k) { return tril(x, k); },
      py::arg("diagonal") = 0);
  bind_both(
      cls, m, "triu", [](const Tensor& x, int64_t k) { return triu(x, k); },
      py::arg("diagonal") = 0);
  for (bool lower : {true, false}) {
    cls.def(
        lower ? "tril_" : "triu_",
        [lower](py::object self, int64_t k) {
          Tensor& x = self.cast<Tensor&>();
          x.copy_(lower ? tril(x, k) : triu(x, k));  // Note [in-place and autograd]
          return self;
        },
        py::arg("diagonal") = 0);
  }
  cls.def("flip", [](const Tensor& x, py::args dims) { return flip(x, dims_from_args(dims)); });
  m.def(
      "flip", [](const Tensor& x, py::handle dims) { return flip(x, to_dims(dims)); },
      py::arg("input"), py::arg("dims"));
  bind_both(
      cls, m, "roll",
      [](const Tensor& x, py::handle shifts, py::handle dims) {
        return roll(x, to_dims(shifts), to_dims(dims));
      },
      py::arg("shifts"), py::arg("dims") = py::none());
  cls.def("tile", [](const Tensor& x, py::args dims) { return tile(x, dims_from_args(dims)); });
  m.def(
      "tile", [](const Tensor& x, py::handle dims) { return tile(x, to_dims(dims)); },
      py::arg("input"), py::arg("dims"));
  cls.def(
      "repeat_interleave",
      [](const Tensor& x, py::handle repeats, py::handle dim, py::handle) {
        return repeat_interleave_py(x, repeats, dim);
      },
      py::arg("repeats"), py::arg("dim") = py::none(), py::kw_only(),
      py::arg("output_size") = py::none());
  m.def(
      "repeat_interleave",
      [](const Tensor& x, py::handle repeats, py::handle dim, py::handle) {
        return repeat_interleave_py(x, repeats, dim);
      },
      py::arg("input"), py::arg("repeats") = py::none(), py::arg("dim") = py::none(), py::kw_only(),
      py::arg("output_size") = py::none());
  bind_both(
      cls, m, "broadcast_to",
      [](const Tensor& x, py::handle size) {
        return broadcast_to(x, to_shape(size, "broadcast_to", true));
      },
      py::arg("size"));
  for (const char* name : {"movedim", "moveaxis"}) {
    bind_both(
        cls, m, name,
        [](const Tensor& x, py::handle src, py::handle dst) {
          return movedim(x, to_dims(src), to_dims(dst));
        },
        py::arg("source"), py::arg("destination"));
  }
  bind_both(
      cls, m, "unflatten",
      [](const Tensor& x, int64_t dim, py::handle sizes) {
        return unflatten(x, dim, to_shape(sizes, "unflatten", true));
      },
      py::arg("dim"), py::arg("sizes"));
  bind_both(
      cls, m, "take", [](const Tensor& x, const Tensor& index) { return take(x, index); },
      py::arg("index"));

  // ---- linear algebra ----
  bind_both(
      cls, m, "diag", [](const Tensor& x, int64_t k) { return diag(x, k); },
      py::arg("diagonal") = 0);
  bind_both(
      cls, m, "diagonal",
      [](const Tensor& x, int64_t offset, int64_t d1, int64_t d2) {
        return diagonal(x, offset, d1, d2);
      },
      py::arg("offset") = 0, py::arg("dim1") = 0, py::arg("dim2") = 1);
  bind_both(cls, m, "trace", [](const Tensor& x) { return trace(x); });
  bind_both(
      cls, m, "dot", [](const Tensor& a, const Tensor& b) { return dot(a, b); }, py::arg("other"));
  bind_both(
      cls, m, "outer", [](const Tensor& a, const Tensor& b) { return outer(a, b); },
      py::arg("vec2"));
  bind_both(
      cls, m, "ger", [](const Tensor& a, const Tensor& b) { return outer(a, b); }, py::arg("vec2"));
  bind_both(
      cls, m, "addmm",
      [](const Tensor& x, const Tensor& m1, const Tensor& m2, py::handle beta, py::handle alpha) {
        return addmm(x, m1, m2, to_scalar(beta, "beta"), to_scalar(alpha, "alpha"));
      },
      py::arg("mat1"), py::arg("mat2"), py::kw_only(), py::arg("beta") = 1, py::arg("alpha") = 1);
  bind_both(
      cls, m, "baddbmm",
      [](const Tensor& x, const Tensor& b1, const Tensor& b2, py::handle beta, py::handle alpha) {
        return baddbmm(x, b1, b2, to_scalar(beta, "beta"), to_scalar(alpha, "alpha"));
      },
      py::arg("batch1"), py::arg("batch2"), py::kw_only(), py::arg("beta") = 1,
      py::arg("alpha") = 1);
  m.def("tensordot", &tensordot_py, py::arg("a"), py::arg("b"), py::arg("dims") = 2);
  bind_both(
      cls, m, "kron", [](const Tensor& a, const Tensor& b) { return kron(a, b); },
      py::arg("other"));
  m.def("einsum", &einsum_py);
  bind_both(
      cls, m, "cross",
      [](const Tensor& a, const Tensor& b, py::handle dim) {
        return cross(a, b, optional_dim(dim));
      },
      py::arg("other"), py::arg("dim") = py::none());
  m.def(
      "cdist",
      [](const Tensor& x1, const Tensor& x2, double p, py::handle mode) {
        return cdist(
            x1, x2, p,
            mode.is_none() ? "use_mm_for_euclid_dist_if_necessary" : mode.cast<std::string>());
      },
      py::arg("x1"), py::arg("x2"), py::arg("p") = 2.0, py::arg("compute_mode") = py::none());

  // ---- statistics, search, counting ----
  bind_both(
      cls, m, "lerp",
      [](const Tensor& x, const Tensor& end, py::handle weight) {
        if (const Tensor* w = try_tensor(weight)) return lerp(x, end, *w);
        return lerp(x, end, to_scalar(weight, "weight"));
      },
      py::arg("end"), py::arg("weight"));
  cls.def(
      "lerp_",
      [](py::object self, const Tensor& end, py::handle weight) {
        Tensor& x = self.cast<Tensor&>();
        const Tensor* w = try_tensor(weight);
        x.copy_(w ? lerp(x, end, *w) : lerp(x, end, to_scalar(weight, "weight")));
        return self;
      },
      py::arg("end"), py::arg("weight"));
  bind_both(
      cls, m, "isclose",
      [](const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
        return isclose(a, b, rtol, atol, equal_nan);
      },
      py::arg("other"), py::arg("rtol") = 1e-5, py::arg("atol") = 1e-8,
      py::arg("equal_nan") = false);
  m.def("var_mean", &var_mean_py, py::arg("input"), py::arg("dim") = py::none(),
        py::arg("unbiased") = py::none(), py::arg("keepdim") = false, py::kw_only(),
        py::arg("correction") = py::none());
  bind_both(
      cls, m, "count_nonzero",
      [](const Tensor& x, py::handle dim) { return count_nonzero(x, to_dims(dim)); },
      py::arg("dim") = py::none());
  m.def(
      "bucketize",
      [](py::handle input, const Tensor& boundaries, bool out_int32, bool right) {
        Tensor v = try_tensor(input)
                       ? *try_tensor(input)
                       : scalar_tensor(to_scalar(input, "input"), options_of(boundaries));
        return bucketize(v, boundaries, out_int32, right);
      },
      py::arg("input"), py::arg("boundaries"), py::kw_only(), py::arg("out_int32") = false,
      py::arg("right") = false);
  m.def("searchsorted", &searchsorted_py, py::arg("sorted_sequence"), py::arg("values"),
        py::kw_only(), py::arg("out_int32") = false, py::arg("right") = false,
        py::arg("side") = py::none(), py::arg("sorter") = py::none());
  bind_both(
      cls, m, "histc",
      [](const Tensor& x, int64_t bins, double lo, double hi) { return histc(x, bins, lo, hi); },
      py::arg("bins") = 100, py::arg("min") = 0, py::arg("max") = 0);
  bind_both(
      cls, m, "bincount",
      [](const Tensor& x, py::handle weights, int64_t minlength) {
        return bincount(x, optional_tensor(weights, "weights"), minlength);
      },
      py::arg("weights") = py::none(), py::arg("minlength") = 0);
  bind_both(cls, m, "unique", &unique_py, py::arg("sorted") = true,
            py::arg("return_inverse") = false, py::arg("return_counts") = false,
            py::arg("dim") = py::none());
  bind_both(cls, m, "scatter", &scatter_py, py::arg("dim"), py::arg("index"),
            py::arg("src") = py::none(), py::kw_only(), py::arg("value") = py::none(),
            py::arg("reduce") = py::none());
  cls.def(
      "scatter_",
      [](py::object self, int64_t dim, const Tensor& index, py::handle src, py::handle value,
         py::handle reduce) {
        Tensor& x = self.cast<Tensor&>();
        x.copy_(scatter_py(x, dim, index, src, value, reduce));  // Note [in-place and autograd]
        return self;
      },
      py::arg("dim"), py::arg("index"), py::arg("src") = py::none(), py::kw_only(),
      py::arg("value") = py::none(), py::arg("reduce") = py::none());

  // ---- random ----
  m.def(
      "randperm",
      [](int64_t n, py::handle generator, py::handle dtype, py::handle device, bool requires_grad) {
        TensorOptions options;
        options.dtype = to_optional_dtype(dtype);
        if (!device.is_none()) options.device = to_device(device);
        Tensor out = randperm(n, options, generator_of(generator));
        if (requires_grad) out.requires_grad_();
        return out;
      },
      py::arg("n"), py::kw_only(), py::arg("generator") = py::none(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);
  bind_both(
      cls, m, "multinomial",
      [](const Tensor& p, int64_t n, bool replacement, py::handle generator) {
        return multinomial(p, n, replacement, generator_of(generator));
      },
      py::arg("num_samples"), py::arg("replacement") = false, py::kw_only(),
      py::arg("generator") = py::none());
  m.def("normal", &normal_py, py::arg("mean"), py::arg("std") = 1.0, py::arg("size") = py::none(),
        py::kw_only(), py::arg("generator") = py::none(), py::arg("dtype") = py::none(),
        py::arg("device") = py::none(), py::arg("requires_grad") = false);
}

}  // namespace wick::python
