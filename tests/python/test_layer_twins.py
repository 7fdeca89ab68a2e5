"""The twin table: every layer that exists both as a C++ module (nn/layers/) and a Python one
(python/wick/nn/modules/) is built in each language with the same arguments, given the same
weights and inputs, and must give the same output, the same gradients of output.sum() (for the
inputs and every parameter), the same state_dict after forward (running statistics move in
training), the same set of state_dict keys, and - built under the same seed - the same initial
weights. The Python layer is built here with a seed; its
state_dict and inputs go in a safetensors file to tests/cpp/layer_twins.cpp, whose table spells
each row's constructor call in C++ under the same case id. Skipped when that program is not built.

Layers in only one language (see docs/adding_a_layer.md): C++-only none; Python-only the
activations LeakyReLU, ELU, SELU, Mish, Hardswish, Hardsigmoid, Hardtanh, ReLU6 and Softplus,
Unflatten, PixelUnshuffle, and the loss modules (C++ has the losses as functions only)."""

import os
import random
import subprocess

import numpy as np
import pytest

from conftest import BUILD

import wick
from wick import _C
from wick import nn

PROGRAM = os.path.join(BUILD, "tests", "layer_twins")
SEED = 7

pytestmark = pytest.mark.skipif(not os.path.exists(PROGRAM), reason=f"{PROGRAM} is not built")


def longs(shape, high, values=None):
    """An index tensor: `values` when given, else seeded draws below `high` that include 2 (the
    rows' padding_idx)."""
    if values is None:
        rng = random.Random(SEED)
        count = int(np.prod(shape))
        values = [2] + [rng.randrange(high) for _ in range(count - 1)]
    return ("long", shape, values)


def first(layer, *inputs):
    """The first of the layer's outputs: the sequence of an RNN, h of an LSTM cell."""
    return layer(*inputs)[0]


class Row:
    def __init__(self, case, build, inputs, call=None, train=True, dtype="float64", tol=1e-10):
        self.case, self.build, self.inputs, self.call = case, build, inputs, call
        self.train, self.dtype, self.tol = train, dtype, tol

    @property
    def id(self):
        return self.case if self.train else self.case + "-eval"


def self_attention(layer, x):
    return layer(x, x, x)[0]


