#include "jit/onnx_emit.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/error.h"
#include "core/shape.h"

namespace wick::jit::onnx_detail {

// Note [views in ONNX]
// ONNX has no storages, only values, so every wick view must become ops on values. The emitter
// keeps, per storage (per base value), what it holds: the whole storage as one ONNX value (from
// offset 0, contiguous), or pieces written into slices of it. A read of a layout (shape, strides,
// offset) from a whole storage is a Reshape when the layout is contiguous from offset 0 and
// covers it; otherwise the storage is reshaped into a *frame* whose dims have the layout's
// strides (sorted, largest first: [N / t1, t1 / t2, ..., t_k]), the layout's window is a Slice
// of that frame, and a Transpose and a Reshape put the dims in the layout's order (an Expand
// adds dims of stride 0). This covers reshapes, transposes, slicing with steps (x[:, :, ::2]),
// narrowing and broadcasting. A write into a slice (F.pad and cat build their result by copies
// into slices of one buffer) is a piece in the frame of its layout; the first read of the
// storage joins the pieces with Concat, which needs them to tile one dim of one frame. Any other
// layout (strides that do not divide each other, overlapping or partial writes) is refused with
// the node's name.

namespace {

std::vector<int64_t> dims_of(const Shape& s) { return s.vec(); }
std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}
std::string shape_str(const DimVec& v) { return list_str(v.vec()); }
int64_t product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<int64_t>());
}

// The frame of a layout over a storage of `n` elements (Note [views in ONNX]).
struct Frame {
  std::vector<int64_t> frame, begin, end;
  std::vector<int> order;      // the layout's dims with a stride and a size > 1, largest first
  std::vector<int> broadcast;  // dims of stride 0 and size > 1
};

bool frame_of(const Shape& shape, const Strides& strides, int64_t offset, int64_t n, Frame& f) {
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (shape[d] == 1) continue;
    (strides[d] == 0 ? f.broadcast : f.order).push_back(d);
  }
  std::stable_sort(f.order.begin(), f.order.end(),
                   [&](int a, int b) { return strides[a] > strides[b]; });
  int64_t outer = n, rem = offset;
  if (offset < 0) return false;
  for (size_t j = 0; j < f.order.size(); ++j) {
    int64_t t = strides[f.order[j]];
    if (t <= 0 || outer % t != 0) return false;
    if (j > 0 && strides[f.order[j - 1]] == t) return false;
    int64_t size = outer / t, start = rem / t;
    rem %= t;
    if (start + shape[f.order[j]] > size) return false;
    f.frame.push_back(size);
    f.begin.push_back(start);
    f.end.push_back(start + shape[f.order[j]]);
    outer = t;
  }
  f.frame.push_back(outer);
  f.begin.push_back(rem);
  f.end.push_back(rem + 1);
  return true;
}

}  // namespace

onnx::TensorProto_DataType onnx_type(DType dtype) {
  switch (dtype) {
    case kFloat32:
      return onnx::TensorProto_DataType_FLOAT;
    case kFloat64:
      return onnx::TensorProto_DataType_DOUBLE;
    case kFloat16:
      return onnx::TensorProto_DataType_FLOAT16;
    case kBFloat16:
      return onnx::TensorProto_DataType_BFLOAT16;
    case kInt64:
      return onnx::TensorProto_DataType_INT64;
    case kInt32:
      return onnx::TensorProto_DataType_INT32;
    case kUInt8:
      return onnx::TensorProto_DataType_UINT8;
    case kBool:
      return onnx::TensorProto_DataType_BOOL;
    default:
      break;
  }
  if (element_size(dtype) == 1) return onnx::TensorProto_DataType_INT8;  // the only one left
  throw std::invalid_argument("[wick.onnx.export] dtype " + std::string(dtype_name(dtype)) +
                              " has no ONNX element type here");
}

void set_int(onnx::NodeProto* n, const char* name, int64_t v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INT);
  a->set_i(v);
}

