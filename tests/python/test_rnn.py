"""nn.RNN / LSTM / GRU, their cells and wick.nn.utils.rnn against PyTorch 1.13 with the same
weights (torch's state_dict loaded into wick): outputs, final states and the gradients of the
input, the initial states and every weight, for each layout (batch_first, layers, directions,
unbatched, packed); gradcheck in float64; bad input raising PyTorch's exception types."""

import numpy as np
import pytest

import wick
from wick.nn.utils import rnn as wrnn
from reference import needs_torch, torch

MODES = ["RNN_TANH", "RNN_RELU", "LSTM", "GRU"]


def make_pair(mode, *args, **kwargs):
    """A torch layer and a wick layer holding the same float64 weights."""
    torch.manual_seed(0)
    cls = {"LSTM": "LSTM", "GRU": "GRU"}.get(mode, "RNN")
    if cls == "RNN":
        kwargs["nonlinearity"] = "tanh" if mode == "RNN_TANH" else "relu"
    t = getattr(torch.nn, cls)(*args, **kwargs).double()
    w = getattr(wick.nn, cls)(*args, **kwargs).double()
    assert list(w.state_dict()) == list(t.state_dict())
    w.load_state_dict({k: wick.tensor(v.numpy()) for k, v in t.state_dict().items()})
    return t, w


def leaf(m, a):
    return m.tensor(a).requires_grad_(True)


def assert_close(w, t, what, atol=1e-9):
    assert w is not None and t is not None, what
    np.testing.assert_allclose(w.detach().numpy(), t.detach().numpy(), rtol=1e-7, atol=atol,
                               err_msg=what)


def run_both(mode, module_args, module_kwargs, x_shape, state_shape, seed=0):
    """Runs both layers forward and backward (through every output); compares everything."""
    rng = np.random.default_rng(seed)
    t_layer, w_layer = make_pair(mode, *module_args, **module_kwargs)
    x = rng.standard_normal(x_shape)
    h0 = rng.standard_normal(state_shape) if state_shape else None
    c0 = rng.standard_normal(state_shape) if state_shape else None
    results = {}
    for m, layer in ((torch, t_layer), (wick, w_layer)):
        xi = leaf(m, x)
        states = []
        if h0 is not None:
            states = [leaf(m, h0)] + ([leaf(m, c0)] if mode == "LSTM" else [])
            hx = tuple(states) if mode == "LSTM" else states[0]
            out, h = layer(xi, hx)
        else:
            out, h = layer(xi)
        finals = list(h) if mode == "LSTM" else [h]
        loss = (out * m.tensor(np.cos(np.arange(out.numel())).reshape(out.shape))).sum()
        for k, f in enumerate(finals):
            loss = loss + (f * m.tensor(np.sin(np.arange(f.numel()) + k).reshape(f.shape))).sum()
        loss.backward()
        results[m] = (out, finals, xi, states, layer)
    (tout, tfin, tx, tst, tl), (wout, wfin, wx, wst, wl) = results[torch], results[wick]
    assert tuple(wout.shape) == tuple(tout.shape)
    assert_close(wout, tout, "output")
    for k, (a, b) in enumerate(zip(wfin, tfin)):
        assert_close(a, b, f"final state {k}")
    assert_close(wx.grad, tx.grad, "grad of input")
    for k, (a, b) in enumerate(zip(wst, tst)):
        assert_close(a.grad, b.grad, f"grad of initial state {k}")
    tparams = dict(tl.named_parameters())
    for name, p in wl.named_parameters():
        assert_close(p.grad, tparams[name].grad, f"grad of {name}")


CONFIGS = [
    # (kwargs, x shape, state shape) with input_size 3, hidden_size 4
    (dict(), (5, 2, 3), (1, 2, 4)),
    (dict(batch_first=True), (2, 5, 3), (1, 2, 4)),
    (dict(num_layers=2), (4, 3, 3), (2, 3, 4)),
    (dict(bidirectional=True), (5, 2, 3), (2, 2, 4)),
    (dict(num_layers=2, bidirectional=True, batch_first=True), (3, 6, 3), (4, 3, 4)),
    (dict(bias=False, num_layers=2), (4, 2, 3), (2, 2, 4)),
    (dict(num_layers=2, bidirectional=True), (5, 2, 3), None),  # zero initial states
]


