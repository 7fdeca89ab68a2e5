"""QConfig (torch.ao.quantization.qconfig): which observers a module gets - one factory for its
output activations, one for its weight. prepare() calls activation() per module; convert()
calls weight() per module and runs it over the float weight."""

from collections import namedtuple

from wick.quantization import _types
from wick.quantization.observer import (HistogramObserver, MinMaxObserver, PercentileObserver,
                                        default_observer, default_per_channel_weight_observer,
                                        default_weight_observer)


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """QConfig(activation=Observer.with_args(...), weight=Observer.with_args(...)): factories,
    not instances (each module needs its own observer)."""

    def __new__(cls, activation, weight):
        from wick.nn.modules.module import Module
        for name, factory in (("activation", activation), ("weight", weight)):
            if isinstance(factory, Module):
                raise ValueError(f"[QConfig] {name} got an observer instance; pass its class or "
                                 "Observer.with_args(...) (each module needs its own observer)")
            if not callable(factory):
                raise TypeError(f"[QConfig] {name} must be an observer factory; got "
                                f"{type(factory).__name__}")
        return super().__new__(cls, activation, weight)


default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
default_per_channel_qconfig = QConfig(activation=default_observer,
                                      weight=default_per_channel_weight_observer)


def get_default_qconfig(backend="x86", version=0):
    """PyTorch's defaults per backend: 'x86'/'fbgemm' histogram activations with reduce_range
    (0..127, for vpmaddubsw's 16-bit overflow) and per-channel symmetric int8 weights; 'onednn'
    the same without reduce_range; 'qnnpack' per-tensor weights; 'wick' what wick's kernels
    want: full-range uint8 histogram activations (the int32 accumulation cannot overflow) and
    per-channel weights."""
    if version != 0:
        raise ValueError(f"[get_default_qconfig] version must be 0; got {version!r}")
    if backend in ("x86", "fbgemm"):
        return QConfig(activation=HistogramObserver.with_args(reduce_range=True),
                       weight=default_per_channel_weight_observer)
    if backend in ("onednn", "wick"):
        return QConfig(activation=HistogramObserver.with_args(reduce_range=False),
                       weight=default_per_channel_weight_observer)
    if backend == "qnnpack":
        return QConfig(activation=HistogramObserver.with_args(reduce_range=False),
                       weight=default_weight_observer)
    raise ValueError(f"[get_default_qconfig] unknown backend {backend!r}; expected 'x86', "
                     "'fbgemm', 'onednn', 'qnnpack' or 'wick'")


def minmax_qconfig(per_channel=True):
    """Full-range uint8 min-max activations and symmetric int8 weights."""
    return QConfig(activation=MinMaxObserver.with_args(dtype=_types.quint8),
                   weight=default_per_channel_weight_observer if per_channel
                   else default_weight_observer)


def percentile_qconfig(percentile=99.99, per_channel=True):
    """uint8 activations clipped at a percentile (PercentileObserver), symmetric int8 weights."""
    return QConfig(activation=PercentileObserver.with_args(percentile=percentile),
                   weight=default_per_channel_weight_observer if per_channel
                   else default_weight_observer)