void set_ints(onnx::NodeProto* n, const char* name, const std::vector<int64_t>& v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INTS);
  for (int64_t x : v) a->add_ints(x);
}

void set_float(onnx::NodeProto* n, const char* name, double v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
  a->set_f(static_cast<float>(v));
}

const DispatchAttr& node_attr(const Emitter& e, const Node& n, const char* name) {
  for (const DispatchAttr& a : n.attrs) {
    if (a.name == name) return a;
  }
  e.fail(std::string("op '") + n.name() + "' was recorded without " + name);
}

void set_conv_attrs(const Emitter& e, const Node& n, onnx::NodeProto* conv) {
  std::vector<int64_t> pad = node_attr(e, n, "padding").ints;
  set_ints(conv, "strides", node_attr(e, n, "stride").ints);
  set_ints(conv, "pads", {pad[0], pad[1], pad[0], pad[1]});
  set_ints(conv, "dilations", node_attr(e, n, "dilation").ints);
  set_int(conv, "group", node_attr(e, n, "groups").i);
  const Shape& w = e.g.value(n.params[1]).shape;
  set_ints(conv, "kernel_shape", {w[2], w[3]});
}

Emitter::Emitter(const Graph& graph, const NamedTensors& params, const OnnxExportOptions& opts,
                 onnx::GraphProto& out)
    : g(graph), options(opts), out_(out) {
  for (const auto& [name, t] : params) {
    if (t.defined() && t.is_contiguous() && t.offset() == 0 &&
        static_cast<size_t>(t.nbytes()) == t.storage()->nbytes())
      param_storages_.emplace(t.storage().get(), std::make_pair(name, t));
  }
}

void Emitter::fail(const std::string& what, const std::string& rest) const {
  std::string where;
  if (current >= 0) {
    const Node& n = g.nodes[static_cast<size_t>(current)];
    std::string module = locate ? locate(n) : "";
    where = module.empty() ? " (graph node " + std::to_string(current) + ", " + n.name() + ")"
                           : " (in module '" + module + "')";
  }
  throw std::runtime_error("[wick.onnx.export] " + what + rest + where);
}

std::string Emitter::fresh(const std::string& hint) { return hint + "_" + std::to_string(next_++); }

onnx::NodeProto* Emitter::node(const std::string& op, const std::vector<std::string>& inputs,
                               const std::vector<std::string>& outputs) {
  onnx::NodeProto* n = out_.add_node();
  n->set_op_type(op);
  n->set_name(fresh(op));
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  structure.push_back(op + "/" + std::to_string(inputs.size()));
  return n;
}

std::string Emitter::ints(std::vector<int64_t> dims, ShapeConst::Kind kind) {
  ShapeConst c;
  c.kind = kind;
  c.dims = std::move(dims);
  c.name = "shape_" + std::to_string(shapes.size());
  c.node = current;
  shapes.push_back(c);
  return c.name;
}

std::string Emitter::reshape(const std::string& x, const std::vector<int64_t>& from,
                             const std::vector<int64_t>& to) {
  if (from == to) return x;
  std::string y = fresh("reshaped");
  node("Reshape", {x, ints(to, ShapeConst::Reshape)}, {y});
  return y;
}

std::string Emitter::raw(onnx::TensorProto_DataType type, const std::vector<int64_t>& dims,
                         const std::string& bytes) {
  std::string name = fresh("const");
  onnx::TensorProto* init = out_.add_initializer();
  init->set_name(name);
  init->set_data_type(type);
  for (int64_t d : dims) init->add_dims(d);
  init->set_raw_data(bytes);
  structure.push_back("initializer " + list_str(dims));
  return name;
}

std::string Emitter::initializer(const Tensor& t, const std::string& name) {
  Tensor c = t.to(Device()).contiguous();
  onnx::TensorProto* init = out_.add_initializer();
  init->set_name(name);
  init->set_data_type(onnx_type(c.dtype()));
  for (int64_t d : c.shape()) init->add_dims(d);
  init->set_raw_data(c.data_ptr(), c.nbytes());
  structure.push_back("initializer " + name.substr(0, 6) + list_str(c.shape().vec()));
  return name;
}

