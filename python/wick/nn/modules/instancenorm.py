"""InstanceNorm2d (torch.nn.modules.instancenorm): per-sample, per-channel normalisation over
H and W (F.instance_norm, a composition of reductions with autograd), with optional running
statistics."""

import warnings

import wick
from wick.nn import functional as F
from wick.nn.modules import _args
from wick.nn.modules.module import Module
from wick.nn.parameter import Parameter


class InstanceNorm2d(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None):
        super().__init__()
        num_features = _args.size("InstanceNorm2d", "num_features", num_features, 1)
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(wick.ones(num_features, device=device, dtype=dtype))
            self.bias = Parameter(wick.zeros(num_features, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", wick.zeros(num_features, device=device,
                                                             dtype=dtype))
            self.register_buffer("running_var", wick.ones(num_features, device=device,
                                                           dtype=dtype))
            self.register_buffer("num_batches_tracked", wick.tensor(0, dtype=wick.long,
                                                                     device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"expected 3D or 4D input (got {input.dim()}D input)")
        feature_dim = input.dim() - 3
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          f"can silence this warning by not passing in num_features, which is "
                          f"not used because affine=False")
        batched = input.dim() == 4
        x = input if batched else input.unsqueeze(0)
        # PyTorch's instance norm never counts batches: num_batches_tracked stays 0 (it exists
        # only so state_dicts match).
        use_input_stats = self.training or not self.track_running_stats
        y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            use_input_stats, self.momentum, self.eps)
        return y if batched else y.squeeze(0)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")
