// The whole op API in one include: creation, elementwise math, reductions, views, joins, matrix
// products, indexing and softmax. Every op here works on any device with a kernel for it (or the
// CPU fallback) and records autograd history when an input requires grad.
#pragma once

#include "core/ops/advanced_index.h"
#include "core/ops/attention.h"
#include "core/ops/composite_linalg.h"
#include "core/ops/composite_shape.h"
#include "core/ops/composite_stats.h"
#include "core/ops/elementwise.h"
#include "core/ops/elementwise_math.h"
#include "core/ops/factory.h"
#include "core/ops/index.h"
#include "core/ops/join.h"
#include "core/ops/linalg.h"
#include "core/ops/nn.h"
#include "core/ops/quantized.h"  // int8 inference
#include "core/ops/reduce.h"
#include "core/ops/rnn.h"
#include "core/ops/scan.h"
#include "core/ops/view.h"
#include "core/tensor.h"
