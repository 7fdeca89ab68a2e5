"""wick.save and wick.load of whole objects (torch.save(model) / torch.load): the object is
pickled with its tensors stored as safetensors tensors, and load follows PyTorch >= 2.6's
weights_only rule. Checks the round trip (outputs, Parameters, shared tensors, an optimizer on
the loaded model), the refusal by default and its overrides, that container files are
unaffected, and that corrupt files raise instead of crashing."""

import base64
import io
import json
import pickle
import re
import struct

import numpy as np
import pytest

import wick
from wick import _C, nn, optim


class TaggerNet(nn.Module):
    """A module-level custom Module, so pickle can find it by name: an LSTM, a registered
    buffer, a tied weight and plain Python attributes."""

    def __init__(self, vocab=7, hidden=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.lstm = nn.LSTM(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)
        self.out.weight = self.embed.weight  # weight tying, as word_language_model does
        self.register_buffer("scale", wick.full((vocab,), 0.5))
        self.name, self.device = "tagger", wick.device("cpu")

    def forward(self, tokens):
        out, _ = self.lstm(self.embed(tokens))
        return self.out(out) * self.scale


def values(t):
    return np.array(t.detach().tolist())


def mlp():
    wick.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def saved(obj, tmp_path, name="obj.safetensors"):
    path = tmp_path / name
    wick.save(obj, str(path))
    return path


def test_sequential_round_trip(tmp_path):
    model = mlp()
    loaded = wick.load(saved(model, tmp_path), weights_only=False)
    assert type(loaded) is nn.Sequential and loaded is not model
    x = wick.randn(5, 3)
    assert np.array_equal(values(loaded(x)), values(model(x)))
    assert list(loaded.state_dict()) == list(model.state_dict())
    for p in loaded.parameters():
        assert isinstance(p, nn.Parameter) and p.requires_grad and p.is_leaf
    before = [values(p) for p in loaded.parameters()]
    opt = optim.SGD(loaded.parameters(), lr=0.1)
    loaded(x).sum().backward()
    opt.step()
    assert all(not np.array_equal(b, values(p)) for b, p in zip(before, loaded.parameters()))
    # the original is untouched: the loaded parameters own their memory
    assert np.array_equal(values(model(x)), values(mlp()(x)))


def test_custom_module_with_lstm_buffer_and_tied_weight(tmp_path):
    wick.manual_seed(1)
    model = TaggerNet().eval()
    path = saved(model, tmp_path)
    loaded = wick.load(path, weights_only=False)
    assert type(loaded) is TaggerNet and not loaded.training
    tokens = wick.tensor([[1, 2], [3, 4], [6, 0]])
    assert np.array_equal(values(loaded(tokens)), values(model(tokens)))
    assert list(loaded.state_dict()) == list(model.state_dict())
    assert loaded.name == "tagger" and loaded.device == wick.device("cpu")
    scale = loaded.scale
    assert not isinstance(scale, nn.Parameter) and not scale.requires_grad
    assert dict(loaded.named_buffers())["scale"] is scale
    # the tied weight is one object after loading, and is stored once
    assert loaded.out.weight is loaded.embed.weight
    tensors, _ = _C._nn.load_safetensors(str(path))
    assert len(tensors) == len(list(model.parameters())) + 1


def test_transformer_with_builtin_activation(tmp_path):
    """A Transformer keeps F.relu, a C++ function, as its layers' activation; it is saved by
    name (as pickle saves a Python function) and comes back as the same function."""
    wick.manual_seed(2)
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                           dim_feedforward=8, dropout=0.0, activation="gelu").eval()
    loaded = wick.load(saved(model, tmp_path), weights_only=False)
    assert loaded.encoder.layers[0].activation is nn.functional.gelu
    src, tgt = wick.randn(4, 2, 8), wick.randn(3, 2, 8)
    assert np.array_equal(values(loaded(src, tgt)), values(model(src, tgt)))