@needs_torch
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("config", range(len(CONFIGS)))
def test_layer_matches_pytorch(mode, config):
    kwargs, x_shape, state_shape = CONFIGS[config]
    run_both(mode, (3, 4), kwargs, x_shape, state_shape, seed=config)


@needs_torch
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bidirectional", [False, True])
def test_unbatched_input_matches_pytorch(mode, bidirectional):
    d = 2 if bidirectional else 1
    run_both(mode, (3, 4), dict(num_layers=2, bidirectional=bidirectional), (6, 3),
             (2 * d, 4))
    run_both(mode, (3, 4), dict(bidirectional=bidirectional, batch_first=True), (6, 3), None)


@needs_torch
def test_dropout_between_layers_only_in_training():
    t, w = make_pair("LSTM", 3, 4, num_layers=2, dropout=0.5)
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    w.eval()
    t.eval()
    assert_close(w(wick.tensor(x))[0], t(torch.tensor(x))[0], "eval output")
    w.train()
    wick.manual_seed(0)
    a = w(wick.tensor(x))[0]
    b = w(wick.tensor(x))[0]
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())  # masks differ per call
    # One layer: nothing to drop between layers, so training changes nothing.
    with pytest.warns(UserWarning, match="dropout"):
        one = wick.nn.GRU(3, 4, dropout=0.5).double()
    one.train()
    np.testing.assert_array_equal(one(wick.tensor(x))[0].detach().numpy(),
                                  one(wick.tensor(x))[0].detach().numpy())


@needs_torch
def test_parameters_names_shapes_and_init():
    for mode in MODES:
        t, w = make_pair(mode, 3, 5, num_layers=2, bidirectional=True)
        for (name, tp), (wname, wp) in zip(t.named_parameters(), w.named_parameters()):
            assert name == wname and tuple(tp.shape) == tuple(wp.shape)
    fresh = wick.nn.LSTM(3, 16)
    for p in fresh.parameters():
        v = p.detach().numpy()
        assert np.abs(v).max() <= 0.25 and v.std() > 0.1  # uniform(-1/4, 1/4)
    assert repr(wick.nn.GRU(3, 4, num_layers=2, batch_first=True)) == \
        repr(torch.nn.GRU(3, 4, num_layers=2, batch_first=True))


# ---- packed sequences ----

