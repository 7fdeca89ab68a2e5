"""Dropout and Dropout2d (torch.nn.modules.dropout): in training, zero elements (Dropout) or whole
channels (Dropout2d) with probability p and scale the rest by 1/(1-p)."""

from wick.nn import functional as F
from wick.nn.modules.module import Module
from wick.nn.modules import _args


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        _args.real(type(self).__name__, "p", p)
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout2d(Dropout):
    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)
