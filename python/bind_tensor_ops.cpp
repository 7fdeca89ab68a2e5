// Elementwise math as Tensor methods, as wick.* functions and as Python operators:
// + - * / // % ** @, unary minus, comparisons, their reflected forms with Python numbers, and the
// in-place forms (add_, x += y, ...).
//
// Note [fast operator path]
// `a + b` is the most frequent call from Python, so the operators take the other operand as a
// py::handle and test it directly (a wick.Tensor? a Python number?) instead of letting pybind11
// try overloads one by one; what is neither returns NotImplemented, so Python can try the other
// operand's reflected method (NumPy arrays, custom classes). Each op is one lambda, bound both as
// a method and as a module function, so the two forms cannot drift apart.
#include <pybind11/stl.h>

#include "core/op_table.h"
#include "core/ops/op_utils.h"
#include "cuda/api.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

using TensorTensor = Tensor (*)(const Tensor&, const Tensor&);
using TensorScalar = Tensor (*)(const Tensor&, const Scalar&);

py::object not_implemented() { return py::reinterpret_borrow<py::object>(Py_NotImplemented); }

// A 0-d tensor holding `s` with the dtype it takes next to `like` (PyTorch's scalar promotion).
Tensor scalar_like(const Scalar& s, const Tensor& like) {
  return scalar_tensor(
      s, TensorOptions(promote_with_scalar(like.dtype(), s.kind())).with_device(like.device()));
}

// Tensor op (Tensor or number), or NotImplemented (operators) / TypeError (methods).
template <TensorTensor FT, TensorScalar FS>
py::object binary_op(const Tensor& a, py::handle b) {
  if (const Tensor* t = try_tensor(b)) return py::cast(FT(a, *t));
  Scalar s;
  if (try_scalar(b, s)) return py::cast(FS(a, s));
  return not_implemented();
}

// The reflected form (`2 - x`, or `t - p` when p is a Parameter, a Tensor subclass, whose
// reflected method Python tries first): a tensor operand goes on the left.
template <TensorTensor FT, TensorScalar FS>
py::object reflected_op(const Tensor& a, py::handle b) {
  if (const Tensor* t = try_tensor(b)) return py::cast(FT(*t, a));
  Scalar s;
  if (try_scalar(b, s)) return py::cast(FS(a, s));
  return not_implemented();
}

template <TensorTensor FT, TensorScalar FS>
Tensor binary_method(const Tensor& a, py::handle b) {
  if (const Tensor* t = try_tensor(b)) return FT(a, *t);
  return FS(a, to_scalar(b, "other"));
}

