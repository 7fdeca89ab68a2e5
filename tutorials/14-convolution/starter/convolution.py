"""Lab 14: three ways to compute one 2-D convolution, each a composition of wick ops (so autograd
gives every gradient), checked against wick.nn.functional.conv2d:

- im2col + GEMM: copy every input patch into a column, then one matrix product (what wick's CPU
  kernel does, and cuDNN's GEMM algorithm);
- direct: no patch matrix; for each of the kh * kw taps, a 1x1 convolution of the input shifted
  by the tap, accumulated into the output;
- Winograd F(2x2, 3x3): per 4x4 input tile and 3x3 filter, 16 multiplications instead of 36 for a
  2x2 block of outputs, paid for with transforms (cuDNN's and oneDNN's WINOGRAD algorithms).

Shapes: x [N, C, H, W], w [O, C, kh, kw], b [O] or None; square stride and padding."""

import wick
from wick.nn import functional as F


def output_size(size, kernel, stride, padding):
    return (size + 2 * padding - kernel) // stride + 1


def im2col(x, kh, kw, stride=1, padding=0):
    """[N, C * kh * kw, OH * OW]: row (c, i, j) holds, for every output position (y, x), the input
    value x[c, y * stride - padding + i, x * stride - padding + j] (zero outside the image)."""
    # TODO(14): im2col: pad once; for each tap (i, j) take the strided window x_p[:, :, i::s, j::s] of OH x OW; stack taps after channels
    raise NotImplementedError("im2col: pad once; for each tap (i, j) take the strided window x_p[:, :, i::s, j::s] of OH x OW; stack taps after channels")


def conv2d_im2col(x, w, b=None, stride=1, padding=0):
    """One GEMM per batch: w.reshape(O, C * kh * kw) @ im2col(x) -> [N, O, OH * OW]."""
    # TODO(14): conv2d_im2col: cols = im2col(...); out = w.reshape(O, -1) @ cols; reshape to [N, O, OH, OW]; add b[:, None, None]
    raise NotImplementedError("conv2d_im2col: cols = im2col(...); out = w.reshape(O, -1) @ cols; reshape to [N, O, OH, OW]; add b[:, None, None]")


def conv2d_direct(x, w, b=None, stride=1, padding=0):
    """No patch matrix: the sum over taps (i, j) of w[:, :, i, j] [O, C] applied to the input
    window that tap sees [N, C, OH, OW] - kh * kw small products, no copy of size kh * kw."""
    # TODO(14): conv2d_direct: for each tap: window = x_p[:, :, i::s, j::s] (OH x OW); out += w[:, :, i, j] @ window.reshape(N, C, -1)
    raise NotImplementedError("conv2d_direct: for each tap: window = x_p[:, :, i::s, j::s] (OH x OW); out += w[:, :, i, j] @ window.reshape(N, C, -1)")


# Winograd F(2x2, 3x3) (Lavin and Gray, 2016): Y = A^T [(G g G^T) * (B^T d B)] A for a 3x3 filter
# g and a 4x4 input tile d, giving a 2x2 output tile.
G = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]]
BT = [[1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 1.0, 0.0], [0.0, -1.0, 1.0, 0.0], [0.0, 1.0, 0.0, -1.0]]
AT = [[1.0, 1.0, 1.0, 0.0], [0.0, 1.0, -1.0, -1.0]]


def conv2d_winograd(x, w, b=None, padding=1):
    """A 3x3, stride-1 convolution by F(2x2, 3x3), as fast implementations organise it: transform
    every filter (U = G w G^T, 16 values per (o, c)) and every overlapping 4x4 input tile taken
    each 2 pixels (V = B^T d B); then, for each of the 16 tile positions, one GEMM sums over the
    channels (M = U @ V); then map each 4x4 product back to its 2x2 outputs (Y = A^T M A).
    A 2-D transform P d Q^T of a flattened tile is one matrix: kron(P, Q) @ vec(d)."""
    # TODO(14): conv2d_winograd: tiles d[..., a, b] = x_p[:, :, a::2, b::2]; vec transforms with kron(BT, BT), kron(G, G), kron(AT, AT); 16 GEMMs over C (bmm)
    raise NotImplementedError("conv2d_winograd: tiles d[..., a, b] = x_p[:, :, a::2, b::2]; vec transforms with kron(BT, BT), kron(G, G), kron(AT, AT); 16 GEMMs over C (bmm)")


def batch_norm_relu_backward(x, weight, bias, residual, grad_out, eps=1e-5):
    """The backward of z = relu(batch_norm(x) + residual) in training mode (batch statistics), as
    wick's fused kernel computes it (Note [batch norm's fused epilogue]): the relu's mask is
    recomputed from x instead of being saved, then batch norm's backward runs on the masked
    gradient. x and residual are [N, C, H, W], weight and bias [C]; returns (dx, dweight, dbias,
    dresidual), without autograd."""
    # TODO(14): batch_norm_relu_backward: mean/var over (0, 2, 3); x_hat; dy = grad_out where x_hat * w + b + residual > 0; dw = sum(dy x_hat), db = sum(dy); dx = w invstd (dy - mean(dy) - x_hat mean(dy x_hat))
    raise NotImplementedError("batch_norm_relu_backward: mean/var over (0, 2, 3); x_hat; dy = grad_out where x_hat * w + b + residual > 0; dw = sum(dy x_hat), db = sum(dy); dx = w invstd (dy - mean(dy) - x_hat mean(dy x_hat))")


def conv2d_strided_input_grad(grad_out, w, input_size):
    """dX of a 3x3, stride-2, padding-1 convolution with weight w [O, C, 3, 3], from grad_out
    [N, O, OH, OW], for an input of even size (H, W) = input_size, without autograd and without
    col2im: each of dX's four phases dX[:, :, a::2, b::2] is reached only by the taps (i, k) with
    i = a + 1 and k = b + 1 (mod 2) - 1, 2, 2 and 4 of the nine - each reading grad_out at (Y, X)
    or one row or column on: a stride-1 convolution of grad_out (wick's kernel: Note [strided
    input gradient by output phases])."""
    # TODO(14): conv2d_strided_input_grad: pad grad_out by one zero row and column at the end; phase (a, b) = sum over its taps of w[:, :, i, k]^T @ window at offset ((a + 1 - i) // 2, (b + 1 - k) // 2); interleave the phases with stack + reshape
    raise NotImplementedError("conv2d_strided_input_grad: pad grad_out by one zero row and column at the end; phase (a, b) = sum over its taps of w[:, :, i, k]^T @ window at offset ((a + 1 - i) // 2, (b + 1 - k) // 2); interleave the phases with stack + reshape")
