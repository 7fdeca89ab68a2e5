"""Lab 07: mixed precision - which ops autocast runs in 16 bits, and dynamic loss scaling.

Autocast (torch.autocast, wick.autocast, core/autocast.h) casts the inputs of a listed op on the
fly: matrix products and convolutions run in float16/bfloat16, where tensor cores and AVX-512-BF16
make them fast; ops that need range or accumulate many terms (exp, log, softmax, sums, norms,
losses) run in float32; everything else runs in whatever dtype arrives. Parameters stay float32
("master weights"). TensorFlow/Keras name the same idea a policy: mixed_float16 / mixed_bfloat16.

float16 has 5 exponent bits: its smallest subnormal is 2^-24 = 6e-8, so small gradients flush to
zero. Loss scaling multiplies the loss by S before backward (every gradient scales by S), then
divides the float32 gradients by S; the dynamic scaler halves S whenever a gradient overflowed
(and skips that step) and doubles it after growth_interval clean steps (PyTorch's GradScaler:
S0 = 65536, backoff 0.5, growth 2, interval 2000). bfloat16 keeps float32's 8 exponent bits and
needs no scaling."""

import math

import wick

# TODO(07): LOWER: matrix products (5 names); FP32: range-hungry ops (10)
LOWER, FP32 = set(), set()


def autocast_dtype(op, input_dtype, lower_dtype):
    """The dtype `op` computes in under autocast to `lower_dtype`, for a floating input."""
    # TODO(07): autocast_dtype: LOWER -> lower_dtype; FP32 -> wick.float32; otherwise the input's dtype
    raise NotImplementedError("autocast_dtype: LOWER -> lower_dtype; FP32 -> wick.float32; otherwise the input's dtype")


class LossScaler:
    """Dynamic loss scaling with GradScaler's API: scaler.scale(loss).backward();
    scaler.step(optimizer); scaler.update()."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self.scale_value = init_scale
        self.growth_factor, self.backoff_factor = growth_factor, backoff_factor
        self.growth_interval = growth_interval
        self.clean_steps = 0
        self.found_inf = False
        self.skipped = 0

    def get_scale(self):
        return self.scale_value

    def scale(self, loss):
        return loss * self.scale_value

    @wick.no_grad()
    def unscale_(self, params):
        """Divides every gradient by the scale, in place; sets self.found_inf if any is inf/NaN."""
        # TODO(07): unscale_: grad.mul_(1 / scale); x - x == 0 fails exactly for inf and NaN
        raise NotImplementedError("unscale_: grad.mul_(1 / scale); x - x == 0 fails exactly for inf and NaN")

    def step(self, optimizer):
        params = [p for group in optimizer.param_groups for p in group["params"]]
        self.unscale_(params)
        if self.found_inf:
            self.skipped += 1
        else:
            optimizer.step()

    def update(self):
        # TODO(07): update: inf: scale *= backoff, reset count; else count += 1, grow at interval
        raise NotImplementedError("update: inf: scale *= backoff, reset count; else count += 1, grow at interval")


def fp16_weight_grad(x, w, target, scale=1.0):
    """d loss / d w for loss = mean((x @ w - target)^2) computed entirely in float16 (inputs
    given in float32), with the loss multiplied by `scale` before backward; returns the float32
    gradient divided by `scale` again."""
    # TODO(07): fp16_weight_grad: half() copies; w16 leaf requiring grad; scale the loss in float32; unscale
    raise NotImplementedError("fp16_weight_grad: half() copies; w16 leaf requiring grad; scale the loss in float32; unscale")


def underflow_fraction(grad, reference):
    """The share of gradient elements that are 0 where the reference is not."""
    nonzero = reference != 0
    return ((grad == 0) & nonzero).sum().item() / max(1, nonzero.sum().item())


def fp16_min_subnormal():
    return math.ldexp(1.0, -24)
