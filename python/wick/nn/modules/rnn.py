"""RNN, LSTM, GRU and their cells (torch.nn.modules.rnn): the same constructor arguments,
parameter names (weight_ih_l0, ..., _reverse), initialisation and input checks as PyTorch 1.13,
so a torch state_dict loads. The recurrence itself is C++ (wick._C._nn._rnn, core/ops/rnn.cpp):
one GEMM projects the whole sequence, then each step is one GEMM and one fused kernel.
proj_size (LSTM with projections) is not supported and refused."""

import math
import numbers
import warnings

import wick
from wick import _C
from wick.nn import init
from wick.nn.modules.module import Module
from wick.nn.parameter import Parameter
from wick.nn.modules import _args
from wick.nn.utils.rnn import PackedSequence

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _permute(hx, permutation):
    return hx if permutation is None else hx.index_select(1, permutation)


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0., bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + str(mode))
        self.mode = mode
        self.input_size = _args.size(name, "input_size", input_size)
        self.hidden_size = _args.size(name, "hidden_size", hidden_size)
        self.num_layers = _args.size(name, "num_layers", num_layers)
        if self.hidden_size <= 0:
            raise ValueError(f"[{name}] hidden_size must be greater than zero; got {hidden_size}")
        if self.num_layers <= 0:
            raise ValueError(f"[{name}] num_layers must be greater than zero; got {num_layers}")
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or \
                not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             f"probability of an element being zeroed; got {dropout!r}")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size != 0:
            # Projections change h's size and add weight_hr_l{k}; the fused layer does not have
            # them yet, and a silently ignored projection would be wrong.
            raise ValueError(f"[{name}] proj_size={proj_size} is not supported by wick; use "
                             "proj_size=0 (or an nn.Linear on the output)")
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gate_size = _GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else hidden_size * directions
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                names = []
                for base, shape in shapes:
                    setattr(self, base + suffix,
                            Parameter(wick.empty(*shape, device=device, dtype=dtype)))
                    names.append(base + suffix)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _flat_weights(self):
        # Looked up each time, so .to(), .double() and load_state_dict are always seen.
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op kept for PyTorch code: wick's weights need no cuDNN flattening."""

    def check_input(self, input, batch_sizes):
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"[{type(self).__name__}] input must have {expected} dimensions, "
                               f"got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"[{type(self).__name__}] input.size(-1) must be equal to "
                               "input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        directions = 2 if self.bidirectional else 1
        return (self.num_layers * directions, mini_batch, self.hidden_size)

    def check_hidden_size(self, hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"[{type(self).__name__}] " + msg.format(expected, list(hx.shape)))

    def _run(self, input, hx, cx, batch_sizes):
        """The C++ recurrence; input is [T, B, I] (made time-major here) or packed data."""
        if batch_sizes is None:
            x = input.transpose(0, 1) if self.batch_first else input
            sizes = []
        else:
            x, sizes = input, [int(b) for b in batch_sizes.tolist()]
        out, h_n, c_n = _C._nn._rnn(self.mode, x, sizes, hx, cx, self._flat_weights, self.bias,
                                    self.num_layers, self.dropout, self.training,
                                    self.bidirectional)
        if batch_sizes is None and self.batch_first:
            out = out.transpose(0, 1)
        return out, h_n, c_n

    def _unpack_input(self, input):
        """(input, batch_sizes, sorted_indices, unsorted_indices, is_batched, batch size)."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            return data, batch_sizes, sorted_indices, unsorted_indices, True, int(batch_sizes[0])
        is_batched = input.dim() == 3
        if not is_batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        batch = input.size(0) if self.batch_first else input.size(1)
        return input, None, None, None, is_batched, batch

    def _zeros(self, input, batch):
        directions = 2 if self.bidirectional else 1
        return wick.zeros(self.num_layers * directions, batch, self.hidden_size,
                          dtype=input.dtype, device=input.device)

    def _finish(self, orig_input, output, batch_sizes, sorted_indices, unsorted_indices,
                is_batched):
        if isinstance(orig_input, PackedSequence):
            return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
        return output

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class _SingleStateRNN(RNNBase):
    """RNN and GRU: one state tensor."""

    def forward(self, input, hx=None):
        orig = input
        input, batch_sizes, sorted_idx, unsorted_idx, is_batched, batch = \
            self._unpack_input(input)
        if hx is not None and not isinstance(hx, wick.Tensor):
            raise TypeError(f"[{type(self).__name__}] hx must be a Tensor (the initial hidden "
                            f"state); got {type(hx).__name__}")
        if not isinstance(orig, PackedSequence) and hx is not None:
            name = type(self).__name__
            if is_batched and hx.dim() != 3:
                raise RuntimeError(f"[{name}] For batched 3-D input, hx should also be 3-D but "
                                   f"got {hx.dim()}-D tensor")
            if not is_batched:
                if hx.dim() != 2:
                    raise RuntimeError(f"[{name}] For unbatched 2-D input, hx should also be 2-D "
                                       f"but got {hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
        hx = self._zeros(input, batch) if hx is None else _permute(hx, sorted_idx)
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hx, self.get_expected_hidden_size(input, batch_sizes))
        out, h_n, _ = self._run(input, hx, None, batch_sizes)
        out = self._finish(orig, out, batch_sizes, sorted_idx, unsorted_idx, is_batched)
        h_n = _permute(h_n, unsorted_idx)
        return out, (h_n if is_batched else h_n.squeeze(1))


class RNN(_SingleStateRNN):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'")
        super().__init__(mode, *args, **kwargs)

    def extra_repr(self):
        s = super().extra_repr()
        return s + (", nonlinearity='relu'" if self.nonlinearity == "relu" else "")


class GRU(_SingleStateRNN):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        orig = input
        input, batch_sizes, sorted_idx, unsorted_idx, is_batched, batch = \
            self._unpack_input(input)
        if hx is None:
            hx = (self._zeros(input, batch), self._zeros(input, batch))
        else:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError("LSTM: hx must be a tuple (h_0, c_0) of two tensors; got "
                                f"{type(hx).__name__}")
            h, c = hx
            if batch_sizes is None:
                if is_batched and (h.dim() != 3 or c.dim() != 3):
                    raise RuntimeError("[LSTM] For batched 3-D input, hx and cx should also be "
                                       f"3-D but got ({h.dim()}-D, {c.dim()}-D) tensors")
                if not is_batched:
                    if h.dim() != 2 or c.dim() != 2:
                        raise RuntimeError("[LSTM] For unbatched 2-D input, hx and cx should "
                                           f"also be 2-D but got ({h.dim()}-D, {c.dim()}-D) "
                                           "tensors")
                    h, c = h.unsqueeze(1), c.unsqueeze(1)
            hx = (_permute(h, sorted_idx), _permute(c, sorted_idx))
        self.check_input(input, batch_sizes)
        expected = self.get_expected_hidden_size(input, batch_sizes)
        self.check_hidden_size(hx[0], expected, "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hx[1], expected, "Expected hidden[1] size {}, got {}")
        out, h_n, c_n = self._run(input, hx[0], hx[1], batch_sizes)
        out = self._finish(orig, out, batch_sizes, sorted_idx, unsorted_idx, is_batched)
        h_n, c_n = _permute(h_n, unsorted_idx), _permute(c_n, unsorted_idx)
        if not is_batched:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return out, (h_n, c_n)


class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        self.input_size = _args.size(name, "input_size", input_size)
        self.hidden_size = _args.size(name, "hidden_size", hidden_size)
        self.bias = bias
        self.weight_ih = Parameter(wick.empty(num_chunks * hidden_size, input_size,
                                              device=device, dtype=dtype))
        self.weight_hh = Parameter(wick.empty(num_chunks * hidden_size, hidden_size,
                                              device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(wick.empty(num_chunks * hidden_size, device=device,
                                                dtype=dtype))
            self.bias_hh = Parameter(wick.empty(num_chunks * hidden_size, device=device,
                                                dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, input):
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1-D or 2-D but "
                             f"received {input.dim()}-D tensor")
        return input.dim() == 2

    def _state(self, input, hx, is_batched):
        if hx is None:
            return wick.zeros(input.size(0), self.hidden_size, dtype=input.dtype,
                              device=input.device)
        return hx if is_batched else hx.unsqueeze(0)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        is_batched = self._batched(input)
        input = input if is_batched else input.unsqueeze(0)
        hx = self._state(input, hx, is_batched)
        cell = _C.rnn_tanh_cell if self.nonlinearity == "tanh" else _C.rnn_relu_cell
        ret = cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        is_batched = self._batched(input)
        input = input if is_batched else input.unsqueeze(0)
        if hx is None:
            zeros = self._state(input, None, True)
            hx = (zeros, zeros)
        else:
            hx = (hx[0], hx[1]) if is_batched else (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = _C.lstm_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih,
                            self.bias_hh)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        is_batched = self._batched(input)
        input = input if is_batched else input.unsqueeze(0)
        hx = self._state(input, hx, is_batched)
        ret = _C.gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
