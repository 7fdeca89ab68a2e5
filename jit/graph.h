// The graph IR of wick's static graphs (docs/static_graphs.md): what jit::trace records, what the
// passes rewrite and what the Executor replays.
//
// Note [graph IR]
// A Graph is a list of Nodes in program order over SSA Values. Every Value is a tensor with a
// known layout (shape, strides, storage offset, dtype, device) on a *base*: the value that owns
// its storage. Leaves are the graph's inputs, the module's parameters and buffers (bound by name
// when the graph runs) and constants (tensors the trace captured). A Node is
//   - a kernel: one row of the op table (core/ops/op_list.h), called with one Value per tensor
//     parameter of its kernel signature and the typed attributes of the call;
//   - a view: a new layout over its source's storage (reshape, transpose, expand, slicing); no
//     bytes move, so views cost nothing at run time;
//   - a fused elementwise kernel made by the fusion pass (jit/passes/fuse_elementwise.cpp).
// Each tensor parameter of a kernel plays one role: it is read, written as a fresh output (the
// node produces that Value), or updated in place (an in-place op, a copy into a slice). An update
// produces a new *version* of the value, with the same layout and base, and every later use of that
// storage refers to the latest version, so the order of writes is in the data dependences and
// the passes can treat the graph as pure SSA.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/dispatch_observer.h"
#include "core/tensor.h"

namespace wick::jit {

enum class ValueKind : uint8_t { Input, Param, Constant, Internal };

struct Value {
  int id = -1;
  ValueKind kind = ValueKind::Internal;
  std::string name;  // inputs and parameters: their name; internal values print as %id
  Shape shape;
  Strides strides;
  int64_t offset = 0;         // storage offset, in elements
  int64_t storage_numel = 0;  // the size of the storage the base owns, in elements
  DType dtype = kFloat32;
  Device device;
  int base = -1;         // the value owning the storage (itself for leaves and fresh outputs)
  int producer = -1;     // the node producing it, -1 for leaves
  int version_of = -1;   // an in-place update of this value (same layout and storage)
  int input_index = -1;  // ValueKind::Input: its position among the graph's inputs
  Tensor constant;       // ValueKind::Constant: the captured tensor

  bool is_leaf() const { return kind != ValueKind::Internal; }
  int64_t nbytes() const { return storage_numel * static_cast<int64_t>(element_size(dtype)); }
};

enum class NodeKind : uint8_t { Kernel, View, Fused };
enum class Role : uint8_t { Read, Write, Update };

// A chain of elementwise ops run as one loop (Note [fused elementwise loop] in jit/fused_cpu.h).
struct FusedStep {
  OpKey op;
  // Operands: >= 0 an input of the fused node (its params[k]), < 0 the result of step -1 - k.
  int a = 0, b = 0;
  UnaryAttrs attrs;
};

struct Node {
  NodeKind kind = NodeKind::Kernel;
  OpKey op = OpKey::copy;
  Device device;
  // Kernel and Fused: one value per tensor parameter (-1: undefined), and its role.
  // View: params[0] is the source.
  std::vector<int> params;
  std::vector<Role> roles;
  std::vector<int> outputs;  // fresh outputs and new versions, in parameter order
  std::vector<DispatchAttr> attrs;
  // Kernel: the recorded non-tensor arguments and the thunk that calls the kernel with them.
  std::shared_ptr<const void> args;
  const KernelThunk* thunk = nullptr;
  // View: the layout, with the offset relative to the source's.
  Shape view_shape;
  Strides view_strides;
  int64_t view_offset = 0;
  // Fused: the steps; the output is the last param (role Write). A kernel may carry steps too,
  // as its epilogue (jit/passes/fuse_conv_epilogue.cpp): they run over its output in place, and
  // their operand 0 is that output, params[epilogue_at - 1], and operand k >= 1 is
  // params[epilogue_at + k - 1] (the epilogue's other inputs follow the kernel's own params).
  std::vector<FusedStep> steps;
  size_t epilogue_at = 0;

  std::string name() const;  // "conv2d", "view", "fused[add, relu]", "conv2d+[add, relu]"
};

class Graph {
 public:
  std::vector<Value> values;
  std::vector<Node> nodes;  // in program order
  std::vector<int> inputs;  // the graph's inputs, in call order
  std::vector<int> params;  // the named parameters and buffers it reads
  std::vector<int> outputs;
  // Values the traced run read to the host ("bool(t) at model.py:12"): what the program did with
  // them is not in the graph, so a graph with any is not replayed (Note [graph breaks]).
  std::vector<std::string> host_reads;

  Value& value(int id) { return values.at(static_cast<size_t>(id)); }
  const Value& value(int id) const { return values.at(static_cast<size_t>(id)); }
  int add_value(Value v);  // assigns the id

  // How many nodes launch a kernel (views do not).
  int64_t num_kernels() const;
  // The readable text form, one node a line (like torch.fx's graph printout).
  std::string str() const;
  // Graphviz DOT: values as edges, kernels as boxes, views as ellipses, fused kernels filled.
  std::string dot(const std::string& title = "graph") const;
  // Drops nodes marked dead and renumbers nothing (ids stay stable): passes call it after
  // deciding which nodes go.
  void remove_nodes(const std::vector<bool>& dead);
  // Recomputes each value's producer from the node list (after a pass rebuilt it).
  void update_producers();
  // By base value id: whether some node updates that storage in place.
  std::vector<bool> updated_storages() const;
  // By value id: how many node parameters read it. A graph output counts twice more, so that no
  // pass takes an output for a value that a single node uses.
  std::vector<int> use_counts() const;
  // Every use of `from` (node parameters and graph outputs) becomes `to`.
  void replace_uses(int from, int to);
  // Checks the invariants (each value defined before use, roles consistent); throws
  // std::runtime_error naming the node otherwise. Passes call it in the tests.
  void check() const;
};

std::ostream& operator<<(std::ostream& os, const Graph& g);

// Note [random ops in a graph]
// uniform and normal (dropout's mask, rand, randn) record the generator's counters of the traced
// draw. A replay reserves fresh counters from the default generator instead, as the eager op
// would, so a compiled step draws the same numbers as the same eager step; the passes never fold,
// merge or drop these nodes (each advances the generator).
bool is_random_op(OpKey op);
std::string value_type_str(const Value& v);  // "f32[64, 10]"

}  // namespace wick::jit
