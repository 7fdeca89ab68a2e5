"""Auto-wrap policies: which submodules become FSDP units of their own (torch.distributed.fsdp.wrap).

A policy is called as policy(module=m, recurse=False, nonwrapped_numel=n) for each submodule,
children first, where n counts the parameters of m not already inside a unit; True makes m a unit.
(PyTorch also calls it with recurse=True to ask whether to descend; wick always descends.)

    FullyShardedDataParallel(model, auto_wrap_policy=ModuleWrapPolicy({nn.Conv2d, nn.Linear}))
    FullyShardedDataParallel(model, auto_wrap_policy=functools.partial(
        size_based_auto_wrap_policy, min_num_params=10_000))
"""

__all__ = ["ModuleWrapPolicy", "size_based_auto_wrap_policy", "lambda_auto_wrap_policy"]


class ModuleWrapPolicy:
    """Wraps every submodule that is an instance of one of `module_classes`."""

    def __init__(self, module_classes):
        self._classes = tuple(module_classes)
        if not all(isinstance(c, type) for c in self._classes):
            raise TypeError("ModuleWrapPolicy: module_classes must be classes; got "
                            f"{module_classes!r}")

    def __call__(self, module, recurse, nonwrapped_numel=0):
        return True if recurse else isinstance(module, self._classes)

    def __repr__(self):
        return f"ModuleWrapPolicy({sorted(c.__name__ for c in self._classes)})"


def size_based_auto_wrap_policy(module, recurse, nonwrapped_numel, min_num_params=int(1e8)):
    """Wraps a submodule once it holds at least min_num_params parameters of its own."""
    return True if recurse else nonwrapped_numel >= min_num_params


def lambda_auto_wrap_policy(module, recurse, nonwrapped_numel, lambda_fn):
    """Wraps the submodules for which lambda_fn(module) is true."""
    return True if recurse else bool(lambda_fn(module))
