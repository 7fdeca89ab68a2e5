// The layers, one pair of files per kind under nn/layers/: each kind's modules and its
// nn::functional functions. A module holds its parameters and calls its function in forward();
// constructors take PyTorch's arguments and initialise like PyTorch does, so state_dicts load
// either way. Include one kind's header, or this one for all of them.
#pragma once

#include "nn/layers/activation.h"
#include "nn/layers/attention.h"
#include "nn/layers/conv.h"
#include "nn/layers/distance.h"
#include "nn/layers/dropout.h"
#include "nn/layers/embedding.h"
#include "nn/layers/linear.h"
#include "nn/layers/normalization.h"
#include "nn/layers/pooling.h"
#include "nn/layers/recurrent.h"
#include "nn/layers/resample.h"
#include "nn/layers/transformer.h"
