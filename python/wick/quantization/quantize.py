"""prepare, calibrate and convert (torch.ao.quantization.quantize): eager-mode post-training
static quantization.

prepare() gives every quantizable module with a qconfig an output observer
(activation_post_process, run by a forward hook): QuantStub (the model's input), Conv2d,
Linear, the fused ConvReLU2d/LinearReLU and FloatFunctional. calibrate() runs batches through
the prepared model so the observers see real activations. convert() asks each observer for
(scale, zero_point), quantizes the weights (per-channel symmetric int8) and swaps the modules
for wick.nn.quantized ones.

wick has no quantized tensor type, so each quantized module must know at convert time the
(scale, zero_point) of the uint8 tensor it will receive. prepare() therefore also records, while
calibrating, which observer produced each module's input: observers register the tensors they
return, and modules that keep quantization parameters unchanged on uint8 (nn.ReLU, MaxPool2d,
Flatten, Dropout, Identity) pass the registration on to their outputs. A Conv2d whose input
passed through a functional call (F.relu(x), x.flatten(1)) has no recorded producer, and
convert() says so; PyTorch's eager mode needs module forms for the same reason (fusion and
observer placement), though its quantized tensors carry their parameters through functional
calls too."""

import copy
import sys

import wick
import wick.nn.quantized as nnq
from wick.nn.intrinsic import ConvReLU2d, LinearReLU
from wick.nn.modules.activation import ReLU
from wick.nn.modules.conv import Conv2d
from wick.nn.modules.dropout import Dropout, Dropout2d
from wick.nn.modules.flatten import Flatten
from wick.nn.modules.linear import Identity, Linear
from wick.nn.modules.module import Module
from wick.nn.modules.pooling import AdaptiveMaxPool2d, MaxPool2d
from wick.quantization import _types
from wick.quantization.observer import ObserverBase
from wick.quantization.stubs import DeQuantStub, QuantStub

# float module type -> quantized module type (DEFAULT_STATIC_QUANT_MODULE_MAPPINGS)
DEFAULT_STATIC_QUANT_MODULE_MAPPINGS = {
    ConvReLU2d: nnq.ConvReLU2d,
    LinearReLU: nnq.LinearReLU,
    Conv2d: nnq.Conv2d,
    Linear: nnq.Linear,
}
# modules whose uint8 output has its input's (scale, zero_point); they run on uint8 as they are
# (ReLU becomes wick.nn.quantized.ReLU, which clamps at the zero point)
_QPARAMS_PRESERVING = (ReLU, MaxPool2d, AdaptiveMaxPool2d, Flatten, Dropout, Dropout2d, Identity)
_STATE = "_wick_quant_state"


def _kind(m):
    return type(m).__name__


def _name(path):
    return f"'{path}'" if path else "the root module"


class _Tracker:
    """Where each module's inputs came from during calibration (see the module docstring)."""

    def __init__(self):
        self.live = {}      # id(tensor) -> (tensor, path of the observer's owner)
        self.sources = {}   # module path -> set of tuples: producer path (or None) per input
        self.ops = {}       # FloatFunctional path -> set of op names

    def reset(self):
        self.live = {}

    def produced(self, tensor, path):
        if isinstance(tensor, wick.Tensor):
            self.live[id(tensor)] = (tensor, path)

    def returned_to_float(self, tensor):
        # a DeQuantStub passes its input object through in the float model: from here on the
        # same tensor is float, so it no longer counts as its producer's quantized output
        self.live.pop(id(tensor), None)

    def source(self, t):
        entry = self.live.get(id(t))
        return entry[1] if entry is not None and entry[0] is t else None

    def consumed(self, path, tensors):
        tensors = [t for t in tensors if isinstance(t, wick.Tensor)]
        if tensors:
            self.sources.setdefault(path, set()).add(tuple(self.source(t) for t in tensors))

    def __deepcopy__(self, memo):
        new = _Tracker()
        new.sources = copy.deepcopy(self.sources, memo)
        new.ops = copy.deepcopy(self.ops, memo)
        return new


def _mark(fn):
    fn._wick_quant_hook = True
    return fn


