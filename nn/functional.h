// nn::functional: the layers and losses as functions, under PyTorch's names
// (torch.nn.functional). Each kind of layer declares its functions beside its modules
// (nn/layers/<kind>.h); the losses are in nn/losses.h. Layers with kernels of their own (conv2d,
// pooling, batch_norm, the activations) forward to core ops; the rest are compositions of core
// ops, so their backward comes from autograd and they run on every device.
#pragma once

#include "nn/layers.h"
#include "nn/losses.h"

namespace wick::nn {
namespace F = functional;
}
