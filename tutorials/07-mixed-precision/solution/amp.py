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

# BEGIN SOLUTION: LOWER: matrix products (5 names); FP32: range-hungry ops (10) || LOWER, FP32 = set(), set()
LOWER = {"matmul", "mm", "bmm", "linear", "conv2d"}
FP32 = {"exp", "log", "pow", "sum", "mean", "softmax", "log_softmax", "cross_entropy", "mse_loss",
        "layer_norm"}
# END SOLUTION


def autocast_dtype(op, input_dtype, lower_dtype):
    """The dtype `op` computes in under autocast to `lower_dtype`, for a floating input."""
    # BEGIN SOLUTION: LOWER -> lower_dtype; FP32 -> wick.float32; otherwise the input's dtype
    if op in LOWER:
        return lower_dtype
    if op in FP32:
        return wick.float32
    return input_dtype
    # END SOLUTION


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
        # BEGIN SOLUTION: grad.mul_(1 / scale); x - x == 0 fails exactly for inf and NaN
        self.found_inf = False
        inv = 1.0 / self.scale_value
        for p in params:
            if p.grad is None:
                continue
            p.grad.mul_(inv)
            if not (p.grad - p.grad == 0).all().item():  # inf - inf and NaN are NaN
                self.found_inf = True
        # END SOLUTION

    def step(self, optimizer):
        params = [p for group in optimizer.param_groups for p in group["params"]]
        self.unscale_(params)
        if self.found_inf:
            self.skipped += 1
        else:
            optimizer.step()

    def update(self):
        # BEGIN SOLUTION: inf: scale *= backoff, reset count; else count += 1, grow at interval
        if self.found_inf:
            self.scale_value *= self.backoff_factor
            self.clean_steps = 0
        else:
            self.clean_steps += 1
            if self.clean_steps == self.growth_interval:
                self.scale_value *= self.growth_factor
                self.clean_steps = 0
        # END SOLUTION


def fp16_weight_grad(x, w, target, scale=1.0):
    """d loss / d w for loss = mean((x @ w - target)^2) computed entirely in float16 (inputs
    given in float32), with the loss multiplied by `scale` before backward; returns the float32
    gradient divided by `scale` again."""
    # BEGIN SOLUTION: half() copies; w16 leaf requiring grad; scale the loss in float32; unscale
    x16, t16 = x.half(), target.half()
    w16 = w.half().requires_grad_(True)
    loss = ((x16 @ w16 - t16) ** 2).mean()
    # In float32, as GradScaler does (its scale is a float32 tensor): a float16 loss times 65536
    # is inf, since 65536 is above float16's largest value, 65504.
    (loss.float() * scale).backward()
    return w16.grad.float() / scale
    # END SOLUTION


def underflow_fraction(grad, reference):
    """The share of gradient elements that are 0 where the reference is not."""
    nonzero = reference != 0
    return ((grad == 0) & nonzero).sum().item() / max(1, nonzero.sum().item())


def fp16_min_subnormal():
    return math.ldexp(1.0, -24)
