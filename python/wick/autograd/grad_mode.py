"""no_grad, enable_grad, set_grad_enabled and inference_mode: context managers and decorators
that switch autograd's recording off or on (the thread-local GradMode of core/grad_mode.h).
"""

import functools

from wick import _C


class _GradModeContext:
    """Base: sets grad mode on entry, restores the previous mode on exit; also a decorator."""

    _mode = True

    def __new__(cls, func=None):
        self = super().__new__(cls)
        if callable(func):  # used as a bare decorator: @wick.no_grad
            return self(func)
        return self

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return func(*args, **kwargs)

        return wrapper

    def __enter__(self):
        self._previous = _C.is_grad_enabled()
        _C._set_grad_enabled(self._mode)
        return None

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._previous)
        return False


class no_grad(_GradModeContext):
    """Disables gradient recording: `with wick.no_grad(): ...` or `@wick.no_grad()`."""

    _mode = False


class enable_grad(_GradModeContext):
    """Enables gradient recording inside a no_grad region."""

    _mode = True


class inference_mode(_GradModeContext):
    """wick has no separate inference mode; this is no_grad (inference_mode(False) enables)."""

    def __init__(self, mode=True):
        self._mode = not mode

    def __call__(self, func):
        if not callable(func) or isinstance(func, bool):
            return inference_mode(func)
        mode = self._mode

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            ctx = inference_mode(not mode)
            with ctx:
                return func(*args, **kwargs)

        return wrapper


class set_grad_enabled(_GradModeContext):
    """Sets grad mode to `mode`, as a function call or as a context manager."""

    def __init__(self, mode):
        self._previous = _C.is_grad_enabled()
        self._mode = bool(mode)
        _C._set_grad_enabled(self._mode)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._previous)
        return False

    def __call__(self, func):
        _C._set_grad_enabled(self._previous)
        mode = self._mode

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return func(*args, **kwargs)

        return wrapper
