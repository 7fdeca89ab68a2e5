#include "jit/graph.h"

#include <sstream>

#include "core/error.h"

namespace wick::jit {

namespace {

const char* dtype_short(DType t) {
  switch (t) {
    case DType::Bool:
      return "b8";
    case DType::UInt8:
      return "u8";
    case DType::Int8:
      return "i8";
    case DType::Int32:
      return "i32";
    case DType::Int64:
      return "i64";
    case DType::Float16:
      return "f16";
    case DType::BFloat16:
      return "bf16";
    case DType::Float32:
      return "f32";
    case DType::Float64:
      return "f64";
  }
  return "?";
}

std::string ref(const Graph& g, int id) {
  if (id < 0) return "None";
  const Value& v = g.value(id);
  if (v.kind == ValueKind::Input || v.kind == ValueKind::Param) return "%" + v.name;
  if (v.kind == ValueKind::Constant) return "%c" + std::to_string(id);
  return "%" + std::to_string(id);
}

std::string ints_str(const DimVec& d) {
  std::ostringstream os;
  os << "[";
  for (int64_t i = 0; i < d.size(); ++i) os << (i ? ", " : "") << d[i];
  os << "]";
  return os.str();
}

bool is_contiguous(const Value& v) {
  int64_t expected = 1;
  for (int64_t i = v.shape.size() - 1; i >= 0; --i) {
    if (v.shape[i] != 1 && v.strides[i] != expected) return false;
    expected *= v.shape[i];
  }
  return true;
}

}  // namespace

std::string value_type_str(const Value& v) {
  std::string s = std::string(dtype_short(v.dtype)) + ints_str(v.shape);
  if (!is_contiguous(v)) s += "{strides=" + ints_str(v.strides) + "}";
  return s;
}

bool is_random_op(OpKey op) { return op == OpKey::uniform || op == OpKey::normal; }

std::string Node::name() const {
  if (kind == NodeKind::View) return "view";
  if (kind == NodeKind::Kernel && steps.empty()) return op_name(op);
  std::string s = kind == NodeKind::Kernel ? std::string(op_name(op)) + "+[" : "fused[";
  for (size_t i = 0; i < steps.size(); ++i) s += std::string(i ? ", " : "") + op_name(steps[i].op);
  return s + "]";
}

int Graph::add_value(Value v) {
  v.id = static_cast<int>(values.size());
  if (v.base < 0) v.base = v.id;
  values.push_back(std::move(v));
  return values.back().id;
}

int64_t Graph::num_kernels() const {
  int64_t n = 0;
  for (const Node& node : nodes) n += node.kind != NodeKind::View;
  return n;
}

std::string Graph::str() const {
  std::ostringstream os;
  os << "graph(";
  for (size_t i = 0; i < inputs.size(); ++i) {
    os << (i ? ", " : "") << ref(*this, inputs[i]) << ": " << value_type_str(value(inputs[i]));
  }
  os << "):\n";
  for (int p : params) {
    os << "  " << ref(*this, p) << ": " << value_type_str(value(p)) << " = parameter\n";
  }
  for (const Value& v : values) {
    if (v.kind != ValueKind::Constant) continue;
    bool used = false;
    for (const Node& n : nodes) {
      for (int q : n.params) used = used || q == v.id;
    }
    for (int o : outputs) used = used || o == v.id;
    if (used) os << "  " << ref(*this, v.id) << ": " << value_type_str(v) << " = constant\n";
  }
  for (const Node& n : nodes) {
    os << "  ";
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      os << (i ? ", " : "") << ref(*this, n.outputs[i]) << ": "
         << value_type_str(value(n.outputs[i]));
    }
    if (n.outputs.empty()) os << "_";
    os << " = " << n.name() << "(";
    bool first = true;
    for (size_t i = 0; i < n.params.size(); ++i) {
      if (n.kind != NodeKind::View && n.roles[i] == Role::Write) continue;
      os << (first ? "" : ", ")
         << (n.kind != NodeKind::View && n.roles[i] == Role::Update ? "&" : "")
         << ref(*this, n.params[i]);
      first = false;
    }
    if (n.kind == NodeKind::View) os << ", offset=" << n.view_offset;
    for (const DispatchAttr& a : n.attrs) {
      os << (first ? "" : ", ") << a.name << "=" << a.value_str();
      first = false;
    }
    os << ")\n";
  }
  os << "  return ";
  for (size_t i = 0; i < outputs.size(); ++i) os << (i ? ", " : "") << ref(*this, outputs[i]);
  os << "\n";
  return os.str();
}

