// A state dict: named tensors, as saved by modules, optimizers and schedules (PyTorch's
// state_dict). Names are dotted paths ("conv1.weight", "state.0.exp_avg"); scalars are stored as
// 0-d tensors so that everything a checkpoint needs is a tensor.
#pragma once

#include <map>
#include <string>

#include "core/tensor.h"

namespace wick {

using StateDict = std::map<std::string, Tensor>;

}  // namespace wick
