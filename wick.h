// Everything a C++ program needs: tensors and ops, autograd, nn (layers, losses, optimizers,
// schedules, checkpoints, the Keras-style fit loop) and data (datasets and the data loader).
#pragma once

#include "autograd/engine.h"
#include "autograd/gradcheck.h"
#include "core/dispatch.h"
#include "core/generator.h"
#include "core/grad_mode.h"
#include "core/ops.h"
#include "core/print.h"
#include "data/data.h"
#include "nn/callbacks.h"
#include "nn/checkpoint.h"
#include "nn/clip_grad.h"
#include "nn/containers.h"
#include "nn/fit.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/models/resnet.h"  // wick::models: ResNets
#include "nn/module.h"
#include "nn/optim.h"
#include "nn/serialization.h"
