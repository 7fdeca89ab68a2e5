#include "core/dispatch_observer.h"

#include <sstream>

#include "core/op_table.h"

namespace wick {

namespace detail {
std::atomic<int> g_observers_installed{0};
namespace {
thread_local DispatchObserver* t_observer = nullptr;
}
DispatchObserver* current_dispatch_observer() { return t_observer; }
}  // namespace detail

DispatchObserverGuard::DispatchObserverGuard(DispatchObserver* observer)
    : previous_(detail::t_observer) {
  detail::t_observer = observer;
  detail::g_observers_installed.fetch_add(1, std::memory_order_relaxed);
}

DispatchObserverGuard::~DispatchObserverGuard() {
  detail::t_observer = previous_;
  detail::g_observers_installed.fetch_sub(1, std::memory_order_relaxed);
}

bool DispatchAttr::operator==(const DispatchAttr& o) const {
  if (name != o.name || kind != o.kind) return false;
  switch (kind) {
    case Kind::Int:
    case Kind::Bool:
      return i == o.i;
    case Kind::Float:
      return f == o.f || (f != f && o.f != o.f);  // NaN attributes compare equal
    case Kind::Ints:
      return ints == o.ints;
    case Kind::Scalar:
      return scalar.kind() == o.scalar.kind() && scalar.to_double() == o.scalar.to_double() &&
             scalar.to_int() == o.scalar.to_int();
  }
  return false;
}

std::string DispatchAttr::value_str() const {
  std::ostringstream os;
  switch (kind) {
    case Kind::Int:
      os << i;
      break;
    case Kind::Bool:
      os << (i ? "True" : "False");
      break;
    case Kind::Float:
      os << f;
      break;
    case Kind::Scalar:
      os << scalar;
      break;
    case Kind::Ints:
      os << "[";
      for (size_t k = 0; k < ints.size(); ++k) os << (k ? ", " : "") << ints[k];
      os << "]";
      break;
  }
  return os.str();
}

namespace detail {

std::string AttrNamer::take() {
  const std::vector<OpAttr>& attrs = op_info(op).attrs;
  size_t k = next++;
  return k < attrs.size() ? attrs[k].name : "arg" + std::to_string(k);
}

namespace {
DispatchAttr make_int(std::string name, int64_t v) {
  DispatchAttr a;
  a.name = std::move(name), a.kind = DispatchAttr::Kind::Int, a.i = v;
  return a;
}
DispatchAttr make_float(std::string name, double v) {
  DispatchAttr a;
  a.name = std::move(name), a.kind = DispatchAttr::Kind::Float, a.f = v;
  return a;
}
DispatchAttr make_bool(std::string name, bool v) {
  DispatchAttr a;
  a.name = std::move(name), a.kind = DispatchAttr::Kind::Bool, a.i = v;
  return a;
}
DispatchAttr make_ints(std::string name, std::vector<int64_t> v) {
  DispatchAttr a;
  a.name = std::move(name), a.kind = DispatchAttr::Kind::Ints, a.ints = std::move(v);
  return a;
}
// Whether the op's row names an attribute `name` (parameter structs are shared by several ops,
// each of which reads only some of the fields).
bool row_has(OpKey op, const char* name) {
  for (const OpAttr& a : op_info(op).attrs) {
    if (a.name == name) return true;
  }
  return false;
}
}  // namespace

void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, int64_t v) {
  out.push_back(make_int(n.take(), v));
}
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, double v) {
  out.push_back(make_float(n.take(), v));
}
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, bool v) {
  out.push_back(make_bool(n.take(), v));
}
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, const Scalar& v) {
  DispatchAttr a;
  a.name = n.take(), a.kind = DispatchAttr::Kind::Scalar, a.scalar = v;
  out.push_back(a);
}
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, const DimVec& v) {
  out.push_back(make_ints(n.take(), v.vec()));
}
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, const UnaryAttrs& v) {
  // Only the fields the op's row lists (most unary ops have none).
  for (const OpAttr& a : op_info(n.op).attrs) {
    double value = a.name == "negative_slope" ? v.negative_slope
                   : a.name == "min"          ? v.min
                   : a.name == "max"          ? v.max
                   : a.name == "exponent"     ? v.exponent
                   : a.name == "alpha"        ? v.alpha
                   : a.name == "beta"         ? v.beta
                                              : v.threshold;
    out.push_back(make_float(a.name, value));
  }
}
void describe_arg(AttrNamer&, std::vector<DispatchAttr>& out, const PhiloxState& v) {
  out.push_back(
      make_ints("philox", {static_cast<int64_t>(v.seed), static_cast<int64_t>(v.offset)}));
}
void describe_arg(AttrNamer&, std::vector<DispatchAttr>& out, const Conv2dParams& v) {
  out.push_back(make_ints("stride", {v.stride[0], v.stride[1]}));
  out.push_back(make_ints("padding", {v.padding[0], v.padding[1]}));
  out.push_back(make_ints("dilation", {v.dilation[0], v.dilation[1]}));
  out.push_back(make_int("groups", v.groups));
}
void describe_arg(AttrNamer& n, std::vector<DispatchAttr>& out, const Pool2dParams& v) {
  if (row_has(n.op, "kernel")) out.push_back(make_ints("kernel", {v.kernel[0], v.kernel[1]}));
  if (row_has(n.op, "stride")) out.push_back(make_ints("stride", {v.stride[0], v.stride[1]}));
  if (row_has(n.op, "padding")) out.push_back(make_ints("padding", {v.padding[0], v.padding[1]}));
  if (row_has(n.op, "dilation")) {
    out.push_back(make_ints("dilation", {v.dilation[0], v.dilation[1]}));
  }
  if (row_has(n.op, "ceil_mode")) out.push_back(make_bool("ceil_mode", v.ceil_mode));
  if (row_has(n.op, "count_include_pad")) {
    out.push_back(make_bool("count_include_pad", v.count_include_pad));
  }
}
void describe_arg(AttrNamer&, std::vector<DispatchAttr>& out, const BatchNormParams& v) {
  out.push_back(make_bool("training", v.training));
  out.push_back(make_float("momentum", v.momentum));
  out.push_back(make_float("eps", v.eps));
  out.push_back(make_bool("relu", v.relu));
}
void describe_arg(AttrNamer&, std::vector<DispatchAttr>& out, const AdamStepParams& v) {
  out.push_back(make_float("lr", v.lr));
  out.push_back(make_float("beta1", v.beta1));
  out.push_back(make_float("beta2", v.beta2));
  out.push_back(make_float("eps", v.eps));
  out.push_back(make_float("weight_decay", v.weight_decay));
  out.push_back(make_bool("decoupled_weight_decay", v.decoupled_weight_decay));
}
void describe_arg(AttrNamer&, std::vector<DispatchAttr>& out, const SgdStepParams& v) {
  out.push_back(make_float("lr", v.lr));
  out.push_back(make_float("momentum", v.momentum));
  out.push_back(make_float("dampening", v.dampening));
  out.push_back(make_float("weight_decay", v.weight_decay));
  out.push_back(make_bool("nesterov", v.nesterov));
  out.push_back(make_bool("first_step", v.first_step));
}
void describe_arg(AttrNamer&, std::vector<DispatchAttr>& out, const AttentionParams& v) {
  out.push_back(make_float("scale", v.scale));
  out.push_back(make_bool("is_causal", v.is_causal));
}
void describe_arg(AttrNamer&, std::vector<DispatchAttr>& out, const QuantizeParams& v) {
  out.push_back(make_float("scale", v.scale));
  out.push_back(make_int("zero_point", v.zero_point));
}
void describe_arg(AttrNamer&, std::vector<DispatchAttr>& out, const QuantizedParams& v) {
  out.push_back(make_float("input_scale", v.input_scale));
  out.push_back(make_int("input_zero_point", v.input_zero_point));
  out.push_back(make_float("output_scale", v.output_scale));
  out.push_back(make_int("output_zero_point", v.output_zero_point));
  out.push_back(make_bool("relu", v.relu));
}

}  // namespace detail
}  // namespace wick
