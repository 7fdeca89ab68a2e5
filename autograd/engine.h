// The backward engine: runs the graph from some outputs back to the leaves.
#pragma once

#include <vector>

#include "autograd/node.h"

namespace wick::autograd {

// Accumulates d(sum of outputs[i] * grad_outputs[i])/d(leaf) into every leaf's .grad. An undefined
// grad_outputs[i] means ones, which is allowed only for a one-element output.
//
// With create_graph the backward formulas run with grad mode on, so the gradients they return
// carry their own graph and can be differentiated again (Note [higher-order gradients] in
// engine.cpp); the graph is then retained, since the gradient's graph reuses its nodes.
void backward(const TensorList& outputs, const TensorList& grad_outputs = {},
              bool retain_graph = false, bool create_graph = false);

// Returns d(sum of outputs[i] * grad_outputs[i])/d(inputs[j]) without touching any .grad. An input
// the outputs do not depend on is an error unless allow_unused (then its gradient is undefined).
TensorList grad(const TensorList& outputs, const TensorList& inputs,
                const TensorList& grad_outputs = {}, bool retain_graph = false,
                bool allow_unused = false, bool create_graph = false);

}  // namespace wick::autograd