void Emitter::set(int value, const std::string& name) {
  names_[value] = name;
  const Value& v = g.value(value);
  write(v.base, v, name);
}

std::string Emitter::get(int id) {
  auto it = names_.find(id);
  if (it != names_.end()) return it->second;
  const Value& v = g.value(id);
  std::string name;
  if (v.is_leaf()) {
    name = leaf(id);
    names_[id] = name;
    if (is_contiguous(v.shape, v.strides) && v.offset == 0 &&
        v.storage_numel == product(dims_of(v.shape)))
      storages_[v.base] = StorageState{name, dims_of(v.shape), {}};
    return name;
  }
  if (v.producer >= 0 && g.nodes[static_cast<size_t>(v.producer)].kind == NodeKind::View) {
    name = read(v.base, v);
    names_[id] = name;
    return name;
  }
  fail("value %" + std::to_string(id) + " is read before it is computed");
}

std::string Emitter::leaf(int id) {
  const Value& v = g.value(id);
  if (v.kind == ValueKind::Input) {
    size_t i = static_cast<size_t>(v.input_index);
    std::string name = i < options.input_names.size() ? options.input_names[i]
                       : g.inputs.size() == 1         ? "input"
                                                      : "input" + std::to_string(i);
    onnx::ValueInfoProto* info = out_.add_input();
    info->set_name(name);
    auto* tensor = info->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx_type(v.dtype));
    for (int64_t d : v.shape) tensor->mutable_shape()->add_dim()->set_dim_value(d);
    return name;
  }
  if (v.kind == ValueKind::Param) {
    if (const Tensor* p = param_named(v.name)) return constant(id, *p);
    fail("parameter '" + v.name + "' is not contiguous; call .contiguous() on it before export");
  }
  return constant(id, v.constant);
}

// The parameter exported under `name`; null for one that is not one whole contiguous storage.
const Tensor* Emitter::param_named(const std::string& name) const {
  for (const auto& [storage, named] : param_storages_) {
    if (named.first == name) return &named.second;
  }
  return nullptr;
}

Tensor Emitter::fixed(int id) const {
  const Value& v = g.value(id);
  if (v.kind == ValueKind::Constant) return v.constant;
  if (v.kind == ValueKind::Param) {
    if (const Tensor* p = param_named(v.name)) return *p;
  }
  fail("value %" + std::to_string(id) +
       " is computed inside the graph; a quantized layer's weight_scale and bias must be fixed "
       "tensors");
}

std::string Emitter::constant(int id, const Tensor& t) {
  const Value& v = g.value(id);
  auto p = param_storages_.find(t.storage().get());
  if (p != param_storages_.end()) {  // a parameter, or a view of one: under its own name
    const auto& [pname, ptensor] = p->second;
    auto it = param_initializers_.find(pname);
    if (it == param_initializers_.end())
      it = param_initializers_.emplace(pname, initializer(ptensor, pname)).first;
    StorageState s{it->second, dims_of(ptensor.shape()), {}};
    Value layout = v;
    layout.offset = t.offset();
    int key = -1000000 - id;  // a state of its own: never written
    storages_[key] = s;
    return read(key, layout);
  }
  Tensor c = t.to(Device()).contiguous();
  size_t es = element_size(c.dtype());
  const char* bytes = static_cast<const char*>(c.data_ptr());
  bool splat = c.numel() > 1;
  for (int64_t i = 1; splat && i < c.numel(); ++i)
    splat = std::memcmp(bytes, bytes + i * static_cast<int64_t>(es), es) == 0;
  if (!splat) return initializer(c, fresh("const"));
  // A tensor of one repeated value (zeros for padding): ConstantOfShape, whose shape may follow
  // the batch.
  return filled(dims_of(c.shape()), c.dtype(), std::string(bytes, es));
}

