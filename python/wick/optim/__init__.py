"""wick.optim: SGD, Adam, AdamW and the learning-rate schedules (torch.optim)."""

from wick.optim import lr_scheduler  # noqa: F401
from wick.optim.adam import Adam, AdamW  # noqa: F401
from wick.optim.optimizer import Optimizer  # noqa: F401
from wick.optim.sgd import SGD  # noqa: F401
