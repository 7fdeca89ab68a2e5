// The optimisation passes over a traced Graph (jit/graph.h), one file each. Every pass returns how
// many nodes it changed and leaves a graph that Graph::check() accepts; jit/compile.cpp runs them
// in order (docs/static_graphs.md shows each on a model, before and after).
#pragma once

#include "jit/graph.h"
#include "jit/trace.h"

namespace wick::jit {

// dce.cpp: removes nodes whose results nothing uses. Updates of a leaf (batch norm's running
// statistics in training, an in-place op on an input) are effects and stay.
int eliminate_dead_code(Graph& g);

// cse.cpp: a node that repeats an earlier one (same op, attributes, inputs and output layouts)
// is dropped and its uses read the earlier results.
int eliminate_common_subexpressions(Graph& g);

// constant_fold.cpp: freeze_parameters turns the parameter leaves into constants holding
// `params` (inference: torch.jit.freeze); fold_constants then runs, once, every node whose
// inputs are all constants and replaces its results by constants.
int freeze_parameters(Graph& g, const NamedTensors& params);
int fold_constants(Graph& g);

// fold_conv_bn.cpp: batch norm in evaluation after a convolution becomes the convolution's
// weight and bias (needs frozen parameters).
int fold_conv_batchnorm(Graph& g);

// functionalize.cpp: in-place writes over a whole intermediate buffer become ordinary values
// (a copy back into it disappears; an in-place elementwise op writes a fresh value).
int functionalize(Graph& g);

// fuse_elementwise.cpp: chains of elementwise ops become one fused loop (jit/fused_cpu.h).
int fuse_elementwise(Graph& g);
// Whether `n` may join a fused chain: a float32 CPU elementwise op writing one fresh contiguous
// output and reading no storage that some node updates in place (`updated`, by base value id).
bool fusible_node(const Graph& g, const Node& n, const std::vector<bool>& updated);
// A fusible node's attributes (negative_slope, min, max, ...) as a fused step carries them.
UnaryAttrs fused_step_attrs(const Node& n);

// fuse_conv_epilogue.cpp: a float32 CPU convolution whose only use is an elementwise op or fused
// chain takes that chain as its epilogue, run on each block of its output as it is written.
int fuse_conv_epilogue(Graph& g);

}  // namespace wick::jit
