"""BatchNorm1d and BatchNorm2d: per-channel normalisation with batch statistics in training and
running statistics (buffers) in eval; the math and the running-stat update are F.batch_norm, a
C++ kernel."""

import wick
from wick.nn import functional as F
from wick.nn import init
from wick.nn.modules.module import Module
from wick.nn.parameter import Parameter
from wick.nn.modules import _args


class _NormBase(Module):
    """The parameters and running statistics that batch and instance norm share (PyTorch's
    _NormBase): an affine weight and bias, and running mean, variance and batch count when
    tracked. Subclasses set the defaults and the smallest num_features they accept."""

    _min_features = 0

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None):
        super().__init__()
        self.num_features = _args.size(type(self).__name__, "num_features", num_features,
                                       self._min_features)
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(wick.empty(num_features, device=device, dtype=dtype))
            self.bias = Parameter(wick.empty(num_features, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", wick.zeros(num_features, device=device,
                                                            dtype=dtype))
            self.register_buffer("running_var", wick.ones(num_features, device=device,
                                                          dtype=dtype))
            self.register_buffer("num_batches_tracked", wick.tensor(0, dtype=wick.int64,
                                                                    device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    _expected_dims = ()

    def forward(self, input):
        return self._normalize(input, F.batch_norm)

    def forward_relu(self, input, residual=None):
        """relu(self(input) + residual), fused into batch norm's kernels
        (F.batch_norm_relu): ResNet's blocks call it in training. Forward hooks do not see it."""
        return self._normalize(input, F.batch_norm_relu, residual=residual)

    def _normalize(self, input, batch_norm, **fused):
        if input.dim() not in self._expected_dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._expected_dims)} "
                             f"input (got {input.dim()}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with wick.no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        use_batch_stats = self.training or not self.track_running_stats
        track = not self.training or self.track_running_stats
        return batch_norm(input, self.running_mean if track else None,
                          self.running_var if track else None, self.weight, self.bias,
                          use_batch_stats, factor, self.eps, **fused)

class BatchNorm1d(_BatchNorm):
    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    _expected_dims = (4,)