def test_shared_tensors_stay_shared_and_requires_grad_is_kept(tmp_path):
    t = wick.ones(3)
    g = wick.zeros(2).requires_grad_(True)
    p = nn.Parameter(wick.ones(1), requires_grad=False)
    obj = {("key", 1): t, "again": [t, t], "g": g, "p": p, "cuts": {1.5: "a"}}  # tuple key: pickled
    back = wick.load(saved(obj, tmp_path), weights_only=False)
    assert back[("key", 1)] is back["again"][0] is back["again"][1]
    assert back["g"].requires_grad and not isinstance(back["g"], nn.Parameter)
    assert isinstance(back["p"], nn.Parameter) and not back["p"].requires_grad
    assert back["cuts"] == {1.5: "a"} and back["g"].dtype == wick.float32


def test_dtypes_are_kept(tmp_path):
    obj = {(0,): wick.arange(4), (1,): wick.ones(2, dtype=wick.float64),
           (2,): wick.tensor([True, False]), (3,): wick.ones(2, 3).t()}  # non-contiguous
    back = wick.load(saved(obj, tmp_path), weights_only=False)
    for k, v in obj.items():
        assert back[k].dtype == v.dtype and back[k].tolist() == v.tolist()


def test_default_refuses_pickled_content_naming_its_classes(tmp_path):
    path = saved(TaggerNet(), tmp_path)
    name = re.escape(f"{TaggerNet.__module__}.TaggerNet")
    for kwargs in ({}, {"weights_only": True}, {"weights_only": None}):
        with pytest.raises(pickle.UnpicklingError,
                           match=rf"\[wick\.load\] .*obj\.safetensors.*{name}.*weights_only=False"):
            wick.load(path, **kwargs)


