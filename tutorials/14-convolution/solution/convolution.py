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
    # BEGIN SOLUTION: pad once; for each tap (i, j) take the strided window x_p[:, :, i::s, j::s] of OH x OW; stack taps after channels
    N, C, H, W = x.shape
    oh, ow = output_size(H, kh, stride, padding), output_size(W, kw, stride, padding)
    xp = F.pad(x, (padding, padding, padding, padding))
    taps = [xp[:, :, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride]
            for i in range(kh) for j in range(kw)]
    # [N, C, kh * kw, OH, OW]: the channel varies slowest in a row index, as in w.reshape(O, -1)
    return wick.stack(taps, 2).reshape(N, C * kh * kw, oh * ow)
    # END SOLUTION


def conv2d_im2col(x, w, b=None, stride=1, padding=0):
    """One GEMM per batch: w.reshape(O, C * kh * kw) @ im2col(x) -> [N, O, OH * OW]."""
    # BEGIN SOLUTION: cols = im2col(...); out = w.reshape(O, -1) @ cols; reshape to [N, O, OH, OW]; add b[:, None, None]
    N, C, H, W = x.shape
    O, _, kh, kw = w.shape
    oh, ow = output_size(H, kh, stride, padding), output_size(W, kw, stride, padding)
    out = (w.reshape(O, -1) @ im2col(x, kh, kw, stride, padding)).reshape(N, O, oh, ow)
    return out if b is None else out + b.reshape(1, O, 1, 1)
    # END SOLUTION


def conv2d_direct(x, w, b=None, stride=1, padding=0):
    """No patch matrix: the sum over taps (i, j) of w[:, :, i, j] [O, C] applied to the input
    window that tap sees [N, C, OH, OW] - kh * kw small products, no copy of size kh * kw."""
    # BEGIN SOLUTION: for each tap: window = x_p[:, :, i::s, j::s] (OH x OW); out += w[:, :, i, j] @ window.reshape(N, C, -1)
    N, C, H, W = x.shape
    O, _, kh, kw = w.shape
    oh, ow = output_size(H, kh, stride, padding), output_size(W, kw, stride, padding)
    xp = F.pad(x, (padding, padding, padding, padding))
    out = None
    for i in range(kh):
        for j in range(kw):
            window = xp[:, :, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride]
            term = w[:, :, i, j] @ window.reshape(N, C, oh * ow)
            out = term if out is None else out + term
    out = out.reshape(N, O, oh, ow)
    return out if b is None else out + b.reshape(1, O, 1, 1)
    # END SOLUTION


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
    # BEGIN SOLUTION: tiles d[..., a, b] = x_p[:, :, a::2, b::2]; vec transforms with kron(BT, BT), kron(G, G), kron(AT, AT); 16 GEMMs over C (bmm)
    N, C, H, W = x.shape
    O = w.shape[0]
    oh, ow = output_size(H, 3, 1, padding), output_size(W, 3, 1, padding)
    th, tw = (oh + 1) // 2, (ow + 1) // 2  # 2x2 output tiles, the last may hang over the edge
    g, bt, at = (wick.tensor(m, dtype=x.dtype) for m in (G, BT, AT))
    u = (w.reshape(O * C, 9) @ wick.kron(g, g).t()).reshape(O, C, 16)  # U = G w G^T
    # Pad so that every tile's 4x4 window exists: 2 * th + 2 rows, 2 * tw + 2 columns.
    xp = F.pad(x, (padding, 2 * tw + 2 - W - padding, padding, 2 * th + 2 - H - padding))
    d = wick.stack([xp[:, :, a:a + 2 * th:2, c:c + 2 * tw:2] for a in range(4) for c in range(4)],
                   -1)  # [N, C, th, tw, 16]: tile (t, s)'s 4x4 window, row by row
    v = d @ wick.kron(bt, bt).t()  # V = B^T d B for every tile
    # [16, O, C] @ [16, C, N * th * tw]: the channel sum, one GEMM per tile position
    v = v.permute(4, 1, 0, 2, 3).reshape(16, C, N * th * tw)
    m = wick.bmm(u.permute(2, 0, 1), v)  # [16, O, N * th * tw]
    y = m.permute(1, 2, 0) @ wick.kron(at, at).t()  # Y = A^T M A: [O, N * th * tw, 4]
    y = y.reshape(O, N, th, tw, 2, 2).permute(1, 0, 2, 4, 3, 5).reshape(N, O, 2 * th, 2 * tw)
    y = y[:, :, :oh, :ow]
    return y if b is None else y + b.reshape(1, O, 1, 1)
    # END SOLUTION


