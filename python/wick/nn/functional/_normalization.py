"""The normalizations of wick.nn.functional: batch_norm (and batch_norm_relu, its fusion with the
residual add and ReLU that ends a ResNet block), layer_norm, group_norm, instance_norm and
normalize (Lp normalisation along a dim). The math is C++."""

from wick import _C

_nn = _C._nn


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    return _nn.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                          eps)


def batch_norm_relu(input, running_mean, running_var, weight=None, bias=None, training=False,
                    momentum=0.1, eps=1e-5, residual=None):
    """relu(batch_norm(input, ...) + residual) in one pass over the data, and one in backward: the
    end of a ResNet block. wick's own, like MXNet's BatchNormWithReLU, PaddlePaddle's
    fused_bn_add_activation and cuDNN's CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION; PyTorch runs the
    three ops one after another. residual (input's shape) may be None."""
    return _nn.batch_norm_relu(input, running_mean, running_var, weight, bias, training,
                               momentum, eps, residual)


layer_norm = _nn.layer_norm
group_norm = _nn.group_norm
instance_norm = _nn.instance_norm


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    if out is not None:
        raise ValueError("[normalize] out= is not supported")
    return _nn.normalize(input, p, dim, eps)
