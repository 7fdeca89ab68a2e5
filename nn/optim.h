// wick::optim, everything: the optimizers (torch.optim) on their one step skeleton and the
// learning-rate schedules. The pieces live in nn/optim/: optimizer.h (the base and the
// skeleton), sgd.h, adam.h, adaptive.h, lbfgs.h, lr_scheduler.h and plateau.h.
#pragma once

#include "nn/optim/adam.h"
#include "nn/optim/adaptive.h"
#include "nn/optim/lbfgs.h"
#include "nn/optim/lr_scheduler.h"
#include "nn/optim/optimizer.h"
#include "nn/optim/plateau.h"
#include "nn/optim/sgd.h"
