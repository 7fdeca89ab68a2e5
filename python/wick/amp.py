"""Mixed precision: wick.autocast and wick.amp.GradScaler (torch.autocast, torch.amp.GradScaler).

    with wick.autocast("cpu", dtype=wick.bfloat16):
        loss = F.cross_entropy(model(x), y)          # matmul/conv in bfloat16, loss in float32
    scaler.scale(loss).backward()                    # float16 needs loss scaling; bfloat16 not
    scaler.step(optimizer)
    scaler.update()

The policy lives in C++ (core/autocast.h, Note [autocast]); this module is the Python surface.
"""

import functools

from wick import _C

_amp = _C._amp


class autocast:
    """Context manager and decorator: ops inside run under autocast for `device_type`.

    dtype defaults to bfloat16 on the CPU and float16 on CUDA; enabled=False turns autocast off
    inside an enclosing autocast region. Scopes nest."""

    def __init__(self, device_type="cuda", dtype=None, enabled=True, cache_enabled=None):
        self.device_type = device_type
        self.dtype = dtype
        self.enabled = enabled

    def __enter__(self):
        _amp.enter_autocast(self.device_type, self.dtype, self.enabled)
        return self

    def __exit__(self, *exc):
        _amp.exit_autocast()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device_type, self.dtype, self.enabled):
                return fn(*args, **kwargs)

        return wrapper


def is_autocast_enabled(device_type="cpu"):
    return _amp.is_autocast_enabled(device_type)


def get_autocast_dtype(device_type="cpu"):
    return _amp.get_autocast_dtype(device_type)


class record_dtypes:
    """Debug mode: records (op, dtype) for every kernel that runs inside an autocast scope.

        with wick.amp.record_dtypes() as record:
            with wick.autocast("cpu"): model(x)
        print(record.ops)   # [('bmm', wick.bfloat16), ('log_softmax', wick.float32), ...]
    """

    def __enter__(self):
        _amp.clear_recorded()
        _amp.set_recording(True)
        self.ops = []
        return self

    def __exit__(self, *exc):
        _amp.set_recording(False)
        self.ops = list(_amp.recorded())
        return False


class GradScaler:
    """Dynamic loss scaling with PyTorch's defaults and state machine (nn/grad_scaler.h).

    torch.amp.GradScaler's signature: the device comes first ("cuda" by default, or "cpu"), then
    init_scale. As in PyTorch, a "cuda" scaler on a machine without CUDA warns once and disables
    itself (scale() returns its input, step() just steps); pass "cpu" to scale float16 on the CPU.
    The older form with init_scale first (torch.cuda.amp.GradScaler) is wick.cuda.amp.GradScaler."""

    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        import wick

        if isinstance(device, wick.device):
            device = device.type
        if not isinstance(device, str) or device not in ("cpu", "cuda"):
            hint = (" (init_scale is the second argument since torch.amp.GradScaler: write "
                    f"GradScaler(\"cuda\", {device!r}) or use wick.cuda.amp.GradScaler)"
                    if isinstance(device, (int, float)) and not isinstance(device, bool) else "")
            raise TypeError(f"GradScaler(): device must be 'cpu' or 'cuda', got {device!r}{hint}")
        if enabled and device == "cuda" and not wick.cuda.is_available():
            import warnings

            warnings.warn("GradScaler(): device 'cuda' is not available on this machine; the scaler "
                          "is disabled (pass \"cpu\" to scale float16 on the CPU)", stacklevel=2)
            enabled = False
        self.device = device
        self._cpp = _amp.GradScaler(float(init_scale), float(growth_factor),
                                    float(backoff_factor), int(growth_interval), bool(enabled))

    def scale(self, outputs):
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return self._cpp.scale(outputs)

    def unscale_(self, optimizer):
        optimizer._sync()
        self._cpp.unscale_(optimizer._cpp)

    def step(self, optimizer, *args, **kwargs):
        """Unscales (if not yet), then runs optimizer.step() unless a gradient was inf or nan."""
        optimizer._sync()
        if self._cpp.prepare_step(optimizer._cpp):
            return optimizer.step(*args, **kwargs)
        return None

    def update(self, new_scale=None):
        if new_scale is not None:
            raise NotImplementedError("update(new_scale) is not supported; the scale adapts itself")
        self._cpp.update()

    def get_scale(self):
        return self._cpp.get_scale() if self._cpp.is_enabled() else 1.0

    def is_enabled(self):
        return self._cpp.is_enabled()

    @property
    def skipped_steps(self):
        return self._cpp.skipped_steps()

    def state_dict(self):
        if not self._cpp.is_enabled():
            return {}
        return {k: v.item() for k, v in self._cpp.state_dict().items()}

    def load_state_dict(self, state_dict):
        import wick

        # PyTorch's KeyError for a missing entry; the values' ranges are checked in C++.
        if not isinstance(state_dict, dict):
            raise TypeError(f"[GradScaler.load_state_dict] expected a dict, got "
                            f"{type(state_dict).__name__}")
        for key in ("scale", "growth_factor", "backoff_factor", "growth_interval",
                    "_growth_tracker"):
            if key not in state_dict:
                raise KeyError(f"[GradScaler.load_state_dict] missing entry '{key}'")

        self._cpp.load_state_dict({k: wick.tensor(v, dtype=wick.float64 if isinstance(v, float)
                                                  else wick.int64) for k, v in state_dict.items()})