ROWS = [
    # linear
    Row("Linear", lambda: nn.Linear(5, 3), [(2, 3, 5)]),
    Row("Linear_nobias", lambda: nn.Linear(5, 3, bias=False), [(2, 3, 5)]),
    Row("Identity", lambda: nn.Identity(), [(2, 3)]),
    Row("Flatten", lambda: nn.Flatten(), [(2, 3, 4)]),
    Row("Flatten_0_2", lambda: nn.Flatten(0, 2), [(2, 3, 4, 5)]),
    # conv
    Row("Conv1d", lambda: nn.Conv1d(4, 6, 3), [(2, 4, 9)]),
    Row("Conv1d_s2_p1_d2_g2",
        lambda: nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2), [(2, 4, 11)]),
    Row("Conv1d_nobias", lambda: nn.Conv1d(4, 6, 3, bias=False), [(2, 4, 9)]),
    Row("Conv2d", lambda: nn.Conv2d(3, 4, 3), [(2, 3, 6, 7)]),
    Row("Conv2d_k23_s2_p1", lambda: nn.Conv2d(3, 4, (2, 3), stride=2, padding=1), [(2, 3, 7, 8)]),
    Row("Conv2d_d2_g2_nobias",
        lambda: nn.Conv2d(4, 6, 3, padding=2, dilation=2, groups=2, bias=False), [(2, 4, 7, 7)]),
    Row("ConvTranspose2d", lambda: nn.ConvTranspose2d(3, 4, 3), [(2, 3, 4, 5)]),
    Row("ConvTranspose2d_s2_p1_op1_g2",
        lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
        [(2, 4, 4, 5)]),
    Row("ConvTranspose2d_d2_nobias",
        lambda: nn.ConvTranspose2d(3, 4, 2, bias=False, dilation=2), [(2, 3, 4, 5)]),
    Row("Unfold", lambda: nn.Unfold((2, 3), padding=1, stride=2), [(2, 3, 6, 7)]),
    Row("Fold", lambda: nn.Fold((4, 5), 2), [(2, 12, 12)]),
    # pooling
    Row("MaxPool1d", lambda: nn.MaxPool1d(3), [(2, 3, 10)]),
    Row("MaxPool1d_s1_p1_d2_ceil",
        lambda: nn.MaxPool1d(3, stride=1, padding=1, dilation=2, ceil_mode=True), [(2, 3, 10)]),
    Row("MaxPool2d", lambda: nn.MaxPool2d(2), [(2, 3, 6, 7)]),
    Row("MaxPool2d_k3_s2_p1_ceil", lambda: nn.MaxPool2d(3, 2, 1, ceil_mode=True), [(2, 3, 8, 9)]),
    Row("AvgPool1d", lambda: nn.AvgPool1d(3), [(2, 3, 10)]),
    Row("AvgPool1d_s2_p1_exclude",
        lambda: nn.AvgPool1d(3, 2, 1, ceil_mode=True, count_include_pad=False), [(2, 3, 10)]),
    Row("AvgPool2d", lambda: nn.AvgPool2d(2), [(2, 3, 6, 7)]),
    Row("AvgPool2d_k3_s2_p1_ceil_exclude",
        lambda: nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False), [(2, 3, 8, 9)]),
    Row("AdaptiveAvgPool1d", lambda: nn.AdaptiveAvgPool1d(3), [(2, 3, 10)]),
    Row("AdaptiveAvgPool2d", lambda: nn.AdaptiveAvgPool2d((3, 2)), [(2, 3, 7, 5)]),
    Row("AdaptiveMaxPool2d", lambda: nn.AdaptiveMaxPool2d((3, 2)), [(2, 3, 7, 5)]),
    # normalization
    Row("BatchNorm1d", lambda: nn.BatchNorm1d(4), [(5, 4)]),
    Row("BatchNorm1d", lambda: nn.BatchNorm1d(4), [(5, 4)], train=False),
    Row("BatchNorm1d_3d_noaffine",
        lambda: nn.BatchNorm1d(4, eps=1e-3, momentum=0.3, affine=False), [(5, 4, 6)]),
    Row("BatchNorm2d", lambda: nn.BatchNorm2d(3), [(4, 3, 5, 5)]),
    Row("BatchNorm2d", lambda: nn.BatchNorm2d(3), [(4, 3, 5, 5)], train=False),
    Row("BatchNorm2d_nostats", lambda: nn.BatchNorm2d(3, track_running_stats=False),
        [(4, 3, 5, 5)]),
    Row("InstanceNorm2d", lambda: nn.InstanceNorm2d(3), [(2, 3, 5, 5)]),
    Row("InstanceNorm2d_affine_stats",
        lambda: nn.InstanceNorm2d(3, momentum=0.2, affine=True, track_running_stats=True),
        [(2, 3, 5, 5)]),
    Row("InstanceNorm2d_affine_stats",
        lambda: nn.InstanceNorm2d(3, momentum=0.2, affine=True, track_running_stats=True),
        [(2, 3, 5, 5)], train=False),
    Row("GroupNorm", lambda: nn.GroupNorm(2, 4), [(3, 4, 5)]),
    Row("GroupNorm_noaffine", lambda: nn.GroupNorm(4, 4, eps=1e-3, affine=False),
        [(3, 4, 2, 3)]),
    Row("LayerNorm", lambda: nn.LayerNorm(5), [(2, 3, 5)]),
    Row("LayerNorm_2d_noaffine", lambda: nn.LayerNorm((3, 5), eps=1e-3, elementwise_affine=False),
        [(2, 3, 5)]),
    # dropout: the same seed before forward draws the same mask
    Row("Dropout", lambda: nn.Dropout(0.3), [(4, 50)]),
    Row("Dropout", lambda: nn.Dropout(0.3), [(4, 50)], train=False),
    Row("Dropout2d", lambda: nn.Dropout2d(0.4), [(4, 6, 3, 3)]),
    # activation
    Row("ReLU", lambda: nn.ReLU(), [(3, 7)]),
    Row("GELU", lambda: nn.GELU(), [(3, 7)]),
    Row("GELU_tanh", lambda: nn.GELU("tanh"), [(3, 7)]),
    Row("SiLU", lambda: nn.SiLU(), [(3, 7)]),
    Row("Tanh", lambda: nn.Tanh(), [(3, 7)]),
    Row("Sigmoid", lambda: nn.Sigmoid(), [(3, 7)]),
    Row("Softmax", lambda: nn.Softmax(dim=1), [(3, 4, 5)]),
    Row("LogSoftmax", lambda: nn.LogSoftmax(dim=-1), [(3, 4, 5)]),
    # distance
    Row("CosineSimilarity", lambda: nn.CosineSimilarity(), [(4, 6), (4, 6)]),
    Row("CosineSimilarity_dim0", lambda: nn.CosineSimilarity(dim=0, eps=1e-6), [(4, 6), (4, 6)]),
    Row("PairwiseDistance", lambda: nn.PairwiseDistance(), [(4, 6), (4, 6)]),
    Row("PairwiseDistance_p1_keepdim", lambda: nn.PairwiseDistance(p=1.0, eps=1e-4, keepdim=True),
        [(4, 6), (4, 6)]),
    # embedding
    Row("Embedding", lambda: nn.Embedding(10, 4), [longs((3, 5), 10)]),
    Row("Embedding_padding", lambda: nn.Embedding(10, 4, padding_idx=2), [longs((3, 5), 10)]),
    Row("EmbeddingBag", lambda: nn.EmbeddingBag(10, 4), [longs((3, 4), 10)]),
    Row("EmbeddingBag_sum_padding", lambda: nn.EmbeddingBag(10, 4, mode="sum", padding_idx=2),
        [longs((3, 4), 10)]),
    Row("EmbeddingBag_max_offsets", lambda: nn.EmbeddingBag(10, 4, mode="max"),
        [longs((8,), 10, [1, 4, 2, 7, 7, 0, 9, 3]), longs((3,), 8, [0, 2, 5])]),
    # resample
    Row("Upsample_nearest", lambda: nn.Upsample(scale_factor=2), [(2, 3, 4, 5)]),
    Row("Upsample_bilinear_size", lambda: nn.Upsample(size=(5, 7), mode="bilinear"),
        [(2, 3, 3, 4)]),
    Row("Upsample_bilinear_align",
        lambda: nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True), [(2, 3, 3, 4)]),
    Row("PixelShuffle", lambda: nn.PixelShuffle(2), [(2, 8, 3, 4)]),
    Row("ZeroPad2d", lambda: nn.ZeroPad2d((1, 2, 0, 1)), [(2, 3, 4, 5)]),
    Row("ConstantPad2d", lambda: nn.ConstantPad2d((2, 1, 1, 0), 0.5), [(2, 3, 4, 5)]),
    Row("ReflectionPad2d", lambda: nn.ReflectionPad2d((2, 1, 1, 2)), [(2, 3, 4, 5)]),
    Row("ReplicationPad2d", lambda: nn.ReplicationPad2d((2, 1, 1, 2)), [(2, 3, 4, 5)]),
    # recurrent: the output sequence (and, for the cells, h)
    Row("RNN", lambda: nn.RNN(3, 4), [(5, 2, 3)], first),
    Row("RNN_relu_2layers_bidir_batchfirst",
        lambda: nn.RNN(3, 4, 2, nonlinearity="relu", batch_first=True, bidirectional=True),
        [(2, 5, 3)], first),
    Row("LSTM", lambda: nn.LSTM(3, 4), [(5, 2, 3)], first),
    Row("LSTM_2layers_bidir_nobias", lambda: nn.LSTM(3, 4, 2, bias=False, bidirectional=True),
        [(5, 2, 3)], first),
    Row("GRU", lambda: nn.GRU(3, 4), [(5, 2, 3)], first),
    Row("GRU_2layers_batchfirst", lambda: nn.GRU(3, 4, 2, batch_first=True), [(2, 5, 3)], first),
    Row("RNNCell", lambda: nn.RNNCell(3, 4), [(2, 3)]),
    Row("RNNCell_relu_nobias", lambda: nn.RNNCell(3, 4, bias=False, nonlinearity="relu"),
        [(2, 3)]),
    Row("LSTMCell", lambda: nn.LSTMCell(3, 4), [(2, 3)], first),
    Row("GRUCell", lambda: nn.GRUCell(3, 4), [(2, 3)]),
    # attention: self-attention unless the row gives key and value
    Row("MultiheadAttention", lambda: nn.MultiheadAttention(8, 2), [(5, 2, 8)], self_attention),
    Row("MultiheadAttention_kv_zero_batchfirst",
        lambda: nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True,
                                      batch_first=True), [(2, 5, 8)], self_attention),
    Row("MultiheadAttention_kdim_vdim", lambda: nn.MultiheadAttention(8, 2, kdim=6, vdim=5),
        [(5, 2, 8), (4, 2, 6), (4, 2, 5)], lambda layer, q, k, v: layer(q, k, v)[0]),
    # transformer
    Row("TransformerEncoderLayer", lambda: nn.TransformerEncoderLayer(8, 2, 16, 0.0),
        [(5, 2, 8)]),
    Row("TransformerEncoderLayer_gelu_normfirst_batchfirst",
        lambda: nn.TransformerEncoderLayer(8, 2, 16, 0.0, activation="gelu", layer_norm_eps=1e-4,
                                           batch_first=True, norm_first=True), [(2, 5, 8)]),
    Row("TransformerEncoder",
        lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, 0.0), 2,
                                      norm=nn.LayerNorm(8)), [(5, 2, 8)]),
    Row("TransformerDecoderLayer", lambda: nn.TransformerDecoderLayer(8, 2, 16, 0.0),
        [(4, 2, 8), (5, 2, 8)]),
    Row("TransformerDecoder",
        lambda: nn.TransformerDecoder(
            nn.TransformerDecoderLayer(8, 2, 16, 0.0, activation="gelu", norm_first=True), 2),
        [(4, 2, 8), (5, 2, 8)]),
    Row("Transformer", lambda: nn.Transformer(8, 2, 1, 1, 16, 0.0), [(5, 2, 8), (4, 2, 8)]),
]