@needs_torch
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("lengths,enforce_sorted,batch_first,bidirectional", [
    ([5, 3, 3, 1], True, False, False),
    ([2, 5, 1, 3], False, False, True),
    ([4, 4, 2], False, True, True),
])
def test_packed_sequence_matches_pytorch(mode, lengths, enforce_sorted, batch_first,
                                         bidirectional):
    rng = np.random.default_rng(1)
    T, B = max(lengths), len(lengths)
    x = rng.standard_normal((B, T, 3) if batch_first else (T, B, 3))
    d = 2 if bidirectional else 1
    h0 = rng.standard_normal((2 * d, B, 4))
    c0 = rng.standard_normal((2 * d, B, 4))
    t_layer, w_layer = make_pair(mode, 3, 4, num_layers=2, bidirectional=bidirectional,
                                 batch_first=batch_first)
    res = {}
    for m, layer, pack, pad in (
            (torch, t_layer, torch.nn.utils.rnn.pack_padded_sequence,
             torch.nn.utils.rnn.pad_packed_sequence),
            (wick, w_layer, wrnn.pack_padded_sequence, wrnn.pad_packed_sequence)):
        xi, hi, ci = leaf(m, x), leaf(m, h0), leaf(m, c0)
        packed = pack(xi, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
        out, h = layer(packed, (hi, ci) if mode == "LSTM" else hi)
        padded, out_lengths = pad(out, batch_first=batch_first, total_length=T + 1)
        finals = list(h) if mode == "LSTM" else [h]
        loss = (padded * m.tensor(np.cos(np.arange(padded.numel())).reshape(padded.shape))).sum()
        for f in finals:
            loss = loss + (f * m.tensor(np.sin(np.arange(f.numel())).reshape(f.shape))).sum()
        loss.backward()
        res[m] = (packed, out, padded, out_lengths, finals, xi, hi, ci, layer)
    tp, to, tpad, tlen, tfin, tx, th, tc, tl = res[torch]
    wp, wo, wpad, wlen, wfin, wx, wh, wc, wl = res[wick]
    assert wp.batch_sizes.tolist() == tp.batch_sizes.tolist()
    assert_close(wp.data, tp.data, "packed input")
    assert_close(wo.data, to.data, "packed output")
    assert_close(wpad, tpad, "padded output")
    assert wlen.tolist() == tlen.tolist()
    for k, (a, b) in enumerate(zip(wfin, tfin)):
        assert_close(a, b, f"final state {k}")
    assert_close(wx.grad, tx.grad, "grad of input")
    assert_close(wh.grad, th.grad, "grad of h0")
    if mode == "LSTM":
        assert_close(wc.grad, tc.grad, "grad of c0")
    tparams = dict(tl.named_parameters())
    for name, p in wl.named_parameters():
        assert_close(p.grad, tparams[name].grad, f"grad of {name}")


@needs_torch
@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence_and_pack_sequence_match_pytorch(batch_first):
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((n, 2, 3)) for n in (3, 5, 1)]
    w = wrnn.pad_sequence([wick.tensor(a) for a in arrays], batch_first, padding_value=-1.5)
    t = torch.nn.utils.rnn.pad_sequence([torch.tensor(a) for a in arrays], batch_first,
                                        padding_value=-1.5)
    assert_close(w, t, "pad_sequence")
    wp = wrnn.pack_sequence([wick.tensor(a) for a in arrays], enforce_sorted=False)
    tp = torch.nn.utils.rnn.pack_sequence([torch.tensor(a) for a in arrays],
                                          enforce_sorted=False)
    assert_close(wp.data, tp.data, "pack_sequence")
    assert wp.sorted_indices.tolist() == tp.sorted_indices.tolist()
    assert wp.unsorted_indices.tolist() == tp.unsorted_indices.tolist()
    for a, b in zip(wrnn.unpack_sequence(wp), arrays):
        np.testing.assert_array_equal(a.numpy(), b)


# ---- cells ----

@needs_torch
@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("bias", [True, False])
def test_cells_match_pytorch(cls, batched, bias):
    torch.manual_seed(0)
    t = getattr(torch.nn, cls)(3, 4, bias=bias).double()
    w = getattr(wick.nn, cls)(3, 4, bias=bias).double()
    assert list(w.state_dict()) == list(t.state_dict())
    w.load_state_dict({k: wick.tensor(v.numpy()) for k, v in t.state_dict().items()})
    rng = np.random.default_rng(3)
    shape = (2,) if not batched else (5, 2)
    x = rng.standard_normal(shape[:-1] + (3,))
    h = rng.standard_normal(shape[:-1] + (4,))
    c = rng.standard_normal(shape[:-1] + (4,))
    res = {}
    for m, cell in ((torch, t), (wick, w)):
        xi, hi, ci = leaf(m, x), leaf(m, h), leaf(m, c)
        out = cell(xi, (hi, ci)) if cls == "LSTMCell" else cell(xi, hi)
        outs = list(out) if cls == "LSTMCell" else [out]
        sum((o * (k + 1.5)).sin().sum() for k, o in enumerate(outs)).backward()
        res[m] = (outs, xi, hi, ci, cell)
    (to, tx, th, tc, tcell), (wo, wx, wh, wc, wcell) = res[torch], res[wick]
    for a, b in zip(wo, to):
        assert tuple(a.shape) == tuple(b.shape)
        assert_close(a, b, "cell output")
    assert_close(wx.grad, tx.grad, "grad of input")
    assert_close(wh.grad, th.grad, "grad of hx")
    if cls == "LSTMCell":
        assert_close(wc.grad, tc.grad, "grad of cx")
    tparams = dict(tcell.named_parameters())
    for name, p in wcell.named_parameters():
        assert_close(p.grad, tparams[name].grad, f"grad of {name}")
    default = wcell(wick.tensor(x))  # zero states by default
    tdefault = tcell(torch.tensor(x))
    for a, b in zip(default if cls == "LSTMCell" else [default],
                    tdefault if cls == "LSTMCell" else [tdefault]):
        assert_close(a, b, "cell with default state")


