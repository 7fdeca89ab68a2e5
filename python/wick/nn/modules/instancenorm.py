"""InstanceNorm2d (torch.nn.modules.instancenorm): per-sample, per-channel normalisation over
H and W (F.instance_norm, a composition of reductions with autograd), with optional running
statistics."""

import warnings

from wick.nn import functional as F
from wick.nn.modules.batchnorm import _NormBase


class InstanceNorm2d(_NormBase):
    _min_features = 1

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

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
