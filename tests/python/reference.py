"""The helper every comparison test uses: run one function in wick and in PyTorch on the same
inputs and compare the outputs and the gradients of every input that requires grad.

    check(lambda m, x, w: m.matmul(x, w).relu(), [(3, 4), (4, 5)])

The function receives the framework module first (wick or torch; `F` for the functional module
is the attribute .nn.functional of it) and then the inputs, made from one NumPy array each so
both frameworks see identical values. Inputs may be shapes (random float64 normal values), or
NumPy arrays. noncontig=True hands both frameworks transposed views (non-contiguous inputs)."""

import numpy as np
import pytest

import wick

try:
    import torch
except ImportError:  # pragma: no cover - the suite runs without PyTorch, skipping comparisons
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (python3-torch) is not installed")


def arrays_for(specs, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    out = []
    for s in specs:
        if isinstance(s, np.ndarray):
            out.append(s)
        else:
            out.append(rng.standard_normal(s).astype(dtype))
    return out


def _to_numpy(x):
    if isinstance(x, wick.Tensor):
        return x.detach().numpy(force=True) if hasattr(x, "numpy") else None
    if torch is not None and isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _flatten(out):
    if isinstance(out, (tuple, list)):
        result = []
        for o in out:
            result.extend(_flatten(o))
        return result
    return [out]


def make_inputs(module, arrays, requires_grad, noncontig):
    inputs = []
    for a, rg in zip(arrays, requires_grad):
        if noncontig and a.ndim >= 2:
            # Same values, transposed storage: the framework sees a non-contiguous view.
            base = np.ascontiguousarray(np.swapaxes(a, -1, -2))
            t = module.tensor(base).transpose(-1, -2)
            assert not t.is_contiguous() or min(a.shape[-2:]) <= 1
            if rg and a.dtype.kind == "f":
                t = t.detach().requires_grad_(True)
        else:
            t = module.tensor(a)
            if rg and a.dtype.kind == "f":
                t.requires_grad_(True)
        inputs.append(t)
    return inputs


def check(fn, specs, *, requires_grad=None, noncontig=False, atol=1e-6, rtol=1e-5,
          grad=True, seed=0, dtype=np.float64):
    """Runs fn(module, *inputs) in wick and torch; compares values and input gradients."""
    if torch is None:
        pytest.skip("PyTorch is not installed")
    arrays = arrays_for(specs, seed, dtype)
    if requires_grad is None:
        requires_grad = [a.dtype.kind == "f" for a in arrays]
    w_in = make_inputs(wick, arrays, requires_grad, noncontig)
    t_in = make_inputs(torch, arrays, requires_grad, noncontig)
    w_out = _flatten(fn(wick, *w_in))
    t_out = _flatten(fn(torch, *t_in))
    assert len(w_out) == len(t_out)
    for w, t in zip(w_out, t_out):
        if isinstance(w, wick.Tensor):
            assert tuple(w.shape) == tuple(t.shape), (w.shape, t.shape)
            assert str(w.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (w.dtype, t.dtype)
        np.testing.assert_allclose(_to_numpy(w), _to_numpy(t), atol=atol, rtol=rtol)
    if not grad:
        return w_out, t_out
    pairs = [(w, t) for w, t in zip(w_out, t_out)
             if isinstance(w, wick.Tensor) and w.requires_grad]
    if not pairs:
        return w_out, t_out
    # A fixed random weighting of every output, so each output element's gradient counts.
    rng = np.random.default_rng(seed + 1)
    w_loss, t_loss = 0, 0
    for w, t in pairs:
        weights = rng.standard_normal(tuple(t.shape))
        w_loss = w_loss + (w.double() * wick.tensor(weights)).sum()
        t_loss = t_loss + (t.double() * torch.tensor(weights)).sum()
    w_loss.backward()
    t_loss.backward()
    for i, (w, t) in enumerate(zip(w_in, t_in)):
        if not requires_grad[i] or arrays[i].dtype.kind != "f":
            continue
        assert (w.grad is None) == (t.grad is None), f"input {i}: gradient presence differs"
        if t.grad is not None:
            np.testing.assert_allclose(_to_numpy(w.grad), _to_numpy(t.grad), atol=atol * 10,
                                       rtol=rtol * 10, err_msg=f"gradient of input {i}")
    return w_out, t_out