# ---- gradcheck ----

def _weights(rng, mode, input_size, hidden, layers, directions, bias=True):
    gates = {"LSTM": 4, "GRU": 3}.get(mode, 1) * hidden
    out = []
    for layer in range(layers):
        for _ in range(directions):
            i = input_size if layer == 0 else hidden * directions
            shapes = [(gates, i), (gates, hidden)] + ([(gates,), (gates,)] if bias else [])
            out += [wick.tensor(rng.standard_normal(s) * 0.5, requires_grad=True)
                    for s in shapes]
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("packed", [False, True])
def test_layer_gradcheck(mode, packed):
    rng = np.random.default_rng(4)
    layers, d, H = 2, 2, 3
    batch_sizes = [3, 2, 2, 1] if packed else []
    x = wick.tensor(rng.standard_normal((8, 2) if packed else (3, 2, 2)), requires_grad=True)
    B = 3 if packed else 2
    h0 = wick.tensor(rng.standard_normal((layers * d, B, H)), requires_grad=True)
    c0 = wick.tensor(rng.standard_normal((layers * d, B, H)), requires_grad=True)
    weights = _weights(rng, mode, 2, H, layers, d)

    def fn(x, h0, c0, *weights):
        out, h_n, c_n = wick._C._nn._rnn(mode, x, batch_sizes, h0,
                                         c0 if mode == "LSTM" else None, list(weights), True,
                                         layers, 0.0, False, True)
        return (out, h_n) + ((c_n,) if mode == "LSTM" else ())

    inputs = (x, h0, c0, *weights) if mode == "LSTM" else (x, h0, c0.detach(), *weights)
    assert wick.autograd.gradcheck(fn, inputs)


@pytest.mark.parametrize("name", ["lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"])
def test_cell_functions_gradcheck_and_gradgradcheck(name):
    rng = np.random.default_rng(5)
    gates = {"lstm_cell": 4, "gru_cell": 3}.get(name, 1) * 3
    t = [wick.tensor(rng.standard_normal(s), requires_grad=True)
         for s in [(2, 4), (2, 3), (2, 3), (gates, 4), (gates, 3), (gates,), (gates,)]]
    if name == "lstm_cell":
        fn = lambda x, h, c, wi, wh, bi, bh: wick.lstm_cell(x, (h, c), wi, wh, bi, bh)  # noqa
        inputs = t
    else:
        fn = lambda x, h, wi, wh, bi, bh: getattr(wick, name)(x, h, wi, wh, bi, bh)  # noqa
        inputs = t[:2] + t[3:]
    assert wick.autograd.gradcheck(fn, tuple(inputs))
    assert wick.autograd.gradgradcheck(fn, tuple(inputs))


def test_fused_steps_run_as_their_kernels():
    # The layer's per-step work is the fused kernels of the op table (not a chain of ops).
    names = {op["name"]: op for op in wick._C._ops()}
    for op in ("lstm_cell", "lstm_cell_backward", "gru_cell", "gru_cell_backward"):
        assert "cpu" in names[op]["kernels"], op
    x = wick.randn(4, 2, 3, requires_grad=True)
    out, (h, c) = wick.nn.LSTM(3, 5)(x)
    assert out.grad_fn is not None and h.grad_fn is not None


def test_double_backward_through_a_layer_is_refused():
    x = wick.randn(3, 2, 3, dtype=wick.float64, requires_grad=True)
    out, _ = wick.nn.GRU(3, 4).double()(x)
    with pytest.raises(RuntimeError, match="double backward"):
        wick.autograd.grad(out.sum(), x, create_graph=True)


