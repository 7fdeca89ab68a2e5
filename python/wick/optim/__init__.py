"""wick.optim: the optimizers and learning-rate schedules of torch.optim."""

from wick.optim import lr_scheduler  # noqa: F401
from wick.optim.adam import Adam, Adamax, AdamW, NAdam, RAdam  # noqa: F401
from wick.optim.adaptive import Adadelta, Adagrad, RMSprop  # noqa: F401
from wick.optim.lbfgs import LBFGS  # noqa: F401
from wick.optim.optimizer import Optimizer  # noqa: F401
from wick.optim.sgd import SGD  # noqa: F401