def make_input(spec, dtype):
    if isinstance(spec, tuple) and spec and spec[0] == "long":
        _, shape, values = spec
        return wick.tensor(values, dtype=wick.int64).reshape(*shape)
    return wick.randn(*spec, dtype=dtype).requires_grad_()


def numpy(t):
    return np.asarray(t.detach().tolist())


def python_side(row):
    """The Python layer's inputs to the program and its own results, in the program's names."""
    dtype = getattr(wick, row.dtype)
    wick.manual_seed(SEED)
    layer = row.build().to(dtype)
    init = {"init." + k: v.detach().clone() for k, v in layer.state_dict().items()}
    # Buffers other than the defaults, so that eval rows use running statistics that matter.
    for name, buf in layer.named_buffers():
        if buf.is_floating_point():
            buf.copy_(wick.rand(*buf.shape, dtype=dtype) + 0.5)
    layer.train(row.train)
    inputs = [make_input(spec, dtype) for spec in row.inputs]
    sent = {"state." + k: v.detach().clone() for k, v in layer.state_dict().items()}
    sent.update({f"input{i}": x.detach().clone() for i, x in enumerate(inputs)})

    wick.manual_seed(SEED)
    output = row.call(layer, *inputs) if row.call else layer(*inputs)
    output.sum().backward()
    mine = {"output": output}
    for i, x in enumerate(inputs):
        if x.grad is not None:
            mine[f"grad.input{i}"] = x.grad
    for name, p in layer.named_parameters():
        if p.grad is not None:
            mine["grad." + name] = p.grad
    for k, v in layer.state_dict().items():
        mine["state." + k] = v
    return sent, mine, init, set(layer.state_dict())


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_twins_agree(row, tmp_path):
    sent, mine, init, keys = python_side(row)
    src, dst = str(tmp_path / "in.safetensors"), str(tmp_path / "out.safetensors")
    _C._nn.save_safetensors(src, sent, {"seed": str(SEED), "train": "1" if row.train else "0",
                                        "dtype": row.dtype})
    done = subprocess.run([PROGRAM, row.case, src, dst], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    theirs, metadata = _C._nn.load_safetensors(dst)
    cpp_keys = set(filter(None, metadata["keys"].split("\n")))
    assert cpp_keys == keys, f"C++ only {cpp_keys - keys}, Python only {keys - cpp_keys}"
    assert set(theirs) == set(mine) | set(init), sorted(set(theirs) ^ (set(mine) | set(init)))
    # What the layers compute, then how they initialise (the same draws under the same seed).
    for expected in (mine, init):
        for name, value in expected.items():
            a, b = numpy(value), numpy(theirs[name])
            assert a.shape == b.shape, (name, a.shape, b.shape)
            np.testing.assert_allclose(b, a, rtol=row.tol, atol=row.tol, err_msg=name)


def test_every_cpp_row_has_a_python_twin():
    done = subprocess.run([PROGRAM, "--list"], capture_output=True, text=True, check=True)
    assert set(done.stdout.split()) == {row.case for row in ROWS}