std::string Emitter::filled(const std::vector<int64_t>& shape, DType dtype,
                            const std::string& bytes) {
  std::string name = fresh("filled");
  onnx::NodeProto* n = node("ConstantOfShape", {ints(shape, ShapeConst::Runtime)}, {name});
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  onnx::TensorProto* value = a->mutable_t();
  value->set_data_type(onnx_type(dtype));
  value->add_dims(1);
  value->set_raw_data(bytes);
  return name;
}

std::string Emitter::float_scalar(double v) {
  float f = static_cast<float>(v);
  return raw(onnx::TensorProto_DataType_FLOAT, {},
             std::string(reinterpret_cast<const char*>(&f), sizeof f));
}

std::string Emitter::whole(int base) {
  auto it = storages_.find(base);
  if (it == storages_.end()) {
    const Value& b = g.value(base);
    if (b.is_leaf()) get(base);
    it = storages_.find(base);
    if (it == storages_.end())
      fail("a view of a tensor whose storage the graph does not hold whole");
  }
  StorageState& s = it->second;
  if (s.pieces.empty()) return s.name;
  // Join the pieces: they must tile one dim of one frame.
  auto pieces = s.pieces;
  const auto& frame = pieces.front().frame;
  int axis = -1;
  for (const auto& p : pieces) {
    if (p.frame != frame) fail("writes into slices of one tensor in different layouts");
    for (size_t d = 0; d < frame.size(); ++d) {
      if (p.begin[d] == 0 && p.end[d] == frame[d]) continue;
      if (axis >= 0 && axis != static_cast<int>(d))
        fail("writes into a tensor that are not slices of one dim");
      axis = static_cast<int>(d);
    }
  }
  std::string name;
  if (axis < 0) {
    name = pieces.back().name;
  } else {
    std::sort(pieces.begin(), pieces.end(),
              [&](const auto& a, const auto& b) { return a.begin[axis] < b.begin[axis]; });
    int64_t at = 0;
    std::vector<std::string> parts;
    for (const auto& p : pieces) {
      if (p.begin[axis] != at) fail("writes into slices of a tensor that leave a gap or overlap");
      at = p.end[axis];
      parts.push_back(p.name);
    }
    if (at != frame[axis]) fail("writes into slices of a tensor that do not cover it");
    name = fresh("joined");
    set_int(node("Concat", parts, {name}), "axis", axis);
  }
  s = StorageState{name, frame, {}};
  return name;
}

std::string Emitter::read(int base, const Value& v) {
  std::string x = whole(base);
  std::vector<int64_t> have = storages_[base].shape;
  int64_t n = product(have);
  std::vector<int64_t> shape = dims_of(v.shape);
  if (is_contiguous(v.shape, v.strides) && v.offset == 0 && product(shape) == n)
    return reshape(x, have, shape);
  Frame f;
  if (!frame_of(v.shape, v.strides, v.offset, n, f))
    fail("a view with shape " + shape_str(v.shape) + ", strides " + shape_str(v.strides) +
         " and offset " + std::to_string(v.offset) + " has no ONNX translation");
  std::vector<int64_t> starts, ends, axes, sizes;
  for (size_t d = 0; d < f.frame.size(); ++d) {
    sizes.push_back(f.end[d] - f.begin[d]);
    if (f.begin[d] == 0 && f.end[d] == f.frame[d]) continue;
    starts.push_back(f.begin[d]), ends.push_back(f.end[d]), axes.push_back(static_cast<int64_t>(d));
  }
  std::vector<int64_t> sorted(sizes.begin(), sizes.end() - 1);
  if (axes.empty()) {  // the whole frame: one Reshape
    x = reshape(x, have, sorted);
  } else {
    x = reshape(x, have, f.frame);
    std::string y = fresh("sliced");
    node("Slice", {x, ints(starts), ints(ends), ints(axes)}, {y});
    x = reshape(y, sizes, sorted);
  }
  std::vector<int> by_dim = f.order;
  std::sort(by_dim.begin(), by_dim.end());
  if (by_dim != f.order) {
    std::vector<int64_t> perm, permuted;
    for (int d : by_dim) {
      perm.push_back(std::find(f.order.begin(), f.order.end(), d) - f.order.begin());
      permuted.push_back(v.shape[d]);
    }
    std::string y = fresh("transposed");
    set_ints(node("Transpose", {x}, {y}), "perm", perm);
    x = y;
    sorted = permuted;
  }
  std::vector<int64_t> ones = shape;
  for (int d : f.broadcast) ones[static_cast<size_t>(d)] = 1;
  x = reshape(x, sorted, ones);
  if (!f.broadcast.empty()) {
    std::string y = fresh("expanded");
    node("Expand", {x, ints(shape, ShapeConst::Runtime)}, {y});
    x = y;
  }
  return x;
}