std::string Graph::dot(const std::string& title) const {
  std::ostringstream os;
  os << "digraph \"" << title
     << "\" {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  auto source = [&](int id) -> std::string {
    const Value& v = value(id);
    if (v.producer >= 0) return "n" + std::to_string(v.producer);
    return "v" + std::to_string(id);
  };
  for (int id : inputs) {
    os << "  v" << id << " [shape=invhouse, label=\"" << value(id).name << "\\n"
       << value_type_str(value(id)) << "\"];\n";
  }
  std::vector<bool> drawn(values.size(), false);
  auto leaf = [&](int id) {
    const Value& v = value(id);
    if (v.producer >= 0 || v.kind == ValueKind::Input || drawn[static_cast<size_t>(id)]) return;
    drawn[static_cast<size_t>(id)] = true;
    std::string label = v.kind == ValueKind::Param ? v.name : "const " + value_type_str(v);
    os << "  v" << id << " [shape=note, style=filled, fillcolor=\"#eeeeee\", label=\"" << label
       << "\"];\n";
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    const char* style = n.kind == NodeKind::View ? "shape=ellipse, color=\"#888888\""
                        : n.kind == NodeKind::Fused
                            ? "shape=box, style=filled, fillcolor=\"#ffd27f\""
                            : "shape=box, style=filled, fillcolor=\"#cfe2ff\"";
    os << "  n" << i << " [" << style << ", label=\"" << n.name() << "\"];\n";
    for (size_t k = 0; k < n.params.size(); ++k) {
      int p = n.params[k];
      if (p < 0 || (n.kind != NodeKind::View && n.roles[k] == Role::Write)) continue;
      leaf(p);
      os << "  " << source(p) << " -> n" << i << " [label=\"" << value_type_str(value(p))
         << "\", fontsize=8];\n";
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    leaf(outputs[i]);
    os << "  out" << i << " [shape=house, label=\"output " << i << "\"];\n  " << source(outputs[i])
       << " -> out" << i << ";\n";
  }
  os << "}\n";
  return os.str();
}

void Graph::remove_nodes(const std::vector<bool>& dead) {
  std::vector<Node> kept;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!dead[i]) kept.push_back(std::move(nodes[i]));
  }
  nodes = std::move(kept);
  update_producers();
}

void Graph::update_producers() {
  for (Value& v : values) {
    v.producer = -1;
    if (!v.is_leaf() && v.version_of < 0) v.base = v.id;
  }
  // Views and versions live on their source's storage; a pass may have changed the source.
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    for (int o : n.outputs) value(o).producer = static_cast<int>(i);
    if (n.kind == NodeKind::View) {
      Value& out = value(n.outputs[0]);
      out.base = value(n.params[0]).base;
      out.storage_numel = value(n.params[0]).storage_numel;
      continue;
    }
    size_t next = 0;
    for (size_t k = 0; k < n.params.size(); ++k) {
      if (n.roles[k] == Role::Write && n.params[k] >= 0) ++next;
    }
    for (size_t k = 0; k < n.params.size(); ++k) {
      if (n.roles[k] != Role::Update || n.params[k] < 0) continue;
      Value& version = value(n.outputs[next++]);
      version.version_of = n.params[k];
      version.base = value(n.params[k]).base;
    }
  }
}

std::vector<bool> Graph::updated_storages() const {
  std::vector<bool> updated(values.size(), false);
  for (const Node& n : nodes) {
    for (size_t k = 0; n.kind == NodeKind::Kernel && k < n.params.size(); ++k) {
      if (n.roles[k] == Role::Update && n.params[k] >= 0) {
        updated[static_cast<size_t>(value(n.params[k]).base)] = true;
      }
    }
  }
  return updated;
}

std::vector<int> Graph::use_counts() const {
  std::vector<int> uses(values.size(), 0);
  for (const Node& n : nodes) {
    for (size_t k = 0; k < n.params.size(); ++k) {
      bool write = n.kind != NodeKind::View && n.roles[k] == Role::Write;
      if (n.params[k] >= 0 && !write) ++uses[static_cast<size_t>(n.params[k])];
    }
  }
  for (int o : outputs) uses[static_cast<size_t>(o)] += 2;
  return uses;
}

void Graph::replace_uses(int from, int to) {
  for (Node& n : nodes) {
    for (size_t k = 0; k < n.params.size(); ++k) {
      bool write = n.kind != NodeKind::View && n.roles[k] == Role::Write;
      if (n.params[k] == from && !write) n.params[k] = to;
    }
  }
  for (int& o : outputs) {
    if (o == from) o = to;
  }
}

void Graph::check() const {
  std::vector<bool> defined(values.size(), false);
  for (const Value& v : values) {
    if (v.is_leaf()) defined[static_cast<size_t>(v.id)] = true;
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    check_state(n.kind == NodeKind::View || n.roles.size() == n.params.size(), "jit.Graph.check",
                "node ", i, " (", n.name(), ") has ", n.params.size(), " params but ",
                n.roles.size(), " roles");
    for (size_t k = 0; k < n.params.size(); ++k) {
      int p = n.params[k];
      if (p < 0) continue;
      bool write = n.kind != NodeKind::View && n.roles[k] == Role::Write;
      check_state(write || defined[static_cast<size_t>(p)], "jit.Graph.check", "node ", i, " (",
                  n.name(), ") uses %", p, " before it is defined");
    }
    for (int o : n.outputs) {
      check_state(!defined[static_cast<size_t>(o)], "jit.Graph.check", "node ", i, " (", n.name(),
                  ") defines %", o, " a second time");
      check_state(value(o).producer == static_cast<int>(i), "jit.Graph.check", "%", o,
                  " names node ", value(o).producer, " as its producer, not node ", i);
      defined[static_cast<size_t>(o)] = true;
    }
  }
  for (int o : outputs) {
    check_state(defined[static_cast<size_t>(o)], "jit.Graph.check", "output %", o,
                " is never defined");
  }
}

std::ostream& operator<<(std::ostream& os, const Graph& g) { return os << g.str(); }

}  // namespace wick::jit
