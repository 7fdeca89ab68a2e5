// Everything a C++ program needs: tensors, ops, autograd.
#pragma once

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/gradcheck.h"
#include "core/dispatch.h"
#include "core/generator.h"
#include "core/ops.h"