# ---- bad input ----

@needs_torch
@pytest.mark.parametrize("mode", MODES)
def test_bad_inputs_raise_like_pytorch(mode):
    t_layer, w_layer = make_pair(mode, 3, 4, num_layers=2)

    def both(fn):
        errors = []
        for m, layer in ((torch, t_layer), (wick, w_layer)):
            with pytest.raises(Exception) as info:
                fn(m, layer)
            errors.append(info)
        assert errors[1].type is errors[0].type, (errors[0].value, errors[1].value)
        return str(errors[1].value)

    state = lambda m, shape: ((m.zeros(*shape, dtype=m.float64),) * 2 if mode == "LSTM"  # noqa
                              else m.zeros(*shape, dtype=m.float64))
    msg = both(lambda m, l: l(m.zeros(5, 2, 7, dtype=m.float64)))  # wrong feature size
    assert "Expected 3, got 7" in msg
    msg = both(lambda m, l: l(m.zeros(5, 2, 3, dtype=m.float64), state(m, (1, 2, 4))))
    assert "(2, 2, 4)" in msg and "[1, 2, 4]" in msg
    msg = both(lambda m, l: l(m.zeros(5, 2, 3, dtype=m.float64), state(m, (2, 4))))
    assert "3-D" in msg
    msg = both(lambda m, l: l(m.zeros(5, 2, 3, 3, dtype=m.float64)))  # 4-d input
    assert "dimensions" in msg


@needs_torch
def test_bad_packing_raises():
    x = wick.zeros(3, 2, 4)
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        wrnn.pack_padded_sequence(x, [2, 3])
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        torch.nn.utils.rnn.pack_padded_sequence(torch.zeros(3, 2, 4), [2, 3])
    # PyTorch 1.13 accepts this and reads past the data; wick refuses it.
    with pytest.raises(RuntimeError, match="longest length 4 exceeds the sequence's 3 steps"):
        wrnn.pack_padded_sequence(x, [4, 2])
    with pytest.raises(RuntimeError, match="greater than 0"):
        wrnn.pack_padded_sequence(x, [2, 0])
    with pytest.raises(RuntimeError, match="batch_size"):
        wrnn.pack_padded_sequence(x, [3, 2, 1])
    packed = wrnn.pack_padded_sequence(x, [3, 2])
    with pytest.raises(ValueError, match="total_length=2"):
        wrnn.pad_packed_sequence(packed, total_length=2)


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="proj_size"):
        wick.nn.LSTM(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        wick.nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="dropout should be a number"):
        wick.nn.RNN(3, 4, dropout=1.5)
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        wick.nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(TypeError, match="hidden_size"):
        wick.nn.LSTM(3, 4.5)
    with pytest.raises(ValueError, match="1-D or 2-D"):
        wick.nn.LSTMCell(3, 4)(wick.zeros(2, 2, 3))
    with pytest.raises(RuntimeError, match="inconsistent input_size: got 5 expected 3"):
        wick.nn.GRUCell(3, 4)(wick.zeros(2, 5))


@needs_torch
@pytest.mark.parametrize("mode", MODES)
def test_float32_matches_pytorch(mode):
    cls = {"LSTM": "LSTM", "GRU": "GRU"}.get(mode, "RNN")
    kwargs = {} if cls != "RNN" else {"nonlinearity": "tanh" if mode == "RNN_TANH" else "relu"}
    torch.manual_seed(1)
    t = getattr(torch.nn, cls)(5, 7, 2, bidirectional=True, **kwargs)
    w = getattr(wick.nn, cls)(5, 7, 2, bidirectional=True, **kwargs)
    w.load_state_dict({k: wick.tensor(v.numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(6).standard_normal((9, 4, 5)).astype(np.float32)
    wx, tx = leaf(wick, x), leaf(torch, x)
    wo, to = w(wx)[0], t(tx)[0]
    assert wo.dtype == wick.float32
    np.testing.assert_allclose(wo.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-5)
    wo.sum().backward()
    to.sum().backward()
    np.testing.assert_allclose(wx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