def test_environment_variable_flips_the_default_only(tmp_path, monkeypatch):
    path = saved(mlp(), tmp_path)
    monkeypatch.setenv("WICK_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    assert isinstance(wick.load(path), nn.Sequential)
    with pytest.raises(pickle.UnpicklingError):  # an explicit weights_only=True still wins
        wick.load(path, weights_only=True)
    monkeypatch.setenv("WICK_FORCE_NO_WEIGHTS_ONLY_LOAD", "0")
    with pytest.raises(pickle.UnpicklingError):
        wick.load(path)


def test_container_files_ignore_weights_only(tmp_path, monkeypatch):
    model = mlp()
    obj = {"model": model.state_dict(), "epoch": 3}
    path = saved(obj, tmp_path)
    assert "wick.pickle" not in _C._nn.load_safetensors(str(path))[1]
    for kwargs in ({}, {"weights_only": True}, {"weights_only": False}):
        back = wick.load(path, **kwargs)
        assert back["epoch"] == 3 and list(back["model"]) == list(obj["model"])
    monkeypatch.setenv("WICK_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    assert wick.load(path)["model"]["0.weight"].tolist() == model[0].weight.tolist()


def test_file_objects_both_ways():
    model = mlp()
    buf = io.BytesIO()
    wick.save(model, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match=r"\[wick\.load\] <_io\.BytesIO"):
        wick.load(buf)
    buf.seek(0)
    loaded = wick.load(buf, map_location="cpu", weights_only=False)
    x = wick.randn(2, 3)
    assert np.array_equal(values(loaded(x)), values(model(x)))
    assert all(isinstance(p, nn.Parameter) for p in loaded.parameters())


@pytest.mark.skipif(not wick.cuda.is_available(), reason="needs CUDA")
def test_cuda_model_comes_back_on_the_cpu_unless_mapped(tmp_path):
    model = mlp().cuda()
    path = saved(model, tmp_path)
    on_cpu = wick.load(path, weights_only=False)
    assert all(p.device.type == "cpu" for p in on_cpu.parameters())
    on_gpu = wick.load(path, map_location="cuda", weights_only=False)
    assert all(isinstance(p, nn.Parameter) and p.device.type == "cuda" and p.requires_grad
               for p in on_gpu.parameters())
    x = wick.randn(2, 3)
    assert np.allclose(values(on_gpu(x.cuda())), values(on_cpu(x)), atol=1e-5)


def test_unpicklable_objects_raise_type_error(tmp_path):
    model = mlp()
    model.register_forward_hook(lambda m, i, o: o)
    with pytest.raises(TypeError, match=r"\[wick\.save\] cannot pickle the Sequential"):
        wick.save(model, str(tmp_path / "hooked.safetensors"))


# ---- corrupt files: each raises ValueError or UnpicklingError naming the file ----

def header(path):
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    return data, 8, 8 + n


def rewrite(path, tensors, text):
    _C._nn.save_safetensors(str(path), tensors, {"wick.pickle": text})


CORRUPT = (ValueError, pickle.UnpicklingError)


def test_bad_base64_truncated_pickle_and_missing_tensor(tmp_path):
    path = saved(mlp(), tmp_path)
    tensors, metadata = _C._nn.load_safetensors(str(path))
    data = base64.b64decode(metadata["wick.pickle"])

    rewrite(path, tensors, "not base64!")
    with pytest.raises(ValueError, match=r"\[wick\.load\] .*obj\.safetensors.*base64"):
        wick.load(path, weights_only=False)

    rewrite(path, tensors, base64.b64encode(data[: len(data) // 2]).decode())
    for weights_only in (True, False):
        with pytest.raises(pickle.UnpicklingError, match=r"obj\.safetensors.*not a valid pickle"):
            wick.load(path, weights_only=weights_only)

    del tensors["1"]
    rewrite(path, tensors, metadata["wick.pickle"])
    with pytest.raises(pickle.UnpicklingError, match=r"obj\.safetensors.*tensor '1'.*not hold"):
        wick.load(path, weights_only=False)


def test_flipped_and_truncated_bytes_never_crash(tmp_path):
    path = saved(TaggerNet(), tmp_path)
    data, start, end = header(path)
    meta_at = data.index(b'"wick.pickle":"', start, end) + len(b'"wick.pickle":"')
    text_end = data.index(b'"', meta_at)
    bad = tmp_path / "bad.safetensors"
    for i in range(meta_at, text_end, 3):
        for flip in (0x01, 0x80):
            corrupt = bytearray(data)
            corrupt[i] ^= flip
            bad.write_bytes(bytes(corrupt))
            for weights_only in (True, False) if i % 9 == 0 else (True,):
                try:
                    wick.load(bad, weights_only=weights_only)
                except CORRUPT as e:
                    assert "bad.safetensors" in str(e)
    for cut in (7, start + 10, end - 1, end + 3, len(data) - 1):
        bad.write_bytes(data[:cut])
        with pytest.raises(ValueError, match="bad.safetensors"):
            wick.load(bad, weights_only=False)


def test_flipped_header_json_is_a_value_error(tmp_path):
    path = saved(mlp(), tmp_path)
    data, start, end = header(path)
    text = json.loads(data[start:end])
    assert set(text["__metadata__"]) == {"wick.pickle"}
    corrupt = data[:start] + b"[" + data[start + 1:]
    path.write_bytes(corrupt)
    with pytest.raises(ValueError, match="obj.safetensors"):
        wick.load(path, weights_only=False)


# ---- PyTorch as a reference for the same round trip ----

def test_torch_round_trip_agrees(tmp_path):
    torch = pytest.importorskip("torch")
    model = mlp()
    ref = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    with torch.no_grad():
        for (name, p), q in zip(model.named_parameters(), ref.parameters()):
            q.copy_(torch.tensor(values(p)))
    ref.extra = {"last": ref[2]}  # a second reference to a submodule, outside _modules
    torch.save(ref, tmp_path / "ref.pt")
    ref_back = torch.load(tmp_path / "ref.pt")
    model.extra = {"last": model[2]}
    back = wick.load(saved(model, tmp_path), weights_only=False)
    assert ref_back.extra["last"] is ref_back[2] and back.extra["last"] is back[2]
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    expected = ref_back(torch.tensor(x)).detach().numpy()
    assert np.allclose(values(back(wick.tensor(x.tolist()))), expected, atol=1e-6)
    assert ([type(p).__name__ for p in ref_back.parameters()]
            == [type(p).__name__ for p in back.parameters()])
