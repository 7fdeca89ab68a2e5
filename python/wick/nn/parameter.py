"""Parameter: a tensor that a Module registers as trainable (torch.nn.Parameter)."""

from wick import _C


class Parameter(_C.Tensor):
    """A Tensor that, assigned as a Module attribute, joins the module's parameters().

    Parameter(data) shares data's memory (as a new leaf, detached from data's history) and
    requires grad unless requires_grad=False.
    """

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        super().__init__(data.detach())
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        raise TypeError("wick tensors cannot be pickled; use wick.save(state_dict, path)")
