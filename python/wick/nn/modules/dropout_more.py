"""Dropout2d: zeroes whole channels with probability p in training (F.dropout2d)."""

from wick.nn import functional as F
from wick.nn.modules.dropout import Dropout


class Dropout2d(Dropout):
    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)
