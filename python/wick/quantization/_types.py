"""The vocabulary of quantization: quantized dtypes and quantization schemes (torch.quint8,
torch.qint8, torch.per_tensor_affine, ...), and the checks every function applies to them.

wick has no quantized tensor type: a quantized tensor is a plain uint8 (activations) or int8
(weights) tensor, and its scale and zero point travel beside it (in the module that made it).
So the "quantized dtypes" here are wick.uint8 and wick.int8 themselves; quint8 and qint8 are
their PyTorch names."""

import wick


class qscheme:
    """How real values map to integers: one (scale, zero_point) for the whole tensor or one per
    output channel; affine (any zero point) or symmetric (zero maps to zero)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"wick.{self.name}"

    def __reduce__(self):  # pickles (deepcopy, wick.save of a whole model) as the singleton
        return (_qscheme_by_name, (self.name,))


per_tensor_affine = qscheme("per_tensor_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_affine = qscheme("per_channel_affine")
per_channel_symmetric = qscheme("per_channel_symmetric")
_QSCHEMES = {q.name: q for q in (per_tensor_affine, per_tensor_symmetric, per_channel_affine,
                                 per_channel_symmetric)}


def _qscheme_by_name(name):
    return _QSCHEMES[name]


# wick.int8 arrives with the int8 kernels; until then int8 is named by a string.
int8 = getattr(wick, "int8", "int8")
uint8 = wick.uint8
quint8 = uint8
qint8 = int8
_DTYPE_NAMES = {"quint8": "uint8", "uint8": "uint8", "qint8": "int8", "int8": "int8"}


def dtype_name(dtype, where):
    """'uint8' or 'int8' for a quantized dtype given as wick.uint8 / wick.int8 or by name; a
    ValueError naming `where` otherwise."""
    if dtype is uint8 or dtype == uint8:
        return "uint8"
    if not isinstance(int8, str) and (dtype is int8 or dtype == int8):
        return "int8"
    if isinstance(dtype, str) and dtype.replace("wick.", "").replace("torch.", "") in _DTYPE_NAMES:
        return _DTYPE_NAMES[dtype.replace("wick.", "").replace("torch.", "")]
    raise ValueError(f"[{where}] dtype must be wick.uint8 (quint8) or wick.int8 (qint8); "
                     f"got {dtype!r}")


def dtype_object(name):
    return uint8 if name == "uint8" else int8


def to_qscheme(value, where):
    if isinstance(value, qscheme):
        return value
    if isinstance(value, str) and value.replace("wick.", "").replace("torch.", "") in _QSCHEMES:
        return _QSCHEMES[value.replace("wick.", "").replace("torch.", "")]
    raise ValueError(f"[{where}] qscheme must be one of per_tensor_affine, "
                     f"per_tensor_symmetric, per_channel_affine, per_channel_symmetric; "
                     f"got {value!r}")


def is_per_channel(q):
    return q in (per_channel_affine, per_channel_symmetric)


def is_symmetric(q):
    return q in (per_tensor_symmetric, per_channel_symmetric)


def qmin_qmax(dtype_name_, reduce_range, quant_min, quant_max, where):
    """torch.ao.quantization.utils.calculate_qmin_qmax: the integer range; reduce_range drops one
    bit (x86's vpmaddubsw can overflow with full-range u8 x s8 pairs)."""
    if (quant_min is None) != (quant_max is None):
        raise ValueError(f"[{where}] give both quant_min and quant_max or neither; got "
                         f"quant_min={quant_min}, quant_max={quant_max}")
    if quant_min is not None:
        if not (quant_min <= 0 <= quant_max) or quant_min >= quant_max:
            raise ValueError(f"[{where}] the quantization range must include 0 and have "
                             f"quant_min < quant_max; got [{quant_min}, {quant_max}]")
        lo, hi = (-128, 127) if dtype_name_ == "int8" else (0, 255)
        if quant_max - quant_min + 1 > 256 or quant_min < lo or quant_max > hi:
            raise ValueError(f"[{where}] [{quant_min}, {quant_max}] does not fit "
                             f"{dtype_name_}'s [{lo}, {hi}]")
        if reduce_range:
            return quant_min // 2, quant_max // 2
        return quant_min, quant_max
    if dtype_name_ == "int8":
        return (-64, 63) if reduce_range else (-128, 127)
    return (0, 127) if reduce_range else (0, 255)
