"""wick.transforms: image transforms in torchvision's style (Compose, ToTensor, Normalize,
Pad, RandomCrop, RandomHorizontalFlip, Lambda). The built-in ones are C++ (data/transforms.h): a
dataset whose transform is built only from them runs it on the C++ DataLoader's worker threads,
seeded per example (Note [reproducible transforms]). Any other callable works too; the dataset
then goes through the Python DataLoader."""

from wick import _C

_data = _C._data


class _CppTransform:
    _cpp = None  # a _C._data.Transform, or None for the identity

    def __call__(self, tensor):
        if not isinstance(tensor, _C.Tensor):
            tensor = ToTensor()(tensor)
        return self._cpp(tensor) if self._cpp is not None else tensor


class ToTensor(_CppTransform):
    """wick's datasets already give float tensors in [0, 1] ([C, H, W]), so for them this is the
    identity; a NumPy image (H x W or H x W x C, uint8) becomes a [C, H, W] float tensor."""

    def __call__(self, pic):
        if isinstance(pic, _C.Tensor):
            return pic
        t = _C.as_tensor(pic)
        if t.dim() == 2:
            t = t.unsqueeze(0)
        elif t.dim() == 3:
            t = t.permute(2, 0, 1)
        if t.dtype == _C.uint8:
            return t.float() / 255.0
        return t.float()

    def __repr__(self):
        return "ToTensor()"


class Normalize(_CppTransform):
    def __init__(self, mean, std, inplace=False):
        self.mean, self.std = list(mean), list(std)
        self._cpp = _data.Normalize(self.mean, self.std)

    def __repr__(self):
        return f"Normalize(mean={self.mean}, std={self.std})"


class Pad(_CppTransform):
    """Zero padding on every side of the last two dims (torchvision's Pad with an int padding
    and the default constant fill)."""

    def __init__(self, padding, fill=0, padding_mode="constant"):
        if isinstance(padding, bool) or not isinstance(padding, int):
            raise TypeError(f"Pad: only an int padding (the same on every side) is supported; "
                            f"got {padding!r}")
        if fill != 0 or padding_mode != "constant":
            raise ValueError(f"Pad: only fill=0 with padding_mode='constant' is supported; got "
                             f"fill={fill!r}, padding_mode={padding_mode!r}")
        self.padding = padding
        self._cpp = _data.Pad(padding)

    def __repr__(self):
        return f"Pad(padding={self.padding})"


class RandomCrop(_CppTransform):
    def __init__(self, size, padding=0):
        if isinstance(size, (tuple, list)):
            if size[0] != size[1]:
                raise ValueError("RandomCrop: only square crops are supported")
            size = size[0]
        self.size, self.padding = size, padding or 0
        self._cpp = _data.RandomCrop(self.size, self.padding)

    def __repr__(self):
        return f"RandomCrop(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip(_CppTransform):
    def __init__(self, p=0.5):
        self.p = p
        self._cpp = _data.RandomHorizontalFlip(p)

    def __repr__(self):
        return f"RandomHorizontalFlip(p={self.p})"


class Lambda:
    def __init__(self, lambd):
        self.lambd = lambd

    def __call__(self, x):
        return self.lambd(x)


class Compose:
    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x

    def __repr__(self):
        return "Compose(\n" + "".join(f"    {t}\n" for t in self.transforms) + ")"


def _to_cpp(transform):
    """(True, C++ transform or None) when `transform` is built only from C++ transforms,
    else (False, None)."""
    if transform is None or isinstance(transform, ToTensor):
        return True, None
    if isinstance(transform, _CppTransform):
        return True, transform._cpp
    if isinstance(transform, Compose):
        steps = []
        for t in transform.transforms:
            ok, cpp = _to_cpp(t)
            if not ok:
                return False, None
            if cpp is not None:
                steps.append(cpp)
        return True, (_data.Compose(steps) if steps else None)
    return False, None