def batch_norm_relu_backward(x, weight, bias, residual, grad_out, eps=1e-5):
    """The backward of z = relu(batch_norm(x) + residual) in training mode (batch statistics), as
    wick's fused kernel computes it (Note [batch norm's fused epilogue]): the relu's mask is
    recomputed from x instead of being saved, then batch norm's backward runs on the masked
    gradient. x and residual are [N, C, H, W], weight and bias [C]; returns (dx, dweight, dbias,
    dresidual), without autograd."""
    # BEGIN SOLUTION: mean/var over (0, 2, 3); x_hat; dy = grad_out where x_hat * w + b + residual > 0; dw = sum(dy x_hat), db = sum(dy); dx = w invstd (dy - mean(dy) - x_hat mean(dy x_hat))
    dims, shape = (0, 2, 3), (1, -1, 1, 1)
    count = x.numel() // x.shape[1]
    mean = x.mean(dims, keepdim=True)
    invstd = ((x - mean) ** 2).mean(dims, keepdim=True).add(eps).rsqrt()
    x_hat = (x - mean) * invstd
    pre = x_hat * weight.reshape(shape) + bias.reshape(shape) + residual
    dy = wick.where(pre > 0, grad_out, wick.zeros_like(grad_out))
    dweight, dbias = (dy * x_hat).sum(dims), dy.sum(dims)
    mean_dy = dbias.reshape(shape) / count
    mean_dy_xhat = dweight.reshape(shape) / count
    dx = weight.reshape(shape) * invstd * (dy - mean_dy - x_hat * mean_dy_xhat)
    return dx, dweight, dbias, dy
    # END SOLUTION


def conv2d_strided_input_grad(grad_out, w, input_size):
    """dX of a 3x3, stride-2, padding-1 convolution with weight w [O, C, 3, 3], from grad_out
    [N, O, OH, OW], for an input of even size (H, W) = input_size, without autograd and without
    col2im: each of dX's four phases dX[:, :, a::2, b::2] is reached only by the taps (i, k) with
    i = a + 1 and k = b + 1 (mod 2) - 1, 2, 2 and 4 of the nine - each reading grad_out at (Y, X)
    or one row or column on: a stride-1 convolution of grad_out (wick's kernel: Note [strided
    input gradient by output phases])."""
    # BEGIN SOLUTION: pad grad_out by one zero row and column at the end; phase (a, b) = sum over its taps of w[:, :, i, k]^T @ window at offset ((a + 1 - i) // 2, (b + 1 - k) // 2); interleave the phases with stack + reshape
    N, O, oh, ow = grad_out.shape
    C = w.shape[1]
    height, width = input_size
    dyp = F.pad(grad_out, (0, 1, 0, 1))
    rows = []
    for a in range(2):
        phases = []
        for b in range(2):
            out = None
            for i in range((a + 1) % 2, 3, 2):  # i = a + 1 (mod 2)
                for k in range((b + 1) % 2, 3, 2):
                    dy, dx = (a + 1 - i) // 2, (b + 1 - k) // 2
                    window = dyp[:, :, dy:dy + height // 2, dx:dx + width // 2]
                    term = w[:, :, i, k].transpose(0, 1) @ window.reshape(N, O, -1)
                    out = term if out is None else out + term
            phases.append(out.reshape(N, C, height // 2, width // 2))
        # [N, C, H / 2, W / 2, 2]: phase b is the column's parity
        rows.append(wick.stack(phases, dim=-1).reshape(N, C, height // 2, width))
    return wick.stack(rows, dim=3).reshape(N, C, height, width)
    # END SOLUTION