void Emitter::write(int base, const Value& v, const std::string& content) {
  int64_t n = g.value(base).storage_numel;
  std::vector<int64_t> shape = dims_of(v.shape);
  if (is_contiguous(v.shape, v.strides) && v.offset == 0 && product(shape) == n) {
    storages_[base] = StorageState{content, shape, {}};
    return;
  }
  Frame f;
  if (!frame_of(v.shape, v.strides, v.offset, n, f) || !f.broadcast.empty())
    fail("a write into a layout with shape " + shape_str(v.shape) + ", strides " +
         shape_str(v.strides) + " and offset " + std::to_string(v.offset) +
         " has no ONNX translation");
  StorageState& s = storages_[base];
  if (!s.name.empty()) fail("an in-place write into part of a tensor computed before");
  std::vector<int> by_dim = f.order;
  std::sort(by_dim.begin(), by_dim.end());
  std::vector<int64_t> squeezed;
  for (int d : by_dim) squeezed.push_back(v.shape[d]);
  std::string x = reshape(content, shape, squeezed);
  if (by_dim != f.order) {
    std::vector<int64_t> sorted;
    std::string y = fresh("transposed");
    std::vector<int64_t> perm;
    for (int d : f.order) {
      perm.push_back(std::find(by_dim.begin(), by_dim.end(), d) - by_dim.begin());
      sorted.push_back(v.shape[d]);
    }
    set_ints(node("Transpose", {x}, {y}), "perm", perm);
    x = y;
    squeezed = sorted;
  }
  std::vector<int64_t> region;
  for (size_t d = 0; d < f.frame.size(); ++d) region.push_back(f.end[d] - f.begin[d]);
  x = reshape(x, squeezed, region);
  s.pieces.push_back({f.frame, f.begin, f.end, x});
}

void Emitter::run() {
  size_t n_in = options.input_names.empty() ? g.inputs.size() : options.input_names.size();
  size_t n_out = options.output_names.empty() ? g.outputs.size() : options.output_names.size();
  check_value(n_in == g.inputs.size() && n_out == g.outputs.size(), "wick.onnx.export", n_in,
              " input_names for ", g.inputs.size(), " inputs, ", n_out, " output_names for ",
              g.outputs.size(), " outputs");
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    get(g.inputs[i]);
    input_shapes.push_back(dims_of(g.value(g.inputs[i]).shape));
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    current = static_cast<int>(i);
    if (n.kind == NodeKind::View) continue;  // translated when read (Note [views in ONNX])
    if (n.kind == NodeKind::Fused || !n.steps.empty())
      fail("a fused node (export runs before fusion)");
    translate_kernel(*this, n);
  }
  current = -1;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const Value& v = g.value(g.outputs[i]);
    std::string name = i < options.output_names.size() ? options.output_names[i]
                       : g.outputs.size() == 1         ? "output"
                                                       : "output" + std::to_string(i);
    node("Identity", {get(g.outputs[i])}, {name});
    onnx::ValueInfoProto* info = out_.add_output();
    info->set_name(name);
    auto* tensor = info->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx_type(v.dtype));
    for (int64_t d : v.shape) tensor->mutable_shape()->add_dim()->set_dim_value(d);
    output_shapes.push_back(dims_of(v.shape));
  }
}

}  // namespace wick::jit::onnx_detail