Tensor pow_ts(const Tensor& a, const Scalar& s) { return pow(a, s); }
Tensor pow_tt(const Tensor& a, const Tensor& b) { return pow(a, b); }
Tensor rsub_ts(const Tensor& a, const Scalar& s) { return s - a; }
Tensor rdiv_ts(const Tensor& a, const Scalar& s) { return s / a; }
Tensor rpow_ts(const Tensor& a, const Scalar& s) { return pow(scalar_like(s, a), a); }
Tensor maximum_ts(const Tensor& a, const Scalar& s) { return maximum(a, scalar_like(s, a)); }
Tensor minimum_ts(const Tensor& a, const Scalar& s) { return minimum(a, scalar_like(s, a)); }
Tensor land_ts(const Tensor& a, const Scalar& s) { return logical_and(a, scalar_like(s, a)); }
Tensor lor_ts(const Tensor& a, const Scalar& s) { return logical_or(a, scalar_like(s, a)); }
Tensor add_tt(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor add_ts(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor sub_tt(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor sub_ts(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor mul_tt(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor mul_ts(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor div_tt(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor div_ts(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor eq_tt(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor eq_ts(const Tensor& a, const Scalar& b) { return eq(a, b); }
Tensor ne_tt(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor ne_ts(const Tensor& a, const Scalar& b) { return ne(a, b); }
Tensor lt_tt(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor lt_ts(const Tensor& a, const Scalar& b) { return lt(a, b); }
Tensor le_tt(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor le_ts(const Tensor& a, const Scalar& b) { return le(a, b); }
Tensor gt_tt(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor gt_ts(const Tensor& a, const Scalar& b) { return gt(a, b); }
Tensor ge_tt(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor ge_ts(const Tensor& a, const Scalar& b) { return ge(a, b); }
Tensor max_tt(const Tensor& a, const Tensor& b) { return maximum(a, b); }
Tensor min_tt(const Tensor& a, const Tensor& b) { return minimum(a, b); }
Tensor land_tt(const Tensor& a, const Tensor& b) { return logical_and(a, b); }
Tensor rem_tt(const Tensor& a, const Tensor& b) { return remainder(a, b); }
Tensor rem_ts(const Tensor& a, const Scalar& s) { return remainder(a, scalar_like(s, a)); }
Tensor rrem_ts(const Tensor& a, const Scalar& s) { return remainder(scalar_like(s, a), a); }
Tensor fmod_tt(const Tensor& a, const Tensor& b) { return fmod(a, b); }
Tensor fmod_ts(const Tensor& a, const Scalar& s) { return fmod(a, scalar_like(s, a)); }
Tensor floordiv_tt(const Tensor& a, const Tensor& b) { return div_floor(a, b); }
Tensor floordiv_ts(const Tensor& a, const Scalar& s) { return div_floor(a, scalar_like(s, a)); }
Tensor rfloordiv_ts(const Tensor& a, const Scalar& s) { return div_floor(scalar_like(s, a), a); }
Tensor lor_tt(const Tensor& a, const Tensor& b) { return logical_or(a, b); }

// `other * alpha` for add/sub's alpha argument.
Tensor scaled(const Tensor& a, py::handle other, const Scalar& alpha, bool subtract) {
  bool unit = alpha.to_double() == 1.0;
  if (const Tensor* t = try_tensor(other)) {
    Tensor b = unit ? *t : *t * alpha;
    return subtract ? a - b : a + b;
  }
  Scalar s = to_scalar(other, "other");
  if (!unit) s = Scalar(s.to_double() * alpha.to_double());
  return subtract ? a - s : a + s;
}

// PyTorch still accepts the pre-1.5 order add(alpha, other) - `p.data.add_(-lr, p.grad.data)` in
// older course code and in pytorch/examples' word_language_model - with a UserWarning naming the
// new signature; wick does the same.
void warn_deprecated_alpha_first(const char* op) {
  std::string message = std::string("This overload of ") + op + " is deprecated:\n\t" + op +
                        "(Number alpha, Tensor other)\n" +
                        "Consider using one of the following signatures instead:\n\t" + op +
                        "(Tensor other, *, Number alpha)";
  // Under `-W error` the warning is an exception, which must reach Python as one.
  if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) < 0) throw py::error_already_set();
}

// torch.div's rounding_mode: None, 'trunc' or 'floor' (core/ops/elementwise.h checks the value).
Tensor div_rounding(const Tensor& a, py::handle b, py::handle rounding_mode) {
  if (rounding_mode.is_none()) return binary_method<div_tt, div_ts>(a, b);
  check_type(py::isinstance<py::str>(rounding_mode), "div",
             "rounding_mode must be None, 'trunc' or 'floor'; got ",
             Py_TYPE(rounding_mode.ptr())->tp_name);
  std::string mode = rounding_mode.cast<std::string>();
  check_value(!mode.empty(), "div",
              "expected rounding_mode to be one of None, 'trunc', or 'floor'; got ''");
  if (const Tensor* t = try_tensor(b)) return div(a, *t, mode);
  return div(a, scalar_like(to_scalar(b, "other"), a), mode);
}

// Writes `result` into `self` (Tensor::copy_, which bumps the version and rebases autograd
// history) after checking that its dtype can be stored there, as PyTorch's in-place ops do.
py::object assign(py::object self, const Tensor& result, const char* op) {
  Tensor& t = self.cast<Tensor&>();
  check_type(is_floating(t.dtype()) || !is_floating(result.dtype()), op, "result type ",
             result.dtype(), " can't be cast to the desired output type ", t.dtype());
  t.copy_(result);
  return self;
}

// In-place ops computed out of place and then assigned (div_, pow_, add_ with alpha) still refuse
// a partially overlapping tensor operand, as the kernel-backed ones do (Note [partial overlap]):
// their answer would be right, but PyTorch raises, and code moved between the two must not
// change behaviour.
void check_operand_overlap(const Tensor& self, py::handle other, const char* op) {
  if (const Tensor* o = try_tensor(other)) detail::check_no_partial_overlap(op, self, *o);
}

Tensor clamp_any(const Tensor& x, py::handle lo, py::handle hi) {
  if (lo.is_none() && hi.is_none())
    throw py::value_error("[clamp] at least one of min or max must be given");
  const Tensor* tlo = try_tensor(lo);
  const Tensor* thi = try_tensor(hi);
  if (tlo != nullptr || thi != nullptr) {  // tensor bounds: maximum / minimum, broadcasting
    Tensor out = x;
    if (!lo.is_none()) out = tlo ? maximum(out, *tlo) : maximum_ts(out, to_scalar(lo, "min"));
    if (!hi.is_none()) out = thi ? minimum(out, *thi) : minimum_ts(out, to_scalar(hi, "max"));
    return out;
  }
  if (lo.is_none()) return clamp_max(x, to_scalar(hi, "max"));
  if (hi.is_none()) return clamp_min(x, to_scalar(lo, "min"));
  return clamp(x, to_scalar(lo, "min"), to_scalar(hi, "max"));
}

Tensor where_any(const Tensor& cond, py::handle a, py::handle b) {
  const Tensor* ta = try_tensor(a);
  const Tensor* tb = try_tensor(b);
  if (ta && tb) return where(cond, *ta, *tb);
  if (ta) return where(cond, *ta, to_scalar(b, "other"));
  if (tb) return where(cond, to_scalar(a, "input"), *tb);
  Scalar sa = to_scalar(a, "input"), sb = to_scalar(b, "other");
  DType dtype = promote_types(sa.default_dtype(), sb.default_dtype());
  return where(cond, scalar_tensor(sa, dtype), scalar_tensor(sb, dtype));
}

// Note [in-place integer division]
// `a //= b`, `a %= b`, floor_divide_, remainder_, fmod_ and div_(rounding_mode=...) compute the
// result out of place and then copy it into `a`, like div_. So a zero in an integer divisor
// raises ZeroDivisionError before `a` is touched: `a` keeps every element it had. (PyTorch raises
// from inside its loop and leaves the elements before the zero divided.) What is not a tensor or
// a number returns NotImplemented from the operators, so Python can try the reflected method.
template <TensorTensor FT, TensorScalar FS>
py::object divide_inplace(py::object self, py::handle b, const char* op, bool method = false) {
  const Tensor& t = self.cast<const Tensor&>();
  Scalar s;
  if (!method && try_tensor(b) == nullptr && !try_scalar(b, s)) return not_implemented();
  check_operand_overlap(t, b, op);
  return assign(self, binary_method<FT, FS>(t, b), op);
}

void bind_operators(py::class_<Tensor>& cls) {
  cls.def("__add__", &binary_op<add_tt, add_ts>)
      .def("__radd__", &reflected_op<add_tt, add_ts>)
      .def("__sub__", &binary_op<sub_tt, sub_ts>)
      .def("__rsub__", &reflected_op<sub_tt, rsub_ts>)
      .def("__mul__", &binary_op<mul_tt, mul_ts>)
      .def("__rmul__", &reflected_op<mul_tt, mul_ts>)
      .def("__truediv__", &binary_op<div_tt, div_ts>)
      .def("__rtruediv__", &reflected_op<div_tt, rdiv_ts>)
      .def("__pow__", &binary_op<pow_tt, pow_ts>)
      .def("__rpow__", &reflected_op<pow_tt, rpow_ts>)
      .def("__floordiv__", &binary_op<floordiv_tt, floordiv_ts>)
      .def("__rfloordiv__", &reflected_op<floordiv_tt, rfloordiv_ts>)
      .def("__mod__", &binary_op<rem_tt, rem_ts>)
      .def("__rmod__", &reflected_op<rem_tt, rrem_ts>)
      .def("__matmul__",
           [](const Tensor& a, py::handle b) -> py::object {
             if (const Tensor* t = try_tensor(b)) return py::cast(matmul(a, *t));
             return not_implemented();
           })
      .def("__rmatmul__",
           [](const Tensor& a, py::handle b) -> py::object {
             if (const Tensor* t = try_tensor(b)) return py::cast(matmul(*t, a));
             return not_implemented();
           })
      .def("__neg__", [](const Tensor& a) { return neg(a); })
      .def("__pos__", [](const Tensor& a) { return a; })
      .def("__abs__", [](const Tensor& a) { return abs(a); })
      .def("__invert__",
           [](const Tensor& a) {
             check_type(a.dtype() == kBool, "invert", "~ is only supported on bool tensors here");
             return logical_not(a);
           })
      .def("__and__", &binary_op<land_tt, land_ts>)
      .def("__or__", &binary_op<lor_tt, lor_ts>)
      .def("__eq__", &binary_op<eq_tt, eq_ts>)
      .def("__ne__", &binary_op<ne_tt, ne_ts>)
      .def("__lt__", &binary_op<lt_tt, lt_ts>)
      .def("__le__", &binary_op<le_tt, le_ts>)
      .def("__gt__", &binary_op<gt_tt, gt_ts>)
      .def("__ge__", &binary_op<ge_tt, ge_ts>);

  // In place: `x += y` keeps x's identity (add_ and mul_ have kernels that write in place).
  cls.def("__iadd__",
          [](py::object self, py::handle b) -> py::object {
            Tensor& t = self.cast<Tensor&>();
            if (const Tensor* o = try_tensor(b)) {
              t.add_(*o);
            } else {
              Scalar s;
              if (!try_scalar(b, s)) return not_implemented();
              t.add_(s);
            }
            return self;
          })
      .def("__isub__",
           [](py::object self, py::handle b) -> py::object {
             Tensor& t = self.cast<Tensor&>();
             if (const Tensor* o = try_tensor(b)) {
               t.sub_(*o);
             } else {
               Scalar s;
               if (!try_scalar(b, s)) return not_implemented();
               t.add_(s.is_floating() ? Scalar(-s.to_double()) : Scalar(-s.to_int()));
             }
             return self;
           })
      .def("__imul__",
           [](py::object self, py::handle b) -> py::object {
             Tensor& t = self.cast<Tensor&>();
             if (const Tensor* o = try_tensor(b)) {
               t.mul_(*o);
             } else {
               Scalar s;
               if (!try_scalar(b, s)) return not_implemented();
               t.mul_(s);
             }
             return self;
           })
      .def("__itruediv__",
           [](py::object self, py::handle b) -> py::object {
             const Tensor& t = self.cast<const Tensor&>();
             check_operand_overlap(t, b, "div_");
             return assign(self, binary_method<div_tt, div_ts>(t, b), "div_");
           })
      .def("__ipow__",
           [](py::object self, py::handle b) -> py::object {
             const Tensor& t = self.cast<const Tensor&>();
             check_operand_overlap(t, b, "pow_");
             return assign(self, binary_method<pow_tt, pow_ts>(t, b), "pow_");
           })
      .def("__ifloordiv__",
           [](py::object self, py::handle b) {
             return divide_inplace<floordiv_tt, floordiv_ts>(self, b, "floor_divide_");
           })
      .def("__imod__", [](py::object self, py::handle b) {
        return divide_inplace<rem_tt, rem_ts>(self, b, "remainder_");
      });
}

// self += alpha * other (-= with subtract), in place. A tensor `other` costs one product (none
// when alpha is 1) and one in-place add; computing self + alpha * other and copying it back
// would allocate and fill two more tensors of self's size, which for a large parameter (an
// embedding's weight in an SGD step written by hand) costs far more than the arithmetic.
py::object add_inplace(py::object self, py::handle other, const Scalar& alpha, bool subtract,
                       const char* op) {
  Tensor& t = self.cast<Tensor&>();
  if (const Tensor* o = try_tensor(other)) {
    Tensor addend = alpha.to_double() == 1.0 ? *o : *o * alpha;
    if (subtract) {
      t.sub_(addend);
    } else {
      t.add_(addend);
    }
    return self;
  }
  check_operand_overlap(t, other, op);
  return assign(self, scaled(t, other, alpha, subtract), op);
}

void bind_inplace(py::class_<Tensor>& cls) {
  auto self_arg = [](py::object self) -> Tensor& { return self.cast<Tensor&>(); };
  auto alpha_or_one = [](py::handle alpha) {
    return alpha.is_none() ? 1 : to_scalar(alpha, "alpha");
  };
  cls.def(
         "add_",
         [alpha_or_one](py::object self, py::handle other, py::handle alpha) {
           return add_inplace(self, other, alpha_or_one(alpha), false, "add_");
         },
         py::arg("other"), py::kw_only(), py::arg("alpha") = py::none())
      .def(
          "sub_",
          [alpha_or_one](py::object self, py::handle other, py::handle alpha) {
            return add_inplace(self, other, alpha_or_one(alpha), true, "sub_");
          },
          py::arg("other"), py::kw_only(), py::arg("alpha") = py::none());
  for (bool subtract : {false, true}) {
    const char* op = subtract ? "sub_" : "add_";
    cls.def(
        op,
        [op, subtract](py::object self, py::handle alpha, const Tensor& other) {
          warn_deprecated_alpha_first(op);
          return add_inplace(self, py::cast(other), to_scalar(alpha, "alpha"), subtract, op);
        },
        py::arg("alpha"), py::arg("other"));
  }
  cls.def(
         "mul_",
         [self_arg](py::object self, py::handle other) {
           Tensor& t = self_arg(self);
           if (const Tensor* o = try_tensor(other)) {
             t.mul_(*o);
           } else {
             t.mul_(to_scalar(other, "other"));
           }
           return self;
         },
         py::arg("other"))
      .def(
          "div_",
          [](py::object self, py::handle other, py::handle rounding_mode) {
            check_operand_overlap(self.cast<const Tensor&>(), other, "div_");
            return assign(self, div_rounding(self.cast<const Tensor&>(), other, rounding_mode),
                          "div_");
          },
          py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none())
      .def(
          "pow_",
          [](py::object self, py::handle e) {
            check_operand_overlap(self.cast<const Tensor&>(), e, "pow_");
            return assign(self, binary_method<pow_tt, pow_ts>(self.cast<const Tensor&>(), e),
                          "pow_");
          },
          py::arg("exponent"))
      .def(
          "floor_divide_",
          [](py::object self, py::handle other) {
            return divide_inplace<floordiv_tt, floordiv_ts>(self, other, "floor_divide_", true);
          },
          py::arg("other"))
      .def(
          "remainder_",
          [](py::object self, py::handle other) {
            return divide_inplace<rem_tt, rem_ts>(self, other, "remainder_", true);
          },
          py::arg("other"))
      .def(
          "fmod_",
          [](py::object self, py::handle other) {
            return divide_inplace<fmod_tt, fmod_ts>(self, other, "fmod_", true);
          },
          py::arg("other"))
      .def("zero_",
           [self_arg](py::object self) {
             self_arg(self).zero_();
             return self;
           })
      .def(
          "fill_",
          [self_arg](py::object self, py::handle value) {
            self_arg(self).fill_(to_scalar(value, "value"));
            return self;
          },
          py::arg("value"))
      .def(
          "copy_",
          [self_arg](py::object self, const Tensor& src, bool non_blocking) {
            cuda::NonBlockingCopies copies(non_blocking);
            self_arg(self).copy_(src);
            return self;
          },
          py::arg("src"), py::arg("non_blocking") = false)
      .def(
          "clamp_",
          [](py::object self, py::handle lo, py::handle hi) {
            return assign(self, clamp_any(self.cast<const Tensor&>(), lo, hi), "clamp_");
          },
          py::arg("min") = py::none(), py::arg("max") = py::none())
      .def(
          "masked_fill_",
          [](py::object self, const Tensor& mask, py::handle value) {
            const Tensor& t = self.cast<const Tensor&>();
            return assign(self, masked_fill(t, mask, to_scalar(value, "value")), "masked_fill_");
          },
          py::arg("mask"), py::arg("value"))
      .def(
          "uniform_",
          [](py::object self, double from, double to) {
            Tensor& t = self.cast<Tensor&>();
            NoGradGuard no_grad;
            t.copy_(rand(t.shape(), TensorOptions(t.dtype()).with_device(t.device())) *
                        (to - from) +
                    from);
            return self;
          },
          py::arg("from") = 0.0, py::arg("to") = 1.0)
      .def(
          "normal_",
          [](py::object self, double mean, double std) {
            Tensor& t = self.cast<Tensor&>();
            NoGradGuard no_grad;
            t.copy_(randn(t.shape(), TensorOptions(t.dtype()).with_device(t.device())) * std +
                    mean);
            return self;
          },
          py::arg("mean") = 0.0, py::arg("std") = 1.0);
  // Unary in-place forms: computed out of place, then written back.
  using Unary = Tensor (*)(const Tensor&);
  const std::pair<const char*, Unary> unary[] = {
      {"neg_", neg},   {"abs_", abs},   {"exp_", exp},         {"log_", log},
      {"sqrt_", sqrt}, {"tanh_", tanh}, {"sigmoid_", sigmoid}, {"relu_", relu},
  };
  for (const auto& [name, fn] : unary) {
    std::string op = name;
    cls.def(name, [fn, op](py::object self) {
      return assign(self, fn(self.cast<const Tensor&>()), op.c_str());
    });
  }
}

}  // namespace

void init_tensor_ops(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  bind_operators(cls);
  bind_inplace(cls);

  // ---- unary math: every plain unary op of the op table, and torch's alias `negative` ----
  for (const OpInfo& op : op_table()) {
    if (!op.generated_api || op.family != std::string("unary")) continue;
    OpKey key = op.key;
    bind_both(cls, m, op.name, [key](const Tensor& x) { return unary_op(key, x); });
  }
  bind_both(cls, m, "negative", [](const Tensor& x) { return neg(x); });

  // ---- binary math (tensor or number) ----
  bind_both(
      cls, m, "add",
      [](const Tensor& a, py::handle b, py::handle alpha) {
        return scaled(a, b, alpha.is_none() ? 1 : to_scalar(alpha, "alpha"), false);
      },
      py::arg("other"), py::kw_only(), py::arg("alpha") = py::none());
  bind_both(
      cls, m, "sub",
      [](const Tensor& a, py::handle b, py::handle alpha) {
        return scaled(a, b, alpha.is_none() ? 1 : to_scalar(alpha, "alpha"), true);
      },
      py::arg("other"), py::kw_only(), py::arg("alpha") = py::none());
  for (bool subtract : {false, true}) {
    const char* op = subtract ? "sub" : "add";
    cls.def(
        op,
        [op, subtract](const Tensor& a, py::handle alpha, const Tensor& other) {
          warn_deprecated_alpha_first(op);
          return scaled(a, py::cast(other), to_scalar(alpha, "alpha"), subtract);
        },
        py::arg("alpha"), py::arg("other"));
  }
  bind_both(cls, m, "mul", &binary_method<mul_tt, mul_ts>, py::arg("other"));
  bind_both(cls, m, "multiply", &binary_method<mul_tt, mul_ts>, py::arg("other"));
  bind_both(cls, m, "div", &div_rounding, py::arg("other"), py::kw_only(),
            py::arg("rounding_mode") = py::none());
  bind_both(cls, m, "floor_divide", &binary_method<floordiv_tt, floordiv_ts>, py::arg("other"));
  bind_both(cls, m, "true_divide", &binary_method<div_tt, div_ts>, py::arg("other"));
  bind_both(cls, m, "pow", &binary_method<pow_tt, pow_ts>, py::arg("exponent"));
  bind_both(cls, m, "maximum", &binary_method<max_tt, maximum_ts>, py::arg("other"));
  bind_both(cls, m, "minimum", &binary_method<min_tt, minimum_ts>, py::arg("other"));
  bind_both(cls, m, "eq", &binary_method<eq_tt, eq_ts>, py::arg("other"));
  bind_both(cls, m, "ne", &binary_method<ne_tt, ne_ts>, py::arg("other"));
  bind_both(cls, m, "lt", &binary_method<lt_tt, lt_ts>, py::arg("other"));
  bind_both(cls, m, "le", &binary_method<le_tt, le_ts>, py::arg("other"));
  bind_both(cls, m, "gt", &binary_method<gt_tt, gt_ts>, py::arg("other"));
  bind_both(cls, m, "ge", &binary_method<ge_tt, ge_ts>, py::arg("other"));
  bind_both(cls, m, "logical_and", &binary_method<land_tt, land_ts>, py::arg("other"));
  bind_both(cls, m, "logical_or", &binary_method<lor_tt, lor_ts>, py::arg("other"));
  bind_both(cls, m, "remainder", &binary_method<rem_tt, rem_ts>, py::arg("other"));
  bind_both(cls, m, "fmod", &binary_method<fmod_tt, fmod_ts>, py::arg("other"));
  // Every plain binary op of the op table (atan2, hypot, logaddexp, ...), and torch's alias.
  for (const OpInfo& op : op_table()) {
    if (!op.generated_api || op.family != std::string("binary")) continue;
    OpKey key = op.key;
    bind_both(
        cls, m, op.name,
        [key](const Tensor& a, const Tensor& b) { return wick::binary_op(key, a, b); },
        py::arg("other"));
  }
  bind_both(
      cls, m, "arctan2", [](const Tensor& a, const Tensor& b) { return atan2(a, b); },
      py::arg("other"));
  bind_both(
      cls, m, "equal", [](const Tensor& a, const Tensor& b) { return equal(a, b); },
      py::arg("other"));
  bind_both(
      cls, m, "allclose",
      [](const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
        return allclose(a, b, rtol, atol, equal_nan);
      },
      py::arg("other"), py::arg("rtol") = 1e-5, py::arg("atol") = 1e-8,
      py::arg("equal_nan") = false);
  bind_both(cls, m, "clamp", &clamp_any, py::arg("min") = py::none(), py::arg("max") = py::none());
  bind_both(cls, m, "clip", &clamp_any, py::arg("min") = py::none(), py::arg("max") = py::none());
  bind_both(
      cls, m, "clamp_min",
      [](const Tensor& x, py::handle lo) { return clamp_any(x, lo, py::none()); }, py::arg("min"));
  bind_both(
      cls, m, "clamp_max",
      [](const Tensor& x, py::handle hi) { return clamp_any(x, py::none(), hi); }, py::arg("max"));
  bind_both(
      cls, m, "masked_fill",
      [](const Tensor& x, const Tensor& mask, py::handle value) {
        return masked_fill(x, mask, to_scalar(value, "value"));
      },
      py::arg("mask"), py::arg("value"));
  // x.where(condition, y) is where(condition, x, y).
  cls.def(
      "where", [](py::handle x, const Tensor& cond, py::handle y) { return where_any(cond, x, y); },
      py::arg("condition"), py::arg("other"));
  m.def(
      "where",
      [](const Tensor& cond, py::handle x, py::handle y) -> py::object {
        if (x.is_none() && y.is_none()) {
          Tensor nz = nonzero(cond);
          py::tuple out(nz.size(1));
          for (int64_t d = 0; d < nz.size(1); ++d) out[d] = py::cast(nz.select(1, d));
          return std::move(out);
        }
        return py::cast(where_any(cond, x, y));
      },
      py::arg("condition"), py::arg("input") = py::none(), py::arg("other") = py::none());
}

}  // namespace wick::python
