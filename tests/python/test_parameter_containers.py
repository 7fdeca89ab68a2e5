"""nn.ParameterList and nn.ParameterDict against PyTorch 1.13 (contents, parameter names, reprs,
errors), and both inside a module: trained and moved with it."""

import pytest
from reference import needs_torch, torch

import wick
import wick.nn as nn


def same_repr(ours, theirs):
    assert repr(ours) == repr(theirs).replace("torch.", "wick.")


def param_names(module):
    return [n for n, _ in module.named_parameters()]


@needs_torch
def test_parameter_list_matches_pytorch():
    def build(m):
        pl = m.nn.ParameterList([m.nn.Parameter(m.zeros(2, 3)), m.ones(4)])
        pl.append(m.nn.Parameter(m.ones(1)))
        pl.extend([m.zeros(2, dtype=m.float64)])
        pl += [m.ones(3)]
        return pl

    ours, theirs = build(wick), build(torch)
    assert len(ours) == len(theirs) == 5
    assert param_names(ours) == param_names(theirs) == ["0", "1", "2", "3", "4"]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in ours)
    assert [tuple(p.shape) for p in ours] == [tuple(p.shape) for p in theirs]
    assert ours[-1] is ours[4] and ours[1] is list(ours.parameters())[1]
    same_repr(ours, theirs)
    same_repr(ours[1:3], theirs[1:3])
    same_repr(nn.ParameterList(), torch.nn.ParameterList())
    ours.append(3)
    theirs.append(3)
    same_repr(ours, theirs)
    assert len(list(ours.parameters())) == 5
    with pytest.raises(IndexError):
        theirs[9]
    with pytest.raises(IndexError, match="index 9 is out of range"):
        ours[9]
    with pytest.raises(TypeError):
        theirs.extend(torch.ones(2))
    with pytest.raises(TypeError, match="ParameterList.extend.*iterable"):
        ours.extend(wick.ones(2))


@needs_torch
def test_parameter_list_in_a_module_trains_and_moves():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.ws = nn.ParameterList([nn.Parameter(wick.ones(2)) for _ in range(3)])

        def forward(self, x):
            for w in self.ws:
                x = x * w
            return x.sum()

    model = Model()
    assert param_names(model) == ["ws.0", "ws.1", "ws.2"]
    assert list(model.state_dict()) == ["ws.0", "ws.1", "ws.2"]
    model(wick.tensor([1.0, 2.0])).backward()
    assert model.ws[0].grad.tolist() == [1.0, 2.0]
    kept = model.ws[1]
    model.to(wick.float64)
    assert model.ws[1] is kept and kept.dtype == wick.float64
    model.ws[1] = wick.zeros(2)
    assert isinstance(model.ws[1], nn.Parameter) and model.ws[1].tolist() == [0.0, 0.0]
    sd = {k: v.clone() + 1 for k, v in model.state_dict().items()}
    model.load_state_dict(sd)
    assert model.ws[2].tolist() == [2.0, 2.0]
    theirs = torch.nn.Module()
    theirs.ws = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(1))])
    ours = nn.Module()
    ours.ws = nn.ParameterList([nn.Parameter(wick.ones(1))])
    same_repr(ours, theirs)


@needs_torch
def test_parameter_dict_matches_pytorch():
    def build(m):
        pd = m.nn.ParameterDict({"b": m.nn.Parameter(m.zeros(2)), "a": m.ones(3, 1)})
        pd["c"] = m.zeros(1, dtype=m.float64)
        pd.update([("d", m.ones(2))])
        return pd

    ours, theirs = build(wick), build(torch)
    assert list(ours.keys()) == list(theirs.keys()) == ["a", "b", "c", "d"]  # a dict is sorted
    assert param_names(ours) == param_names(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [k for k, _ in ours.items()] == list(ours) == list(theirs)
    assert [tuple(v.shape) for v in ours.values()] == [tuple(v.shape) for v in theirs.values()]
    assert "a" in ours and "z" not in ours and len(ours) == 4
    same_repr(ours, theirs)
    same_repr(nn.ParameterDict(), torch.nn.ParameterDict())
    a, ta = ours.pop("a"), theirs.pop("a")
    assert tuple(a.shape) == tuple(ta.shape) and list(ours) == list(theirs)
    assert param_names(ours) == param_names(theirs) == ["b", "c", "d"]
    assert ours.get("zz") is None and ours.get("b") is ours["b"]
    k, v = ours.popitem()
    tk, tv = theirs.popitem()
    assert k == tk == "d"
    assert list(ours.copy()) == list(theirs.copy())
    ours.clear()
    theirs.clear()
    assert len(ours) == len(theirs) == 0 and list(ours.parameters()) == []
    with pytest.raises(TypeError):
        torch.nn.ParameterDict()[1] = torch.zeros(1)
    with pytest.raises(TypeError, match="not a string.*int"):
        nn.ParameterDict()[1] = wick.zeros(1)
    with pytest.raises(AttributeError):
        torch.nn.ParameterDict()["missing"]
    with pytest.raises(AttributeError, match="missing"):
        nn.ParameterDict()["missing"]
    with pytest.raises(ValueError):
        torch.nn.ParameterDict().update([("a", torch.zeros(1), 3)])
    with pytest.raises(ValueError, match="element #0 has length 3"):
        nn.ParameterDict().update([("a", wick.zeros(1), 3)])


def test_parameter_dict_moves_with_module():
    pd = nn.ParameterDict({"w": wick.ones(2)})
    w = pd["w"]
    pd.to(wick.float64)
    assert pd["w"] is w and w.dtype == wick.float64
    assert pd.state_dict()["w"].dtype == wick.float64