def propagate_qconfig_(module, qconfig=None):
    """Every module without its own qconfig attribute takes its parent's; `qconfig = None` on a
    submodule keeps it (and what it contains) in float."""
    if "qconfig" in module.__dict__:
        qconfig = module.__dict__["qconfig"]
    elif qconfig is not None:
        object.__setattr__(module, "qconfig", qconfig)
    for child in module.children():
        propagate_qconfig_(child, qconfig)


def _check_qconfig(qconfig, path, module):
    act = qconfig.activation()
    if not isinstance(act, ObserverBase):
        raise TypeError(f"[prepare] {_name(path)} ({_kind(module)}): qconfig.activation() made "
                        f"a {type(act).__name__}, not an observer")
    if act._dtype_name != "uint8" or _types.is_per_channel(act.qscheme):
        raise ValueError(f"[prepare] {_name(path)} ({_kind(module)}): activations must be "
                         f"per-tensor uint8 for wick's int8 kernels; the activation observer "
                         f"has dtype {act._dtype_name} and qscheme {act.qscheme!r}")
    if isinstance(module, (Conv2d, Linear, ConvReLU2d, LinearReLU)):
        w = qconfig.weight()
        if not isinstance(w, ObserverBase) or w._dtype_name != "int8" \
                or not _types.is_symmetric(w.qscheme) or getattr(w, "ch_axis", 0) != 0:
            raise ValueError(f"[prepare] {_name(path)} ({_kind(module)}): weights must be "
                             "symmetric int8 (per tensor, or per channel on axis 0); the weight "
                             f"observer is {w!r}")
    return act


def prepare(model, inplace=False):
    """Attaches observers by PyTorch's eager-mode rules; set model.qconfig (or a submodule's)
    first. Returns the prepared model (a copy unless inplace)."""
    if not isinstance(model, Module):
        raise TypeError(f"[prepare] expected a wick.nn.Module; got {type(model).__name__}")
    if _STATE in model.__dict__:
        raise RuntimeError("[prepare] the model is already prepared")
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model)
    tracker = _Tracker()
    observed = 0
    fused = []  # the parts of a fused module are not observed on their own
    for path, m in list(model.named_modules()):
        if any(path.startswith(f + ".") for f in fused):
            continue
        if isinstance(m, (ConvReLU2d, LinearReLU)):
            fused.append(path)
        qconfig = m.__dict__.get("qconfig")
        if isinstance(m, nnq.FloatFunctional):
            if qconfig is None:
                continue
            m.activation_post_process = _check_qconfig(qconfig, path, m)
            observed += 1

            def functional_hook(module, op, tensors, path=path):
                tracker.consumed(path, tensors)
                tracker.ops.setdefault(path, set()).add(op)

            m._input_hook = functional_hook
            m.activation_post_process.register_forward_hook(_mark(
                lambda obs, args, out, path=path: tracker.produced(out, path)))
            continue
        if qconfig is not None and (isinstance(m, QuantStub)
                                    or type(m) in DEFAULT_STATIC_QUANT_MODULE_MAPPINGS):
            m.add_module("activation_post_process", _check_qconfig(qconfig, path, m))
            observed += 1

            def observe(module, args, output, path=path):
                output = module.activation_post_process(output)
                tracker.produced(output, path)
                return output

            m.register_forward_hook(_mark(observe))
        if isinstance(m, DeQuantStub):
            m.register_forward_hook(_mark(
                lambda module, args, out: tracker.returned_to_float(out)))
        if isinstance(m, _QPARAMS_PRESERVING):
            def pass_through(module, args, output):
                if args and isinstance(args[0], wick.Tensor):
                    source = tracker.source(args[0])
                    if source is not None:
                        tracker.produced(output, source)

            m.register_forward_hook(_mark(pass_through))
        if path and not isinstance(m, ObserverBase):
            m.register_forward_pre_hook(_mark(
                lambda module, args, path=path: tracker.consumed(path, args)))
    if observed == 0:
        raise RuntimeError("[prepare] no module has a qconfig: set model.qconfig (e.g. "
                           "wick.quantization.get_default_qconfig('x86')) before prepare()")
    model.register_forward_pre_hook(_mark(lambda module, args: tracker.reset()))
    model.register_forward_hook(_mark(lambda module, args, out: tracker.reset()))
    object.__setattr__(model, _STATE, tracker)
    return model


def calibrate(model, data_loader, num_batches=None, progress=True):
    """Runs the prepared model (eval mode, no grad) over data_loader's batches - the first
    element of each (input, target) batch - so its observers see the activations; stops after
    num_batches. Prints a progress line to stderr. Returns the model."""
    if _STATE not in model.__dict__:
        raise RuntimeError("[calibrate] the model has no observers: call "
                           "wick.quantization.prepare(model) first")
    if num_batches is not None and (not isinstance(num_batches, int) or num_batches < 1):
        raise ValueError(f"[calibrate] num_batches must be a positive int or None; got "
                         f"{num_batches!r}")
    try:
        total = len(data_loader)
    except TypeError:
        total = None
    if num_batches is not None:
        total = num_batches if total is None else min(total, num_batches)
    model.eval()
    seen = 0
    with wick.no_grad():
        for batch in data_loader:
            if num_batches is not None and seen >= num_batches:
                break
            x = batch[0] if isinstance(batch, (list, tuple)) else batch
            model(x)
            seen += 1
            if progress:
                print(f"\r[calibrate] batch {seen}/{total if total is not None else '?'}",
                      end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    if seen == 0:
        raise RuntimeError("[calibrate] the data loader gave no batches")
    return model


def _remove_quant_hooks(model):
    for m in model.modules():
        for hooks in (m._forward_hooks, m._forward_pre_hooks):
            for key in [k for k, fn in hooks.items() if getattr(fn, "_wick_quant_hook", False)]:
                del hooks[key]
        if isinstance(m, nnq.FloatFunctional):
            m._input_hook = None


def _output_qparams(model, path, cache):
    if path not in cache:
        m = model.get_submodule(path)
        obs = m._modules.get("activation_post_process")
        if not isinstance(obs, ObserverBase):
            raise RuntimeError(f"[convert] {_name(path)} ({_kind(m)}) has no observer: call "
                               "prepare() before convert()")
        if not obs.has_observed():
            raise RuntimeError(f"[convert] the observer of {_name(path)} ({_kind(m)}) saw no "
                               "data: run calibrate(model, data_loader) between prepare() and "
                               "convert()")
        scale, zero_point = obs.calculate_qparams()
        cache[path] = (float(scale[0].item()), int(zero_point[0].item()))
    return cache[path]


def _input_sources(tracker, path, module, n_inputs):
    calls = tracker.sources.get(path)
    if not calls:
        raise RuntimeError(f"[convert] {_name(path)} ({_kind(module)}) never ran during "
                           "calibration, so its input's quantization parameters are unknown")
    if len(calls) > 1:
        raise RuntimeError(f"[convert] {_name(path)} ({_kind(module)}) received inputs from "
                           f"different producers in different calls ({sorted(map(str, calls))})"
                           "; give each call its own module")
    sources = next(iter(calls))
    if len(sources) != n_inputs or any(s is None for s in sources):
        raise RuntimeError(f"[convert] {_name(path)} ({_kind(module)}): its input was not "
                           "produced by an observed module, so its quantization parameters are "
                           "unknown. Quantized layers must be fed by a QuantStub, another "
                           "quantized layer, or nn.ReLU / MaxPool2d / Flatten / Dropout modules "
                           "between them: functional calls such as F.relu(x), x.flatten(1) or "
                           "x + y hide the producer - use the module forms (and "
                           "wick.nn.quantized.FloatFunctional for x + y)")
    return sources


def _weight_scale(qconfig, weight, path, module):
    obs = qconfig.weight()
    obs(weight.detach())
    scale, zero_point = obs.calculate_qparams()
    if bool((zero_point != 0).any().item()):
        raise ValueError(f"[convert] {_name(path)} ({_kind(module)}): weight zero points must be "
                         "0 (symmetric int8)")
    if scale.numel() == 1:
        scale = scale.expand(weight.shape[0]).contiguous()
    return scale.to(wick.float32)


def _check_float_modules(model, tracker):
    """A module that stays float must not receive a quantized tensor."""
    fused = [p for p, m in model.named_modules() if isinstance(m, (ConvReLU2d, LinearReLU))]
    for path, m in model.named_modules():
        if not path or m._modules or any(path.startswith(f + ".") for f in fused):
            continue
        if isinstance(m, (_QPARAMS_PRESERVING, ObserverBase, QuantStub, DeQuantStub,
                          nnq.FloatFunctional)):
            continue
        if type(m) in DEFAULT_STATIC_QUANT_MODULE_MAPPINGS and m.__dict__.get("qconfig"):
            continue
        fed = {s for call in tracker.sources.get(path, ()) for s in call if s is not None}
        if fed:
            raise RuntimeError(
                f"[convert] {_name(path)} ({_kind(m)}) receives a quantized tensor (from "
                f"{', '.join(map(repr, sorted(fed)))}) but has no quantized version: fuse it "
                "(fuse_modules: Conv2d+BatchNorm2d), or put a DeQuantStub before it and a "
                "QuantStub after it")


def convert(model, inplace=False):
    """Swaps the prepared, calibrated modules for wick.nn.quantized ones; returns the model
    (a copy unless inplace), in eval mode."""
    if not isinstance(model, Module):
        raise TypeError(f"[convert] expected a wick.nn.Module; got {type(model).__name__}")
    tracker = model.__dict__.get(_STATE)
    if tracker is None:
        for path, m in model.named_modules():
            if isinstance(m, (QuantStub, Conv2d, Linear, ConvReLU2d, LinearReLU)):
                raise RuntimeError(f"[convert] {_name(path)} ({_kind(m)}) has no observer: "
                                   "call wick.quantization.prepare(model) and calibrate it "
                                   "before convert()")
        raise RuntimeError("[convert] the model was not prepared: call "
                           "wick.quantization.prepare(model) and calibrate it first")
    if not inplace:
        model = copy.deepcopy(model)
        tracker = model.__dict__[_STATE]
    _remove_quant_hooks(model)
    _check_float_modules(model, tracker)
    cache = {}
    replaced = []
    swaps = []
    for path, m in list(model.named_modules()):
        if any(path.startswith(p + ".") for p in replaced):
            continue
        new = None
        if isinstance(m, QuantStub) and "activation_post_process" in m._modules:
            new = nnq.Quantize(*_output_qparams(model, path, cache))
        elif type(m) in DEFAULT_STATIC_QUANT_MODULE_MAPPINGS and \
                "activation_post_process" in m._modules:
            (src,) = _input_sources(tracker, path, m, 1)
            out_qp = _output_qparams(model, path, cache)
            in_qp = _output_qparams(model, src, cache)
            float_mod = m[0] if isinstance(m, (ConvReLU2d, LinearReLU)) else m
            w_scale = _weight_scale(m.qconfig, float_mod.weight, path, m)
            new = DEFAULT_STATIC_QUANT_MODULE_MAPPINGS[type(m)].from_float(m, w_scale, in_qp,
                                                                           out_qp)
        elif isinstance(m, nnq.FloatFunctional) and \
                isinstance(m._modules.get("activation_post_process"), ObserverBase):
            calls = tracker.sources.get(path)
            if not calls:
                raise RuntimeError(f"[convert] {_name(path)} (FloatFunctional) never ran "
                                   "during calibration")
            n = len(next(iter(calls)))
            sources = _input_sources(tracker, path, m, n)
            new = nnq.QFunctional([_output_qparams(model, s, cache) for s in sources],
                                  *_output_qparams(model, path, cache))
        elif isinstance(m, DeQuantStub):
            if path in tracker.sources:
                (src,) = _input_sources(tracker, path, m, 1)
                new = nnq.DeQuantize(*_output_qparams(model, src, cache))
        elif isinstance(m, ReLU) and path in tracker.sources:
            calls = tracker.sources[path]
            srcs = {s for call in calls for s in call}
            if srcs != {None}:
                (src,) = _input_sources(tracker, path, m, 1)
                new = nnq.ReLU(*_output_qparams(model, src, cache))
        if new is not None:
            swaps.append((path, new))
            replaced.append(path)
    for path, new in swaps:
        new.eval()
        if path == "":
            raise RuntimeError("[convert] wrap a bare layer in QuantWrapper to quantize it")
        parent_path, _, name = path.rpartition(".")
        model.get_submodule(parent_path)._modules[name] = new
    for m in model.modules():  # observers left on modules that stay float (none expected)
        if isinstance(m._modules.get("activation_post_process"), ObserverBase):
            del m._modules["activation_post_process"]
    del model.__dict__[_STATE]
    return model.eval()
